#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Overhead per traced call: xrayfdr against its peers, side by side.

One workload (calls.c: main -> mid -> 2 x leaf, noinline), ITERATIONS
times (default 10 M: 30 M calls, 60 M events), run ROUNDS times (default 5)
in interleaved order, every peer once in each round.  The peers, by the
key ONLY takes:

  untraced      no instrumentation at all (always runs: the baseline)
  floor         two rdtsc and two 8-byte stores per call, by hand
  floor-call    the same, each rdtsc and store in a function called at
                entry and exit (a sled holds a call, not the code)
  xrayfdr       thread mode, preloaded by `xrayfdr record`
  static        thread mode, libxrayfdr linked in
  cpu           xrayfdr CPU mode on rings of the runtime's own (no module
                on the host), preloaded by `xrayfdr record`
  llvm-fdr      LLVM 14's FDR mode, threshold 0, started by API calls
  llvm-basic    LLVM 14's basic mode, threshold 0
  basic         xrayfdr's basic mode (XRAY_OPTIONS=xray_mode=xray-basic,
                preloaded), threshold 0
  uftrace       uftrace record of a -pg build
  xrayfdr-5us, cpu-5us, llvm-fdr-5us
                xrayfdr, its CPU mode and LLVM FDR with LLVM's default
                duration threshold, which rewinds every call of this
                workload
  leaf-only     xrayfdr record -F leaf: mid's sleds stay untouched
  depth1        xrayfdr record --depth 1: only mid is kept, every call
                takes the C path
  stream        xrayfdr record --stream: every call written while the
                program runs, through the same 256 buffers of 64 KiB
  stream-cpu    the same in CPU mode, through the rings (256 sub-buffers
                of 64 KiB a CPU)
  cpu-discard   CPU mode with discard=true (preloaded): the rings fill
                early in the run, and every later event is dropped
  args, cpu-args, stream-args, stream-cpu-args, cpu-discard-args,
  llvm-fdr-args
                the rows xrayfdr, cpu, stream, stream-cpu, cpu-discard and
                llvm-fdr with leaf logging its argument (xray_log_args(1)):
                2 of the 3 entries write a CallArgument record; their
                "vs xrayfdr" is against args
  custom, cpu-custom, ...  (the same six)
                leaf writes a custom event of 8 bytes, its argument
                (__xray_customevent): 2 events an iteration; the program
                is linked with libxrayfdr (the sled calls its
                __xray_CustomEvent), or LLVM's runtime
  typed, cpu-typed, ...  (the same six)
                the same with a typed event (__xray_typedevent, type 1)
  trigger-mid, trigger-leaf
                xrayfdr record --trigger 'mid>1s' (or 'leaf>1s'): an armed
                duration trigger that never fires; the functions it names
                pay its timing, the others nothing
  gcc-untraced  the same workload built with GCC, no flags: the baseline of
                the GCC rows (their overhead is against it)
  gcc-nops      GCC with `xrayfdr cflags --gcc` (non-PIE), untraced: what
                the entry and return nops cost
  gcc-pic-nops  GCC with `xrayfdr cflags --gcc --pic` (PIE), untraced: the
                entry is a call to glibc's __fentry__ through the GOT
  gcc-xrayfdr, gcc-cpu, gcc-pic-xrayfdr
                those builds traced by `xrayfdr record`, thread and CPU
                mode ("vs xrayfdr" compares them with clang's XRay row)
  gcc-uftrace   uftrace record -P . (its dynamic patching) of the non-PIE
                GCC build
  lttng         LTTng-UST's function tracing (liblttng-ust-cyg-profile-
                fast, preloaded into a -finstrument-functions build),
                lossless: a channel that blocks when full (blocking
                timeout inf, LTTNG_UST_ALLOW_BLOCKING=1), 256 sub-buffers
                of 64 KiB a CPU; started and stopped around the run by
                lttng-record.sh, with a session daemon of its own

Each program times its own loop in its thread's CPU time (start-up and the
final flush excluded; time the CPU spent on other tenants excluded); the
table shows the median round, and the fastest and slowest.  The load
average is printed before, after and at the start of every round: figures
taken under load are worth less, whatever the clock.

Then, once, instructions (instr/call, after/call): each program runs
twice under valgrind's callgrind, CALLGRIND_N1 and CALLGRIND_N2 iterations
(default 100000 and 300000: every recorder still below its memory), with
the counts dumped on entering and on leaving the loop (calls.c's
run_loop).  The difference of the loop's counts over the difference of
the calls, minus the same figure of the untraced program, is what a traced
call adds (entry + exit): instr/call.  after/call is the same for all that
ran outside the loop (in every process: the final flush, writing the log,
uftrace's recording process), the work a call defers.  Counts do not
depend on the load.  valgrind refuses restartable sequences (rseq), so
libc registers no rseq area and neither can the runtime: CPU mode falls
back to thread mode there, and its rows show "-" with a footnote (as would
any row whose fast path did not run: never a figure of another path).
Thread mode's fast path runs the same instructions on an area of its own
(the CPU read by sched_getcpu(); the check that the fast path ran is in
count_instructions).  A call lasts tens of times longer under valgrind, so
the 5 us rows are counted with a 1 ms threshold, which rewinds every call
there as 5 us does natively (checked on the log).

Every row's mid leaves by a tail call (the compiler's sibling call to the
second leaf): of the three exits an iteration, one is a tail exit.  After
the table, the cost by event kind and mode, from the rows: a call (entry
and exit) is the plain rows' overhead, a call logging its argument
(3 x the args row's overhead - the plain row's) / 2, an event 3 x (the
event row's overhead - the plain row's) / 2.

Memory for the recorders: xrayfdr and LLVM FDR get the same 256 buffers of
64 KiB; both keep what fits (xrayfdr the newest events, LLVM FDR the
first), basic mode and uftrace write everything to disk.  "kept" counts
the function records in the logs.

Environment: ITERATIONS, ROUNDS, BUILD, ONLY (comma-separated keys above;
"kinds": the rows of every event kind in every mode, and floor),
CALLGRIND (0: skip the instruction counts), CALLGRIND_N1, CALLGRIND_N2.
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "tests", "pylib"))
from testenv import run, which  # noqa: E402

BUILD = os.environ.get("BUILD", "build")
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(TOP, "bench", "runtime")
OUT = os.path.abspath(os.path.join(BUILD, "bench", "runtime"))
XRAYFDR = os.path.abspath(os.path.join(BUILD, "bin", "xrayfdr"))
LIBA = os.path.abspath(os.path.join(BUILD, "lib", "libxrayfdr.a"))
# what `xrayfdr record` preloads (tools/cmd_record.c: ../lib next to it)
LIBSO = os.path.abspath(os.path.join(BUILD, "lib", "libxrayfdr.so.0"))
# what a program with event sleds links with (the sleds call
# __xray_CustomEvent and __xray_TypedEvent); `xrayfdr record` preloads the
# same library
LINK_LIB = ["-L", os.path.dirname(LIBSO), "-lxrayfdr",
            "-Wl,-rpath," + os.path.dirname(LIBSO)]
ITERATIONS = int(os.environ.get("ITERATIONS", "10000000"))
ROUNDS = int(os.environ.get("ROUNDS", "5"))
ONLY = [k for k in os.environ.get("ONLY", "").split(",") if k]
CALLGRIND = os.environ.get("CALLGRIND", "1") != "0"
N1 = int(os.environ.get("CALLGRIND_N1", "100000"))
N2 = int(os.environ.get("CALLGRIND_N2", "300000"))
CALLS_PER_ITERATION = 3
# Under valgrind a call lasts tens of times longer: the rows with LLVM's
# 5 us threshold, which natively rewind every call, are counted with this
# one, which rewinds every call there too (checked: next to nothing kept)
CG_THRESHOLD_US = 1000
BUFFER_SIZE, BUFFER_MAX = 65536, 256
# the function calls.c runs the loop in: all callgrind counts
LOOP = "run_loop"


CLANG = which("clang", "clang-14")
GCC = which("gcc")
UFTRACE = which("uftrace")
LTTNG = which("lttng")
BABELTRACE = which("babeltrace2")
LTTNG_FAST = "liblttng-ust-cyg-profile-fast.so.1"
VALGRIND = which("valgrind")


def build():
    os.makedirs(OUT, exist_ok=True)
    src = os.path.join(HERE, "calls.c")
    xray = ["-fxray-instrument", "-fnoxray-link-deps"]
    llvm = ["-fxray-instrument", "-DBENCH_LLVM", "-I", os.path.join(TOP, "lib", "include")]
    variants = {
        "untraced": [],
        "floor": ["-DBENCH_FLOOR"],
        "floor-call": ["-DBENCH_FLOOR_CALL"],
        "xray": xray,
        "xray-args": xray + ["-DBENCH_ARGS"],
        "xray-custom": xray + ["-DBENCH_CUSTOM"] + LINK_LIB,
        "xray-typed": xray + ["-DBENCH_TYPED"] + LINK_LIB,
        "xray-static": xray + ["-Wl,--whole-archive", LIBA,
                               "-Wl,--no-whole-archive", "-lelf", "-lpthread"],
        "xray-llvm": llvm,
        "xray-llvm-args": llvm + ["-DBENCH_ARGS"],
        "xray-llvm-custom": llvm + ["-DBENCH_CUSTOM"],
        "xray-llvm-typed": llvm + ["-DBENCH_TYPED"],
        "pg": ["-pg"],
        "finstr": ["-finstrument-functions"],
    }
    exes = {}
    for name, flags in variants.items():
        exe = os.path.join(OUT, f"calls-{name}")
        p = run([CLANG, "-O2", "-g", "-Wall", "-Wextra", src, "-o", exe] + flags)
        if p.returncode:
            sys.exit(f"bench: building {name}: {p.stderr}")
        exes[name] = exe
    gcc_builds = (("gcc-untraced", None), ("gcc", ["--gcc"]),
                  ("gcc-pic", ["--gcc", "--pic"]))
    for name, kind in gcc_builds if GCC else ():
        exe = os.path.join(OUT, f"calls-{name}")
        cflags = run([XRAYFDR, "cflags", *kind]).stdout.split() if kind else []
        ldflags = run([XRAYFDR, "cflags", *kind, "--ldflags"]).stdout.split() \
            if kind else []
        # compiled and linked apart: a -pg link would add gcrt1.o's profiler
        p = run([GCC, "-O2", "-g", "-Wall", "-Wextra", "-Wno-attributes", *cflags,
                 "-c", src, "-o", exe + ".o"])
        if not p.returncode:
            p = run([GCC, "-O2", exe + ".o", *ldflags, "-o", exe])
        if p.returncode or (kind and not cflags):
            sys.exit(f"bench: building {name}: {p.stderr}")
        exes[name] = exe
    return exes


def ns_of(p, what):
    m = re.search(r"\bns_per_iteration ([\d.]+)", p.stdout)
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


def logs_of(base):
    """Count and remove the logs starting with @base: (kept, bytes)."""
    logs = glob.glob(base + "*")
    kept = sum(count_function_records(l) for l in logs)
    size = sum(os.path.getsize(l) for l in logs)
    for l in logs:
        os.unlink(l)
    return kept, size


# What each peer runs for @n iterations, writing under @d: the command and
# its environment (cmd_*); what it left there, counted and removed (out_*):
# (function records kept, bytes).

def cmd_plain(exe, d, n):
    return [exe, str(n)], {}


def buffer_max_of(mode):
    # CPU mode shares buffer_max among the CPUs: give the one CPU this
    # single-threaded workload runs on what thread mode's queue holds
    return BUFFER_MAX * (os.cpu_count() or 1) if mode == "cpu" else BUFFER_MAX


def cmd_xrayfdr_record(exe, d, n, mode="thread", threshold_us=0, only=None, depth=0,
                       stream=False, trigger=None):
    log = os.path.join(d, "xrayfdr.xray")
    return [XRAYFDR, "record", "-o", log, "--buffer-size", str(BUFFER_SIZE),
            "--buffer-max", str(buffer_max_of(mode)), "--threshold-us", str(threshold_us),
            "--mode", mode] + (["-F", only] if only else []) + \
        (["--depth", str(depth)] if depth else []) + (["--stream"] if stream else []) + \
        (["--trigger", trigger, "--snapshot-dir", d] if trigger else []) + \
        [exe, str(n)], {}


def xrayfdr_options(d, mode, threshold_us, depth=0, stream=False, trigger=None,
                    discard=False):
    """XRAYFDR_OPTIONS as `xrayfdr record` sets them (tools/cmd_record.c)."""
    log = os.path.join(d, "xrayfdr.xray")
    return (f'verbosity=0 output="{log}" func_duration_threshold_us={threshold_us} '
            f"buffer_size={BUFFER_SIZE} buffer_max={buffer_max_of(mode)} mode={mode}"
            + (f" max_depth={depth}" if depth else "") + (" stream=true" if stream else "")
            + (f' trigger="{trigger}" snapshot_dir="{d}"' if trigger else "")
            + (" discard=true" if discard else ""))


def cmd_xrayfdr_preload(exe, d, n, mode="thread", threshold_us=0, only=None, depth=0,
                        stream=False, trigger=None, discard=False):
    """What `xrayfdr record` runs, without it (under valgrind; and for the
    options it has no flag for)."""
    env = {"LD_PRELOAD": LIBSO,
           "XRAYFDR_OPTIONS": xrayfdr_options(d, mode, threshold_us, depth, stream,
                                              trigger, discard)}
    if only:
        env["XRAYFDR_FILTER"] = "+" + only
    return [exe, str(n)], env


def cmd_xrayfdr_static(exe, d, n):
    return [exe, str(n)], {"XRAYFDR_OPTIONS": xrayfdr_options(d, "thread", 0)}


def llvm_fdr(d, threshold_us=0):
    """The arguments that start LLVM's FDR mode in a program built with
    bench.h (after its own), and its environment."""
    base = os.path.join(d, "llvm-fdr-")
    return (["fdr", f"func_duration_threshold_us={threshold_us} "
             f"buffer_size={BUFFER_SIZE} buffer_max={BUFFER_MAX}"],
            {"XRAY_OPTIONS": f"xray_mode=xray-fdr xray_logfile_base={base}"})


def cmd_llvm_fdr(exe, d, n, threshold_us=0):
    args, env = llvm_fdr(d, threshold_us)
    return [exe, str(n)] + args, env


def cmd_llvm_basic(exe, d, n, preload=None):
    """LLVM's basic mode, of LLVM's runtime or (@preload) ours."""
    base = os.path.join(d, "llvm-basic-")
    env = {"XRAY_OPTIONS": f"patch_premain=true xray_mode=xray-basic xray_logfile_base={base}",
           "XRAY_BASIC_OPTIONS": "func_duration_threshold_us=0"}
    if preload:
        env["LD_PRELOAD"] = preload
    return [exe, str(n)], env


def cmd_uftrace(exe, d, n, patch=False):
    """uftrace of a -pg build, or (@patch) its dynamic patching (-P .)."""
    data = os.path.join(d, "uftrace.data")
    shutil.rmtree(data, ignore_errors=True)
    return [UFTRACE, "record", "--no-libcall", *(["-P", "."] if patch else []),
            "-d", data, exe, str(n)], {}


def cmd_lttng(exe, d, n):
    return ["sh", os.path.join(HERE, "lttng-record.sh"), os.path.join(d, "lttng"),
            str(BUFFER_SIZE), str(BUFFER_MAX), exe, str(n)], \
        {"LD_PRELOAD": LTTNG_FAST, "LTTNG_UST_ALLOW_BLOCKING": "1"}


def out_lttng(d):
    """Events in the CTF trace (babeltrace2's counter) and its bytes."""
    trace = os.path.join(d, "lttng")
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(trace)
               for f in fs)
    meta = glob.glob(os.path.join(trace, "**", "metadata"), recursive=True)
    kept = None
    if meta and BABELTRACE:
        # (the counter prints its totals as it goes: the last are final)
        p = run([BABELTRACE, os.path.dirname(meta[0]),
                 "--component=count:sink.utils.counter"])
        m = re.findall(r"^\s*(\d+) Event messages", p.stdout, re.M)
        kept = int(m[-1]) if m else None
    shutil.rmtree(trace, ignore_errors=True)
    return kept, size


def out_xrayfdr(d):
    return logs_of(os.path.join(d, "xrayfdr.xray"))


def out_llvm_fdr(d):
    return logs_of(os.path.join(d, "llvm-fdr-"))


def out_llvm_basic(d):
    logs = glob.glob(os.path.join(d, "llvm-basic-") + "*")
    size = sum(os.path.getsize(l) for l in logs)
    kept = sum((os.path.getsize(l) - 32) // 32 for l in logs)  # 32-byte records
    for l in logs:
        os.unlink(l)
    return kept, size


def out_uftrace(d):
    data = os.path.join(d, "uftrace.data")
    size = sum(os.path.getsize(f) for f in glob.glob(os.path.join(data, "*.dat")))
    shutil.rmtree(data, ignore_errors=True)
    return size // 16, size  # uftrace writes 16-byte records


def out_none(d):
    return None, None


def clean(d):
    """Remove what a peer left in @d, uncounted."""
    for f in os.listdir(d):
        f = os.path.join(d, f)
        if os.path.isdir(f):
            shutil.rmtree(f)
        else:
            os.unlink(f)


class Peer:
    """One row: @exe run by @cmd(d, n) -> (argv, env), timed, leaving
    what @out counts; @count (default @cmd) is run under valgrind, where
    @expect, if any, must run (the fast path it takes natively: a function
    name, or THREAD_FAST); @cpu_mode:
    it asks for xrayfdr's CPU mode; @threshold: natively it rewinds every
    call (a duration threshold); @lossless: it keeps every event, which
    its count under valgrind must too, to be its native path; @base: the
    untraced row of its compiler."""

    def __init__(self, key, name, exe, cmd, out=out_none, count=None, expect=None,
                 cpu_mode=False, threshold=False, lossless=False, base="untraced",
                 vs="xrayfdr"):
        self.key, self.name, self.exe, self.cmd = key, name, exe, cmd
        self.base = base  # the row its overhead is against
        self.vs = vs  # the thread-mode row "vs thread" compares it with
        self.out, self.count = out, count or cmd
        self.expect, self.cpu_mode, self.threshold = expect, cpu_mode, threshold
        self.lossless = lossless
        self.rounds = []  # (ns per call, kept, bytes) of each round
        self.instr, self.after = None, None
        self.notes = []  # footnotes on its instruction counts
        self.loop_notes = []  # on instr/call alone (a lower bound)


# xrayfdr's thread mode runs its fast path from copies it maps next to the
# program (lib/arch/x86_64/fastcopy.c), which callgrind names by address,
# or from the library's rt_tramp_* where it could not make one
THREAD_FAST = "rt_tramp_entry or a copy"


def ran(expect, fns):
    if expect == THREAD_FAST:
        return "rt_tramp_entry" in fns or any(re.match(r"0x[0-9a-f]+$", f) for f in fns)
    return expect in fns


def peers_of(exes):
    x, llvm, static = exes["xray"], exes["xray-llvm"], exes["xray-static"]

    def rec(mode="thread", threshold_us=0, **kw):
        return lambda d, n: cmd_xrayfdr_record(x, d, n, mode, threshold_us, **kw)

    def pre(mode="thread", threshold_us=0, **kw):
        return lambda d, n: cmd_xrayfdr_preload(x, d, n, mode, threshold_us, **kw)

    def fdr(threshold_us=0):
        return lambda d, n: cmd_llvm_fdr(llvm, d, n, threshold_us)

    def plain(exe):
        return lambda d, n: cmd_plain(exe, d, n)

    peers = [
        Peer("untraced", "untraced", exes["untraced"], plain(exes["untraced"])),
        Peer("floor", "floor: 2 rdtsc + stores", exes["floor"], plain(exes["floor"])),
        Peer("floor-call", "floor through 2 calls", exes["floor-call"],
             plain(exes["floor-call"])),
        Peer("xrayfdr", "xrayfdr (record)", x, rec(), out_xrayfdr, pre(),
             THREAD_FAST),
        Peer("static", "xrayfdr (static)", static,
             lambda d, n: cmd_xrayfdr_static(static, d, n), out_xrayfdr,
             expect=THREAD_FAST),
        Peer("cpu", "xrayfdr CPU mode (record)", x, rec("cpu"), out_xrayfdr, pre("cpu"),
             "rt_cpu_tramp_entry", cpu_mode=True),
        Peer("llvm-fdr", "LLVM XRay FDR", llvm, fdr(), out_llvm_fdr,
             expect="__xray_FunctionEntry"),
        Peer("llvm-basic", "LLVM XRay basic", llvm,
             lambda d, n: cmd_llvm_basic(llvm, d, n), out_llvm_basic,
             expect="__xray_FunctionEntry"),
        Peer("basic", "xrayfdr's xray-basic", x,
             lambda d, n: cmd_llvm_basic(x, d, n, LIBSO), out_llvm_basic),
    ]
    if UFTRACE:
        peers.append(Peer("uftrace", "uftrace -pg", exes["pg"],
                          lambda d, n: cmd_uftrace(exes["pg"], d, n), out_uftrace,
                          expect="mcount"))
    # LLVM's default threshold: every call here is shorter, all rewound
    peers += [
        Peer("xrayfdr-5us", "xrayfdr, threshold 5 us", x, rec(threshold_us=5),
             out_xrayfdr, pre(threshold_us=CG_THRESHOLD_US), threshold=True),
        Peer("cpu-5us", "xrayfdr CPU mode, threshold 5 us", x, rec("cpu", 5),
             out_xrayfdr, pre("cpu", CG_THRESHOLD_US), "rt_cpu_tramp_entry",
             cpu_mode=True, threshold=True),
        Peer("llvm-fdr-5us", "LLVM XRay FDR, threshold 5 us", llvm, fdr(5),
             out_llvm_fdr, fdr(CG_THRESHOLD_US), threshold=True),
    ]
    # record-time selection: -F leaf leaves mid's sleds untouched (2 of
    # the 3 calls traced); --depth 1 keeps mid alone, with every call on
    # the C path, which counts the depth
    peers += [
        Peer("leaf-only", "xrayfdr -F leaf (2 of 3 calls)", x, rec(only="leaf"),
             out_xrayfdr, pre(only="leaf"), THREAD_FAST),
        Peer("depth1", "xrayfdr --depth 1 (1 of 3 kept)", x, rec(depth=1),
             out_xrayfdr, pre(depth=1), "rt_fdr_light"),
        # lossless: the same memory, every call written as it runs
        Peer("stream", "xrayfdr --stream (every call)", x, rec(stream=True),
             out_xrayfdr, pre(stream=True), THREAD_FAST, lossless=True),
        Peer("stream-cpu", "xrayfdr --stream CPU mode", x, rec("cpu", stream=True),
             out_xrayfdr, pre("cpu", stream=True), "rt_cpu_tramp_entry",
             cpu_mode=True, lossless=True),
        # discard: a full ring drops every later event
        Peer("cpu-discard", "xrayfdr CPU mode, discard", x, pre("cpu", discard=True),
             out_xrayfdr, expect="rt_cpu_tramp_entry", cpu_mode=True),
    ]
    # the other event kinds, in the modes of the plain rows
    peers += kind_peers(exes, "args", "rt_cpu_tramp_args")
    peers += kind_peers(exes, "custom", "rt_cpu_tramp_entry")
    peers += kind_peers(exes, "typed", "rt_cpu_tramp_entry")
    peers += [
        # an armed duration trigger that never fires: what the calls of
        # the functions it names pay (the others keep their sleds' path)
        Peer("trigger-mid", "xrayfdr --trigger 'mid>1s' (1 of 3 named)", x,
             rec(trigger="mid>1s"), out_xrayfdr, pre(trigger="mid>1s"), "rt_trig_fdr_entry"),
        Peer("trigger-leaf", "xrayfdr --trigger 'leaf>1s' (2 of 3 named)", x,
             rec(trigger="leaf>1s"), out_xrayfdr, pre(trigger="leaf>1s"), "rt_trig_fdr_entry"),
    ]
    if "gcc" in exes:
        peers += gcc_peers(exes)
    if LTTNG and BABELTRACE and os.path.exists(os.path.join(
            "/usr/lib/x86_64-linux-gnu", LTTNG_FAST)):
        peers.append(Peer("lttng", "LTTng-UST, blocking (every call)", exes["finstr"],
                          lambda d, n: cmd_lttng(exes["finstr"], d, n), out_lttng,
                          expect="__cyg_profile_func_enter", lossless=True))
    keys = [p.key for p in peers]
    # "kinds": every event kind in every mode, and the floor
    only = [k for o in ONLY for k in (
        ["floor"] + [kind_key(m[0], kind) if kind else m[0] for kind in
                     (None, "args", "custom", "typed") for m in KIND_MODES]
        if o == "kinds" else [o])]
    unknown = [k for k in only if k not in keys]
    if unknown:
        sys.exit(f"bench: ONLY: unknown {', '.join(unknown)} (keys: kinds, "
                 f"{', '.join(keys)})")
    if only:
        # with the baselines the chosen rows need
        want = set(only) | {"untraced"} | {p.base for p in peers if p.key in only} \
            | {p.vs for p in peers if p.key in only}
        peers = [p for p in peers if p.key in want]
    return peers


# The modes of the plain rows, which every event kind is measured in:
# (the plain row's key, its name, xrayfdr's mode and options)
KIND_MODES = (("xrayfdr", "xrayfdr", "thread", {}),
              ("cpu", "xrayfdr CPU mode", "cpu", {}),
              ("stream", "xrayfdr --stream", "thread", {"stream": True}),
              ("stream-cpu", "xrayfdr --stream CPU", "cpu", {"stream": True}),
              ("cpu-discard", "xrayfdr CPU, discard", "cpu", {"discard": True}),
              ("llvm-fdr", "LLVM XRay FDR", None, {}))


def kind_key(plain, kind):
    """The key of the @kind row of the plain row @plain."""
    return kind if plain == "xrayfdr" else f"{plain}-{kind}"


def kind_peers(exes, kind, cpu_expect):
    """The rows of the build xray-@kind (and xray-llvm-@kind), one for
    each of KIND_MODES; thread mode's is the one they are compared with."""
    x, llvm = exes[f"xray-{kind}"], exes[f"xray-llvm-{kind}"]
    peers = []
    for plain, name, mode, kw in KIND_MODES:
        key = kind_key(plain, kind)
        if mode is None:
            peers.append(Peer(key, f"{name} +{kind}", llvm,
                              lambda d, n: cmd_llvm_fdr(llvm, d, n), out_llvm_fdr,
                              expect="__xray_FunctionEntry", vs=kind))
            continue
        # `xrayfdr record` has no flag for discard: the preload alone
        pre = (lambda mode, kw: lambda d, n: cmd_xrayfdr_preload(x, d, n, mode, **kw))(
            mode, kw)
        rec = (lambda mode, kw: lambda d, n: cmd_xrayfdr_record(x, d, n, mode, **kw))(
            mode, kw) if "discard" not in kw else pre
        peers.append(Peer(key, f"{name} +{kind}", x, rec, out_xrayfdr, pre,
                          cpu_expect if mode == "cpu" else THREAD_FAST,
                          cpu_mode=mode == "cpu", lossless="stream" in kw, vs=kind))
    return peers


def gcc_peers(exes):
    """The GCC rows (xrayfdr cflags --gcc), against GCC's untraced build."""
    g, gp, untraced = exes["gcc"], exes["gcc-pic"], exes["gcc-untraced"]

    def plain(exe):
        return dict(cmd=lambda d, n: cmd_plain(exe, d, n), base="gcc-untraced")

    def rec(exe, mode="thread"):
        return dict(cmd=lambda d, n: cmd_xrayfdr_record(exe, d, n, mode),
                    count=lambda d, n: cmd_xrayfdr_preload(exe, d, n, mode),
                    out=out_xrayfdr, cpu_mode=mode == "cpu", base="gcc-untraced",
                    expect="rt_cpu_tramp_entry" if mode == "cpu" else THREAD_FAST)

    peers = [
        Peer("gcc-untraced", "GCC untraced", untraced, **plain(untraced)),
        Peer("gcc-nops", "GCC nops, untraced", g, **plain(g)),
        Peer("gcc-pic-nops", "GCC -fPIC (PIE), untraced", gp, **plain(gp)),
        Peer("gcc-xrayfdr", "GCC xrayfdr (record)", g, **rec(g)),
        Peer("gcc-cpu", "GCC xrayfdr CPU mode (record)", g, **rec(g, "cpu")),
        Peer("gcc-pic-xrayfdr", "GCC PIE xrayfdr (record)", gp, **rec(gp)),
    ]
    if UFTRACE:
        peers.append(Peer("gcc-uftrace", "GCC uftrace -P .", g,
                          lambda d, n: cmd_uftrace(g, d, n, patch=True), out_uftrace,
                          base="gcc-untraced"))
    return peers


# What a timed run may say on stderr that changes what its figure means
REMARKS = {
    "Unable to determine CPU frequency":
        "LLVM XRay found no TSC frequency here (no /sys/devices/system/cpu/cpu0/"
        "tsc_freq_khz): it timestamps with clock_gettime(), not rdtscp",
    "needs restartable sequences":
        "xrayfdr: CPU mode fell back to thread mode (rseq refused)",
}


def time_one(peer, d, remarks):
    argv, env = peer.cmd(d, ITERATIONS)
    p = run(argv, env=env)
    ns = ns_of(p, peer.name)
    peer.rounds.append((ns,) + peer.out(d))
    for pattern, remark in REMARKS.items():
        if pattern in p.stderr:
            remarks.setdefault(remark, []).append(peer.name)


# What the vDSO serves natively: valgrind has none, and makes them system
# calls, whose work in the kernel it does not count
VDSO_CALLS = re.compile(r"(__)?(clock_gettime|gettimeofday|time|sched_getcpu|getcpu)"
                        r"(64)?(@.*)?$")


def loop_part(text):
    """Functions that ran in a callgrind part, and how many calls the
    others made to VDSO_CALLS."""
    names, fns, vdso, caller = {}, set(), 0, None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"(c?fn)=\((\d+)\)(?: (.+))?$", line)
        if not m:
            continue
        if m.group(3):
            names[m.group(2)] = m.group(3)
        name = names.get(m.group(2), "")
        if m.group(1) == "fn":
            caller = name
            fns.add(name)
        elif (VDSO_CALLS.match(name) and not VDSO_CALLS.match(caller or "") and
              i + 1 < len(lines) and lines[i + 1].startswith("calls=")):
            vdso += int(lines[i + 1][6:].split()[0])
    return fns, vdso


def callgrind(argv, env, exe, d):
    """Run @argv under callgrind, dumping the counts on entering and on
    leaving @exe's loop.  Return a dict: the instructions in the loop and
    outside it (in every process), the functions that ran in the loop, the
    calls it made to the vDSO's functions; or None and why."""
    cgdir = tempfile.mkdtemp(prefix="cg-", dir=d)
    vg = [VALGRIND, "--tool=callgrind", f"--dump-before={LOOP}", f"--dump-after={LOOP}",
          "--trace-children=yes", f"--callgrind-out-file={cgdir}/cg.%p"]
    p = run(vg + argv, env=env)
    r, total = None, 0
    for f in glob.glob(os.path.join(cgdir, "cg.*")):
        with open(f, errors="replace") as fp:
            text = fp.read()
        m = re.search(r"^(?:totals|summary):\s*(\d+)", text, re.M)
        total += int(m.group(1)) if m else 0
        # the loop's part, in the program's own process (uftrace runs it
        # as a child)
        cmd = re.search(r"^cmd:\s*(\S+)", text, re.M)
        if (m and cmd and cmd.group(1) == exe and
                re.search(rf"^desc: Trigger: --dump-after={LOOP}", text, re.M)):
            fns, vdso = loop_part(text)
            r = {"loop": int(m.group(1)), "fns": fns, "vdso": vdso}
    shutil.rmtree(cgdir, ignore_errors=True)
    if p.returncode or "ns_per_iteration" not in p.stdout:
        how = (f"killed by {signal.Signals(-p.returncode).name}" if p.returncode < 0
               else f"exit {p.returncode}")
        # its own last words, not valgrind's (pids would split the footnote)
        said = [l for l in p.stderr.splitlines()
                if l.strip() and not l.startswith(("==", "--", "###"))]
        return None, how + (f": {said[-1][:160]}" if said else "")
    if r is None:
        return None, f"no callgrind count of {LOOP}() in {exe}"
    r["after"] = total - r["loop"]
    return r, p.stderr


def uncountable(peer, r, err, kept, n):
    """Why @peer's callgrind run @r of @n iterations is not its native
    path, or None."""
    if r is None:
        return f"it failed under valgrind ({err})"
    if peer.cpu_mode and "needs restartable sequences" in err:
        return ("CPU mode needs restartable sequences (rseq), which valgrind "
                "refuses: the runtime fell back to thread mode")
    if peer.expect and not ran(peer.expect, r["fns"]):
        return f"its fast path ({peer.expect}) did not run under valgrind"
    made = 2 * CALLS_PER_ITERATION * n
    if peer.lossless and (kept or 0) < made:
        return (f"under valgrind it kept {kept or 0} of the {made} events made "
                "(natively all): another path")
    if peer.threshold and kept > 0.01 * made:
        return (f"under valgrind its calls outlast even a {CG_THRESHOLD_US} us "
                f"threshold: {kept} events kept of {made} (natively next to none), "
                "another path")
    return None


def count_instructions(peers, d):
    """instr/call and after/call of every peer, relative to untraced, and
    notes: why a peer cannot be counted, or what its count leaves out."""
    calls = CALLS_PER_ITERATION * (N2 - N1)
    per_call = {}
    for peer in peers:
        runs = []
        for n in (N1, N2):
            argv, env = peer.count(d, n)
            r, err = callgrind(argv, env, peer.exe, d)
            kept = peer.out(d)[0] if r and (peer.threshold or peer.lossless) else None
            clean(d)
            why = uncountable(peer, r, err, kept, n)
            if why:
                peer.notes.append(why)
                break
            runs.append(r)
        if len(runs) < 2:
            continue
        per_call[peer.key] = [(runs[1][k] - runs[0][k]) / calls
                              for k in ("loop", "after", "vdso")]
        if peer.threshold:
            peer.notes.append(f"counted with a {CG_THRESHOLD_US} us threshold: under "
                              "valgrind calls last tens of times longer, and 5 us "
                              "would keep some; this rewinds every call, as 5 us "
                              "does natively")
    for peer in peers:
        base = per_call.get(peer.base)
        if peer.key not in per_call:
            continue
        if base is None:
            peer.notes.append("the untraced baseline could not be counted")
            continue
        peer.instr, peer.after, vdso = [x - b for x, b in zip(per_call[peer.key], base)]
        if vdso >= 0.01:
            peer.loop_notes.append(
                f"a lower bound: {vdso:.1f} clock_gettime() or the like per call, which "
                "the vDSO serves natively in user space (some 60 instructions each, "
                "rdtscp included, with the TSC clock source); valgrind has no vDSO "
                "and makes them system calls, whose kernel work it does not count")


def lttng_daemons():
    """Process ids of the LTTng session daemons running."""
    p = run(["pgrep", "-x", "lttng-sessiond"])
    return {int(x) for x in p.stdout.split()}


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    if not CLANG:
        sys.exit("bench: clang is missing (make deps)")
    if N2 <= N1:
        sys.exit("bench: CALLGRIND_N2 must be larger than CALLGRIND_N1")
    exes = build()
    peers = peers_of(exes)
    daemons_before = lttng_daemons()
    d = tempfile.mkdtemp(prefix="xrayfdr-bench-", dir=OUT)
    print(f"workload: main -> mid -> 2 x leaf, {ITERATIONS} iterations "
          f"({CALLS_PER_ITERATION * ITERATIONS} calls), {ROUNDS} rounds interleaved, "
          f"timed in thread CPU time; load before: {load()}")
    sys.stdout.flush()
    t0 = time.monotonic()
    remarks = {}
    for r in range(ROUNDS):
        print(f"round {r + 1}/{ROUNDS}, load {load()}")
        sys.stdout.flush()
        for peer in peers:
            time_one(peer, d, remarks)
    rounds_s = time.monotonic() - t0
    print(f"rounds: {rounds_s:.0f} s; load after: {load()}")

    if not CALLGRIND:
        cg_note = "instr/call, after/call: not counted (CALLGRIND=0)"
    elif not VALGRIND:
        cg_note = "instr/call, after/call: not counted (no valgrind: apt-get install valgrind)"
    else:
        print(f"instruction counts: callgrind, {N1} and {N2} iterations, "
              f"load {load()}")
        sys.stdout.flush()
        t0 = time.monotonic()
        count_instructions(peers, d)
        cg_note = (f"instruction counts: {time.monotonic() - t0:.0f} s; "
                   f"load after: {load()}")
    shutil.rmtree(d, ignore_errors=True)
    # the LTTng session daemon lttng-record.sh started, if it did
    for pid in lttng_daemons() - daemons_before:
        os.kill(pid, signal.SIGTERM)
    print(cg_note)
    table(peers)
    for remark, names in remarks.items():
        print(f"note: {remark} ({', '.join(dict.fromkeys(names))})")


def table(peers):
    def median(peer):
        rows = sorted(peer.rounds, key=lambda x: x[0])
        return rows[len(rows) // 2]

    by_key = {p.key: p for p in peers}

    def overhead(key):
        if key not in by_key:
            return None
        return median(by_key[key])[0] - median(by_key[by_key[key].base])[0]

    ours, floor = overhead("xrayfdr"), overhead("floor")
    made = 2 * CALLS_PER_ITERATION * ITERATIONS
    notes = []

    def ratio(over, to):
        return f"{over / to:.2f}x" if to and to > 0 else "-"

    def instr(value, these, bound=False):
        """@value, ">" before if @bound, with the footnotes @these."""
        shown = "-" if value is None else f"{round(value, 1) + 0.0:.1f}"  # (no -0.0)
        if value is not None and bound:
            shown = ">" + shown
        for note in these:
            if note not in notes:
                notes.append(note)
        marks = ",".join(str(i) for i in sorted(notes.index(n) + 1 for n in these))
        return f"{shown}[{marks}]" if marks else shown

    print(f"\n{'peer':33} {'ns/call':>7} {'min':>7} {'max':>7} {'overhead':>8} "
          f"{'vs floor':>8} {'vs xrayfdr':>10} {'instr/call':>12} {'after/call':>10} "
          f"{'kept/made events':>18} {'bytes/event':>11}")
    for peer in peers:
        ns, kept, size = median(peer)
        over = overhead(peer.key)
        traced = peer.key != peer.base
        kept_s = f"{kept}/{made}" if kept is not None else "-"
        print(f"{peer.name:33} {ns:7.2f} {min(r[0] for r in peer.rounds):7.2f} "
              f"{max(r[0] for r in peer.rounds):7.2f} {over:8.2f} "
              f"{ratio(over, floor) if traced else '-':>8} "
              f"{ratio(over, overhead(peer.vs)) if traced else '-':>10} "
              f"{instr(peer.instr, peer.notes + peer.loop_notes, bool(peer.loop_notes)):>12} "
              f"{instr(peer.after, peer.notes):>10} "
              f"{kept_s:>18} {f'{size / kept:.1f}' if kept else '-':>11}")
    print("ns/call: per traced call (entry + exit), in the program's thread CPU time, "
          "median round;\n"
          "  min, max: fastest and slowest round; overhead: ns/call minus untraced's "
          "(GCC rows: GCC untraced's)\n"
          "vs floor, vs xrayfdr: overhead / the overhead of floor (1.00x: at the floor), "
          "of xrayfdr (record)\n  (the rows of an event kind, +args, +custom, +typed: "
          "of that kind's thread-mode row)\n"
          "instr/call: instructions a traced call adds in the loop (entry + exit), "
          "minus untraced's (callgrind:\n"
          "  the loop's count at two run lengths, difference over the difference of "
          "calls); not affected by load\n"
          "after/call: the same for what runs outside the loop, in every process: "
          "the final flush, writing\n"
          "  the log (uftrace: its recording process): work a call defers, not in "
          "ns/call (runs short enough\n"
          "  that every recorder keeps all: at ITERATIONS, those that keep a window "
          "flush only that)\n"
          "kept/made: function records in the logs (median round) / events made; "
          "bytes/event: log bytes per kept record")
    figures = [f"{name}'s overhead {over:.2f} ns" for name, over in
               (("floor", floor), ("xrayfdr (record)", ours)) if over is not None]
    if figures:
        print("; ".join(figures))
    for i, n in enumerate(notes):
        print(f"[{i + 1}] {n}")
    kind_table(overhead)


def kind_table(overhead):
    """ns per event kind in each mode of KIND_MODES, from @overhead(key)
    (ns a call over untraced, None for a row that did not run)."""
    kinds = (("call (entry + exit)", None, lambda o, plain: o),
             ("call logging its argument", "args", lambda o, plain: (3 * o - plain) / 2),
             ("custom event, 8 bytes", "custom", lambda o, plain: 3 * (o - plain) / 2),
             ("typed event, 8 bytes", "typed", lambda o, plain: 3 * (o - plain) / 2))
    lines = []
    for what, kind, cost in kinds:
        cells = []
        for plain, _, _, _ in KIND_MODES:
            o, p = overhead(kind_key(plain, kind) if kind else plain), overhead(plain)
            cells.append("-" if o is None or p is None else f"{cost(o, p):.1f}")
        if any(c != "-" for c in cells):
            lines.append(f"{what:26} " + " ".join(f"{c:>11}" for c in cells))
    if not lines:
        return
    print(f"\ncost by event kind, ns (over untraced; in each program's thread CPU time, "
          f"median round)\n{'':26} " +
          " ".join(f"{m:>11}" for m in ("thread", "CPU", "stream", "stream CPU",
                                        "CPU discard", "LLVM FDR")))
    for line in lines:
        print(line)
    print("call: the plain rows' overhead; call logging its argument: (3 x the +args "
          "row's overhead - the plain\n  row's) / 2; event: 3 x (the event row's "
          "overhead - the plain row's) / 2 (2 events an\n  iteration, a call's "
          "overhead is a third of an iteration's)")


if __name__ == "__main__":
    main()
