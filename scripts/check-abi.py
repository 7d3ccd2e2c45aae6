#!/usr/bin/env python3
"""Check that a shared library exports exactly its version script's symbols,
and that the public headers mark exactly those functions XRAYFDR_API.

usage: check-abi.py LIB.so VERSION.map INCLUDE_DIR
"""
import pathlib
import re
import subprocess
import sys


def map_symbols(path):
    text = re.sub(r"#.*", "", pathlib.Path(path).read_text())
    globals_ = set()
    for block in re.findall(r"global:(.*?)(?:local:|\})", text, re.S):
        globals_ |= {s.strip() for s in block.split(";") if s.strip()}
    return globals_


def exported_symbols(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtWwDdBbRrVvi":
            name, _, version = parts[2].partition("@")
            # dlopen and dlclose, which take the place of glibc's under
            # its versions (lib/runtime/dl.c), are not our API
            if version.lstrip("@").startswith("GLIBC_") or name.startswith("GLIBC_"):
                continue
            if not name.startswith("XRAYFDR_"):  # version node names
                syms.add(name)
    return syms


def header_symbols(include_dir):
    syms = set()
    for h in pathlib.Path(include_dir).rglob("*.h"):
        text = re.sub(r"/\*.*?\*/", "", h.read_text(), flags=re.S)
        text = re.sub(r"#define[^\n]*", "", text)
        for decl in re.findall(r"XRAYFDR_API([^;{]*)", text):
            m = re.search(r"([A-Za-z_]\w*)\s*\(", decl)
            if m:
                syms.add(m.group(1))
    return syms


def main():
    lib, vmap, inc = sys.argv[1:4]
    listed, exported, declared = map_symbols(vmap), exported_symbols(lib), header_symbols(inc)
    problems = []
    for name in sorted(exported - listed):
        problems.append(f"{lib}: exports {name}, which {vmap} does not list")
    for name in sorted(listed - exported):
        problems.append(f"{vmap}: lists {name}, which {lib} does not export")
    for name in sorted(declared - listed):
        problems.append(f"{inc}: declares {name} XRAYFDR_API but {vmap} does not list it")
    for name in sorted(listed - declared):
        problems.append(f"{vmap}: lists {name} but no public header declares it XRAYFDR_API")
    for p in problems:
        print("check-abi: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
