#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Programs built with GCC's patchable sites (README, "GCC builds").

tests/runtime/gcc/prog.c is built with gcc -pg -mfentry -mnop-mcount
-mrecord-mcount -minstrument-return=nop5 -mrecord-return (non-PIE), at -O0
and -O2, and traced in thread and CPU mode: the per-function counts of
`xrayfdr account -m` and of `llvm-xray account -instr_map` on the map that
`xrayfdr extract` prints are exactly the calls the program makes.  A mixed
program (the GCC executable calling a clang XRay shared object) counts
both; a GCC build without the flags is refused with a clear message.
Prints TAP.
"""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "tools"))
from taplib import XRAYFDR, finish, run, skip, tap  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gcc")
GCC_FLAGS = ["-pg", "-mfentry", "-mnop-mcount", "-mrecord-mcount",
             "-minstrument-return=nop5", "-mrecord-return",
             "-fno-pie", "-no-pie"]
LLVM_XRAY = shutil.which("llvm-xray-14") or shutil.which("llvm-xray")


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
    r = run([LLVM_XRAY, "fdr-dump", "-verify", log])
    tap(r.returncode == 0, f"{name}: llvm-xray fdr-dump -verify",
        r.stdout + r.stderr)


def main():
    if not shutil.which("gcc"):
        skip("gcc builds", "gcc is not installed (make deps)")
        return finish()
    tmp = tempfile.mkdtemp(prefix="xrayfdr-gcc-")
    prog = os.path.join(HERE, "prog.c")
    for opt in ("-O0", "-O2"):
        exe = os.path.join(tmp, f"prog{opt}")
        r = run(["gcc", opt, *GCC_FLAGS, prog, "-o", exe, "-pthread"])
        if r.returncode:
            tap(False, f"gcc {opt}: build", r.stderr)
            continue
        for mode in ("thread", "cpu"):
            check(f"gcc{opt}-{mode}", tmp, exe, mode=mode)
            # llvm-xray 14's account attributes some records of one
            # thread to another (clang builds too): one thread for it
            if LLVM_XRAY:
                check(f"gcc{opt}-{mode}-1", tmp, exe, mode=mode,
                      args=["1"])
            else:
                skip(f"gcc{opt}-{mode}: llvm-xray account",
                     "llvm-xray is not installed")

    # A GCC executable calling a clang XRay shared object.
    if shutil.which("clang"):
        lib = os.path.join(tmp, "libmix.so")
        exe = os.path.join(tmp, "mixed")
        r = run(["clang", "-O2", "-fPIC", "-shared", "-fxray-instrument",
                 "-fxray-instruction-threshold=1", "-fnoxray-link-deps",
                 os.path.join(HERE, "lib.c"), "-o", lib])
        r2 = r if r.returncode else run(
            ["gcc", "-O2", "-DWITH_LIB", *GCC_FLAGS, prog, lib, "-o", exe,
             "-pthread", f"-Wl,-rpath,{tmp}"])
        if r2.returncode:
            tap(False, "mixed: build", r2.stderr)
        else:
            log = os.path.join(tmp, "mixed.log")
            r = run([XRAYFDR, "record", "-o", log, exe])
            want = own_counts(r.stdout)
            r = run([XRAYFDR, "account", "-m", exe, log]) \
                if not r.returncode else r
            got = counts(r.stdout)
            have = {k: got.get(k, 0) for k in want}
            # the clang object's two functions, ids 1 and 2 of object 1
            want.update({"#16777217": 7, "#16777218": 7})
            have.update({k: got.get(k, 0) for k in
                         ("#16777217", "#16777218")})
            tap(have == want, "mixed: GCC program and clang shared object",
                f"got {have}\nwant {want}\n{r.stdout}{r.stderr}")
    else:
        skip("mixed: GCC program and clang shared object",
             "clang is not installed (make deps)")

    # Without the flags there is nothing to patch, and record says so.
    exe = os.path.join(tmp, "plain")
    run(["gcc", "-O2", prog, "-o", exe, "-pthread"])
    r = run([XRAYFDR, "record", "-o", os.path.join(tmp, "p.log"), exe])
    tap(r.returncode != 0 and "gcc -pg -mfentry" in r.stderr,
        "plain gcc build: a clear message", r.stdout + r.stderr)
    shutil.rmtree(tmp, ignore_errors=True)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
