#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The runtime's test matrix: real programs traced by libxrayfdr.

Every program in tests/runtime/progs/ is built with clang
-fxray-instrument -fxray-instruction-threshold=1, as C and as C++ (the C++
ones as C++ only), at -O0 and -O2, twice from the same objects: linked
without LLVM's XRay runtime (for us: `xrayfdr record` preloads libxrayfdr)
and with it (for LLVM's basic mode, threshold 0).  Each program counts its
own calls and prints the counts.  For each cell:

  counts     the entries in our log equal the program's own counters
             (signals: up to the events the log reports as dropped)
  vs-llvm    per function id, our entries and exits equal those of LLVM's
             basic mode on the same objects
  verify     `llvm-xray fdr-dump -verify` and `xrayfdr dump --verify`
             accept every log
  account    `llvm-xray account -instr_map` names the counted functions

plus the API programs (LLVM's API, our own), LLVM's FDR test program
linked against libxrayfdr, patching under load, FDR version 1, and the
environment-only start-up.  Prints TAP.
"""
import collections
import concurrent.futures
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "pylib"))
import testenv  # noqa: E402
from testenv import which  # noqa: E402

BUILD = os.environ.get("BUILD", "build")
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGS = os.path.join(TOP, "tests", "runtime", "progs")
OUT = os.path.abspath(os.path.join(BUILD, "tests", "runtime", "matrix"))
XRAYFDR = os.path.abspath(os.path.join(BUILD, "bin", "xrayfdr"))
LIBDIR = os.path.abspath(os.path.join(BUILD, "lib"))
INCLUDE = os.path.join(TOP, "lib", "include")


CLANG = which("clang", "clang-14")
CLANGXX = which("clang++", "clang++-14")
LLVM_XRAY = which("llvm-xray", "llvm-xray-14")
NM = which("nm")

results = []


_pending = threading.local()


def tap(ok, name, diag="", skip=None):
    """Print a TAP line, or keep it while a cell runs on a worker thread."""
    held = getattr(_pending, "lines", None)
    if held is not None:
        held.append((ok, name, diag, skip))
        return
    n = len(results) + 1
    if skip:
        results.append(True)
        print(f"ok {n} - {name} # SKIP {skip}")
    else:
        results.append(ok)
        print(f"{'ok' if ok else 'not ok'} {n} - {name}")
        if not ok:
            for line in diag.splitlines()[:25]:
                print(f"# {line}")
    sys.stdout.flush()


def held_taps(fn, *args):
    """Run @fn, keeping its TAP lines to print later, in order."""
    _pending.lines = []
    try:
        fn(*args)
    except Exception as e:  # a harness problem is a failure, not a crash
        tap(False, f"{fn.__name__}{args}: harness", repr(e))
    lines, _pending.lines = _pending.lines, None
    return lines


def run(cmd, env=None, timeout=300, **kw):
    return testenv.run(cmd, env=env, timeout=timeout, **kw)


class Prog:
    def __init__(self, name, sources, cxx_only=False, with_lib=False,
                 llvm="all", account=True, shared=None,
                 threads=False, args=None):
        self.name = name
        self.sources = sources
        self.cxx_only = cxx_only
        self.with_lib = with_lib      # our link needs -lxrayfdr (events)
        self.llvm = llvm              # compare with LLVM basic: all/main/some
        self.account = account
        self.shared = shared          # sources of an instrumented .so
        self.threads = threads        # llvm-xray account misreads these
        self.args = args or set()     # functions whose logged args to compare


MATRIX = [
    Prog("recursion", ["recursion.c"]),
    Prog("tailcalls", ["tailcalls.c"]),
    Prog("threads", ["threads.c"], threads=True),
    Prog("thread_exit", ["thread_exit.c"], threads=True),
    Prog("longjmp", ["longjmp.c"]),
    # how often busy() runs and signals coalesce differ from run to run
    Prog("signals", ["signals.c"], llvm={"raiser"}, threads=True),
    Prog("fork", ["fork.c"], llvm=None, threads=True),
    Prog("args", ["args.c"], args={"with_arg"}),
    # llvm-xray 14 refuses binaries with typed-event sleds
    Prog("events", ["events.c"], with_lib=True, account=False),
    Prog("shared", ["shared.c"], shared=["libtraced.c"], llvm="main"),
    Prog("exceptions", ["exceptions.cc"], cxx_only=True),
    Prog("cxx", ["cxx.cc"], cxx_only=True, threads=True),
]

XRAY_FLAGS = ["-fxray-instrument", "-fxray-instruction-threshold=1"]


_built_cells = {}


def compile_cell(prog, lang, opt):
    """Objects once, then our link and LLVM's; returns a dict of paths.
    Each cell is built once per run, whichever check asks first."""
    key = (prog.name, lang, opt)
    if key not in _built_cells:
        _built_cells[key] = _compile_cell(prog, lang, opt)
    return _built_cells[key]


def _compile_cell(prog, lang, opt):
    d = os.path.join(OUT, f"{prog.name}-{lang}{opt}")
    os.makedirs(d, exist_ok=True)
    cc = CLANGXX if lang == "c++" else CLANG
    base = [cc, opt, "-g", "-pthread", "-I", PROGS, "-I", INCLUDE] + XRAY_FLAGS
    xlang = ["-x", "c++"] if lang == "c++" and not prog.cxx_only else []
    objs = []
    for src in prog.sources:
        obj = os.path.join(d, os.path.splitext(src)[0] + ".o")
        p = run(base + xlang + ["-c", os.path.join(PROGS, src), "-o", obj])
        if p.returncode:
            return {"error": f"compile {src}: {p.stderr}"}
        objs.append(obj)
    extra = []
    out = {"dir": d}
    if prog.shared:
        so = os.path.join(d, "libtraced.so")
        p = run(base + xlang + ["-fPIC", "-shared", "-fnoxray-link-deps", "-o", so] +
                [os.path.join(PROGS, s) for s in prog.shared])
        if p.returncode:
            return {"error": f"shared object: {p.stderr}"}
        extra = [so, f"-Wl,-rpath,{d}"]
        out["so"] = so
    ours = os.path.join(d, prog.name)
    lib = ["-L", LIBDIR, "-lxrayfdr", f"-Wl,-rpath,{LIBDIR}"] if prog.with_lib else []
    p = run([cc, "-pthread", "-fxray-instrument", "-fnoxray-link-deps", "-o", ours]
            + objs + extra + lib)
    if p.returncode:
        return {"error": f"link (ours): {p.stderr}"}
    out["ours"] = ours
    llvm = os.path.join(d, prog.name + "-llvm")
    p = run([cc, "-pthread", "-fxray-instrument", "-o", llvm] + objs + extra)
    if p.returncode:
        return {"error": f"link (LLVM): {p.stderr}"}
    out["llvm"] = llvm
    return out


def events_of(log):
    p = run([XRAYFDR, "dump", "--events", "--json", log])
    if p.returncode:
        raise RuntimeError(f"xrayfdr dump --events {log}: {p.stderr.strip()}")
    return [json.loads(l) for l in p.stdout.splitlines()[1:]]


ENTRY_KINDS = {"function-enter", "function-enter-arg"}
EXIT_KINDS = {"function-exit", "function-tail-exit"}


def tally(events):
    """(pid, func_id, 'entry'|'exit') -> count; args; events; info text.
    The runtime's own thread-name events are not the program's events."""
    counts = collections.Counter()
    args = collections.Counter()
    other = collections.Counter()
    info = ""
    for e in events:
        k = e["kind"]
        if k in ENTRY_KINDS:
            counts[(e["pid"], e["func_id"], "entry")] += 1
            for a in e.get("args", []):
                args[(e["func_id"], a)] += 1
        elif k in EXIT_KINDS:
            counts[(e["pid"], e["func_id"], "exit")] += 1
        elif "thread_name" in e:
            continue
        else:
            data = bytes.fromhex(e.get("data", ""))
            if data.startswith(b"xrayfdr-info 1\n"):
                info = data.decode()
            else:
                other[(e["pid"], k)] += 1
    return counts, args, other, info


def info_value(info, key):
    m = re.search(rf"^{key}=(\d+)$", info, re.M)
    return int(m.group(1)) if m else 0


def symbol_ids(binary, first_id=1):
    """symbol -> function id, from nm and our instrumentation map."""
    p = run([XRAYFDR, "extract", binary])
    if p.returncode:
        raise RuntimeError(p.stderr)
    by_addr = {}
    for m in re.finditer(r"id: (\d+), address: 0x[0-9A-F]+, function: 0x([0-9A-F]+)",
                         p.stdout):
        by_addr[int(m.group(2), 16)] = int(m.group(1)) + first_id - 1
    ids = {}
    for line in run([NM, "--defined-only", "-C", binary]).stdout.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and int(parts[0], 16) in by_addr:
            ids[short_name(parts[2])] = by_addr[int(parts[0], 16)]
    return ids


def short_name(demangled):
    """'long twice<long>(long)' -> 'twice<long>', 'S::f() const' -> 'S::f'."""
    return demangled.split("(")[0].split()[-1] if demangled else demangled


def program_counts(stdout):
    counts = {}
    for m in re.finditer(r"^count (\d+) (\S+) (\d+)$", stdout, re.M):
        counts[(int(m.group(1)), m.group(2))] = int(m.group(3))
    return counts


def run_ours(exe, log, args=(), env=None):
    for f in glob.glob(log + "*"):
        os.unlink(f)
    p = run([XRAYFDR, "record", "-q", "-o", log, exe] + list(args), env=env)
    logs = [log] + sorted(glob.glob(log + ".*"))
    return p, [l for l in logs if os.path.exists(l)]


def run_llvm(exe, d):
    base = os.path.join(d, "basic-")
    for f in glob.glob(base + "*"):
        os.unlink(f)
    p = run([exe], env={
        "XRAY_OPTIONS": f"patch_premain=true xray_mode=xray-basic xray_logfile_base={base}",
        "XRAY_BASIC_OPTIONS": "func_duration_threshold_us=0 max_stack_depth=65536"})
    return p, sorted(glob.glob(base + "*"))


def run_ours_basic(exe, d):
    """@exe in our basic mode, with run_llvm()'s options, as a program
    built for LLVM's runtime is run: the environment and a preload."""
    base = os.path.join(d, "ours-basic-")
    for f in glob.glob(base + "*"):
        os.unlink(f)
    p = run([exe], env={
        "LD_PRELOAD": os.path.join(LIBDIR, "libxrayfdr.so.0"),
        "XRAY_OPTIONS": f"patch_premain=true xray_mode=xray-basic xray_logfile_base={base}",
        "XRAY_BASIC_OPTIONS": "func_duration_threshold_us=0 max_stack_depth=65536"})
    return p, sorted(glob.glob(base + "*"))


def per_function(logs):
    """(func_id, kind) -> records, (func_id, argument) -> records, of
    @logs together."""
    counts, args = collections.Counter(), collections.Counter()
    for l in logs:
        c, a, _, _ = tally(events_of(l))
        counts += collections.Counter({(f, k): n for (pid, f, k), n in c.items()})
        args += a
    return counts, args


def record_and_count(cell, prog, built, log_name, env=None, label=""):
    """Record the cell's program into @log_name; check that the log counts
    every call the program counts.  Return what the other checks need,
    or None if there is no log."""
    d, exe = built["dir"], built["ours"]
    log = os.path.join(d, log_name)
    p, logs = run_ours(exe, log, env=env)
    if p.returncode or not logs:
        tap(False, f"{cell}: xrayfdr record{label} runs it and writes a log",
            p.stderr + p.stdout)
        return None
    prog_counts = program_counts(p.stdout)
    ids = symbol_ids(exe)
    objects = {}
    ours = collections.Counter()
    ours_args = collections.Counter()
    ours_other = collections.Counter()
    dropped = overwritten = 0
    for l in logs:
        c, a, o, info = tally(events_of(l))
        ours += c
        ours_args += a
        ours_other += o
        dropped += info_value(info, "dropped")
        overwritten += info_value(info, "overwritten")
        for m in re.finditer(r"^object=(\d+) (\d+) 0x[0-9a-f]+ (.*)$", info, re.M):
            objects[m.group(3)] = int(m.group(2))
    if "so" in built:
        so = os.path.realpath(built["so"])
        first = objects.get(so)
        if first is None:
            tap(False, f"{cell}: the log{label} names the shared object's ids",
                f"objects: {objects}")
            return None
        ids.update(symbol_ids(built["so"], first))

    problems = []
    missing = 0
    for (pid, sym), n in sorted(prog_counts.items()):
        if sym.startswith("@"):
            kind = {"@custom": "custom-event", "@typed": "typed-event"}[sym]
            got = ours_other[(pid, kind)]
        elif sym not in ids:
            problems.append(f"{sym}: no function id")
            continue
        else:
            got = ours[(pid, ids[sym], "entry")]
        if got != n and not (got < n and prog.name == "signals"):
            problems.append(f"pid {pid} {sym}: program {n}, log {got}")
        missing += n - got
    # (signals runs for a time, not a count: it may fill the recorder)
    if prog.name == "signals" and missing > dropped + overwritten:
        problems.append(f"{missing} events missing, the log reports {dropped} dropped "
                        f"and {overwritten} overwritten")
    tap(not problems and bool(prog_counts),
        f"{cell}: our log{label} counts every call the program counts"
        + (f" ({dropped} reported dropped)" if dropped else "")
        + (f" ({overwritten} reported overwritten)" if overwritten else ""),
        "\n".join(problems) or "the program printed no counts")
    return p, logs, prog_counts, ids, ours, ours_args


# Programs whose every call returns or is unwound (by an exception or
# longjmp) before the log is written: account must count each call once.
ACCOUNT_EXACT = {"recursion", "tailcalls", "threads", "longjmp", "args", "exceptions", "cxx"}


def check_account_exact(cell, prog, logs, prog_counts, ids):
    """xrayfdr account, without options, counts every call the program made."""
    if prog.name not in ACCOUNT_EXACT:
        return
    counted = collections.Counter()
    problems = []
    for l in logs:
        ap = run([XRAYFDR, "account", "--format=json", l])
        if ap.returncode:
            problems.append(f"account {l}: exit {ap.returncode}: {ap.stderr[-300:]}")
            continue
        for f in json.loads(ap.stdout)["functions"]:
            counted[f["id"]] += f["count"]
    made = collections.Counter()
    for (_, sym), n in prog_counts.items():
        if not sym.startswith("@") and sym in ids:
            made[ids[sym]] += n
    problems += [f"{sym} (id {i}): the program made {made[i]} calls, account counts {counted[i]}"
                 for sym, i in ids.items() if i in made and made[i] != counted[i]]
    tap(made and not problems,
        f"{cell}: xrayfdr account, without options, counts every call once "
        "(those an exception or longjmp ended too)", "\n".join(problems))


def verify_logs(name, logs):
    """Every log passes our verifier and llvm-xray's."""
    problems = []
    for l in logs:
        for cmd in ([XRAYFDR, "dump", "--verify", "--quiet", l],
                    [LLVM_XRAY, "fdr-dump", "-verify", l]):
            vp = run(cmd)
            if vp.returncode:
                problems.append(" ".join(cmd[:3]) + ": " + (vp.stderr or vp.stdout)[-400:])
    tap(bool(logs) and not problems, name, "\n".join(problems) or "no log")


def check_cell(prog, lang, opt):
    cell = f"{prog.name} {lang} {opt}"
    built = compile_cell(prog, lang, opt)
    if "error" in built:
        tap(False, f"{cell}: build", built["error"])
        return
    d, exe = built["dir"], built["ours"]
    got = record_and_count(cell, prog, built, "ours.xray")
    if not got:
        return
    p, logs, prog_counts, ids, ours, ours_args = got
    check_account_exact(cell, prog, logs, prog_counts, ids)

    # vs LLVM basic mode
    if prog.llvm is None:
        tap(True, f"{cell}: entries and exits per function equal LLVM basic mode's",
            skip="LLVM's basic mode writes parent and children into one file")
    else:
        lp, llogs = run_llvm(built["llvm"], d)
        if lp.returncode or not llogs:
            tap(False, f"{cell}: LLVM basic mode runs", lp.stderr)
        else:
            theirs = collections.Counter()
            their_args = collections.Counter()
            for l in llogs:
                c, a, _, _ = tally(events_of(l))
                theirs += c
                their_args += a
            pid_ours = {k[0] for k in ours}
            pid_theirs = {k[0] for k in theirs}
            mine = collections.Counter({(f, k): n for (pid, f, k), n in ours.items()})
            their = collections.Counter({(f, k): n for (pid, f, k), n in theirs.items()})
            if prog.llvm == "main":
                keep = lambda f: f < (1 << 24)
            elif isinstance(prog.llvm, set):
                wanted = {ids[s] for s in prog.llvm}
                keep = lambda f: f in wanted
            else:
                keep = lambda f: True
            diff = [f"id {f} {k}: ours {mine[(f, k)]}, LLVM {their[(f, k)]}"
                    for (f, k) in sorted(set(mine) | set(their))
                    if keep(f) and mine[(f, k)] != their[(f, k)]]
            arg_ids = {ids[a] for a in prog.args}
            a1 = collections.Counter({k: n for k, n in ours_args.items() if k[0] in arg_ids})
            a2 = collections.Counter({k: n for k, n in their_args.items() if k[0] in arg_ids})
            if a1 != a2 or (prog.args and not a1):
                diff.append(f"logged arguments differ: ours {sorted(a1.items())[:5]}..., "
                            f"LLVM {sorted(a2.items())[:5]}...")
            tap(not diff and len(pid_ours) == len(pid_theirs),
                f"{cell}: entries and exits per function equal LLVM basic mode's",
                "\n".join(diff))

            # our basic mode: LLVM's records, function for function
            bp, blogs = run_ours_basic(exe, d)
            mine, my_args = per_function(blogs)
            their, their_args = per_function(llogs)
            diff = [f"id {f} {k}: ours {mine[(f, k)]}, LLVM {their[(f, k)]}"
                    for (f, k) in sorted(set(mine) | set(their))
                    if keep(f) and mine[(f, k)] != their[(f, k)]]
            # (of the functions whose arguments do not depend on the run)
            if collections.Counter({k: n for k, n in my_args.items() if k[0] in arg_ids}) != \
                    collections.Counter({k: n for k, n in their_args.items()
                                         if k[0] in arg_ids}):
                diff.append("logged arguments differ")
            tap(bp.returncode == 0 and blogs and not diff and len(blogs) == len(llogs),
                f"{cell}: our xray-basic mode writes the records LLVM's basic mode writes",
                f"exit {bp.returncode}, {len(blogs)} logs (LLVM: {len(llogs)})\n"
                + "\n".join(diff[:20]) + bp.stderr[-400:])

    verify_logs(f"{cell}: every log passes xrayfdr dump --verify and "
                f"llvm-xray fdr-dump -verify", logs)

    # the same program in CPU mode, on rings of the runtime's own, each as
    # large as thread mode's whole queue
    cpu = record_and_count(cell, prog, built, "cpu.xray",
                           env={"XRAYFDR_OPTIONS": f"mode=cpu buffer_max={256 * os.cpu_count()}"},
                           label=" (mode=cpu)")
    if cpu:
        verify_logs(f"{cell}: mode=cpu: every log passes xrayfdr dump --verify and "
                    f"llvm-xray fdr-dump -verify", cpu[1])

    # account
    name = f"{cell}: llvm-xray account -instr_map names the functions"
    if not prog.account:
        tap(True, name, skip="llvm-xray 14 refuses binaries with typed-event sleds")
        return
    # -k: llvm-xray account takes the first record it reads as the
    # earliest and reads threads in hash order, so with several threads
    # (or processes) it skips records and may miss whole functions;
    # llvm-xray convert, which sorts, must still name them all.
    want = sorted({s for (_, s) in prog_counts if not s.startswith("@")
                   and ids.get(s, 1 << 30) < (1 << 24)})
    named, problems = set(), []
    for l in logs:
        ap = run([LLVM_XRAY, "account", "-k", "-instr_map", exe, l])
        if ap.returncode:
            problems.append(f"account {l}: exit {ap.returncode}: {ap.stderr[-300:]}")
        named |= {s for s in want if re.search(rf"\b{re.escape(s)}\b", ap.stdout)}
    missing = [s for s in want if s not in named]
    if prog.threads:
        if not named:
            problems.append("account named none of them")
        text = ""
        for l in logs:
            cp = run([LLVM_XRAY, "convert", "-symbolize", "-instr_map", exe,
                      "-output-format=yaml", l])
            text += cp.stdout
            if cp.returncode:
                problems.append(f"convert {l}: {cp.stderr[-300:]}")
        missing = [s for s in want if not re.search(
            rf"function: [^\n]*(?<![\w:]){re.escape(s)}(?![\w])", text)]
        if missing:
            problems.append(f"llvm-xray convert -symbolize misses {missing}")
    elif missing:
        problems.append(f"account misses {missing}")
    tap(want and not problems, name, "\n".join(problems))


def check_ok_lines(name, p):
    """A program that prints 'ok - X' / 'not ok - X: why' lines."""
    lines = re.findall(r"^(ok|not ok) - (.*)$", p.stdout, re.M)
    for status, what in lines:
        tap(status == "ok", f"{name}: {what}", p.stderr)
    if p.returncode or not lines:
        tap(False, f"{name}: exits cleanly", f"exit {p.returncode}\n{p.stderr}")


def build_api(src, out, lang="c", opt="-O2"):
    cc = CLANGXX if src.endswith(".cc") else CLANG
    return run([cc, opt, "-g", "-pthread", "-I", INCLUDE] + XRAY_FLAGS +
               ["-fnoxray-link-deps", src, "-o", out, "-L", LIBDIR, "-lxrayfdr",
                f"-Wl,-rpath,{LIBDIR}"])


def verify_log(name, path):
    verify_logs(name, [path] if os.path.exists(path) else [])


def check_api():
    d = os.path.join(OUT, "api")
    os.makedirs(d, exist_ok=True)
    for opt in ("-O0", "-O2"):
        exe = os.path.join(d, f"api{opt}")
        p = build_api(os.path.join(PROGS, "api.c"), exe, opt=opt)
        if p.returncode:
            tap(False, f"api {opt}: builds against <xrayfdr/xray.h>", p.stderr)
            continue
        log, processed = os.path.join(d, f"api{opt}.xray"), os.path.join(d, f"api{opt}.buffers")
        check_ok_lines(f"LLVM API {opt}", run([exe, log, processed]))
        verify_log(f"LLVM API {opt}: the log of FDR mode started by API calls is valid", log)
        verify_log(f"LLVM API {opt}: __xray_log_process_buffers yields a valid log", processed)

    exe = os.path.join(d, "ourapi")
    p = build_api(os.path.join(PROGS, "ourapi.c"), exe)
    if p.returncode:
        tap(False, "xrayfdr API: builds against <xrayfdr/runtime.h>", p.stderr)
    else:
        log = os.path.join(d, "ourapi.xray")
        check_ok_lines("xrayfdr API", run([exe, log]))
        verify_log("xrayfdr API: the flushed log is valid", log)

    # snapshots of a running trace: the program checks what it can see
    # (tests/runtime/progs/snapshot.c); both verifiers check a sample
    exe = os.path.join(d, "snapshot")
    snaps = os.path.join(d, "snapshots")
    shutil.rmtree(snaps, ignore_errors=True)
    os.makedirs(snaps)
    p = build_api(os.path.join(PROGS, "snapshot.c"), exe)
    if p.returncode:
        tap(False, "snapshots: the program builds against <xrayfdr/runtime.h>", p.stderr)
    else:
        check_ok_lines("snapshots", run([exe, snaps]))
        for mode in ("thread", "cpu"):
            check_ok_lines(f"snapshots ({mode} mode)",
                           run([exe, snaps, "memory"],
                               env={"XRAYFDR_OPTIONS":
                                    f"mode={mode} patch_premain=false"}))
        verify_logs("snapshots: a sample of them and the logs at the end verify",
                    [os.path.join(snaps, f) for f in
                     ("snap-000.xray", "snap-050.xray", "snap-099.xray",
                      "final.xray", "wrap-1.xray", "wrap-2.xray", "wrap-final.xray")
                     if os.path.exists(os.path.join(snaps, f))])

    # LLVM's own programmatic FDR test program, unchanged, on libxrayfdr
    exe = os.path.join(d, "llvm_runtime")
    src = os.path.join(TOP, "tests", "oracle", "llvm_runtime.cc")
    for opt, mode in (("-O2", "custom"), ("-O2", "typed")):
        p = build_api(src, exe, opt=opt)
        if p.returncode:
            tap(False, "LLVM's FDR test program links against -lxrayfdr", p.stderr)
            break
        log = os.path.join(d, f"llvm_runtime-{mode}.xray")
        rp = run([exe, "xray-fdr", f'output="{log}" buffer_max=64', mode])
        tap(rp.returncode == 0,
            f"LLVM's FDR test program ({mode} events, {opt}) runs on libxrayfdr",
            rp.stderr)
        verify_log(f"LLVM's FDR test program ({mode} events): its log is valid", log)
        c, _, other, _ = tally(events_of(log)) if os.path.exists(log) else ({}, 0, {}, "")
        kind = "custom-event" if mode == "custom" else "typed-event"
        n = sum(v for (pid, k), v in other.items() if k == kind)
        # 5 threads x 5 event() calls
        tap(n == 25, f"LLVM's FDR test program ({mode}): all 25 events recorded",
            f"{n} {kind}s")


def check_dlclose():
    """dlclose() of an instrumented object, then unpatch and patch: no
    crash, and each reopening is traced under new ids."""
    d = os.path.join(OUT, "dlclose")
    os.makedirs(d, exist_ok=True)
    so, exe = os.path.join(d, "libtraced.so"), os.path.join(d, "dlclose")
    b = run([CLANG, "-O2", "-fPIC", "-shared"] + XRAY_FLAGS + ["-fnoxray-link-deps",
            "-o", so, os.path.join(PROGS, "libtraced.c")])
    p = b
    if not b.returncode:
        p = run([CLANG, "-O2", "-rdynamic", "-I", INCLUDE] + XRAY_FLAGS +
                ["-fnoxray-link-deps", os.path.join(PROGS, "dlclose.c"), "-o", exe,
                 "-L", LIBDIR, "-lxrayfdr", f"-Wl,-rpath,{LIBDIR}", "-ldl"])
    if p.returncode:
        tap(False, "dlclose: builds", p.stderr)
        return
    log = os.path.join(d, "dlclose.xray")
    r = run([XRAYFDR, "record", "-q", "-o", log, exe, so])
    tap(r.returncode == 0 and "ok: survived" in r.stdout and "not ok" not in r.stdout,
        "dlclose: unpatch and patch after dlclose() touch nothing unloaded",
        f"exit {r.returncode}\n{r.stdout}{r.stderr}")
    per_object = collections.Counter()
    if os.path.exists(log):
        c, _, _, _ = tally(events_of(log))
        for (_, f, k), n in c.items():
            if k == "entry" and f >> 24:
                per_object[f >> 24] += n
    tap(per_object == {1: 900},
        "dlclose: each of three openings traced in full, under the ids of the first",
        f"entries per object number: {dict(per_object)}")


def check_dlopen():
    """Objects dlopen()ed while tracing are patched before dlopen()
    returns, found by name through the caller's DT_RUNPATH; every call
    they make is in the log, in both modes."""
    d = os.path.join(OUT, "dlopen")
    os.makedirs(d, exist_ok=True)
    so, chain, exe = (os.path.join(d, n) for n in ("libtraced.so", "libchain.so", "dlopen"))
    flags = XRAY_FLAGS + ["-fnoxray-link-deps"]
    origin = "-Wl,-rpath,$ORIGIN"
    for cmd in ([CLANG, "-O2", "-fPIC", "-shared"] + flags +
                ["-o", so, os.path.join(PROGS, "libtraced.c")],
                [CLANG, "-O2", "-fPIC", "-shared"] + flags +
                ["-o", chain, os.path.join(PROGS, "libchain.c"), "-L", d, "-ltraced", origin],
                [CLANG, "-O2", "-rdynamic"] + flags +
                [os.path.join(PROGS, "dlopen.c"), "-o", exe, "-ldl", "-lpthread", origin]):
        p = run(cmd)
        if p.returncode:
            tap(False, "dlopen: builds", p.stderr)
            return
    dlopen_cases(d, exe, so)


def dlopen_cases(d, exe, so, label="dlopen"):
    """Run dlopen.c's cases (@exe opening @so and libchain.so of @d) in
    both modes: every call the objects make is in the log."""
    for how in (["local"], ["global"], ["chain"], ["loop", "30"]):
        for mode in ("thread", "cpu"):
            log = os.path.join(d, f"{how[0]}-{mode}.xray")
            p = run([XRAYFDR, "record", "-q", "-o", log, "--mode", mode, exe] + how)
            want = {name: n for (_, name), n in program_counts(p.stdout).items()}
            got, firsts = {}, {so: 1 << 24 | 1}  # (a closed object is not listed)
            if p.returncode == 0 and os.path.exists(log):
                evs = events_of(log)
                c, _, _, info = tally(evs)
                for m in re.finditer(r"^object=(\d+) (\d+) 0x[0-9a-f]+ (.*)$", info, re.M):
                    firsts[os.path.realpath(m.group(3))] = int(m.group(2))
                for obj, first in [("main", 1)] + list(firsts.items()):
                    for name, i in symbol_ids(exe if obj == "main" else obj,
                                              first_id=first).items():
                        if name in want:
                            got[name] = [sum(n for (_, f, k), n in c.items()
                                             if f == i and k == kind)
                                         for kind in ("entry", "exit")]
            bad = {n: (got.get(n), w) for n, w in want.items() if got.get(n) != [w, w]}
            tap(p.returncode == 0 and want and not bad,
                f"{label} {' '.join(how)} (mode={mode}): the object is patched as dlopen() "
                "returns, every call in the log",
                f"exit {p.returncode}; (entries, exits) against calls: {bad}\n"
                f"{p.stdout}{p.stderr}")


def check_default_options():
    """__xray_default_options() of the program (LLVM 17+) is honoured, with
    libxrayfdr preloaded or linked in, and the log is announced as LLVM
    announces it."""
    d = os.path.join(OUT, "default_options")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(PROGS, "default_options.c")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("XRAY", "LD_PRELOAD"))}
    for how in ("preloaded", "linked"):
        exe = os.path.join(d, f"dflt-{how}")
        flags = (["-L", LIBDIR, "-lxrayfdr", f"-Wl,-rpath,{LIBDIR}"]
                 if how == "linked" else [])
        b = run([CLANG, "-O2"] + XRAY_FLAGS + ["-fnoxray-link-deps", src, "-o", exe] + flags)
        if b.returncode:
            tap(False, f"default options ({how}): builds", b.stderr)
            continue
        for f in glob.glob(os.path.join(d, "dflt-*.*")):
            os.unlink(f)
        e = dict(env, LD_PRELOAD=os.path.join(LIBDIR, "libxrayfdr.so.0")) \
            if how == "preloaded" else env
        p = subprocess.run([exe], cwd=d, env=e, capture_output=True, text=True)
        m = re.search(r"==\d+==XRay: Log file in '([^']+)'", p.stderr)
        log = os.path.join(d, m.group(1)) if m else ""
        work = 0
        if log and os.path.exists(log):
            ids = symbol_ids(exe)
            c, _, _, _ = tally(events_of(log))
            work = sum(n for (_, f, k), n in c.items() if f == ids.get("work") and k == "entry")
        tap(p.returncode == 0 and m and os.path.basename(log).startswith("dflt-") and
            work == 100,
            f"__xray_default_options() ({how}): traced from the start, log announced "
            "in LLVM's words",
            f"exit {p.returncode}; {work} work() entries; stderr: {p.stderr}")


def check_patching():
    d = os.path.join(OUT, "patch")
    os.makedirs(d, exist_ok=True)
    exe = os.path.join(d, "patch_stress")
    p = build_api(os.path.join(PROGS, "patch_stress.c"), exe)
    if p.returncode:
        tap(False, "patch_stress builds", p.stderr)
        return
    log = os.path.join(d, "stress.xray")
    rp = run([exe, "400"], env={"XRAYFDR_OPTIONS": f'output="{log}" patch_premain=false'})
    tap(rp.returncode == 0,
        "patching and unpatching (all, and one function) 400 times while 4 threads run",
        f"exit {rp.returncode}\n{rp.stderr}")
    verify_log("patching under load: the log is valid", log)


def threads_exe(sub):
    """A directory OUT/@sub, and the threads program of the matrix at -O2
    (C) or None, said."""
    d = os.path.join(OUT, sub)
    os.makedirs(d, exist_ok=True)
    cell = compile_cell(MATRIX[2], "c", "-O2")
    if "error" in cell:
        tap(False, "threads builds", cell["error"])
        return d, None
    return d, cell["ours"]


def check_device_refused():
    """mode=cpu with a device that refuses the open(): the runtime says why,
    once, and records in thread mode (as for a user the device's mode
    leaves out, which root cannot play here)."""
    d, exe = threads_exe("device")
    if not exe:
        return
    log = os.path.join(d, "refused.xray")
    p, logs = run_ours(exe, log, ["50"],
                       env={"XRAYFDR_OPTIONS": f'mode=cpu device="{d}"'})
    want = f"cpu mode: cannot open {d}: Is a directory; recording in thread mode"
    tap(p.returncode == 0 and logs and p.stderr.count(want) == 1,
        "a device open() refuses: the reason said once, thread mode records",
        f"exit {p.returncode}; stderr: {p.stderr}")


def check_version1_and_threshold():
    d, exe = threads_exe("modes")
    if not exe:
        return
    log = os.path.join(d, "v1.xray")
    p, logs = run_ours(exe, log, ["300"], env={"XRAYFDR_OPTIONS": "version=1"})
    ok = p.returncode == 0 and logs
    hdr = open(log, "rb").read(4) if ok else b""
    tap(ok and hdr[:2] == b"\x01\x00", "FDR version 1 on request", p.stderr)
    verify_log("FDR version 1: the log is valid", log)
    if ok:
        c, _, _, _ = tally(events_of(log))
        prog = program_counts(p.stdout)
        ids = symbol_ids(exe)
        # version 1 has no Pid record: every event says process 0
        bad = [s for (pid, s), n in prog.items() if c[(0, ids[s], "entry")] != n]
        tap(not bad and prog, "FDR version 1: every call is in the log", f"{bad}")

    # the flight recorder: a small queue keeps the newest window
    log = os.path.join(d, "small.xray")
    p, logs = run_ours(exe, log, ["3000"], env={"XRAYFDR_OPTIONS": "buffer_size=4K buffer_max=8"})
    if p.returncode or not logs:
        tap(False, "a small queue records", p.stderr)
    else:
        evs = events_of(log)
        c, _, _, info = tally(evs)
        total = sum(program_counts(p.stdout).values()) * 2
        # threads.c names no thread: their exec name takes no
        # thread-name event, so every event is the program's
        names = sum(1 for e in evs if "thread_name" in e)
        made = total + 2
        kept = sum(c.values()) + names
        over, drop = info_value(info, "overwritten"), info_value(info, "dropped")
        tap(kept + over + drop == made and over > 0,
            "a full queue recycles its oldest buffers and counts every event lost",
            f"kept {kept} + overwritten {over} + dropped {drop} != {made} events made "
            f"({total + 2} calls, {names} thread names kept)")
        verify_log("a recycled queue's log is valid", log)

    # LLVM's duration threshold: on one CPU (so no NewCPUId keeps a short
    # call), every call but main's is shorter than 50 us and is rewound,
    # tail calls included
    cell = compile_cell(MATRIX[1], "c", "-O2")  # tailcalls
    exe = cell.get("ours")
    log = os.path.join(d, "threshold.xray")
    taskset = which("taskset")
    if not exe or not taskset:
        tap(False, "tailcalls builds; taskset exists", str(cell))
        return
    # thread mode rewinds as events come; CPU mode, in the drain
    for mode in ("thread", "cpu"):
        check_threshold(exe, log, taskset, mode)


def check_threshold(exe, log, taskset, mode):
    for f in glob.glob(log + "*"):
        os.unlink(f)
    p = run([taskset, "-c", "0", XRAYFDR, "record", "-q", "-o", log, "--mode", mode,
             "--threshold-us", "50", "--buffer-size", "4M", "--buffer-max", "64",
             exe, "20000"])
    if p.returncode or not os.path.exists(log):
        tap(False, f"mode={mode}: func_duration_threshold_us records", p.stderr)
    else:
        evs = events_of(log)
        hz = json.loads(run([XRAYFDR, "dump", "--events", "--json", log])
                        .stdout.splitlines()[0])["header"]["cycle_frequency"]
        ids = symbol_ids(exe)
        stack, short, kept = [], [], 0
        for e in evs:
            if e["kind"] in ENTRY_KINDS:
                stack.append(e)
            elif e["kind"] in EXIT_KINDS and stack:
                entry = stack.pop()
                kept += entry["func_id"] != ids["main"]
                if (e["tsc"] - entry["tsc"]) * 1000000 < 50 * hz:
                    short.append((entry["func_id"], e["tsc"] - entry["tsc"]))
        made = sum(program_counts(p.stdout).values())
        tap(not short and kept < made // 2,
            f"mode={mode}: func_duration_threshold_us=50 rewinds the short calls, "
            "tail calls included, and keeps only calls that lasted 50 us",
            f"short calls kept: {short[:5]}; {kept} of {made} calls kept")
        verify_log(f"mode={mode}: a rewound log is valid", log)


def built(prog, lang="c", opt="-O2"):
    """@prog compiled (our runtime's build): (exe, its directory), or None
    after a failed result saying why."""
    cell = compile_cell(prog, lang, opt)
    if "error" in cell:
        tap(False, f"{prog.name} builds", cell["error"])
        return None
    return cell["ours"], cell["dir"]


def check_dying():
    """Fatal signals, SIGTERM and ^C write the log of what came before."""
    import signal
    import time
    b = built(Prog("crash", ["crash.c"]))
    if not b:
        return
    exe, d = b
    ids = symbol_ids(exe)
    for how, sig in (("segv", signal.SIGSEGV), ("abort", signal.SIGABRT),
                     ("term", signal.SIGTERM), ("wait", signal.SIGINT)):
        log = os.path.join(d, f"{how}.xray")
        for f in glob.glob(log + "*"):
            os.unlink(f)
        cmd = [XRAYFDR, "record", "-q", "-o", log, exe, how]
        if how == "wait":
            # ^C reaches the whole foreground group; record ignores it
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, start_new_session=True)
            line = ""
            while "ready" not in line and p.poll() is None:
                line = p.stdout.readline()
            time.sleep(0.2)
            os.killpg(p.pid, signal.SIGINT)
            out, err = p.communicate(timeout=60)
            rc = p.returncode
        else:
            cp = run(cmd)
            rc, err = cp.returncode, cp.stderr
        name = f"killed by {signal.Signals(sig).name}: the log holds every call made before"
        if not os.path.exists(log):
            tap(False, name, f"no log; exit {rc}; {err}")
            continue
        c, _, _, _ = tally(events_of(log))
        work = sum(n for (pid, f, k), n in c.items() if f == ids["work"] and k == "entry")
        enough = work >= 1000 if how == "wait" else work == 1000
        tap(enough and rc == 128 + sig, name,
            f"{work} work() entries; record exit {rc}, want {128 + sig}\n{err}")
        verify_log(f"killed by {signal.Signals(sig).name}: the log is valid", log)


def check_record_errors():
    """xrayfdr record fails early and says why, each with its own status."""
    b = built(Prog("crash", ["crash.c"]))
    if not b:
        return
    exe, d = b

    def rec(*args):
        return run([XRAYFDR, "record"] + list(args))

    log = os.path.join(d, "nodir", "t.xray")
    p = rec("-o", log, exe, "exit")
    tap(p.returncode == 2 and f"cannot write the log {log}" in p.stderr and not p.stdout,
        "record: an output that cannot be written fails before the program runs",
        f"exit {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr}")
    plain = os.path.join(d, "not-executable")
    with open(plain, "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
    os.chmod(plain, 0o644)
    p = rec(plain)
    tap(p.returncode == 126 and "cannot be executed: Permission denied" in p.stderr,
        "record: a file that cannot be executed is not 'no such program'",
        f"exit {p.returncode}: {p.stderr}")
    p = rec(os.path.join(d, "no-such-program"))
    tap(p.returncode == 127 and "no such program" in p.stderr,
        "record: a missing program", f"exit {p.returncode}: {p.stderr}")
    src = os.path.join(d, "nosleds.c")
    with open(src, "w") as f:
        f.write("int main(void) { return 0; }\n")
    nosleds = os.path.join(d, "nosleds")
    b = run([CLANG, src, "-o", nosleds])
    log = os.path.join(d, "nosleds.xray")
    p = rec("-o", log, nosleds)
    tap(not b.returncode and p.returncode == 1 and "has no XRay sleds" in p.stderr and
        "nothing was recorded" in p.stderr and not os.path.exists(log),
        "record: a program without sleds says so, and leaves no empty log",
        f"exit {p.returncode}: {p.stderr}{b.stderr}")
    env = dict(os.environ, LD_PRELOAD=os.path.join(LIBDIR, "libxrayfdr.so.0"),
               XRAY_OPTIONS="patch_premain=true verbosity=1")
    p = subprocess.run([nosleds], env=env, capture_output=True, text=True)
    tap(re.search(r"^==\d+==XRay instrumentation map missing\. Not initializing XRay\.$",
                  p.stderr, re.M),
        "verbosity=1 without sleds: LLVM's 'instrumentation map missing' line",
        p.stderr)
    log = os.path.join(d, "kill.xray")
    p = rec("-o", log, exe, "kill")
    tap(p.returncode == 128 + 9 and "killed by SIGKILL before it wrote its log" in p.stderr
        and "--stream writes records as they come" in p.stderr and
        "instrumented" not in p.stderr,
        "record: SIGKILL is named, with what survives it",
        f"exit {p.returncode}: {p.stderr}")
    # a log that survived SIGKILL is no 'cannot survive'
    for mode in ("thread", "cpu"):
        p = rec("--stream", "--mode", mode, "-o", log, exe, "kill")
        tap(p.returncode == 128 + 9 and "the records written before SIGKILL survived" in p.stderr
            and "cannot survive" not in p.stderr and "before it wrote its log" not in p.stderr,
            f"record --stream --mode {mode}, SIGKILL: says what survived, not that nothing could",
            f"exit {p.returncode}: {p.stderr}")
    log = os.path.join(d, "noverify.xray")
    p = rec("--no-verify", "-o", log, exe, "exit")
    tap(p.returncode == 0 and "not checked (--no-verify" in p.stderr and
        " events in " not in p.stderr,
        "record --no-verify: the log is not read back", f"exit {p.returncode}: {p.stderr}")
    verify_log("record --no-verify: the log is valid all the same", log)
    p = rec("-o", log, exe, "exit")
    tap(p.returncode == 0 and " events in " in p.stderr,
        "record: a small log is checked and summarised", f"exit {p.returncode}: {p.stderr}")


def check_filters():
    """record -F/-N patch exactly the functions their patterns name."""
    b = built(Prog("cxx", ["cxx.cc"], cxx_only=True), "c++")
    if not b:
        return
    exe, d = b
    ids = symbol_ids(exe)
    base = os.path.basename(exe)
    square = {n for n in ids if n.startswith("Square::")}
    # (arguments, what may be traced, what must be)
    cases = [
        (["-F", "Square::*"], square, {"Square::Square", "Square::area"}),
        (["-F", "/twi[c]e/"], {"twice<long>"}, {"twice<long>"}),
        (["-N", "Circle::area", "-N", "run"], set(ids) - {"Circle::area", "run"},
         {"Square::area", "twice<long>", "main"}),
        (["-F", "*::area", "-N", "Circle::*"], {"Square::area"}, {"Square::area"}),
        (["-F", f"Square::area@{base}"], {"Square::area"}, {"Square::area"}),
    ]
    for args, allowed, must in cases:
        log = os.path.join(d, "filtered.xray")
        p = run([XRAYFDR, "record", "-q", "-o", log] + args + [exe])
        got = set()
        if os.path.exists(log):
            c, _, _, _ = tally(events_of(log))
            seen = {f for (_, f, k), n in c.items() if n}
            got = {name for name, i in ids.items() if i in seen}
        tap(p.returncode == 0 and must <= got <= allowed,
            f"record {' '.join(args)}: only what it names is traced",
            f"exit {p.returncode}; traced {sorted(got)}; may {sorted(allowed)}; "
            f"must {sorted(must)}\n{p.stderr}")
    # a -F that matches nothing: said at the start and an error at the end
    for args in (["-F", "Square::area@libnothing.so"], ["-F", "no_such_function"]):
        log = os.path.join(d, "filtered.xray")
        p = run([XRAYFDR, "record", "-o", log] + args + [exe])
        tap(p.returncode == 1 and "selects none of the instrumented functions" in p.stderr
            and "the -F rules selected no function that ran" in p.stderr,
            f"record {' '.join(args)}: a filter that selects nothing is an error",
            f"exit {p.returncode}: {p.stderr}")
    p = run([XRAYFDR, "extract", "-F", "Square::*", "-N", "*~*", exe])
    listed = {int(i) for i in re.findall(r"\{ id: (\d+),", p.stdout)}
    want = {ids[n] for n in square if "~" not in n}
    tap(p.returncode == 0 and listed == want,
        "extract -F/-N lists exactly the functions record would patch",
        f"exit {p.returncode}; listed {sorted(listed)}, want {sorted(want)}\n{p.stderr}")
    p = run([XRAYFDR, "record", "-F", "/[/", "-o", os.path.join(d, "x.xray"), exe])
    tap(p.returncode == 2 and "-F '/[/'" in p.stderr,
        "record -F with a bad regular expression fails before the program runs",
        f"exit {p.returncode}: {p.stderr}")


def depth_model(events, depth):
    """(func_id, 'entry'|'exit') -> count of the records a trace keeping
    @depth levels has, from a whole trace's @events: in each thread, an
    exit finds its call on the stack from the top (an exception or
    longjmp left those above it), as the runtime's max_depth does."""
    stacks, kept = collections.defaultdict(list), collections.Counter()
    for e in events:
        f, stack = e["func_id"], stacks[e["tid"]]
        if e["kind"] in ENTRY_KINDS:
            stack.append(f)
            if len(stack) <= depth:
                kept[(f, "entry")] += 1
        elif e["kind"] in EXIT_KINDS:
            if f in stack:
                level = len(stack) - stack[::-1].index(f)
                del stack[level - 1:]
            else:
                level = len(stack)
            if level <= depth:
                kept[(f, "exit")] += 1
    return kept


def check_depth():
    """record --depth N keeps exactly the calls at most N levels deep,
    through recursion, tail calls and exceptions, in both modes (where
    the fast path is off: a thread that never took the C path must not
    take CPU mode's fast path, the cxx program's threads)."""
    for prog, lang, arg, n in ((MATRIX[0], "c", ["12"], 3), (MATRIX[1], "c", ["200"], 2),
                               (MATRIX[10], "c++", [], 2), (MATRIX[11], "c++", [], 2)):
        b = built(prog, lang)
        if b:
            depth_cases(prog.name, *b, arg, n)
    p = run([XRAYFDR, "record", "--depth", "0", "true"])
    tap(p.returncode == 2 and "--depth" in p.stderr,
        "record --depth 0 is refused before the program runs", f"exit {p.returncode}: {p.stderr}")


def depth_cases(name, exe, d, arg, n):
    """record --depth @n of @exe @arg, in both modes, against the model
    of a whole trace."""
    full = os.path.join(d, "full.xray")
    p = run([XRAYFDR, "record", "-q", "-o", full, exe] + arg)
    if p.returncode or not os.path.exists(full):
        tap(False, f"{name}: records", p.stderr)
        return
    want = depth_model(events_of(full), n)
    for mode in ("thread", "cpu"):
        log = os.path.join(d, f"depth-{mode}.xray")
        p = run([XRAYFDR, "record", "-q", "-o", log, "--mode", mode,
                 "--depth", str(n), exe] + arg)
        got = collections.Counter()
        if p.returncode == 0 and os.path.exists(log):
            c, _, _, _ = tally(events_of(log))
            got = collections.Counter({(f, k): v for (_, f, k), v in c.items() if v})
        tap(p.returncode == 0 and got == want and want,
            f"{name}: record --mode {mode} --depth {n} keeps exactly the calls "
            f"{n} levels deep or less",
            f"exit {p.returncode}; got {sorted(got.items())}\nwant {sorted(want.items())}\n"
            f"{p.stderr}")


def check_basic():
    """Our basic mode reads LLVM's basic-mode options as LLVM's runtime
    does and writes the same records (threshold 0: nothing depends on
    time); with a threshold, no short call it could take back is left."""
    cell = compile_cell(MATRIX[0], "c", "-O2")  # recursion
    if "error" in cell:
        tap(False, "recursion builds", cell["error"])
        return
    d = os.path.join(cell["dir"], "basic")
    os.makedirs(d, exist_ok=True)
    preload = {"LD_PRELOAD": os.path.join(LIBDIR, "libxrayfdr.so.0")}
    cases = [
        ("XRAY_BASIC_OPTIONS max_stack_depth=8 thread_buffer_size=64",
         "xray_mode=xray-basic",
         "func_duration_threshold_us=0 max_stack_depth=8 thread_buffer_size=64"),
        ("XRAY_OPTIONS' xray_naive_log_* names when XRAY_BASIC_OPTIONS is unset",
         "xray_mode=xray-basic xray_naive_log_func_duration_threshold_us=0 "
         "xray_naive_log_max_stack_depth=5 xray_naive_log_thread_buffer_size=100", None),
        ("xray_naive_log=true selects basic mode",
         "xray_naive_log=true xray_naive_log_func_duration_threshold_us=0", None),
    ]
    for label, xray, basic in cases:
        got = []
        for who, exe, extra in (("ours", cell["ours"], preload), ("llvm", cell["llvm"], {})):
            base = os.path.join(d, f"{who}-")
            for f in glob.glob(base + "*"):
                os.unlink(f)
            env = dict(extra, XRAY_OPTIONS=f"patch_premain=true {xray} xray_logfile_base={base}")
            if basic:
                env["XRAY_BASIC_OPTIONS"] = basic
            p = run([exe, "12"], env=env)
            logs = sorted(glob.glob(base + "*"))
            got.append((p, logs, per_function(logs)[0]))
        (p, logs, mine), (lp, llogs, theirs) = got
        diff = [f"id {f} {k}: ours {mine[k2]}, LLVM {theirs[k2]}"
                for k2 in sorted(set(mine) | set(theirs)) for f, k in [k2]
                if mine[k2] != theirs[k2]]
        tap(p.returncode == 0 and len(logs) == 1 and llogs and mine and not diff,
            f"basic mode, {label}: LLVM's records, function for function",
            f"exit {p.returncode}, logs {logs}, LLVM's {llogs}\n" + "\n".join(diff[:20])
            + p.stderr[-300:])

    # no call passes the threshold: as LLVM's runtime, a log of the header
    # alone, and "Log file in" with verbosity=1 only
    for v in (0, 1):
        got = []
        for who, exe, extra in (("ours", cell["ours"], preload), ("llvm", cell["llvm"], {})):
            base = os.path.join(d, f"none{v}-{who}-")
            for f in glob.glob(base + "*"):
                os.unlink(f)
            p = run([exe, "12"], env=dict(
                extra, XRAY_OPTIONS=f"patch_premain=true xray_mode=xray-basic "
                f"xray_logfile_base={base} verbosity={v}",
                XRAY_BASIC_OPTIONS="func_duration_threshold_us=60000000"))
            logs = glob.glob(base + "*")
            got.append((p.returncode, [os.path.getsize(f) for f in logs],
                        "XRay: Log file in" in p.stderr))
        tap(got[0] == got[1] == (0, [32], bool(v)),
            f"basic mode, no call over the threshold, verbosity={v}: a log of the header "
            f"alone, {'and' if v else 'without'} LLVM's 'Log file in' line",
            f"ours (exit, log sizes, said): {got[0]}, LLVM's {got[1]}")

    # LLVM's default threshold, 5 us: an entry that is still the last
    # record when its exit comes sooner on the same CPU is taken back
    tail = compile_cell(MATRIX[1], "c", "-O2")  # tailcalls
    if "error" in tail:
        tap(False, "tailcalls builds", tail["error"])
        return
    base = os.path.join(d, "threshold-")
    for f in glob.glob(base + "*"):
        os.unlink(f)
    p = run([tail["ours"], "20000"], env=dict(
        preload, XRAY_OPTIONS=f"patch_premain=true xray_mode=xray-basic xray_logfile_base={base}",
        XRAY_BASIC_OPTIONS="thread_buffer_size=1000000"))
    logs = glob.glob(base + "*")
    short, kept = [], 0
    if logs:
        evs = [e for e in events_of(logs[0]) if e["kind"] in ENTRY_KINDS | EXIT_KINDS]
        hz = json.loads(run([XRAYFDR, "dump", "--events", "--json", logs[0]])
                        .stdout.splitlines()[0])["header"]["cycle_frequency"]
        kept = sum(e["kind"] in ENTRY_KINDS for e in evs)
        for a, b in zip(evs, evs[1:]):
            if (a["kind"] in ENTRY_KINDS and b["kind"] in EXIT_KINDS and
                    a["func_id"] == b["func_id"] and a["cpu"] == b["cpu"] and
                    (b["tsc"] - a["tsc"]) * 1000000 < 5 * hz):
                short.append((a["func_id"], b["tsc"] - a["tsc"]))
    made = sum(program_counts(p.stdout).values())
    tap(p.returncode == 0 and len(logs) == 1 and not short and kept < made // 2,
        "basic mode, default func_duration_threshold_us=5: the short calls are taken back",
        f"exit {p.returncode}; {kept} of {made} calls kept; short ones left: {short[:5]}\n"
        + p.stderr[-300:])

    # fork: each process its own log, with every call it made
    fork = compile_cell(MATRIX[6], "c", "-O2")
    if "error" not in fork:
        base = os.path.join(d, "fork-")
        for f in glob.glob(base + "*"):
            os.unlink(f)
        p = run([fork["ours"]], env=dict(
            preload, XRAY_OPTIONS=f"patch_premain=true xray_mode=xray-basic xray_logfile_base={base}",
            XRAY_BASIC_OPTIONS="func_duration_threshold_us=0"))
        ids = symbol_ids(fork["ours"])
        logs = glob.glob(base + "*")
        c = collections.Counter()
        pids_per_log = []
        for l in logs:
            cl, _, _, _ = tally(events_of(l))
            c += cl
            pids_per_log.append({pid for (pid, f, k) in cl})
        want = program_counts(p.stdout)
        bad = {k: (c[(k[0], ids[k[1]], "entry")], n) for k, n in want.items()
               if c[(k[0], ids[k[1]], "entry")] != n}
        tap(p.returncode == 0 and want and not bad and
            len(logs) == len({k[0] for k in want}) and all(len(x) == 1 for x in pids_per_log),
            "basic mode, fork: each process writes a log of its own with every call it made",
            f"exit {p.returncode}; {len(logs)} logs, pids {pids_per_log}; {bad}\n{p.stderr[-300:]}")
    else:
        tap(False, "fork builds", fork["error"])

    # xrayfdr record: the basic log goes where -o says, and is checked
    log = os.path.join(d, "record.xray")
    p = run([XRAYFDR, "record", "-o", log, cell["ours"], "12"],
            env={"XRAY_OPTIONS": "xray_mode=xray-basic",
                 "XRAY_BASIC_OPTIONS": "func_duration_threshold_us=0 max_stack_depth=65536"})
    head = open(log, "rb").read(4) if os.path.exists(log) else b""
    want = sum(program_counts(p.stdout).values())
    ids = {symbol_ids(cell["ours"])[n] for (_, n) in program_counts(p.stdout)}
    got = sum(n for (f, k), n in per_function([log])[0].items() if k == "entry" and f in ids) \
        if head else 0
    tap(p.returncode == 0 and head == b"\x03\x00\x00\x00" and got == want and
        "basic mode" in p.stderr,
        "xrayfdr record with XRAY_OPTIONS=xray_mode=xray-basic writes a basic log to -o",
        f"exit {p.returncode}, header {head!r}, {got} entries of {want} calls\n{p.stderr}")


def server_pid(srv):
    """The pid of the server that `xrayfdr record` process @srv runs, once
    `xrayfdr snapshot --list` shows it (no bound on how long that takes but
    the harness's own); None if it never does."""
    for _ in range(600):
        q = run(["pgrep", "-P", str(srv.pid), "-x", "server"])
        if q.returncode == 0:
            pid = int(q.stdout.split()[0])
            if run([XRAYFDR, "snapshot", "--list"]).stdout.find(f"{pid} ") >= 0:
                return pid
        time.sleep(0.1)
    return None


def check_snapshot_cli():
    """xrayfdr snapshot PID on a running server: each snapshot verifies
    and moves forward; other users, untraced and missing processes get a
    clear refusal; the log at the end is whole."""
    d = os.path.join(OUT, "snapshot_cli")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    exe, stop = os.path.join(d, "server"), os.path.join(d, "stop")
    p = build_api(os.path.join(PROGS, "server.c"), exe)
    if p.returncode:
        tap(False, "snapshot PID: the server builds", p.stderr)
        return
    final = os.path.join(d, "final.xray")
    # 2048 buffers of 64 KiB hold 400 s of the server's requests
    srv = subprocess.Popen([XRAYFDR, "record", "-q", "-o", final, "--buffer-max", "2048",
                            "--", exe, stop],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pid = server_pid(srv)
        snaps, maxes, problems = [], [], []
        for i in range(5):
            out = os.path.join(d, f"snap-{i}.xray")
            q = run([XRAYFDR, "snapshot", "-q", "-o", out, str(pid)])
            if q.returncode:
                problems.append(f"snapshot {i}: exit {q.returncode}: {q.stderr}")
                continue
            snaps.append(out)
            args = [e["args"][0] for e in events_of(out)
                    if e.get("kind") == "function-enter-arg" and e.get("args")]
            maxes.append(max(args) if args else 0)
        tap(not problems and len(snaps) == 5,
            "snapshot PID: five snapshots of a running server", "\n".join(problems))
        tap(maxes == sorted(maxes) and maxes and maxes[0] > 0,
            "snapshot PID: each holds requests, and they move forward", repr(maxes))
        verify_logs("snapshot PID: every snapshot verifies", snaps)
        q = run([XRAYFDR, "snapshot", "-o", snaps[0] if snaps else final, str(pid)])
        tap(q.returncode == 2 and "exists" in q.stderr,
            "snapshot PID: an existing file is not replaced without --force",
            q.stderr)
        if os.geteuid() == 0:
            other = os.path.join(d, "other.xray")
            q = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                     XRAYFDR, "snapshot", "-o", "/tmp/xrayfdr-nobody-%d.xray" % pid,
                     str(pid)])
            tap(q.returncode == 1 and "not yours" in q.stderr and
                not os.path.exists("/tmp/xrayfdr-nobody-%d.xray" % pid),
                "snapshot PID: another user is refused, and no file is left",
                q.stderr)
            del other
        else:
            tap(True, "snapshot PID: another user is refused",
                skip="needs root to be another user")
        q = run([XRAYFDR, "snapshot", "-o", os.path.join(d, "self.xray"),
                 str(os.getpid())])
        tap(q.returncode == 1 and "not traced" in q.stderr,
            "snapshot PID: an untraced process gets a clear error", q.stderr)
        q = run([XRAYFDR, "snapshot", "-o", os.path.join(d, "none.xray"), "2147483646"])
        tap(q.returncode == 1 and "no process" in q.stderr,
            "snapshot PID: a missing process gets a clear error", q.stderr)
    finally:
        open(stop, "w").close()
        out, err = srv.communicate(timeout=300)
    m = re.search(r"handled (\d+)", out)
    calls = sum(1 for e in events_of(final) if e.get("kind") == "function-enter-arg") \
        if os.path.exists(final) else -1
    tap(srv.returncode == 0 and m and calls == int(m.group(1)),
        "snapshot PID: the log at the end has every request the server handled",
        f"exit {srv.returncode}, {calls} entries, server says {m.group(0) if m else out!r}\n{err}")


def snapshot_info(events):
    """key -> value of the info event's lines."""
    info = tally(events)[3]
    return dict(l.split("=", 1) for l in info.splitlines() if "=" in l)


def check_triggers():
    """--trigger: a slow call of the function it names gives a snapshot
    holding that call (and, with --post, what followed); a slow call of
    another function gives none; a signal trigger gives one; the limits
    hold, and what they held back is counted in the log.  In thread mode
    and in CPU mode (on the runtime's own rings, copied in the process
    by the trigger thread)."""
    d = os.path.join(OUT, "triggers")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    exe = os.path.join(d, "trigger")
    p = build_api(os.path.join(PROGS, "trigger.c"), exe)
    if p.returncode:
        tap(False, "triggers: the program builds", p.stderr)
        return
    ids = symbol_ids(exe)
    for mode in ("thread", "cpu"):
        check_triggers_in(d, exe, ids, mode)
    snaps1 = os.path.join(d, "snaps1")

    # every function named, none slow enough: the trigger trampolines
    # in front of every sled, through recursion, tail calls, longjmp and
    # exceptions, change no count in either mode
    for prog, lang, arg in ((MATRIX[0], "c", ["12"]), (MATRIX[1], "c", ["200"]),
                            (MATRIX[4], "c", []), (MATRIX[10], "c++", []),
                            (MATRIX[11], "c++", [])):
        b = built(prog, lang)
        if not b:
            continue
        exe2, d2 = b
        want = None
        for mode in ("thread", "cpu"):
            for trig in (False, True):
                log = os.path.join(d2, f"trig-{mode}-{trig}.xray")
                p = run([XRAYFDR, "record", "-q", "-o", log, "--mode", mode] +
                        (["--trigger", "*>100s"] if trig else []) + ["--", exe2] + arg)
                got = collections.Counter()
                if p.returncode == 0 and os.path.exists(log):
                    c = tally(events_of(log))[0]
                    got = collections.Counter({(f, k): v for (_, f, k), v in c.items() if v})
                if not trig:
                    want = got
                    continue
                tap(p.returncode == 0 and got == want and want,
                    f"triggers: {prog.name} --mode {mode} with every function named "
                    "records the same calls as without",
                    f"exit {p.returncode}; got {sorted(got.items())}\n"
                    f"want {sorted(want.items())}\n{p.stderr}")

    # bad specifications are refused before the program runs
    for bad in ("serve", "serve>", "serve>1.5ms", ">1ms", "signal=", "serve>0s"):
        p = run([XRAYFDR, "record", "-q", "--trigger", bad, "--", exe, snaps1, "1"])
        tap(p.returncode == 2 and "--trigger" in p.stderr,
            f"triggers: --trigger '{bad}' is refused with a reason", p.stderr)


def check_triggers_in(d, exe, ids, mode):
    """check_triggers() in @mode."""
    sfx = "" if mode == "thread" else "-" + mode
    tag = "" if mode == "thread" else f" --mode {mode}"
    snaps = os.path.join(d, "snaps" + sfx)
    os.makedirs(snaps)
    final = os.path.join(d, f"final{sfx}.xray")
    # 2048 buffers of 64 KiB: the window holds the whole run, so every
    # snapshot keeps its slow call whatever else ran
    p = run([XRAYFDR, "record", "-q", "-o", final, "--mode", mode, "--buffer-max", "2048",
             "--trigger", "serve>50ms", "--trigger", "signal=USR2",
             "--post", "200ms", "--snapshot-dir", snaps, "--",
             exe, snaps, "10", "signal"], timeout=600)
    slow = [int(x) for x in re.findall(r"^slow (\d+)$", p.stdout, re.M)]
    files = sorted(f for f in os.listdir(snaps) if not f.startswith("."))
    tap(p.returncode == 0 and len(slow) == 3 and len(files) >= 4,
        f"triggers{tag}: a run with three slow calls and a signal leaves snapshots",
        f"exit {p.returncode}, slow {slow}, files {files}\n{p.stderr[-2000:]}")
    paths = [os.path.join(snaps, f) for f in files]
    verify_logs(f"triggers{tag}: every snapshot verifies", paths)
    by_file = {}
    for f in paths:
        try:
            evs = events_of(f)
        except RuntimeError as e:
            tap(False, f"triggers{tag}: snapshots are read", str(e))
            return
        by_file[f] = (evs, snapshot_info(evs))
    problems = []
    for f, (evs, info) in by_file.items():
        if "signal-USR2" in f:
            continue
        if (info.get("snapshot") != "trigger" or info.get("trigger") != "serve>50ms" or
                int(info.get("trigger_function", -1)) != ids.get("serve") or
                int(info.get("trigger_duration_ns", 0)) <= 50000000):
            problems.append(f"{os.path.basename(f)}: info {info}")
    tap(not problems and ids.get("other") is not None,
        f"triggers{tag}: each names the trigger, the serve call and a duration above 50 ms "
        "(never other(), which no trigger names)", "\n".join(problems))
    missing, no_after = [], []
    for n in slow:
        holders = [evs for evs, info in by_file.values()
                   if any(e.get("kind") == "function-enter-arg" and e.get("args") == [n]
                          for e in evs)]
        if not holders:
            missing.append(n)
        elif not any(any(e.get("kind") == "function-enter-arg" and e["args"][0] > n
                         for e in evs if e.get("args")) for evs in holders):
            no_after.append(n)
    tap(not missing, f"triggers{tag}: every slow call is in a snapshot", f"missing {missing}")
    tap(not no_after, f"triggers{tag}: with --post, what followed the slow call is in it too",
        f"nothing after {no_after}")
    # replay --around-trigger: the slow call, named, and little else
    first = next((f for f in paths if ".1.serve." in f), None)
    q = run([XRAYFDR, "replay", "--no-pager", "--around-trigger=200us", "-m", exe, first]) \
        if first and slow else None
    lines = q.stdout.splitlines() if q else []
    tap(q is not None and q.returncode == 0 and lines and
        lines[0].startswith("# trigger serve>50ms: thread ") and
        any(f"serve({slow[0]:#x})" in l for l in lines) and
        len(lines) < len(by_file[first][0]) / 10,
        f"triggers{tag}: replay --around-trigger shows what fired and the slow call "
        "with a little around it", (q.stdout[:1000] + q.stderr) if q else "no snapshot")
    q = run([XRAYFDR, "account", "--around-trigger=200us", "-m", exe, first]) \
        if first else None
    tap(q is not None and q.returncode == 0 and "# trigger serve>50ms" in q.stderr and
        re.search(r"\bserve\b", q.stdout),
        f"triggers{tag}: account --around-trigger counts the calls around it and says what fired",
        (q.stdout[-800:] + q.stderr) if q else "no snapshot")
    q = run([XRAYFDR, "replay", "--no-pager", "--around-trigger", final])
    tap(q.returncode == 2 and "names no trigger" in q.stderr,
        f"triggers{tag}: replay --around-trigger of a log no trigger took says so", q.stderr)
    sig = [info for f, (evs, info) in by_file.items() if "signal-USR2" in f]
    tap(len(sig) == 1 and sig[0].get("trigger") == "signal=USR2",
        f"triggers{tag}: signal=USR2 gives one snapshot that says so", repr(sig))
    if mode == "cpu":
        bad = {os.path.basename(f): info for f, (evs, info) in by_file.items()
               if info.get("mode") != "cpu" or info.get("rings") != "own" or
               not info.get("cut", "").isdigit()}
        tap(by_file and not bad,
            f"triggers{tag}: snapshots of the rings say so, and count what was cut",
            repr(bad))
    verify_log(f"triggers{tag}: the log at exit verifies", final)

    # max_snapshots=1: one file; of the other two slow calls, at least one
    # is counted however the trigger thread was scheduled: the program
    # may exit before the thread sees the last, but not before the third
    # fires, which finds the second still waiting or counts itself
    snaps1 = os.path.join(d, "snaps1" + sfx)
    os.makedirs(snaps1)
    final1 = os.path.join(d, f"final1{sfx}.xray")
    p = run([XRAYFDR, "record", "-q", "-o", final1, "--mode", mode, "--buffer-max", "2048",
             "--trigger", "serve>50ms", "--max-snapshots", "1",
             "--snapshot-dir", snaps1, "--", exe, snaps1, "1"], timeout=600)
    files = [f for f in os.listdir(snaps1) if not f.startswith(".")]
    info = snapshot_info(events_of(final1)) if os.path.exists(final1) else {}
    tap(p.returncode == 0 and len(files) == 1 and
        int(info.get("trigger_suppressed", 0)) >= 1,
        f"triggers{tag}: --max-snapshots 1 writes one, and the log counts what it held back",
        f"exit {p.returncode}, files {files}, info {info}\n{p.stderr[-1000:]}")

INFO_HEX = b"xrayfdr-info".hex()


def enter_args_and_info(log):
    """The first argument of every entry with arguments in @log, its info
    event's text and thread (a regular expression over the dump: the
    logs are large)."""
    p = run([XRAYFDR, "dump", "--events", "--json", log])
    if p.returncode:
        raise RuntimeError(f"xrayfdr dump --events {log}: {p.stderr.strip()}")
    args = {int(a) for a in re.findall(r'"kind":"function-enter-arg".*"args":\[(\d+)', p.stdout)}
    info, tid = "", None
    for line in p.stdout.splitlines():
        if INFO_HEX in line:
            e = json.loads(line)
            info, tid = bytes.fromhex(e["data"]).decode(errors="replace"), e.get("tid")
    return args, info, tid


def check_snapshot_cpu():
    """xrayfdr snapshot PID of a multi-threaded server in CPU mode on the
    runtime's own rings: the command copies them from outside.  Every
    snapshot verifies, holds each worker's last completed request, and
    moves forward; the final log is whole; other users, untraced processes
    and a process that exits meanwhile get a clear answer."""
    d = os.path.join(OUT, "snapshot_cpu")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    exe, stop = os.path.join(d, "server"), os.path.join(d, "stop")
    progress = os.path.join(d, "progress")
    workers = 3
    p = build_api(os.path.join(PROGS, "server.c"), exe)
    if p.returncode:
        tap(False, "CPU snapshot: the server builds", p.stderr)
        return
    final = os.path.join(d, "final.xray")
    # a window of 8 sub-buffers of 64 KiB a CPU: seconds of requests
    srv = subprocess.Popen([XRAYFDR, "record", "-q", "--mode", "cpu", "-o", final,
                            "--buffer-max", str(8 * os.cpu_count()), "--", exe, stop,
                            str(workers), progress],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        pid = server_pid(srv)
        snaps, problems, maxes, cut = [], [], [], 0
        for i in range(20):
            with open(progress, "rb") as f:
                done = [v for v in struct.unpack(f"<{workers}q", f.read(8 * workers)) if v]
            out = os.path.join(d, f"snap-{i}.xray")
            q = run([XRAYFDR, "snapshot", "-o", out, str(pid)])
            if q.returncode or "cut)" not in q.stdout:
                problems.append(f"snapshot {i}: exit {q.returncode}: {q.stdout}{q.stderr}")
                continue
            cut += int(re.search(r"(\d+) cut\)", q.stdout).group(1))
            snaps.append(out)
            args, info, info_tid = enter_args_and_info(out)
            missing = [v for v in done if v not in args]
            if missing:
                problems.append(f"snapshot {i}: lacks completed requests {missing}")
            if "\nmode=cpu\n" not in info or "\nrings=own\n" not in info or \
                    "\nsnapshot=request(pid=" not in info or "\ncut=" not in info:
                problems.append(f"snapshot {i}: info event {info!r}")
            if info_tid != pid:
                problems.append(f"snapshot {i}: info event of thread {info_tid}, not {pid}")
            maxes.append(max(args) if args else 0)
        tap(not problems and len(snaps) == 20,
            "CPU snapshot: 20 snapshots of a running 3-thread server, each with every "
            "worker's last completed request, the mode and what was cut in its info event",
            "\n".join(problems[:10]))
        tap(maxes == sorted(maxes) and maxes and maxes[0] > 0,
            "CPU snapshot: successive snapshots move forward", repr(maxes))
        verify_logs("CPU snapshot: every snapshot verifies", snaps)
        if os.geteuid() == 0:
            nobody = "/tmp/xrayfdr-nobody-cpu-%d.xray" % pid
            q = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                     XRAYFDR, "snapshot", "-o", nobody, str(pid)])
            tap(q.returncode == 1 and "not yours" in q.stderr and not os.path.exists(nobody),
                "CPU snapshot: another user is refused, and no file is left", q.stderr)
        else:
            tap(True, "CPU snapshot: another user is refused",
                skip="needs root to be another user")
    finally:
        open(stop, "w").close()
        out, err = srv.communicate(timeout=300)
    m = re.search(r"handled (\d+)", out)
    with open(progress, "rb") as f:
        done = [v for v in struct.unpack(f"<{workers}q", f.read(8 * workers)) if v]
    args, info, _ = enter_args_and_info(final) if os.path.exists(final) else (set(), "", 0)
    kv = dict(l.split("=", 1) for l in info.splitlines() if "=" in l)
    made = int(kv.get("events", 0)) + int(kv.get("overwritten", 0))
    tap(srv.returncode == 0 and m and all(v in args for v in done) and
        kv.get("dropped") == "0" and made >= 2 * int(m.group(1)),
        "CPU snapshot: the log at the end has each worker's last request, and its events "
        "kept and overwritten account for every request",
        f"exit {srv.returncode}, last {done}, info {kv}, server says "
        f"{m.group(0) if m else out!r}\n{err}")
    verify_log("CPU snapshot: the log at the end verifies", final)

    # a process that exits while it is snapshotted: a log or a clear error
    outcomes = collections.Counter()
    bad = []
    for i in range(5):
        stop2 = os.path.join(d, f"stop-{i}")
        srv = subprocess.Popen([XRAYFDR, "record", "-q", "--mode", "cpu", "-o",
                                os.path.join(d, f"exiting-{i}.xray"), "--", exe, stop2,
                                "2", progress + f"-{i}"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        pid = server_pid(srv)
        out = os.path.join(d, f"exiting-snap-{i}.xray")
        snap = subprocess.Popen([XRAYFDR, "snapshot", "-o", out, str(pid)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        open(stop2, "w").close()
        o, e = snap.communicate(timeout=300)
        srv.communicate(timeout=300)
        outcomes[snap.returncode] += 1
        if snap.returncode == 0:
            vp = run([XRAYFDR, "dump", "--verify", "--quiet", out])
            if vp.returncode:
                bad.append(f"{i}: a log that does not verify: {vp.stderr}")
        elif snap.returncode != 1 or "no snapshot" not in e and "not traced" not in e \
                and "no process" not in e:
            bad.append(f"{i}: exit {snap.returncode}: {o}{e}")
    tap(not bad, "CPU snapshot: of a process exiting meanwhile, a valid log or a clear error "
        f"({dict(outcomes)})", "\n".join(bad))


def check_stream():
    """record --stream: with a queue (or rings) far smaller than the trace,
    every call reaches the log (threads wait for the writer), in order,
    none overwritten or dropped; a fatal signal leaves every call made
    before it."""
    small = ["--buffer-size", "4K", "--buffer-max", "8"]
    for prog, args in ((MATRIX[0], ["22"]), (MATRIX[2], ["3000"])):  # recursion, threads
        b = built(prog)
        if not b:
            continue
        exe, d = b
        ids = symbol_ids(exe)
        for mode in ("thread", "cpu"):
            log = os.path.join(d, f"stream-{mode}.xray")
            p = run([XRAYFDR, "record", "--stream", "-o", log, "--mode", mode] + small +
                    [exe] + args)
            want = program_counts(p.stdout)
            bad, info, kept, order = {}, "", 0, []
            if os.path.exists(log):
                evs = events_of(log)
                order = order_problems(evs)
                c, _, _, info = tally(evs)
                for (pid, name), n in want.items():
                    got = (c[(pid, ids[name], "entry")], c[(pid, ids[name], "exit")])
                    if got != (n, n):
                        bad[name] = (got, n)
                kept = sum(v for (_, _, k), v in c.items() if k == "entry")
            tap(p.returncode == 0 and want and not bad and kept > 8 * 4096 // 16 and
                not order and info_value(info, "overwritten") == 0 and
                info_value(info, "dropped") == 0 and f"mode={mode}\n" in info,
                f"{prog.name}: record --stream --mode {mode} with 8 buffers of 4 KiB "
                "keeps every call, in order",
                f"exit {p.returncode}; (entries, exits) against calls: {bad}; {kept} kept;\n"
                f"{len(order)} out of order: {order[:5]}\n{info}{p.stderr[-500:]}")
            verify_log(f"{prog.name}: a log streamed in {mode} mode is valid", log)
    b = built(Prog("crash", ["crash.c"]))
    if not b:
        return
    exe, d = b
    for mode in ("thread", "cpu"):
        log = os.path.join(d, f"stream-segv-{mode}.xray")
        p = run([XRAYFDR, "record", "-q", "--stream", "--mode", mode, "-o", log] +
                small + [exe, "segv"])
        work = 0
        if os.path.exists(log):
            c, _, _, _ = tally(events_of(log))
            work = sum(n for (pid, f, k), n in c.items()
                       if f == symbol_ids(exe)["work"] and k == "entry")
        tap(work == 1000 and p.returncode == 128 + 11,
            f"record --stream --mode {mode}, killed by SIGSEGV: the log holds every "
            "call made before",
            f"{work} work() entries; exit {p.returncode}\n{p.stderr}")
        verify_log(f"record --stream --mode {mode}, killed by SIGSEGV: the log is valid",
                   log)


def order_problems(events, times=True):
    """Where a thread's records, in the log's order, do not nest (an exit
    that is not of the call on top) or go back in time (if @times): []
    if nowhere."""
    stacks, last, bad = {}, {}, []
    for e in events:
        k, tid = e["kind"], (e["pid"], e["tid"])
        if k not in ENTRY_KINDS and k not in EXIT_KINDS:
            continue
        if times and e["tsc"] < last.get(tid, 0):
            bad.append(f"offset {e['offset']}: thread {tid[1]}'s time goes back")
        last[tid] = e["tsc"]
        st = stacks.setdefault(tid, [])
        if k in ENTRY_KINDS:
            st.append(e["func_id"])
        elif not st or st.pop() != e["func_id"]:
            bad.append(f"offset {e['offset']}: thread {tid[1]}'s exit of "
                       f"{e['func_id']} is not of the call on top")
    return bad


def check_cpu_order(name, args, why):
    """CPU mode on the runtime's own rings, flight recorder and streamed
    through small rings: program @name (with @args) has every call in
    the log, each thread's records nest and go forward in time, and
    dump --verify accepts the log."""
    if len(os.sched_getaffinity(0)) < 2:
        tap(None, name, skip="one CPU: nothing can migrate")
        return
    b = built(Prog(name, [name + ".c"]))
    if not b:
        return
    exe, d = b
    ids = symbol_ids(exe)
    for extra, what in (([], "flight recorder"),
                        (["--stream", "--buffer-size", "4K", "--buffer-max", "8"],
                         "--stream, 8 sub-buffers of 4 KiB")):
        log = os.path.join(d, name + ".xray")
        p = run([XRAYFDR, "record", "-q", "--mode", "cpu", "-o", log] + extra +
                [exe] + args)
        want = program_counts(p.stdout)
        evs = events_of(log) if os.path.exists(log) else []
        c, _, _, info = tally(evs)
        bad = {sym: (c[(pid, ids[sym], "entry")], c[(pid, ids[sym], "exit")], n)
               for (pid, sym), n in want.items()
               if (c[(pid, ids[sym], "entry")], c[(pid, ids[sym], "exit")]) != (n, n)}
        order = order_problems(evs)
        v = run([XRAYFDR, "dump", "--verify", "--quiet", log])
        tap(p.returncode == 0 and want and not bad and not order and
            v.returncode == 0 and
            info_value(info, "overwritten") == 0 and info_value(info, "dropped") == 0,
            f"{name}: --mode cpu, {what}: {why}",
            f"exit {p.returncode}; (entries, exits, calls): {bad}; "
            f"{len(order)} out of order: {order[:5]}\n{v.stdout}{v.stderr[-500:]}"
            f"\n{info}{p.stderr[-500:]}")


def check_migrate():
    """Threads that move to another CPU in the middle of a call and come
    back to a ring they still own have their records in the order they
    made them."""
    check_cpu_order("migrate", ["300", "2"], "every call, in order")


def check_mixed():
    """More threads than CPUs that spin, sleep, wait on a lock, yield and
    move between CPUs mid-call."""
    check_cpu_order("mixed", ["100"], "more threads than CPUs sleeping, "
                    "spinning, migrating, waiting on a lock: every call, "
                    "each thread in time order")


def strace_counts(path):
    """System calls per name from `strace -c -o @path`."""
    counts = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$", line)
            if m and m.group(2) != "total":
                counts[m.group(2)] = int(m.group(1))
    return counts


def check_syscalls():
    """CPU mode: a traced run's system calls do not grow with its events
    beyond one a sub-buffer, whatever path the events take (entries with
    a logged argument, custom events, which take the C path)."""
    strace = which("strace")
    if not strace:
        tap(None, "system calls per event", skip="no strace (make deps)")
        return
    b = built(Prog("syscalls", ["syscalls.c"], with_lib=True))
    if not b:
        return
    exe, d = b
    size = 4096
    runs = {}
    for n in (2000, 20000):
        log = os.path.join(d, f"syscalls-{n}.xray")
        out = os.path.join(d, f"syscalls-{n}.strace")
        p = run([strace, "-f", "-c", "-o", out, XRAYFDR, "record", "-q",
                 "--mode", "cpu", "--buffer-size", str(size), "--buffer-max",
                 "16", "-o", log, exe, str(n)])
        runs[n] = (p, strace_counts(out) if os.path.exists(out) else {}, log)
    (p1, c1, _), (p2, c2, log2) = runs[2000], runs[20000]
    # about 38 bytes an iteration: an entry with its argument, an exit,
    # a quarter of a custom event
    subbufs = (20000 - 2000) * 38 // (size - 64) + 1
    grew = {k: c2.get(k, 0) - c1.get(k, 0) for k in set(c1) | set(c2)}
    total = sum(grew.values())
    tap(p1.returncode == 0 and p2.returncode == 0 and c1 and c2 and
        total <= 2 * subbufs + 100,
        "mode=cpu: system calls grow by at most about one a sub-buffer "
        "with the events",
        f"exits {p1.returncode}, {p2.returncode}; 18000 more iterations "
        f"(~{subbufs} sub-buffers) made {total} more system calls: "
        f"{sorted(((v, k) for k, v in grew.items() if v), reverse=True)[:6]}"
        f"\n{p1.stderr[-300:]}{p2.stderr[-300:]}")
    if p2.returncode == 0:
        verify_log("mode=cpu: the run with arguments and custom events", log2)
    # the fast path's argument records: every entry's, with its value
    log = os.path.join(d, "syscalls-args.xray")
    p, logs = run_ours(exe, log, ["3000"], env={
        "XRAYFDR_OPTIONS": f"mode=cpu buffer_size={size} "
                           f"buffer_max={64 * os.cpu_count()}"})
    evs = [e for l in logs for e in events_of(l)]
    args = collections.Counter(e["args"][0] for e in evs
                               if e.get("kind") == "function-enter-arg")
    tap(p.returncode == 0 and args == collections.Counter(range(3000)),
        "mode=cpu: each entry with a logged argument has its argument",
        f"exit {p.returncode}; {sum(args.values())} arguments, "
        f"{len(args)} distinct, missing {sorted(set(range(3000)) - set(args))[:5]}"
        f"\n{p.stderr[-300:]}")
    verify_logs("mode=cpu: the logs with arguments pass both verifiers", logs)


def c_path_calls(exe, args, env, fn="rt_fdr_light"):
    """(how often the C path @fn (of a function event: rt_fdr_light; of a
    custom or typed one: rt_fdr_light_event) ran in @exe @args, counted
    by a gdb breakpoint, the run's output), or (None, why)."""
    gdb = which("gdb")
    if not gdb:
        return None, "no gdb (make deps)"
    p = run([gdb, "-batch", "-nx", "-ex", "set breakpoint pending on",
             "-ex", f"break {fn}", "-ex", "ignore 1 1000000000",
             "-ex", "run", "-ex", "info breakpoints", "--args", exe] + args,
            env=env, timeout=600)
    m = re.search(r"already hit (\d+) time", p.stdout)
    if p.returncode or "exited normally" not in p.stdout:
        return None, f"gdb cannot run it here: {p.stdout[-200:]}{p.stderr[-200:]}"
    return (int(m.group(1)) if m else 0), p


def check_discard():
    """CPU mode, discard: once the ring is full, an event costs what it
    costs in overwrite mode: the fast path drops it, it does not call C
    (counted with a breakpoint, not timed); the summary counts every
    event made, written or dropped."""
    b = built(Prog("syscalls", ["syscalls.c"], with_lib=True))
    if not b:
        return
    exe, d = b
    n, got = 5000, {}
    for mode in ("overwrite", "discard"):
        env = {"XRAYFDR_OPTIONS": f"mode=cpu buffer_size=4096 "
               f"buffer_max={2 * os.cpu_count()} verbosity=1 "
               f'output="{os.path.join(d, mode + ".xray")}"'
               + (" discard=true" if mode == "discard" else "")}
        got[mode] = c_path_calls(exe, [str(n), "0"], env)
        if got[mode][0] is None:
            tap(None, "mode=cpu discard: C calls", skip=got[mode][1])
            return
    (ow, pw), (dc, pd) = got["overwrite"], got["discard"]
    # 2 sub-buffers of 4 KiB hold about 1000 of the 10002 events
    tap(dc <= 2 * ow + 20,
        "mode=cpu discard: a full ring's events do not take the C path",
        f"{2 * n + 2} events: the C path ran {ow} times in overwrite mode, "
        f"{dc} in discard mode")
    def summary(p):
        m = re.search(r"wrote (\d+) events .*\((\d+) overwritten, (\d+) dropped",
                      p.stdout + p.stderr)
        return tuple(map(int, m.groups())) if m else None

    so, sd = summary(pw), summary(pd)
    tap(so and sd and sum(so) == sum(sd) and sd[2] > 0,
        "mode=cpu discard: the summary counts every event, written or dropped",
        f"(written, overwritten, dropped): overwrite {so}, discard {sd}\n"
        f"{pd.stderr[-300:]}")


def check_fast_events():
    """Custom events take the trampolines' fast path, like function
    records, in both modes: the C path runs about once a buffer (thread
    mode) or sub-buffer (CPU mode), not once an event (counted with a
    breakpoint, not timed), and every event is in the log, which passes
    both verifiers."""
    b = built(Prog("syscalls", ["syscalls.c"], with_lib=True))
    if not b:
        return
    exe, d = b
    n = 5000
    for mode in ("thread", "cpu"):
        log = os.path.join(d, f"{mode}-events.xray")
        # one event an iteration, about 56 bytes with the call: ~70
        # buffers of 4 KiB, all kept
        env = {"XRAYFDR_OPTIONS": f"mode={mode} buffer_size=4096 "
               f"buffer_max={256 * os.cpu_count()} output=\"{log}\""}
        calls, p = c_path_calls(exe, [str(n), "1"], env, "rt_fdr_light_event")
        if calls is None:
            tap(None, f"mode={mode}: events take the fast path", skip=p)
            continue
        tap(calls <= n // 10,
            f"mode={mode}: events take the fast path, the C path about once "
            "a buffer",
            f"{n} custom events: the C path ran {calls} times")
        ticks = sum(1 for e in events_of(log) if e.get("kind") == "custom-event"
                    and e.get("data") == b"tick".hex()) if os.path.exists(log) else 0
        tap(ticks == n, f"mode={mode}: every event of the fast path is in the log",
            f"{ticks} of {n} events\n{p.stdout[-300:]}")
        verify_log(f"mode={mode}: the log of the event fast path passes both "
                   "verifiers", log)


def check_history():
    """CPU mode's default rings give a thread that keeps to one CPU the
    history thread mode's default gives it; a buffer_max the user sets is
    shared out among the CPUs.  The summary line says what a CPU's ring
    holds."""
    b = built(Prog("syscalls", ["syscalls.c"], with_lib=True))
    taskset = which("taskset")
    if not b or not taskset:
        tap(None, "history: CPU mode against thread mode",
            skip="no taskset" if b else "syscalls does not build")
        return
    exe, d = b
    ncpus = os.cpu_count()
    sub, default = 64 << 10, 256
    kept = {}
    for name, mode, extra in (("thread", "thread", []), ("cpu", "cpu", []),
                              ("cpu-m", "cpu", ["-m", str(default)])):
        log = os.path.join(d, f"history-{name}.xray")
        p = run([taskset, "-c", "0", XRAYFDR, "record", "--mode", mode,
                 "-o", log] + extra + [exe, "1500000", "0"])
        m = re.search(r"(\d+) events in \d+ buffers.*?(?:of ([\d.]+) MiB a CPU)?\)",
                      p.stderr)
        kept[name] = (int(m.group(1)), m.group(2)) if m and not p.returncode \
            else (None, p.stderr[-300:])
    per_cpu = max(default // ncpus, min(default, 1024 // ncpus), 2) * sub
    shared = max(default // ncpus, 2) * sub
    t, c, cm = kept["thread"][0], kept["cpu"][0], kept["cpu-m"][0]
    tap(t and c and c >= t * 0.95,
        "history: one thread in CPU mode keeps what thread mode keeps",
        f"events kept, 3000002 made: thread mode {kept['thread']}, "
        f"CPU mode {kept['cpu']}")
    tap(kept["cpu"][1] is not None
        and float(kept["cpu"][1]) == per_cpu / (1 << 20)
        and cm and kept["cpu-m"][1] is not None
        and float(kept["cpu-m"][1]) == shared / (1 << 20),
        "history: the summary says what a CPU's ring holds; -m is shared out",
        f"{ncpus} CPUs: default {kept['cpu']} (want {per_cpu >> 20} MiB), "
        f"-m {default} {kept['cpu-m']} (want {shared / (1 << 20)} MiB)")


def check_light_objects():
    """The recording path is called with only general registers saved: its
    objects must not touch vector registers nor call what might."""
    # fdr.o reaches the sink only through rt_live.sink, so the sinks'
    # objects are checked as well (rt and rt_live are state.c's data)
    allowed = {"fdr.o": {"clock_gettime", "sched_getcpu", "prctl", "rt",
                         "rt_live", "_GLOBAL_OFFSET_TABLE_"},
               # calloc, free, mmap, munmap: set-up and teardown only
               "bufq.o": {"calloc", "free", "mmap", "munmap", "sched_yield",
                          "_GLOBAL_OFFSET_TABLE_"},
               # the drain's log buffers (only the drain calls it; open,
               # read, close: a thread's name at the flush)
               "logbuf.o": {"fdr_decode_metadata", "memcpy", "mmap", "munmap",
                            "open", "read", "close", "rt_utoa",
                            "xrayfdr_thread_name_encode",
                            "xrayfdr_thread_name_decode",
                            "_GLOBAL_OFFSET_TABLE_"},
               # thread buffers: only the writer is on the recording
               # path (start, the drain and streaming are built
               # normally); clock_gettime for a buffer's preamble; the
               # queue's lock around fork; a full queue's wait for the
               # stream's writer (nanosleep)
               "sink_thread_write.o": {"clock_gettime",
                                       "rt_bufq_acquire", "rt_bufq_retire",
                                       "rt_bufq_lock", "rt_bufq_unlock",
                                       "rt_bufq_reset", "syscall",
                                       "rt_live", "rt_bufq_draining",
                                       "_GLOBAL_OFFSET_TABLE_"},
               # CPU rings: only the writer is on the recording path
               # (its mapping, drain and streaming are built normally):
               # the rings' state (rt_cpu, rt_ring); clock_gettime for a
               # sub-buffer's wall time; a full ring's wait for the
               # stream's writer
               "sink_cpu_write.o": {"clock_gettime", "rt", "rt_cpu", "rt_ring",
                                    "rt_rseq_offset", "syscall",
                                    "rt_live",
                                    "_GLOBAL_OFFSET_TABLE_"},
               # triggers: a timed exit (the thread's state) hands what
               # fired to the trigger thread (eventfd's write; errno kept)
               "trigger_fire.o": {"rt_self", "syscall", "write",
                                  "__errno_location",
                                  "_GLOBAL_OFFSET_TABLE_"}}
    objdump = which("objdump")
    for obj, ok in allowed.items():
        path = os.path.join(BUILD, "obj", "lib", "runtime", obj)
        if not os.path.exists(path) or not objdump:
            tap(False, f"{obj} is built and objdump exists", path)
            continue
        dis = run([objdump, "-d", path]).stdout
        vec = [l.strip() for l in dis.splitlines() if re.search(r"%[xyz]mm|%k[0-7]\b", l)]
        undef = set(run([NM, "-u", path]).stdout.split()) - {"U"}
        tap(not vec and undef <= ok,
            f"lib/runtime/{obj} uses no vector registers and calls only {sorted(ok - {'_GLOBAL_OFFSET_TABLE_'})}",
            f"vector instructions: {vec[:5]}; other calls: {sorted(undef - ok)}")


def name_runs(evs):
    """tid -> the names its thread-name events carry, in order, each run
    of one name once."""
    runs = collections.defaultdict(list)
    for e in evs:
        n = e.get("thread_name")
        if n is None:
            continue
        if n["tid"] != e["tid"]:
            runs[e["tid"]].append(f"(tid {n['tid']}) {n['name']}")
        elif not runs[e["tid"]] or runs[e["tid"]][-1] != n["name"]:
            runs[e["tid"]].append(n["name"])
    return runs


def buffers_unnamed(log, tids):
    """Buffers of threads @tids whose first event is not their name."""
    p = run([XRAYFDR, "dump", "--json", log])
    bad, tid, first = [], None, None
    for line in p.stdout.splitlines()[1:]:
        r = json.loads(line)
        kind = r.get("record")
        if kind == "NewBuffer":
            tid, first = r["tid"], None
        elif first is None and tid in tids and kind not in (
                "WallTimeMarker", "Pid", "NewCPUId", "BufferExtents"):
            first = r
            want = b"XFTN" + tid.to_bytes(4, "little")
            data = bytes.fromhex(r.get("data", ""))
            if data.startswith(b"xrayfdr-info"):
                continue  # the runtime's own last buffer
            if kind != "CustomEventMarker" or not data.startswith(want):
                bad.append(f"offset {r['offset']}: tid {tid} begins with {kind}")
    return bad


def check_thread_names():
    """Each thread's name is in its stream: at its first event and at the
    start of each buffer (thread mode) or sub-buffer (CPU mode) it writes
    in, a rename at the next of those, at its exit or at the flush."""
    b = built(Prog("thread_names", ["thread_names.c"]))
    if not b:
        return
    exe, d = b
    # main's first name is the one exec gave it, which takes no event
    # (a program that names no thread writes what LLVM's runtime writes)
    want_all = {"alpha": ["alpha", "alpha-renamed"], "beta": ["beta"],
                "main": ["main-renamed"]}
    # one buffer per thread: alpha's new name comes at its exit, main's
    # at the flush; 4 KiB buffers: each buffer names its thread
    for mode, size, note in (("thread", "64K", "at exit and flush"),
                             ("thread", "4K", "in every buffer"),
                             ("cpu", "4K", "rings in process memory")):
        log = os.path.join(d, f"names-{mode}-{size}.xray")
        env = {"XRAYFDR_OPTIONS": f"mode={mode} buffer_size={size} "
               f"buffer_max={512 * os.cpu_count()}"}
        p, logs = run_ours(exe, log, ["3000"], env=env)
        name = f"thread names, mode={mode}, {size} buffers ({note})"
        if p.returncode or not logs:
            tap(False, f"{name}: records", p.stderr)
            continue
        tids = {m.group(1): int(m.group(2))
                for m in re.finditer(r"^tid (\w+) (\d+)$", p.stdout, re.M)}
        evs = events_of(log)
        runs = name_runs(evs)
        got = {who: runs.get(tid, []) for who, tid in tids.items()}
        tap(set(tids) == set(want_all) and got == want_all and
            set(runs) <= set(tids.values()),
            f"{name}: each thread's thread-name events carry its names, in order",
            f"got {got}, want {want_all}; all {dict(runs)}")
        if size == "4K" and mode == "thread":
            bad = buffers_unnamed(log, {tids.get("alpha"), tids.get("beta")})
            nbuf = sum(1 for e in evs if e.get("thread_name", {}).get("tid") ==
                       tids.get("beta"))
            tap(not bad and nbuf > 2,
                f"{name}: every buffer of a thread begins with its name",
                "\n".join(bad[:10]) or f"beta named {nbuf} times")
        verify_logs(f"{name}: the log passes xrayfdr dump --verify and "
                    f"llvm-xray fdr-dump -verify", logs)

    # the flight recorder keeps the newest buffers: they still name
    # their threads
    log = os.path.join(d, "names-small.xray")
    p, logs = run_ours(exe, log, ["20000"], env={
        "XRAYFDR_OPTIONS": "buffer_size=4K buffer_max=6"})
    tids = {m.group(1): int(m.group(2))
            for m in re.finditer(r"^tid (\w+) (\d+)$", p.stdout, re.M)}
    info = tally(events_of(log))[3] if logs else ""
    bad = buffers_unnamed(log, {tids.get("alpha"), tids.get("beta")}) \
        if logs else ["no log"]
    tap(not p.returncode and len(tids) == 3 and not bad and
        info_value(info, "recycled") > 0,
        "thread names: after recycling, every buffer left begins with its "
        "thread's name", "\n".join(bad[:10]) + p.stderr)


def check_static_link():
    """libxrayfdr.a pulled in by naming __xray_init (runtime.rst): the
    environment alone starts tracing, in both modes."""
    d = os.path.join(OUT, "static")
    os.makedirs(d, exist_ok=True)
    exe = os.path.join(d, "threads")
    p = run([CLANG, "-O2", "-pthread", "-I", PROGS] + XRAY_FLAGS +
            ["-fnoxray-link-deps", os.path.join(PROGS, "threads.c"), "-o", exe,
             "-Wl,-u,__xray_init", "-L", LIBDIR, "-l:libxrayfdr.a", "-lelf"])
    if p.returncode:
        tap(False, "threads links with -Wl,-u,__xray_init -l:libxrayfdr.a", p.stderr)
        return
    ids = symbol_ids(exe)
    for mode in ("thread", "cpu"):
        log = os.path.join(d, f"{mode}.xray")
        if os.path.exists(log):
            os.unlink(log)
        rp = run([exe, "300"], env={"XRAYFDR_OPTIONS": f'output="{log}" mode={mode}'})
        counts = program_counts(rp.stdout)
        got = tally(events_of(log))[0] if os.path.exists(log) else {}
        bad = [f"{sym}: program {n}, log {got.get((pid, ids.get(sym), 'entry'), 0)}"
               for (pid, sym), n in counts.items()
               if got.get((pid, ids.get(sym), "entry"), 0) != n]
        tap(rp.returncode == 0 and counts and not bad,
            f"static libxrayfdr (-u __xray_init), mode={mode}: the environment "
            "starts tracing and the log counts every call",
            "\n".join(bad) or rp.stderr or "no log")
    # the info event names the program's build id (readelf's)
    info = tally(events_of(log))[3] if os.path.exists(log) else ""
    m = re.search(r"^object=0 .*\nbuild_id=([0-9a-f]+)$", info, re.M)
    want = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", exe]).stdout)
    tap(bool(m and want and m.group(1) == want.group(1)),
        "the info event gives the program's build id after its object line",
        f"log: {m.group(1) if m else None}, readelf: {want.group(1) if want else None}")


def check_environment():
    """Environment alone: XRAY_OPTIONS and XRAYFDR_OPTIONS, good and bad."""
    d = os.path.join(OUT, "env")
    os.makedirs(d, exist_ok=True)
    exe = os.path.join(d, "events")
    p = build_api(os.path.join(PROGS, "events.c"), exe)
    if p.returncode:
        tap(False, "events builds with -lxrayfdr", p.stderr)
        return
    for f in glob.glob(os.path.join(d, "xray-log.*")):
        os.unlink(f)
    rp = run([exe], env={"XRAY_OPTIONS": f"patch_premain=true xray_mode=xray-fdr xray_logfile_base={d}/xray-log."},
             cwd=d)
    logs = glob.glob(os.path.join(d, "xray-log.events.*"))
    tap(rp.returncode == 0 and len(logs) == 1,
        "XRAY_OPTIONS=patch_premain=true xray_mode=xray-fdr alone writes "
        "<base><program>.<random>",
        rp.stderr)
    if logs:
        verify_log("XRAY_OPTIONS: the log is valid", logs[0])
    # LLVM's runtime: patch_premain=true without a mode patches and records
    # nothing; a handler the program sets sees every call
    ho = os.path.join(d, "handler_only")
    p = build_api(os.path.join(PROGS, "handler_only.c"), ho)
    if p.returncode:
        tap(False, "handler_only builds with -lxrayfdr", p.stderr)
        return
    for premain, want in (("true", 200), ("false", 0)):
        for f in glob.glob(os.path.join(d, "ho-*")):
            os.unlink(f)
        rp = run([ho], env={"XRAY_OPTIONS": f"patch_premain={premain} verbosity=1 "
                            f"xray_logfile_base={d}/ho-"}, cwd=d)
        m = re.search(r"^handler (\d+)$", rp.stdout, re.M)
        logs = glob.glob(os.path.join(d, "ho-*"))
        tap(rp.returncode == 0 and m and int(m.group(1)) == want and not logs and
            "Log file in" not in rp.stderr,
            f"XRAY_OPTIONS=patch_premain={premain} without xray_mode: as LLVM's runtime, "
            f"{'the sleds patched, ' if want else ''}no log; the program's handler saw "
            f"{want} entries and exits",
            f"exit {rp.returncode}; logs {logs}\n{rp.stdout}{rp.stderr}")
    log = os.path.join(d, "bad.xray")
    rp = run([exe], env={"XRAYFDR_OPTIONS": f'output="{log}" buffer_size=banana'})
    tap(rp.returncode == 0 and "buffer_size=banana" in rp.stderr
        and "tracing is off" in rp.stderr and not os.path.exists(log),
        "a bad option value: a clear message, no trace, the program runs",
        rp.stderr)
    rp = run([exe], env={"XRAYFDR_OPTIONS": "colour=blue"})
    tap(rp.returncode == 0 and "unknown option 'colour'" in rp.stderr,
        "an unknown XRAYFDR_OPTIONS name is an error, reported", rp.stderr)
    rp = run([exe], env={"XRAY_OPTIONS": "patch_premain=true xray_mode=xray-profiling"})
    tap(rp.returncode == 0 and "xray_mode=xray-profiling" in rp.stderr,
        "xray_mode=xray-profiling is refused with a message, the program runs",
        rp.stderr)


def main():
    missing = [n for n, t in (("clang", CLANG), ("clang++", CLANGXX),
                              ("llvm-xray", LLVM_XRAY), ("nm", NM)) if not t]
    for path in (XRAYFDR, os.path.join(LIBDIR, "libxrayfdr.so.0")):
        if not os.path.exists(path):
            missing.append(path)
    if missing:
        print("1..1")
        print(f"not ok 1 - tools missing: {', '.join(missing)} (make deps; make)")
        return 1
    os.makedirs(OUT, exist_ok=True)
    cells = [(p, lang, opt) for p in MATRIX
             for lang in (("c++",) if p.cxx_only else ("c", "c++"))
             for opt in ("-O0", "-O2")]
    # two cells at a time; their lines come out in matrix order
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        for lines in ex.map(lambda c: held_taps(check_cell, *c), cells):
            for line in lines:
                tap(*line)
    for fn in (check_dying, check_record_errors, check_filters, check_light_objects,
               check_api, check_dlclose, check_default_options,
               check_patching, check_device_refused,
               check_version1_and_threshold, check_environment, check_static_link,
               check_thread_names, check_depth, check_dlopen, check_basic,
               check_stream, check_migrate, check_mixed, check_snapshot_cli,
               check_snapshot_cpu, check_triggers, check_syscalls, check_discard,
               check_fast_events, check_history):
        try:
            fn()
        except Exception as e:
            tap(False, f"{fn.__name__}: harness", repr(e))
    print(f"1..{len(results)}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
