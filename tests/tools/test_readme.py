#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every shell block of README.md, run as written, so the README cannot rot.

Each ```sh block runs in one bash, in a scratch directory where build/ is
the build being tested and the files the README's examples name exist:
prog.c (an instrumented program; the README compiles it), trace.xray (the
log of ./prog the block before records) and damaged.xray (that log cut
short).  Each command line is one result: it must exit with 0, or with
the status the README gives it (EXPECT below).  Blocks that need what a
test cannot have are skipped, each with the reason: installing packages
and running this very suite, and the kernel module (root on the host; the
module is tested in QEMU by vm/selftests).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import BUILD, finish, run, skip, tap  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(TOP, "README.md")

# Blocks not run: a pattern in the block, and why
NOT_RUN = [
    (re.compile(r"^make (deps|check)\b", re.M),
     "installs packages and runs this suite: what CI runs"),
    (re.compile(r"insmod|xrayfdr-ctl|^make kmod", re.M),
     "needs the kernel module loaded into the host kernel; vm/selftests run these in QEMU"),
    (re.compile(r"^sudo (apt|usermod|modprobe)\b|^make (deb|dkms-deb)\b", re.M),
     "installs a package or changes the host's users and modules; pkg/deb builds the packages"),
    (re.compile(r"pkg-config --cflags --libs libxrayfdr", re.M),
     "needs the packages installed; pkg/dkms-chroot builds and records a program so"),
    (re.compile(r"xrayfdr snapshot PID", re.M),
     "a service left running and read while it runs; runtime/matrix runs the same "
     "commands on a server and a program with slow calls (check_snapshot_cli, check_triggers)"),
    (re.compile(r"xrayfdr attach --for 10s", re.M),
     "a service already running; runtime/attach attaches to and detaches from one"),
]
# Commands the README says fail: a pattern, the status
EXPECT = [(re.compile(r"--keep-going .*damaged\.xray"), 1)]

PROG_C = r"""
#include <stdio.h>
#include <stdlib.h>

__attribute__((xray_always_instrument, noinline)) long leaf(long i)
{
	return i * 3 + 1;
}

__attribute__((xray_always_instrument, noinline)) long mid(long i)
{
	return leaf(i) + leaf(i + 1);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, sum = 0;

	for (long i = 0; i < (n > 0 ? n : 1000); i++)
		sum += mid(i);
	printf("%ld\n", sum);
	return 0;
}
"""


def blocks(text):
    """The ```sh blocks: (first line number, lines)."""
    out, cur, start = [], None, 0
    for n, line in enumerate(text.splitlines(), 1):
        if cur is None and line.strip() == "```sh":
            cur, start = [], n + 1
        elif cur is not None and line.strip() == "```":
            out.append((start, cur))
            cur = None
        elif cur is not None:
            cur.append(line)
    return out


def command_of(line):
    """The command of a README line: its trailing "# comment" removed."""
    return re.sub(r"\s+#\s.*$", "", line).strip()


def fixtures(d):
    """Files the examples name; trace.xray and damaged.xray from
    prog.xray once a block has made it."""
    src = os.path.join(d, "prog.xray")
    if os.path.exists(src) and not os.path.exists(os.path.join(d, "trace.xray")):
        shutil.copy(src, os.path.join(d, "trace.xray"))
        with open(src, "rb") as f:
            data = f.read()
        with open(os.path.join(d, "damaged.xray"), "wb") as f:
            f.write(data[:len(data) - 37])


def run_block(d, start, lines):
    cmds = [(start + i, command_of(l)) for i, l in enumerate(lines)]
    cmds = [(n, c) for n, c in cmds if c]
    status = os.path.join(d, ".status")
    script = ["set -o pipefail", "cd " + d]
    for n, c in cmds:
        script.append(c)
        script.append(f'echo "{n} $?" >>{status}')
    if os.path.exists(status):
        os.unlink(status)
    p = run(["bash", "-c", "\n".join(script)], stdin=subprocess.DEVNULL)
    got = {}
    if os.path.exists(status):
        with open(status) as f:
            got = dict(l.split()[:2] for l in f if l.strip())
    for n, c in cmds:
        want = next((s for pat, s in EXPECT if pat.search(c)), 0)
        rc = got.get(str(n))
        tap(rc == str(want), f"README.md:{n}: {c}",
            f"exit {rc if rc is not None else '(not reached)'}, want {want}; "
            f"the block's output ends:\n{p.stdout[-800:]}{p.stderr[-1200:]}")


def check_long_run(d, text):
    """The first block's analysis commands of prog.xray again, on the log
    of a long run in small buffers (a flight recorder's window, many
    buffers per thread): what a user's real program records."""
    block = next(((st, ls) for st, ls in blocks(text)
                  if any("record -o prog.xray" in l for l in ls)), None)
    if not block or not os.path.exists(os.path.join(d, "prog")):
        return tap(False, "README.md: the block that records prog.xray, and ./prog",
                   "not found")
    p = run([os.path.join(d, "build", "bin", "xrayfdr"), "record", "-q", "-b", "4K", "-m", "8",
             "-o", os.path.join(d, "prog.xray"), os.path.join(d, "prog"), "300000"],
            stdin=subprocess.DEVNULL)
    if p.returncode:
        return tap(False, "README.md: a long run of ./prog records", p.stderr)
    start, lines = block
    for n, line in enumerate(lines, start):
        c = command_of(line)
        if " prog.xray" not in c or " record " in c:
            continue
        q = run(["bash", "-c", f"set -o pipefail; cd {d} && {c}"], stdin=subprocess.DEVNULL)
        tap(q.returncode == 0 and ("mid" in q.stdout or " -o " in c),
            f"README.md:{n}: {c} (a long run's log, many buffers, a window inside calls)",
            f"exit {q.returncode}\n{q.stdout[-400:]}{q.stderr[-800:]}")


def main():
    with open(README) as f:
        text = f.read()
    d = tempfile.mkdtemp(prefix="xrayfdr-readme-")
    try:
        os.symlink(os.path.abspath(BUILD), os.path.join(d, "build"))
        with open(os.path.join(d, "prog.c"), "w") as f:
            f.write(PROG_C)
        for start, lines in blocks(text):
            body = "\n".join(lines)
            why = next((w for pat, w in NOT_RUN if pat.search(body)), None)
            if why:
                skip(f"README.md:{start}: the block of {command_of(lines[0])}", why)
                continue
            fixtures(d)
            run_block(d, start, lines)
        check_long_run(d, text)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
