#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""A server-like workload traced: what a call costs with several threads.

server.c: WORKERS threads (1, 2 and 4) call handle(), which logs its
argument, for DURATION_MS (default 1000) each run, while the main thread
wakes every TICK_US (default 2000) for one traced call.  Rows, by the key
ONLY takes (the keys of bench_calls.py where they mean the same):

  untraced      no instrumentation (always runs: the baseline)
  xrayfdr       thread mode (libxrayfdr preloaded, as `xrayfdr record`)
  cpu           CPU mode on the runtime's own rings (no module on the
                host; in a guest with the module, the module's)
  stream        thread mode, stream=true: every call written as it runs
  stream-cpu    CPU mode, stream=true
  cpu-discard   CPU mode, discard=true: once a CPU's ring is full, its
                new events are dropped
  llvm-fdr      LLVM's FDR mode, started by API calls (it keeps the
                first buffers, then drops)

The same memory in every mode: 256 buffers of 64 KiB (CPU mode: that
many a CPU, bench_calls.py's buffer_max_of).  ROUNDS times (default 3),
every row once a round, in interleaved order.  For each row: calls per
second per worker (wall clock: on a shared 2-core machine, 4 workers and
the stream's writer share 2 CPUs, so this falls with the load) and ns per
call of the workers' thread CPU time (what a call costs the thread that
makes it, whoever else ran); the median round with the fastest and the
slowest, and the load average when the median round ran.  "overhead" is
ns per call minus untraced's; "vs thread" divides it by the thread-mode
row's of the same number of workers (stream-cpu by stream's).  Nothing
passes or fails on a time.

Environment: ROUNDS, DURATION_MS, TICK_US, WORKERS (comma-separated,
default 1,2,4), ONLY (comma-separated keys), BUILD.
"""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_calls import (CLANG, HERE, LIBSO, OUT, REMARKS, TOP, clean,  # noqa: E402
                         llvm_fdr, load, run, xrayfdr_options)

ROUNDS = int(os.environ.get("ROUNDS", "3"))
DURATION_MS = int(os.environ.get("DURATION_MS", "1000"))
TICK_US = int(os.environ.get("TICK_US", "2000"))
WORKERS = [int(w) for w in os.environ.get("WORKERS", "1,2,4").split(",") if w]
ONLY = [k for k in os.environ.get("ONLY", "").split(",") if k]


def build():
    src = os.path.join(HERE, "server.c")
    variants = {
        "untraced": [],
        "xray": ["-fxray-instrument", "-fnoxray-link-deps"],
        "llvm": ["-fxray-instrument", "-DBENCH_LLVM", "-I",
                 os.path.join(TOP, "lib", "include")],
    }
    os.makedirs(OUT, exist_ok=True)
    exes = {}
    for name, flags in variants.items():
        exe = os.path.join(OUT, f"server-{name}")
        p = run([CLANG, "-O2", "-g", "-Wall", "-Wextra", "-pthread", src, "-o", exe]
                + flags)
        if p.returncode:
            sys.exit(f"bench: building server-{name}: {p.stderr}")
        exes[name] = exe
    return exes


class Row:
    def __init__(self, key, name, exe, how, vs="xrayfdr"):
        self.key, self.name, self.exe, self.how, self.vs = key, name, exe, how, vs
        self.runs = {w: [] for w in WORKERS}  # (ns/call, calls/s/worker, load)


def rows_of(exes):
    def ours(mode, **kw):
        return lambda d: ([], {"LD_PRELOAD": LIBSO,
                               "XRAYFDR_OPTIONS": xrayfdr_options(d, mode, 0, **kw)})

    x = exes["xray"]
    rows = [
        Row("untraced", "untraced", exes["untraced"], lambda d: ([], {})),
        Row("xrayfdr", "xrayfdr thread mode", x, ours("thread")),
        Row("cpu", "xrayfdr CPU mode", x, ours("cpu")),
        Row("stream", "xrayfdr --stream", x, ours("thread", stream=True)),
        Row("stream-cpu", "xrayfdr --stream CPU mode", x, ours("cpu", stream=True),
            vs="stream"),
        Row("cpu-discard", "xrayfdr CPU mode, discard", x, ours("cpu", discard=True)),
        Row("llvm-fdr", "LLVM XRay FDR", exes["llvm"], llvm_fdr),
    ]
    if ONLY:
        want = set(ONLY) | {"untraced"} | {r.vs for r in rows if r.key in ONLY}
        rows = [r for r in rows if r.key in want]
    return rows


def run_one(row, workers, d, remarks):
    args, env = row.how(d)
    p = run([row.exe, str(workers), str(DURATION_MS), str(TICK_US)] + args, env=env)
    m = re.search(r"wall_ns (\d+) calls (\d+) cpu_ns (\d+)", p.stdout)
    if p.returncode or not m or not int(m.group(2)):
        sys.exit(f"bench: {row.name}, {workers} workers, failed (exit {p.returncode}): "
                 f"{p.stdout[-400:]}{p.stderr[-800:]}")
    wall, calls, cpu = (int(x) for x in m.groups())
    if row.key != "untraced" and not any(os.path.getsize(os.path.join(d, f))
                                         for f in os.listdir(d)):
        sys.exit(f"bench: {row.name}, {workers} workers, wrote no log: {p.stderr[-800:]}")
    row.runs[workers].append((cpu / calls, calls / workers / (wall / 1e9),
                             load().split()[0]))
    for pattern, remark in REMARKS.items():
        if pattern in p.stderr:
            remarks.setdefault(remark, []).append(row.name)
    clean(d)


def spread(xs, fmt):
    xs = sorted(xs)
    return f"{fmt(xs[len(xs) // 2])} [{fmt(xs[0])}, {fmt(xs[-1])}]"


def table(rows):
    by_key = {r.key: r for r in rows}

    def median(row, w):
        runs = sorted(row.runs[w])
        return runs[len(runs) // 2]

    def overhead(key, w):
        if key not in by_key:
            return None
        return median(by_key[key], w)[0] - median(by_key["untraced"], w)[0]

    print(f"\n{'row':27} {'workers':>7} {'Mcalls/s/worker [min, max]':>27} "
          f"{'ns/call [min, max]':>24} {'overhead':>8} {'vs thread':>9} {'load':>5}")
    for w in WORKERS:
        for row in rows:
            ns = [r[0] for r in row.runs[w]]
            rate = [r[1] / 1e6 for r in row.runs[w]]
            over, base = overhead(row.key, w), overhead(row.vs, w)
            vs = f"{over / base:.2f}x" if (row.key not in ("untraced", row.vs) and
                                          base and base > 0) else "-"
            print(f"{row.name:27} {w:7} {spread(rate, lambda x: f'{x:.2f}'):>27} "
                  f"{spread(ns, lambda x: f'{x:.2f}'):>24} "
                  f"{over:8.2f} {vs:>9} {median(row, w)[2]:>5}")
    print("Mcalls/s/worker: a worker's calls per second of wall clock; ns/call: the "
          "workers' thread CPU time\n  per call; median round, [fastest, slowest]; "
          "load: the 1-minute load average as that\n  round ran; overhead: ns/call "
          "minus untraced's; vs thread: overhead / thread mode's (stream-cpu:\n"
          "  stream's) with as many workers")


def main():
    if not CLANG:
        sys.exit("bench: clang is missing (make deps)")
    exes = build()
    rows = rows_of(exes)
    d = tempfile.mkdtemp(prefix="xrayfdr-server-", dir=OUT)
    print(f"workload: WORKERS threads calling handle(), which logs its argument, for "
          f"{DURATION_MS} ms,\n  the main thread waking every {TICK_US} us for a traced "
          f"call; {ROUNDS} rounds interleaved; load before: {load()}")
    remarks = {}
    for r in range(ROUNDS):
        print(f"round {r + 1}/{ROUNDS}, load {load()}")
        sys.stdout.flush()
        for w in WORKERS:
            for row in rows:
                run_one(row, w, d, remarks)
    os.rmdir(d)
    print(f"load after: {load()}")
    table(rows)
    for remark, names in remarks.items():
        print(f"note: {remark} ({', '.join(dict.fromkeys(names))})")


if __name__ == "__main__":
    main()
