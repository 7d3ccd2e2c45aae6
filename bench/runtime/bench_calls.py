#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Overhead per traced call: xrayfdr against its peers, side by side.

One workload (calls.c: main -> mid -> 2 x leaf, noinline), ITERATIONS
times (default 10 M: 30 M calls, 60 M events), run ROUNDS times (default 3)
in interleaved order, every peer in each round:

  untraced            no instrumentation at all
  floor               two rdtsc and two 8-byte stores per call, by hand
  xrayfdr             thread mode, preloaded by `xrayfdr record`
  xrayfdr static      thread mode, libxrayfdr linked in (no jump stubs)
  xrayfdr CPU mode    CPU mode on rings of the runtime's own (no module
                      on the host), preloaded by `xrayfdr record`
  LLVM FDR            LLVM 14's FDR mode, threshold 0, started by API calls
  LLVM basic          LLVM 14's basic mode, threshold 0
  uftrace             uftrace record of a -pg build
  ..., threshold 5 us xrayfdr and LLVM FDR with LLVM's default duration
                      threshold, which rewinds every call of this workload

Each program times its own loop (start-up and the final flush excluded);
the table shows the median round.  Memory for the recorders: xrayfdr and
LLVM FDR get the same 256 buffers of 64 KiB; both keep what fits (xrayfdr
the newest events, LLVM FDR the first), basic mode and uftrace write
everything to disk.  "kept" counts the function records in the logs.
Environment: ITERATIONS, ROUNDS, BUILD.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "tests", "pylib"))
from testenv import run, which  # noqa: E402

BUILD = os.environ.get("BUILD", "build")
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(TOP, "bench", "runtime")
OUT = os.path.abspath(os.path.join(BUILD, "bench", "runtime"))
XRAYFDR = os.path.abspath(os.path.join(BUILD, "bin", "xrayfdr"))
LIBA = os.path.abspath(os.path.join(BUILD, "lib", "libxrayfdr.a"))
ITERATIONS = int(os.environ.get("ITERATIONS", "10000000"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
CALLS_PER_ITERATION = 3
BUFFER_SIZE, BUFFER_MAX = 65536, 256


CLANG = which("clang", "clang-14")
UFTRACE = which("uftrace")


def build():
    os.makedirs(OUT, exist_ok=True)
    src = os.path.join(HERE, "calls.c")
    xray = ["-fxray-instrument"]
    variants = {
        "untraced": [],
        "floor": ["-DBENCH_FLOOR"],
        "xray": xray + ["-fnoxray-link-deps"],
        "xray-static": xray + ["-fnoxray-link-deps", "-Wl,--whole-archive", LIBA,
                               "-Wl,--no-whole-archive", "-lelf", "-lpthread"],
        "xray-llvm": xray + ["-DBENCH_LLVM", "-I", os.path.join(TOP, "lib", "include")],
        "pg": ["-pg"],
    }
    exes = {}
    for name, flags in variants.items():
        exe = os.path.join(OUT, f"calls-{name}")
        cmd = [CLANG, "-O2", "-g", src, "-o", exe] + flags
        if name == "xray-static":
            cmd = [CLANG, "-O2", "-g", "-fxray-instrument", "-fnoxray-link-deps",
                   src, "-o", exe] + flags[2:]
        p = run(cmd)
        if p.returncode:
            sys.exit(f"bench: building {name}: {p.stderr}")
        exes[name] = exe
    return exes


def ns_of(p, what):
    m = re.search(r"ns_per_iteration ([\d.]+)", p.stdout)
    if p.returncode or not m:
        sys.exit(f"bench: {what} failed (exit {p.returncode}): {p.stderr[-800:]}")
    return float(m.group(1)) / CALLS_PER_ITERATION


def count_function_records(log):
    """Function records in an FDR log, with our reader (streaming)."""
    p = subprocess.Popen([XRAYFDR, "dump", "--events", log], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, errors="replace")
    n = sum(1 for line in p.stdout if " function-" in line)
    p.wait()
    return n


def peer_untraced(exe, d):
    return ns_of(run([exe, str(ITERATIONS)]), "untraced"), None, None


def peer_floor(exe, d):
    return ns_of(run([exe, str(ITERATIONS)]), "floor"), None, None


def peer_xrayfdr(exe, d, static=False, threshold_us=0, mode="thread"):
    log = os.path.join(d, "xrayfdr.xray")
    # CPU mode shares buffer_max among the CPUs: give the one CPU this
    # single-threaded workload runs on what thread mode's queue holds
    buffer_max = BUFFER_MAX * (os.cpu_count() or 1) if mode == "cpu" else BUFFER_MAX
    opts = f"buffer_size={BUFFER_SIZE} buffer_max={buffer_max} mode={mode}"
    if static:
        p = run([exe, str(ITERATIONS)],
                env={"XRAYFDR_OPTIONS": f'{opts} verbosity=0 output="{log}"'})
    else:
        p = run([XRAYFDR, "record", "-o", log, "--buffer-size", str(BUFFER_SIZE),
                 "--buffer-max", str(buffer_max), "--threshold-us", str(threshold_us),
                 "--mode", mode, exe, str(ITERATIONS)])
    ns = ns_of(p, "xrayfdr")
    kept = count_function_records(log)
    size = os.path.getsize(log)
    os.unlink(log)
    return ns, kept, size


def peer_llvm_fdr(exe, d, threshold_us=0):
    base = os.path.join(d, "llvm-fdr-")
    p = run([exe, str(ITERATIONS), "fdr",
             f"func_duration_threshold_us={threshold_us} buffer_size={BUFFER_SIZE} "
             f"buffer_max={BUFFER_MAX}"],
            env={"XRAY_OPTIONS": f"xray_mode=xray-fdr xray_logfile_base={base}"})
    ns = ns_of(p, "LLVM FDR")
    logs = glob.glob(base + "*")
    kept = sum(count_function_records(l) for l in logs)
    size = sum(os.path.getsize(l) for l in logs)
    for l in logs:
        os.unlink(l)
    return ns, kept, size


def peer_llvm_basic(exe, d):
    base = os.path.join(d, "llvm-basic-")
    p = run([exe, str(ITERATIONS)],
            env={"XRAY_OPTIONS": f"patch_premain=true xray_mode=xray-basic xray_logfile_base={base}",
                 "XRAY_BASIC_OPTIONS": "func_duration_threshold_us=0"})
    ns = ns_of(p, "LLVM basic")
    logs = glob.glob(base + "*")
    size = sum(os.path.getsize(l) for l in logs)
    kept = sum((os.path.getsize(l) - 32) // 32 for l in logs)  # 32-byte records
    for l in logs:
        os.unlink(l)
    return ns, kept, size


def peer_uftrace(exe, d):
    data = os.path.join(d, "uftrace.data")
    shutil.rmtree(data, ignore_errors=True)
    p = run([UFTRACE, "record", "--no-libcall", "-d", data, exe, str(ITERATIONS)])
    ns = ns_of(p, "uftrace")
    dats = glob.glob(os.path.join(data, "*.dat"))
    size = sum(os.path.getsize(f) for f in dats)
    kept = size // 16  # uftrace writes 16-byte records
    shutil.rmtree(data, ignore_errors=True)
    return ns, kept, size


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    if not CLANG:
        sys.exit("bench: clang is missing (make deps)")
    exes = build()
    d = tempfile.mkdtemp(prefix="xrayfdr-bench-", dir=OUT)
    peers = [
        ("untraced", lambda: peer_untraced(exes["untraced"], d)),
        ("floor: 2 rdtsc + stores", lambda: peer_floor(exes["floor"], d)),
        ("xrayfdr (record)", lambda: peer_xrayfdr(exes["xray"], d)),
        ("xrayfdr (static)", lambda: peer_xrayfdr(exes["xray-static"], d, True)),
        ("xrayfdr CPU mode (record)", lambda: peer_xrayfdr(exes["xray"], d, mode="cpu")),
        ("LLVM XRay FDR", lambda: peer_llvm_fdr(exes["xray-llvm"], d)),
        ("LLVM XRay basic", lambda: peer_llvm_basic(exes["xray-llvm"], d)),
        # LLVM's default threshold: every call here is shorter, all rewound
        ("xrayfdr, threshold 5 us", lambda: peer_xrayfdr(exes["xray"], d, threshold_us=5)),
        ("xrayfdr CPU mode, threshold 5 us",
         lambda: peer_xrayfdr(exes["xray"], d, threshold_us=5, mode="cpu")),
        ("LLVM XRay FDR, threshold 5 us",
         lambda: peer_llvm_fdr(exes["xray-llvm"], d, threshold_us=5)),
    ]
    if UFTRACE:
        peers.insert(7, ("uftrace -pg", lambda: peer_uftrace(exes["pg"], d)))
    results = {name: [] for name, _ in peers}
    print(f"workload: main -> mid -> 2 x leaf, {ITERATIONS} iterations "
          f"({CALLS_PER_ITERATION * ITERATIONS} calls), {ROUNDS} rounds interleaved; "
          f"load before: {load()}")
    sys.stdout.flush()
    for r in range(ROUNDS):
        for name, fn in peers:
            results[name].append(fn())
    shutil.rmtree(d, ignore_errors=True)

    def median(name):
        rows = sorted(results[name], key=lambda x: x[0])
        return rows[len(rows) // 2]

    base = median("untraced")[0]
    ours = median("xrayfdr (record)")[0] - base
    made = 2 * CALLS_PER_ITERATION * ITERATIONS
    print(f"{'peer':34} {'ns/call':>8} {'overhead':>9} {'spread':>8} "
          f"{'kept/made events':>20} {'bytes/event':>11} {'vs xrayfdr':>10}")
    for name, _ in peers:
        ns, kept, size = median(name)
        over = ns - base
        spread = max(x[0] for x in results[name]) - min(x[0] for x in results[name])
        kept_s = f"{kept}/{made}" if kept is not None else "-"
        bpe = f"{size / kept:.1f}" if kept else "-"
        ratio = f"{over / ours:.2f}x" if name not in ("untraced",) and ours > 0 else "-"
        print(f"{name:34} {ns:8.2f} {over:9.2f} {spread:8.2f} {kept_s:>20} {bpe:>11} {ratio:>10}")
    print(f"ns/call: median round, per traced call (entry + exit); overhead: "
          f"minus untraced; spread: max - min over rounds; load after: {load()}")
    print(f"vs xrayfdr: overhead / xrayfdr (record)'s overhead "
          f"({ours:.2f} ns); above 1 means slower than xrayfdr")


if __name__ == "__main__":
    main()
