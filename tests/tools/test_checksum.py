#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checksums of the logs the runtime writes (fdr-format.rst, "Checksums").

A program traced by `xrayfdr record` (thread and CPU mode, version 5 and
1, streamed, a snapshot of it running) writes logs whose buffers all carry
a checksum that `xrayfdr dump --verify` counts as matching; llvm-xray 14
reads them as before.  A flipped byte in a record is an error naming the
buffer (its offset and thread); `account` and the other tools say once
that the log is damaged.  Twenty tries of 20 random flipped bytes are all
caught.  A log without checksums (another writer's) draws no word.
Prints TAP.
"""
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import XRAYFDR, finish, run, skip, tap  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "pylib"))
from testenv import which  # noqa: E402

CLANG = which("clang", "clang-14")
LLVM_XRAY = which("llvm-xray-14", "llvm-xray")

PROG = r"""
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#define TRACED __attribute__((xray_always_instrument, noinline))
volatile long sink;
TRACED void leaf(long i) { sink += i; }
TRACED void work(long i) { leaf(i); leaf(i + 1); }
TRACED void *worker(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++)
		work(i);
	return NULL;
}
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000;
	pthread_t t[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, worker, (void *)n);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	/* argv[2]: run on until this file exists (snapshots) */
	while (argc > 2 && access(argv[2], F_OK))
		worker((void *)10L), usleep(1000);
	return 0;
}
"""

SUMMARY = re.compile(r"(\d+) buffers, .*checksums: (\d+) match, (\d+) fail")


def verify(path):
    """dump --verify: (exit status, output)."""
    p = run([XRAYFDR, "dump", "--verify", "--quiet", path])
    return p.returncode, p.stdout + p.stderr


def buffers(path):
    """(offset, end, tid) of each version 5 buffer of the log at @path."""
    data = open(path, "rb").read()
    out, off = [], 32
    while off + 32 <= len(data):
        if data[off] != (7 << 1 | 1):
            break
        ext = struct.unpack_from("<Q", data, off + 1)[0]
        tid = struct.unpack_from("<i", data, off + 17)[0]
        out.append((off, off + 16 + ext, tid))
        off += 16 + ext
    return out


def flipped(src, dst, offsets):
    data = bytearray(open(src, "rb").read())
    for o in offsets:
        data[o] ^= 0x01 << (o % 8)
    with open(dst, "wb") as f:
        f.write(data)


def check_log(name, path):
    """Every buffer of a log the runtime wrote carries a matching checksum."""
    rc, out = verify(path)
    m = SUMMARY.search(out)
    tap(rc == 0 and m and int(m.group(2)) == int(m.group(1)) > 1 and
        m.group(3) == "0",
        f"{name}: dump --verify: every buffer's checksum matches", out)


def stripped(src, dst):
    """The version 5 log at @src without its checksums, as a writer
    without them would have written it."""
    data = open(src, "rb").read()
    out = bytearray(data[:32])
    for start, end, _ in buffers(src):
        body = data[start + 16:end]
        if len(body) >= 32 and body[-16:-12] == b"XFCK":
            body = body[:-32]
        out += data[start:start + 1] + struct.pack("<Q", len(body)) + \
            data[start + 9:start + 16] + body
    with open(dst, "wb") as f:
        f.write(out)


def check_llvm(name, path, exe):
    """llvm-xray 14 reads the log as it reads it without our checksums
    (its account and stack fail on some logs of many buffers either way,
    tools.rst): fdr-dump -verify accepts it; account, stack and graph say
    the same; convert only adds the checksums as custom events."""
    if not LLVM_XRAY:
        skip(f"{name}: llvm-xray reads it", "llvm-xray-14 is not installed")
        return
    p = run([LLVM_XRAY, "fdr-dump", "-verify", path])
    tap(p.returncode == 0 and "XFCK" in p.stdout,
        f"{name}: llvm-xray fdr-dump -verify accepts it", p.stderr)
    plain = path + ".plain"
    if not path.endswith("version-1.xray"):
        stripped(path, plain)
    for cmd in ("account", "stack", "graph", "convert"):
        argv = [LLVM_XRAY, cmd, "-instr_map=" + exe]
        if cmd == "convert":
            argv.append("-output-format=yaml")
        p = run(argv + [path])
        if path.endswith("version-1.xray"):
            # the checksums sit in the padding, which llvm-xray skips
            tap(p.returncode == 0 or cmd in ("account", "stack"),
                f"{name}: llvm-xray {cmd} reads it", p.stderr)
            continue
        q = run(argv + [plain])
        got = [line for line in p.stdout.splitlines() if "XFCK" not in line]
        tap((p.returncode, got, p.stderr) ==
            (q.returncode, q.stdout.splitlines(),
             q.stderr.replace(plain, path)) and
            p.stdout.count("XFCK") == (len(buffers(path)) if cmd == "convert"
                                       else 0),
            f"{name}: llvm-xray {cmd} says what it says without checksums",
            f"with: {p.returncode} {p.stderr}\nwithout: {q.returncode} "
            f"{q.stderr}")


def main():
    if not CLANG:
        skip("checksums", "clang is not installed")
        return finish()
    tmp = tempfile.mkdtemp(prefix="xrayfdr-sum.")
    exe = os.path.join(tmp, "prog")
    p = run([CLANG, "-O1", "-fxray-instrument", "-fnoxray-link-deps",
             "-fxray-instruction-threshold=1", "-pthread", "-x", "c", "-",
             "-o", exe], input=PROG)
    if p.returncode:
        tap(False, "the traced program builds", p.stderr)
        return finish()

    logs = {}
    for name, args in (("thread mode", []), ("cpu mode", ["-M", "cpu"]),
                       ("version 1", ["-V", "1"]), ("streamed", ["-s"])):
        path = os.path.join(tmp, name.replace(" ", "-") + ".xray")
        p = run([XRAYFDR, "record", "-q", "-b", "4096", "-o", path] + args +
                ["--", exe])
        tap(p.returncode == 0 and os.path.exists(path),
            f"{name}: the program is recorded", p.stderr)
        if os.path.exists(path):
            logs[name] = path
            check_log(name, path)

    # a snapshot of the running program
    stop = os.path.join(tmp, "stop")
    snap = os.path.join(tmp, "snap.xray")
    proc = subprocess.Popen([XRAYFDR, "record", "-q", "-b", "4096", "-o",
                             os.path.join(tmp, "running.xray"), "--", exe,
                             "100", stop])
    ok = False
    for _ in range(100):
        time.sleep(0.1)
        kids = run(["pgrep", "-P", str(proc.pid)]).stdout.split()
        pid = kids[0] if kids else str(proc.pid)
        p = run([XRAYFDR, "snapshot", "-q", "-f", "-o", snap, pid])
        if p.returncode == 0:
            ok = True
            break
    open(stop, "w").close()
    proc.wait(timeout=60)
    tap(ok, "snapshot: a running program's snapshot is written", p.stderr)
    if ok:
        check_log("snapshot", snap)

    log = logs.get("thread mode")
    if not log:
        return finish()
    check_llvm("thread mode", log, exe)
    check_llvm("version 1", logs.get("version 1", log), exe)

    # a flipped bit in a function record of the second buffer
    bufs = buffers(log)
    start, end, tid = bufs[1]
    bad = os.path.join(tmp, "bad.xray")
    flipped(log, bad, [start + 16 * 5 + 8 * 3 + 5])  # a TSC delta
    rc, out = verify(bad)
    tap(rc == 1 and re.search(
        rf"offset {start} \(0x{start:x}\): buffer: the buffer of thread {tid} "
        rf"\(\d+ bytes\) fails its checksum: .*\[checksum\]", out),
        "a flipped bit in a record: dump --verify names the buffer's offset "
        "and thread", out)
    # the same in the file read from a pipe: summed as the window slides
    with open(bad, "rb") as f:
        p = subprocess.run([XRAYFDR, "dump", "--verify", "--quiet", "-"],
                           stdin=f, capture_output=True, text=True)
    tap(p.returncode == 1 and f"offset {start} (" in p.stderr,
        "the same read from a pipe", p.stdout + p.stderr)
    flipped(log, bad, [9])
    rc, out = verify(bad)
    tap(rc == 1 and "file header: the header's CRC32C" in out,
        "a flipped bit in the header's frequency: the header is damaged", out)

    # the tools say it once, and still give their output
    flipped(log, bad, [bufs[i][0] + 16 * 5 + 4 for i in range(1, 4)])
    for cmd in ("account", "stack", "graph", "convert", "replay"):
        argv = [XRAYFDR, cmd, bad]
        if cmd == "convert":
            argv = [XRAYFDR, cmd, "-f", "yaml", bad]
        p = run(argv)
        said = re.findall(r"checksums fail", p.stderr)
        tap(p.returncode == 0 and len(said) == 1 and
            re.search(rf"warning: .*bad.xray: 3 checksums fail \(the first: "
                      rf"the buffer at offset {bufs[1][0]}\)", p.stderr),
            f"{cmd}: a log with 3 damaged buffers is said to be damaged once",
            p.stderr)
    p = run([XRAYFDR, "account", log])
    tap(p.returncode == 0 and "checksum" not in p.stderr,
        "account: nothing said of an intact log", p.stderr)

    # a writer without checksums: not a word
    synth = os.path.join(tmp, "synth.xray")
    run([XRAYFDR, "synth", "-o", synth, "--calls", "200", "--threads", "3"])
    rc, out = verify(synth)
    p = run([XRAYFDR, "account", synth])
    tap(rc == 0 and "checksum" not in out and p.returncode == 0 and
        "checksum" not in p.stderr,
        "a log without checksums (synth) verifies and is not warned about",
        out + p.stderr)

    # 20 random bytes flipped, 20 times: every try is caught (every byte of
    # a version 5 log is in the header or a checksummed buffer)
    rnd = random.Random(32)
    size = os.path.getsize(log)
    missed = []
    for i in range(20):
        offs = rnd.sample(range(size), 20)
        flipped(log, bad, offs)
        rc, out = verify(bad)
        if rc != 1:
            missed.append(f"try {i}: {sorted(offs)}: {out}")
    tap(not missed, "20 random bytes flipped: dump --verify fails all of "
        "20 tries", "\n".join(missed))
    # one byte, anywhere in the records, header, framing or checksums
    missed = []
    for i in range(40):
        o = rnd.randrange(size)
        flipped(log, bad, [o])
        rc, out = verify(bad)
        if rc != 1:
            missed.append(f"offset {o}: {out}")
    tap(not missed, "one byte flipped anywhere: dump --verify fails all of "
        "40 tries", "\n".join(missed))
    # version 1: all but the padding after a buffer's checksum is covered
    v1 = logs.get("version 1")
    if v1:
        data = open(v1, "rb").read()
        covered = []
        for m in re.finditer(b"XFCK", data):
            # the checksum's payload: magic, header CRC, covered, CRC
            n = struct.unpack_from("<I", data, m.start() + 8)[0]
            covered.append((m.start() + 12 - n, m.start() + 16))
        missed = []
        for i in range(40):
            lo, hi = rnd.choice(covered)
            o = rnd.randrange(lo, hi)
            flipped(v1, bad, [o])
            rc, out = verify(bad)
            if rc != 1:
                missed.append(f"offset {o}: {out}")
        tap(covered and not missed, "version 1: a byte flipped in a "
            "buffer's records or checksum fails, 40 tries", "\n".join(missed))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
