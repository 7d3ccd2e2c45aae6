#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The manual pages (Documentation/man, built into $BUILD/man): groff
finds nothing to warn about in any of them, and none has fallen behind
the programs.  Each command and option that `xrayfdr --help`,
`xrayfdr COMMAND --help` and `xrayfdr-ctl --help` print is on its page
(an xrayfdr command's options in that command's section); every
runtime option of lib/runtime/options.c and every function that
lib/libxrayfdr.map exports is on libxrayfdr(3).  Prints TAP."""
import glob
import os
import re
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(os.environ.get("BUILD", os.path.join(TOP, "build")))
MAN = os.path.join(BUILD, "man")
XRAYFDR = os.path.join(BUILD, "bin", "xrayfdr")
CTL = os.path.join(BUILD, "bin", "xrayfdr-ctl")

results = []


def tap(ok, name, diag=""):
    results.append(ok)
    print(f"{'ok' if ok else 'not ok'} {len(results)} - {name}")
    if not ok and diag:
        for line in diag.rstrip().split("\n")[:30]:
            print(f"# {line}")


def plain(roff):
    """The page's source as words: font escapes gone, \\- as -."""
    text = re.sub(r"\\f[BIRP]|\\f\(..|\\&|\\c", "", roff)
    text = text.replace("\\-", "-").replace("\\e", "\\")
    return text


def has(text, word):
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text)


def help_text(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.stdout + p.stderr


def help_options(text):
    """Options a --help lists: those that start an indented line."""
    opts = []
    for line in text.split("\n"):
        m = re.match(r"^ {1,8}(-\w)?(?:, )?(--[\w-]+)?", line)
        if m:
            opts += [o for o in m.groups() if o]
    return sorted(set(opts), key=opts.index)


def help_commands(text):
    """The names a --help lists under 'Commands:'."""
    block = text.split("Commands:\n", 1)[1] if "Commands:\n" in text else ""
    names = []
    for line in block.split("\n"):
        if not line.strip():
            break
        m = re.match(r"^  ([a-z][\w-]*)", line)
        if m:
            names.append(m.group(1))
    return names


def sections(text):
    """{name: text} of the page's .SS sections."""
    out = {}
    parts = re.split(r"^\.SS +\"?([^\"\n]*)\"?\n", text, flags=re.M)
    for name, body in zip(parts[1::2], parts[2::2]):
        out[name.strip()] = re.split(r"^\.SH ", body, flags=re.M)[0]
    return out


def check_groff(pages):
    for page in pages:
        p = subprocess.run(["groff", "-man", "-ww", "-z", page],
                           capture_output=True, text=True)
        tap(p.returncode == 0 and not p.stderr.strip(),
            f"{os.path.basename(page)}: groff -man -ww finds nothing to warn about",
            p.stderr)


def check_xrayfdr(page):
    text = plain(open(page).read())
    secs = sections(text)
    main = help_text([XRAYFDR, "--help"])
    commands = help_commands(main)
    tap(len(commands) >= 10, "xrayfdr --help lists the commands", main)
    missing = [o for o in help_options(main) + ["--version", "--help"]
               if not has(text, o)]
    tap(not missing, "xrayfdr(1): xrayfdr's own options", f"missing: {missing}")
    for c in commands:
        if c not in secs:
            tap(False, f"xrayfdr(1) has a section for '{c}'",
                f"sections: {sorted(secs)}")
            continue
        opts = help_options(help_text([XRAYFDR, c, "--help"]))
        missing = [o for o in opts if not has(secs[c], o)]
        tap(not missing and (opts or c == "fdr-dump"),
            f"xrayfdr(1) '{c}': all {len(opts)} options of its --help",
            f"missing: {missing}")


def check_ctl(page):
    text = plain(open(page).read())
    h = help_text([CTL, "--help"])
    commands = help_commands(h)
    opts = help_options(h)
    tap(len(commands) >= 8, "xrayfdr-ctl --help lists the commands", h)
    cmd_sec = text.split(".SH COMMANDS", 1)[-1].split(".SH ", 1)[0]
    missing = [c for c in commands
               if not re.search(r"^\.TP\n\\?(?:\.B )?" + re.escape(c) + r"\b",
                                cmd_sec, flags=re.M)]
    tap(not missing, f"xrayfdr-ctl(8): all {len(commands)} commands under COMMANDS",
        f"missing: {missing}")
    missing = [o for o in opts if not has(text, o)]
    tap(not missing and len(opts) > 10,
        f"xrayfdr-ctl(8): all {len(opts)} options of its --help", f"missing: {missing}")


def check_lib(page):
    text = plain(open(page).read())
    src = open(os.path.join(TOP, "lib", "runtime", "options.c")).read()
    table = src.split("defs[] = {", 1)[1].split("};", 1)[0]
    names = sorted(set(re.findall(r'\{ "(\w+)",', table)))
    missing = [n for n in names if not has(text, n)]
    tap(not missing and len(names) > 20,
        f"libxrayfdr(3): all {len(names)} runtime options", f"missing: {missing}")
    env = ["XRAY_OPTIONS", "XRAY_FDR_OPTIONS", "XRAY_BASIC_OPTIONS",
           "XRAYFDR_OPTIONS", "XRAYFDR_FILTER"]
    missing = [v for v in env if not re.search(r"^\.SS " + v + "$", text, flags=re.M)
               and not has(text, v)]
    tap(not missing, "libxrayfdr(3): the environment variables", f"missing: {missing}")
    mapfile = open(os.path.join(TOP, "lib", "libxrayfdr.map")).read()
    syms = re.findall(r"^\s+(\w+);", mapfile, flags=re.M)
    missing = [s for s in syms if not has(text, s)]
    tap(not missing and len(syms) > 50,
        f"libxrayfdr(3): all {len(syms)} exported functions", f"missing: {missing}")


def main():
    pages = sorted(glob.glob(os.path.join(MAN, "*.[1-8]")))
    want = ["libxrayfdr.3", "xrayfdr-ctl.8", "xrayfdr.1"]
    missing = [p for p in want + [XRAYFDR, CTL]
               if not os.path.exists(os.path.join(MAN, p) if "/" not in p else p)]
    if missing:
        print("1..1")
        print(f"not ok 1 - missing: {', '.join(missing)} (make man all)")
        return 1
    check_groff(pages)
    check_xrayfdr(os.path.join(MAN, "xrayfdr.1"))
    check_ctl(os.path.join(MAN, "xrayfdr-ctl.8"))
    check_lib(os.path.join(MAN, "libxrayfdr.3"))
    print(f"1..{len(results)}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
