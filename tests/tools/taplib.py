# SPDX-License-Identifier: GPL-2.0-only
"""TAP output and process helpers shared by the Python suites in tests/tools."""
import os
import subprocess
import sys

BUILD = os.environ.get("BUILD", "build")
# XRAYFDR: another build of the tool (test_sanitized.sh uses it)
XRAYFDR = os.environ.get("XRAYFDR") or os.path.join(BUILD, "bin", "xrayfdr")
results = []


def tap(ok, name, diag=""):
    """One TAP line; the diagnostic (at most 25 lines) only on failure."""
    results.append(bool(ok))
    print(f"{'ok' if ok else 'not ok'} {len(results)} - {name}")
    for line in (diag.splitlines() if not ok else [])[:25]:
        print(f"# {line}")
    sys.stdout.flush()


def skip(name, reason):
    results.append(True)
    print(f"ok {len(results)} - {name} # SKIP {reason}")
    sys.stdout.flush()


def run(cmd, **kw):
    """Run a command, capturing text output; undecodable bytes survive."""
    return subprocess.run(cmd, capture_output=True, text=True,
                          errors="surrogateescape", **kw)


def finish():
    """Print the plan; the exit status for the suite."""
    print(f"1..{len(results)}")
    return 0 if all(results) else 1


# Forks from a fresh, small interpreter: a child's peak RSS counts what its
# parent had when it forked, and this script holds whole traces' events.
PEAK_RSS = """
import os, sys
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss * 1024 if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else 0)
"""


def peak_rss(cmd):
    """Peak resident memory of one run, in bytes (None if it failed)."""
    p = run([sys.executable, "-S", "-c", PEAK_RSS] + cmd)
    value = int(p.stdout.strip() or 0)
    return value or None, p.stderr
