#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""What attaching costs a running program (make bench).

attach_target.c, built without any runtime, runs N threads (1, 8, 64)
calling a traced function in a loop.  For each N, ROUNDS times:

  before    its loop untraced: ns per call in thread CPU time, and the
            longest wall-clock gap between two iterations of any thread
  attach    `xrayfdr attach`: the time from the command's start to its
            "tracing" line (attach latency: the sleds are patched), how
            long the thread it stopped was stopped, and the longest gap
            of any worker while it ran (a worker stopped would show)
  attached  ns per call while attached (thread mode), beside the same
            program launched by `xrayfdr record`
  detach    the longest gap while `xrayfdr detach` ran
  after     ns per call after detach: equal to before within noise

Medians with min and max; the load average beside.  Wall-clock gaps on a
shared 2-core machine mostly measure the other tenants and, with 64
threads, the scheduler: compare them with the "before" gap of the same
run.  Nothing passes or fails on a time.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

BUILD = os.environ.get("BUILD", "build")
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
XRAYFDR = os.path.abspath(os.path.join(BUILD, "bin", "xrayfdr"))
ROUNDS = int(os.environ.get("ROUNDS", "5"))
PERIOD = float(os.environ.get("PERIOD", "0.4"))


def load():
    return open("/proc/loadavg").read().split()[0]


class Target:
    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True, bufsize=1)
        assert self.p.stdout.readline().strip() == "ready"

    def ask(self, text):
        self.p.stdin.write(text + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().split()

    def period(self):
        """ns per call in thread CPU time, longest gap in us."""
        self.ask("mark")
        time.sleep(PERIOD)
        _, iters, cpu, gap = self.ask("report")
        return int(cpu) / max(int(iters), 1), int(gap) / 1000

    def quit(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        self.p.wait(timeout=60)


def pid_of(t):
    """The program's pid (under record: its child's)."""
    if os.path.basename(os.readlink(f"/proc/{t.p.pid}/exe")) == "attach_target":
        return t.p.pid
    kids = open(f"/proc/{t.p.pid}/task/{t.p.pid}/children").read().split()
    return int(kids[0])


def fmt(xs, unit):
    xs = sorted(xs)
    return f"{statistics.median(xs):9.2f} {unit} [{xs[0]:.2f}, {xs[-1]:.2f}]"


def bench(exe, n, d):
    rows = {k: [] for k in ("before", "before-gap", "latency", "stopped", "attach-gap",
                            "attached", "detach-gap", "after", "launched")}
    for r in range(ROUNDS):
        t = Target([exe, str(n)])
        ns, gap = t.period()
        rows["before"].append(ns)
        rows["before-gap"].append(gap)
        log = os.path.join(d, f"a{n}.{r}.xray")
        t.ask("mark")
        start = time.monotonic()
        a = subprocess.Popen([XRAYFDR, "attach", "-o", log, str(t.p.pid)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = a.stderr.readline()
        rows["latency"].append((time.monotonic() - start) * 1000)
        mo = re.search(r"stopped ([0-9.]+) ms", line)
        rows["stopped"].append(float(mo.group(1)) if mo else float("nan"))
        _, iters, cpu, gap = t.ask("report")
        rows["attach-gap"].append(int(gap) / 1000)
        ns, _ = t.period()
        rows["attached"].append(ns)
        t.ask("mark")
        subprocess.run([XRAYFDR, "detach", str(t.p.pid)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=600)
        a.communicate(timeout=600)
        _, iters, cpu, gap = t.ask("report")
        rows["detach-gap"].append(int(gap) / 1000)
        ns, _ = t.period()
        rows["after"].append(ns)
        t.quit()
        os.unlink(log)
        # the same program launched traced
        t = Target([XRAYFDR, "record", "-q", "--no-verify", "-o", log, exe, str(n)])
        ns, _ = t.period()
        rows["launched"].append(ns)
        t.quit()
        os.unlink(log)
    print(f"-- {n} thread{'s' if n > 1 else ''} (load {load()})")
    print(f"  untraced before attach   {fmt(rows['before'], 'ns/call')}")
    print(f"  attached (thread mode)   {fmt(rows['attached'], 'ns/call')}")
    print(f"  launched by record       {fmt(rows['launched'], 'ns/call')}"
          f"   attached/launched {statistics.median(rows['attached']) / statistics.median(rows['launched']):.3f}")
    print(f"  untraced after detach    {fmt(rows['after'], 'ns/call')}"
          f"   after/before {statistics.median(rows['after']) / statistics.median(rows['before']):.3f}")
    print(f"  attach latency           {fmt(rows['latency'], 'ms')}")
    print(f"  the stopped thread       {fmt(rows['stopped'], 'ms')}  (the main thread, idle in read())")
    print(f"  longest worker gap: untraced {fmt(rows['before-gap'], 'us')}")
    print(f"                      attach   {fmt(rows['attach-gap'], 'us')}")
    print(f"                      detach   {fmt(rows['detach-gap'], 'us')}")
    sys.stdout.flush()


def main():
    clang = "clang" if subprocess.run(["which", "clang"], capture_output=True).returncode == 0 \
        else "clang-14"
    d = tempfile.mkdtemp(prefix="bench-attach.")
    exe = os.path.join(d, "attach_target")
    p = subprocess.run([clang, "-O2", "-pthread", "-fxray-instrument", "-fnoxray-link-deps",
                        os.path.join(TOP, "bench", "runtime", "attach_target.c"), "-o", exe],
                       capture_output=True, text=True)
    if p.returncode:
        print(p.stderr)
        return 1
    print(f"attach and detach, {ROUNDS} rounds of {PERIOD}s periods (load {load()})")
    for n in (1, 8, 64):
        bench(exe, n, d)
    subprocess.run(["rm", "-rf", d])
    return 0


if __name__ == "__main__":
    sys.exit(main())
