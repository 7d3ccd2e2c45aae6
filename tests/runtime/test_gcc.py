#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Programs built with GCC's patchable sites (Documentation/runtime.rst,
"Programs built with GCC").

Every build takes its flags from `xrayfdr cflags --gcc [--pic]` (and
--ldflags), compiled and linked separately: the link has no -pg.

  non-PIE and PIE   tests/runtime/gcc/prog.c at -O0 and -O2 in thread and
                    CPU mode: `xrayfdr account -m` and `llvm-xray account
                    -instr_map` (on `xrayfdr extract`'s map) count exactly
                    the calls the program counts; both verifiers accept
                    the logs
  shared objects    a GCC -fPIC object called by a GCC PIE program and by
                    a clang XRay program, a clang XRay object called by a
                    GCC program, GCC objects dlopen()ed (dlopen.c of the
                    matrix): every call counted
  filters, depth    record -F/-N trace exactly the functions named, with
                    the program's own counts; --depth keeps exactly the
                    calls that deep (the matrix's model), in both modes
  the matrix        the runtime matrix's programs (threads, exceptions,
                    longjmp, signals, fork, a shared object, C++) with GCC:
                    the log counts every call each program counts, in
                    both modes; account counts each call once; both
                    verifiers
  triggers          --trigger on GCC builds, non-PIE and PIE: a snapshot
                    per slow call, naming it
  no flags          a GCC build without them is refused clearly, and so
                    is a GCC object file by extract
Prints TAP.
"""
import os
import re
import shutil
import sys
import tempfile

RUNTIME = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(RUNTIME), "tools"))
sys.path.insert(0, RUNTIME)
from taplib import XRAYFDR, finish, run, skip, tap  # noqa: E402
import test_matrix as tm  # noqa: E402


def matrix_tap(ok, name, diag="", skip_reason=None):
    """The matrix's checks report through this suite's TAP lines."""
    if skip_reason:
        skip(name, skip_reason)
    else:
        tap(ok, name, diag)


tm.tap = matrix_tap
HERE = os.path.join(RUNTIME, "gcc")
PROGS = tm.PROGS
LLVM_XRAY = shutil.which("llvm-xray-14") or shutil.which("llvm-xray")
CLANG = tm.CLANG


def flags(*args):
    return run([XRAYFDR, "cflags", *args]).stdout.split()


def gcc(srcs, out, opt="-O2", pic=False, shared=False, extra=(), link=(),
        cc=("gcc",)):
    """Build @out from @srcs with the flags `xrayfdr cflags` gives; return
    the failed step's output, or None."""
    kind = ["--gcc", "--pic"] if pic else ["--gcc"]
    objs = []
    for src in srcs:
        obj = f"{out}-{os.path.basename(src)}.o"
        r = run([*cc, opt, *flags(*kind), "-Wno-attributes", *extra,
                 "-c", src, "-o", obj])
        if r.returncode:
            return r.stderr
        objs.append(obj)
    r = run([*cc, opt, *(["-shared"] if shared else []), *objs,
             *flags(*kind, "--ldflags"), *link, "-o", out])
    return r.stderr if r.returncode else None


def counts(text):
    """function name -> count from an account table (the name is last)."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s*\d+\s+(\d+)\s+\[.*\]\s.*?(\S+)\s*$", line)
        if m:
            name = m.group(2).split(":")[-1].strip("@()")
            out[name] = out.get(name, 0) + int(m.group(1))
    return out


def own_counts(stdout):
    """The program's own counters ("count NAME N" lines)."""
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^count (\S+) (\d+)$", stdout, re.M)}


def verify(name, log):
    """Both verifiers accept @log."""
    r = run([XRAYFDR, "dump", "--verify", log])
    tap(r.returncode == 0, f"{name}: xrayfdr dump --verify",
        r.stdout[-2000:] + r.stderr)
    if not LLVM_XRAY:
        skip(f"{name}: llvm-xray fdr-dump -verify", "llvm-xray is not installed")
        return
    r = run([LLVM_XRAY, "fdr-dump", "-verify", log])
    tap(r.returncode == 0, f"{name}: llvm-xray fdr-dump -verify",
        r.stdout[-2000:] + r.stderr)


def logged(log, exe, libs=()):
    """name -> [entries, exits] in @log for the functions of @exe and of
    the shared objects @libs (numbered as the log's info record says)."""
    c, _, _, info = tm.tally(tm.events_of(log))
    firsts = {os.path.realpath(exe): 1}
    firsts.update({os.path.realpath(lib): 1 << 24 | 1 for lib in libs})
    for m in re.finditer(r"^object=(\d+) (\d+) 0x[0-9a-f]+ (.*)$", info, re.M):
        firsts[os.path.realpath(m.group(3))] = int(m.group(2))
    out = {}
    for binary in (exe, *libs):
        ids = tm.symbol_ids(binary, first_id=firsts[os.path.realpath(binary)])
        for name, i in ids.items():
            out[name] = [sum(n for (_, f, k), n in c.items()
                             if f == i and k == kind)
                         for kind in ("entry", "exit")]
    return out


def check(name, tmp, exe, mode="thread", args=()):
    log = os.path.join(tmp, f"{name}.log")
    r = run([XRAYFDR, "record", "-M", mode, "-o", log, exe, *args])
    expected = own_counts(r.stdout)
    if r.returncode or len(expected) != 5:
        tap(False, f"{name}: record", r.stdout + r.stderr)
        return
    r = run([XRAYFDR, "account", "-m", exe, log])
    got = {k: counts(r.stdout).get(k, 0) for k in expected}
    tap(got == expected, f"{name}: xrayfdr account counts",
        f"got {got}\nwant {expected}\n{r.stdout}{r.stderr}")
    verify(name, log)
    if not LLVM_XRAY or not args:
        return
    yaml = os.path.join(tmp, f"{name}.yaml")
    r = run([XRAYFDR, "extract", exe])
    with open(yaml, "w") as f:
        f.write(r.stdout)
    r = run([LLVM_XRAY, "account", "-k", f"-instr_map={yaml}", log])
    got = counts(r.stdout)
    addrs = {}
    for line in open(yaml):
        m = re.search(r"id: (\d+), address: 0x([0-9A-F]+), function: "
                      r"0x([0-9A-F]+), kind: function-enter", line)
        if m:
            addrs[m.group(3).lower()] = int(m.group(1))
    syms = run(["nm", exe]).stdout
    byname = {}
    for line in syms.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].lstrip("0") in addrs:
            byname[parts[2]] = got.get(parts[0].lstrip("0"), 0)
    want = {k: v for k, v in expected.items() if k in byname}
    have = {k: byname[k] for k in want}
    tap(have == want and len(want) == len(expected),
        f"{name}: llvm-xray account counts",
        f"got {have}\nwant {want}\n{r.stdout}{r.stderr}")


def check_programs(tmp, prog):
    """prog.c, non-PIE and PIE, -O0 and -O2, thread and CPU mode."""
    for pic in (False, True):
        for opt in ("-O0", "-O2"):
            name = f"gcc{opt}-{'pie' if pic else 'nopie'}"
            exe = os.path.join(tmp, name)
            err = gcc([prog], exe, opt, pic=pic, link=["-pthread"])
            if err:
                tap(False, f"{name}: build", err)
                continue
            for mode in ("thread", "cpu"):
                check(f"{name}-{mode}", tmp, exe, mode=mode)
                # llvm-xray 14's account attributes some records of one
                # thread to another (clang builds too): one thread for it
                if LLVM_XRAY:
                    check(f"{name}-{mode}-1", tmp, exe, mode=mode,
                          args=["1"])
                else:
                    skip(f"{name}-{mode}: llvm-xray account",
                         "llvm-xray is not installed")


def check_with_lib(name, tmp, exe, lib):
    """@exe (prog.c -DWITH_LIB) calls lib.c's lib_twice 7 times."""
    log = os.path.join(tmp, f"{name}.log")
    r = run([XRAYFDR, "record", "-o", log, exe, "1"])
    if r.returncode:
        tap(False, f"{name}: record", r.stdout + r.stderr)
        return
    want = {k: [v, v] for k, v in own_counts(r.stdout).items()}
    want.update(lib_twice=[7, 7], lib_inner=[7, 7])
    got = logged(log, exe, [lib])
    have = {k: got.get(k) for k in want}
    tap(len(want) == 7 and have == want,
        f"{name}: every call of the program and the object counted",
        f"got {have}\nwant {want}\n{r.stderr}")
    verify(name, log)


def check_shared(tmp, prog):
    """GCC and clang objects in one process, either way round."""
    lib = os.path.join(HERE, "lib.c")
    glib = os.path.join(tmp, "libgcc-pic.so")
    rpath = f"-Wl,-rpath,{tmp}"
    err = gcc([lib], glib, pic=True, shared=True)
    if err:
        tap(False, "GCC shared object: build", err)
        return
    exe = os.path.join(tmp, "pie-with-lib")
    err = gcc([prog], exe, pic=True, extra=["-DWITH_LIB"],
              link=[glib, "-pthread", rpath])
    if err:
        tap(False, "GCC PIE with a GCC shared object: build", err)
    else:
        check_with_lib("GCC PIE and GCC shared object", tmp, exe, glib)
    if not CLANG:
        skip("clang and GCC objects together", "clang is not installed (make deps)")
        return
    xray = ["-fxray-instrument", "-fxray-instruction-threshold=1",
            "-fnoxray-link-deps"]
    exe = os.path.join(tmp, "clang-with-gcc-lib")
    r = run([CLANG, "-O2", *xray, "-DWITH_LIB", prog, glib, "-o", exe,
             "-pthread", rpath])
    if r.returncode:
        tap(False, "clang program with a GCC shared object: build", r.stderr)
    else:
        check_with_lib("clang program and GCC shared object", tmp, exe, glib)
    clib = os.path.join(tmp, "libclang.so")
    exe = os.path.join(tmp, "gcc-with-clang-lib")
    r = run([CLANG, "-O2", "-fPIC", "-shared", *xray, lib, "-o", clib])
    err = r.stderr if r.returncode else gcc(
        [prog], exe, extra=["-DWITH_LIB"], link=[clib, "-pthread", rpath])
    if err:
        tap(False, "GCC program with a clang shared object: build", err)
    else:
        check_with_lib("GCC program and clang shared object", tmp, exe, clib)


def check_dlopen(tmp):
    """The matrix's dlopen program and objects, all built with GCC."""
    d = os.path.join(tmp, "dlopen")
    os.makedirs(d)
    so = os.path.join(d, "libtraced.so")
    origin = "-Wl,-rpath,$ORIGIN"
    for srcs, out, kw in (
            (["libtraced.c"], so, dict(shared=True)),
            (["libchain.c"], os.path.join(d, "libchain.so"),
             dict(shared=True, link=["-L", d, "-ltraced", origin])),
            (["dlopen.c"], os.path.join(d, "dlopen"),
             dict(link=["-rdynamic", "-ldl", "-pthread", origin]))):
        err = gcc([os.path.join(PROGS, s) for s in srcs], out, pic=True, **kw)
        if err:
            tap(False, f"GCC dlopen: build {os.path.basename(out)}", err)
            return
    tm.dlopen_cases(d, os.path.join(d, "dlopen"), so, label="GCC dlopen")


def check_filters(tmp, prog):
    """record -F/-N: the functions named traced with every call, the
    others not at all."""
    for pic in (False, True):
        exe = os.path.join(tmp, f"filters-{'pie' if pic else 'nopie'}")
        err = gcc([prog], exe, pic=pic, link=["-pthread"])
        if err:
            tap(False, f"{exe}: build", err)
            continue
        for mode in ("thread", "cpu"):
            for args, traced in ((["-F", "leaf", "-F", "fib"], {"leaf", "fib"}),
                                 (["-N", "fib", "-N", "tail"],
                                  {"leaf", "worker", "main"})):
                name = (f"{os.path.basename(exe)} record -M {mode} "
                        f"{' '.join(args)}")
                log = os.path.join(tmp, "filtered.log")
                r = run([XRAYFDR, "record", "-q", "-M", mode, "-o", log,
                         *args, exe])
                own = own_counts(r.stdout)
                if r.returncode or len(own) != 5:
                    tap(False, f"{name}: record", r.stdout + r.stderr)
                    continue
                got = logged(log, exe)
                want = {k: [v, v] if k in traced else [0, 0]
                        for k, v in own.items()}
                have = {k: got.get(k) for k in own}
                tap(have == want, f"{name}: exactly the named functions, "
                    "every call", f"got {have}\nwant {want}\n{r.stderr}")
                verify(name, log)


def check_depth(tmp):
    """--depth on GCC builds of the matrix's recursion and tail calls."""
    for src, arg, n in (("recursion.c", ["12"], 3), ("tailcalls.c", ["200"], 2)):
        for pic in (False, True):
            name = f"GCC {src} {'PIE' if pic else 'non-PIE'}"
            d = os.path.join(tmp, f"depth-{src}-{pic}")
            os.makedirs(d)
            exe = os.path.join(d, "prog")
            err = gcc([os.path.join(PROGS, src)], exe, pic=pic)
            if err:
                tap(False, f"{name}: build", err)
                continue
            log = os.path.join(d, "counted.xray")
            r = run([XRAYFDR, "record", "-q", "-o", log, exe, *arg])
            own = {k: [v, v] for (_, k), v in tm.program_counts(r.stdout).items()}
            got = logged(log, exe) if not r.returncode else {}
            have = {k: got.get(k) for k in own}
            tap(own and have == own, f"{name}: every call counted",
                f"got {have}\nwant {own}\n{r.stderr}")
            tm.depth_cases(name, exe, d, arg, n)


def check_matrix(tmp):
    """The matrix's programs built with GCC (g++ for C++), PIE at -O2 and
    non-PIE at -O0: the log counts every call the program counts, in
    thread and CPU mode, account counts each call once where every call
    returns or unwinds, and both verifiers accept the logs."""
    for prog in tm.MATRIX:
        if prog.with_lib:
            skip(f"GCC {prog.name}", "clang's __xray_customevent builtins: no GCC build")
            continue
        for opt, pic in (("-O2", True), ("-O0", False)):
            cell = f"GCC {prog.name} {opt} {'PIE' if pic else 'non-PIE'}"
            d = os.path.join(tmp, f"matrix-{prog.name}{opt}")
            os.makedirs(d)
            built = {"dir": d, "ours": os.path.join(d, prog.name)}
            link = ["-pthread"]
            extra = ["-I", PROGS]
            cc = ["g++"] if prog.cxx_only else ["gcc"]
            err = None
            if prog.shared:
                built["so"] = os.path.join(d, "libtraced.so")
                err = gcc([os.path.join(PROGS, s) for s in prog.shared], built["so"],
                          opt, pic=True, shared=True, extra=extra, cc=cc)
                link += [built["so"], f"-Wl,-rpath,{d}"]
            err = err or gcc([os.path.join(PROGS, s) for s in prog.sources],
                             built["ours"], opt, pic=pic, extra=extra, link=link, cc=cc)
            if err:
                tap(False, f"{cell}: build", err)
                continue
            got = tm.record_and_count(cell, prog, built, "ours.xray")
            if got:
                tm.check_account_exact(cell, prog, got[1], got[2], got[3])
                tm.verify_logs(f"{cell}: both verifiers accept the logs", got[1])
            cpu = tm.record_and_count(cell, prog, built, "cpu.xray",
                                      env={"XRAYFDR_OPTIONS": "mode=cpu buffer_max="
                                           f"{256 * os.cpu_count()}"},
                                      label=" (mode=cpu)")
            if cpu:
                tm.verify_logs(f"{cell}: mode=cpu: both verifiers accept the logs",
                               cpu[1])


def check_triggers(tmp):
    """--trigger on GCC builds (non-PIE and PIE): the matrix's trigger
    program's three slow serve() calls each give a snapshot naming serve
    and a duration above the threshold; the snapshots verify."""
    for pic in (False, True):
        name = f"GCC trigger.c {'PIE' if pic else 'non-PIE'}"
        d = os.path.join(tmp, f"trigger-{pic}")
        snaps = os.path.join(d, "snaps")
        os.makedirs(snaps)
        exe = os.path.join(d, "trigger")
        err = gcc([os.path.join(PROGS, "trigger.c")], exe, pic=pic)
        if err:
            tap(False, f"{name}: build", err)
            continue
        ids = tm.symbol_ids(exe)
        r = run([XRAYFDR, "record", "-q", "-o", os.path.join(d, "t.xray"),
                 "--buffer-max", "2048", "--trigger", "serve>50ms",
                 "--snapshot-dir", snaps, "--", exe, snaps, "10"], timeout=600)
        files = sorted(os.path.join(snaps, f) for f in os.listdir(snaps)
                       if not f.startswith("."))
        infos = [tm.snapshot_info(tm.events_of(f)) for f in files]
        bad = [i for i in infos if int(i.get("trigger_function", -1)) != ids.get("serve")
               or int(i.get("trigger_duration_ns", 0)) <= 50000000]
        tap(r.returncode == 0 and len(files) >= 3 and not bad,
            f"{name}: --trigger 'serve>50ms' gives a snapshot per slow call, naming serve",
            f"exit {r.returncode}, {len(files)} files, bad {bad}\n{r.stderr[-1000:]}")
        tm.verify_logs(f"{name}: the snapshots verify", files)


def main():
    if not shutil.which("gcc"):
        skip("gcc builds", "gcc is not installed (make deps)")
        return finish()
    tmp = tempfile.mkdtemp(prefix="xrayfdr-gcc-")
    prog = os.path.join(HERE, "prog.c")
    for fn, args in ((check_programs, (tmp, prog)), (check_shared, (tmp, prog)),
                     (check_dlopen, (tmp,)), (check_filters, (tmp, prog)),
                     (check_depth, (tmp,)), (check_matrix, (tmp,)),
                     (check_triggers, (tmp,))):
        try:
            fn(*args)
        except Exception as e:  # a harness problem is a failure, not a crash
            tap(False, f"{fn.__name__}: harness", repr(e))

    # Without the flags there is nothing to patch, and record says so.
    exe = os.path.join(tmp, "plain")
    run(["gcc", "-O2", prog, "-o", exe, "-pthread"])
    r = run([XRAYFDR, "record", "-o", os.path.join(tmp, "p.log"), exe])
    tap(r.returncode != 0 and "gcc -pg -mfentry" in r.stderr,
        "plain gcc build: a clear message", r.stdout + r.stderr)
    # A GCC object file: its sites are offsets into several sections
    obj = os.path.join(tmp, "prog.o")
    run(["gcc", "-O2", *flags("--gcc"), "-c", prog, "-o", obj])
    r = run([XRAYFDR, "extract", obj])
    tap(r.returncode == 1 and "only once linked" in r.stderr and not r.stdout,
        "extract of a GCC object file: refused, not an empty map",
        f"exit {r.returncode}\n{r.stdout[:500]}{r.stderr}")
    shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
