#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""make bench's runtime benchmarks run: each once, briefly, printing its rows.

bench_server.py (1 and 2 workers, 30 ms a run) and bench_calls.py's rows
of every event kind (20000 iterations, no instruction counts) build their
programs and run them all; every row must be in the table with figures,
and bench_calls.py's cost table must have a line for each event kind.
Only that they run: no figure is compared with anything (a benchmark's
times on a shared machine say nothing a test could hold them to).
"""
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests", "tools"))
from taplib import BUILD, finish, run, tap  # noqa: E402

BENCH = os.path.join(TOP, "bench", "runtime")
SERVER_ROWS = ("untraced", "xrayfdr thread mode", "xrayfdr CPU mode", "xrayfdr --stream",
               "xrayfdr --stream CPU mode", "xrayfdr CPU mode, discard", "LLVM XRay FDR")
MODES = 6  # thread, CPU, stream in both, CPU discard, LLVM FDR
KINDS = ("call (entry + exit)", "call logging its argument", "custom event, 8 bytes",
         "typed event, 8 bytes")
FIGURE = r"\d+\.\d+"


def bench(script, **env):
    p = run([os.path.join(BENCH, script)],
            env=dict(os.environ, BUILD=BUILD, **env), cwd=TOP)
    return p, p.stdout + p.stderr


def main():
    p, out = bench("bench_server.py", ROUNDS="1", DURATION_MS="30", WORKERS="1,2")
    tap(p.returncode == 0, "bench_server.py runs every row", out[-2000:])
    for w in (1, 2):
        missing = [r for r in SERVER_ROWS
                   if not re.search(rf"^{re.escape(r)} +{w} +{FIGURE} \[{FIGURE}, {FIGURE}\]"
                                    rf" +{FIGURE} \[", p.stdout, re.M)]
        tap(not missing, f"bench_server.py: every row with {w} worker(s), with figures",
            f"missing: {missing}\n{p.stdout[-2000:]}")

    p, out = bench("bench_calls.py", ITERATIONS="20000", ROUNDS="1", CALLGRIND="0",
                   ONLY="kinds")
    tap(p.returncode == 0, "bench_calls.py runs the rows of every event kind", out[-2000:])
    rows = re.findall(r"^(.+?) +(" + FIGURE + r") +" + FIGURE, p.stdout, re.M)
    tap(len(rows) >= 1 + 4 * MODES,
        "bench_calls.py: untraced and 4 kinds x 6 modes of rows, with figures",
        p.stdout[-2000:])
    missing = [k for k in KINDS
               if not re.search(rf"^{re.escape(k)}(?: +-?{FIGURE}){{6}}$", p.stdout, re.M)]
    tap(not missing, "bench_calls.py: the cost of every event kind in every mode",
        f"missing: {missing}\n{p.stdout[-2000:]}")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
