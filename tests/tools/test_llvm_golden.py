#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Golden tests: `xrayfdr extract/convert/account/stack/graph` against
llvm-xray 14 run for real on the same inputs, output compared byte for byte.

Inputs: logs from our writer (`xrayfdr synth`: FDR versions 1-5 and basic
mode, arguments, custom and typed events, scheduler events, TSC wraps, many
threads and buffers), hand-made logs whose threads share timestamps (to
exercise llvm-xray's DenseMap order), and logs written by LLVM's own XRay
runtime (FDR and basic mode) with the binaries that wrote them.

Where llvm-xray cannot give an answer the comparison is made where it can:
its `account` and `stack` walk a log thread by thread in an order of its
own, so on a multi-threaded log account stops at the first record older
than the first it read; there we compare on llvm-xray's own sorted YAML
(version set to 1, the only one it reads back).  Its `stack
--aggregate-threads` crashes on multi-threaded logs; that case checks our
side alone and says so.

Prints TAP; needs BUILD (default build) with build/bin/xrayfdr built.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "pylib"))
from testenv import which  # noqa: E402

from taplib import XRAYFDR, finish, results, run, skip, tap  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))





LLVM_XRAY = which("llvm-xray", "llvm-xray-14")
CLANG = which("clang", "clang-14")
CLANGXX = which("clang++", "clang++-14")


def first_difference(a, b):
    al, bl = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            return f"line {i + 1}:\n  llvm-xray: {y[:300]}\n  xrayfdr:   {x[:300]}"
    return f"{len(bl)} lines from llvm-xray, {len(al)} from xrayfdr"


def same(name, ours_cmd, theirs_cmd, ours_rc=0):
    """One TAP line: llvm-xray succeeds, we exit with @ours_rc (0 also
    after --keep-going skipped an unmatched exit, as llvm-xray -k does),
    and both print the same bytes."""
    o, t = run(ours_cmd), run(theirs_cmd)
    if t.returncode != 0:
        return tap(False, name, f"llvm-xray exited {t.returncode}: {t.stderr[:500]}")
    if o.returncode != ours_rc:
        return tap(False, name, f"xrayfdr exited {o.returncode}: {o.stderr[:500]}")
    if o.stdout != t.stdout or not t.stdout:
        return tap(False, name, first_difference(o.stdout, t.stdout))
    tap(True, f"{name} ({len(t.stdout.splitlines())} lines identical)")


def synth(path, *args):
    p = run([XRAYFDR, "synth", "-o", path] + list(args))
    if p.returncode:
        raise RuntimeError(f"synth {args}: {p.stderr}")
    return path


def set_version(path, v):
    with open(path, "r+b") as f:
        f.write(struct.pack("<H", v))


def md(kind, body=b""):
    return bytes([1 | kind << 1]) + body.ljust(15, b"\0")


def fn(kind, fid, delta):
    return struct.pack("<II", (fid << 4) | (kind << 1), delta)


def equal_tsc_log(path, nthreads, seed):
    """Threads with identical timestamps, typed and custom events at the
    start of buffers: the order of equal timestamps and what a record
    inherits from earlier buffers are llvm-xray's choice, not the file's."""
    import random
    rnd = random.Random(seed)
    out = struct.pack("<HHIQQQ", 5, 1, 3, 1000000, 4096, 0)
    tids = rnd.sample(range(1, 100000), nthreads)
    for rno in range(3):
        for i, tid in enumerate(tids):
            body = md(8, struct.pack("<iiH", 3, 0, 9 + rno)) + b"abc"
            for k in range(4):
                body += fn(0, 1 + (k % 3), 10) + fn(1, 1 + (k % 3), 10)
            body += md(5, struct.pack("<ii", 2, 0)) + b"xy"
            pre = (md(0, struct.pack("<i", tid)) +
                   md(4, struct.pack("<QI", 100, rno)) +
                   md(9, struct.pack("<i", 4242 + (i % 2))) +
                   md(2, struct.pack("<HQ", i % 4, 1000 + rno * 1000)))
            buf = pre + body
            out += md(7, struct.pack("<Q", len(buf))) + buf
    with open(path, "wb") as f:
        f.write(out)
    return path


def payload_log(path, payloads):
    """One thread, a custom event per payload: YAML quoting and escapes."""
    body = b""
    for p in payloads:
        body += fn(0, 1, 5) + md(5, struct.pack("<ii", len(p), 1)) + p + fn(1, 1, 5)
    pre = (md(0, struct.pack("<i", 7)) + md(4, struct.pack("<QI", 1, 2)) +
           md(9, struct.pack("<i", 7)) + md(2, struct.pack("<HQ", 0, 1000)))
    buf = pre + body
    with open(path, "wb") as f:
        f.write(struct.pack("<HHIQQQ", 5, 1, 3, 1000, 1 << 20, 0) +
                md(7, struct.pack("<Q", len(buf))) + buf)
    return path


# A workload for LLVM's runtime with no typed-event sleds (llvm-xray 14
# refuses such binaries as instrumentation maps).
WORKLOAD = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#include "xray/xray_interface.h"
#include "xray/xray_log_interface.h"
#define TRACED [[clang::xray_always_instrument]] __attribute__((noinline))
static volatile int sink;
static int threads;
TRACED static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
TRACED static void leaf(int i) { sink = i; }
TRACED static void tail_target(int i) { leaf(i); }
TRACED static void tail_caller(int i) { return tail_target(i + 1); }
[[clang::xray_always_instrument, clang::xray_log_args(1)]]
__attribute__((noinline)) static void with_arg(long v) { sink = (int)v; }
namespace ns {
template <class T> struct Box { TRACED T get(T x) { return x + (T)sink; } };
}
TRACED static void worker(int id) {
  ns::Box<long> b;
  for (int i = 0; i < 40; i++) { tail_caller(i); with_arg(id * 100 + i); sink = (int)b.get(i); }
  sink = fib(11);
}
int main(int argc, char **argv) {
  if (argc < 4) return 2;
  threads = atoi(argv[3]);
  if (__xray_log_init_mode(argv[1], argv[2]) != XRAY_LOG_INITIALIZED) return 1;
  __xray_patch();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; t++) ts.emplace_back(worker, t);
  worker(99);
  for (auto &t : ts) t.join();
  __xray_log_finalize();
  __xray_log_flushLog();
  return 0;
}
"""

TINY_C = r"""
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) int mid(int x) { return leaf(x) + leaf(x + 1); }
__attribute__((noinline)) static int tail(int x) { return mid(x + 2); }
int main(int argc, char **argv) { (void)argv; return tail(argc) & 1; }
"""


def build_workload(tmp):
    src = os.path.join(tmp, "workload.cc")
    with open(src, "w") as f:
        f.write(WORKLOAD)
    exe = os.path.join(tmp, "workload")
    p = run([CLANGXX, "-O2", "-g", "-fxray-instrument", "-fxray-instruction-threshold=1",
             src, "-o", exe, "-lpthread"])
    if p.returncode:
        tap(False, "build the LLVM-runtime workload", p.stderr)
        return None
    return exe


def llvm_log(tmp, exe, mode, config, threads, tag):
    prefix = os.path.join(tmp, f"llvm-{tag}-")
    env = dict(os.environ, XRAY_OPTIONS=f"patch_premain=false xray_mode={mode} "
               f"xray_logfile_base={prefix} verbosity=0")
    p = run([exe, mode, config, str(threads)], env=env)
    logs = [os.path.join(tmp, f) for f in os.listdir(tmp)
            if os.path.join(tmp, f).startswith(prefix)]
    if p.returncode or len(logs) != 1:
        tap(False, f"LLVM runtime log {tag}", f"exit {p.returncode}, logs {logs}\n{p.stderr}")
        return None
    return logs[0]


def extract_cases(tmp, workload):
    src = os.path.join(tmp, "tiny.c")
    with open(src, "w") as f:
        f.write(TINY_C)
    bins = {}
    for name, cmd in {
        "C -O2 PIE with DWARF": [CLANG, "-O2", "-g", src],
        "C -O0 no-PIE": [CLANG, "-O0", "-fno-pie", "-no-pie", src],
        "shared object": [CLANG, "-O2", "-g", "-fPIC", "-shared", src],
    }.items():
        out = os.path.join(tmp, "x-" + re.sub(r"\W+", "-", name))
        p = run(cmd + ["-fxray-instrument", "-fxray-instruction-threshold=1", "-o", out])
        if p.returncode:
            tap(False, f"extract: build {name}", p.stderr)
            continue
        bins[name] = out
    if workload:
        bins["C++ templates and namespaces"] = workload
        stripped = os.path.join(tmp, "workload-stripped")
        if run(["strip", "-o", stripped, workload]).returncode == 0:
            bins["stripped C++"] = stripped
    for name, b in bins.items():
        same(f"extract --symbolize, {name}", [XRAYFDR, "extract", "--symbolize", b],
             [LLVM_XRAY, "extract", "--symbolize", b])
    # Without DWARF, llvm-symbolizer names a local function's file from
    # the STT_FILE symbol before it (tail is static: "tiny.c:0:0").
    nodebug = os.path.join(tmp, "tiny-nodebug")
    log = os.path.join(tmp, "tiny-nodebug.xray")
    p = run([CLANG, "-O2", "-fxray-instrument", "-fxray-instruction-threshold=1",
             "-fnoxray-link-deps", src, "-o", nodebug])
    r = p.returncode == 0 and run([XRAYFDR, "record", "-o", log, nodebug])
    if p.returncode or r.returncode != 1:  # tiny exits with tail(argc) & 1
        tap(False, "account of a binary without DWARF: build and record",
            p.stderr + (r.stderr if r else ""))
    else:
        same("account -m, a binary without DWARF (files from STT_FILE symbols)",
             [XRAYFDR, "account", "--compat", "-m", nodebug, log],
             [LLVM_XRAY, "account", f"-instr_map={nodebug}", log])
        # a YAML map (llvm-xray extract's, and ours): ids and addresses,
        # functions named by address, as llvm-xray names them
        for who, cmd in (("llvm-xray's", [LLVM_XRAY, "extract", nodebug]),
                         ("ours", [XRAYFDR, "extract", nodebug])):
            ymap = os.path.join(tmp, f"tiny-map-{who[:4]}.yaml")
            with open(ymap, "w") as f:
                f.write(run(cmd).stdout)
            for tool, compat in (("account", ["--compat"]), ("stack", [])):
                same(f"{tool} -m with a YAML map ({who} extract)",
                     [XRAYFDR, tool] + compat + ["-m", ymap, log],
                     [LLVM_XRAY, tool, f"-instr_map={ymap}", log])
    if workload:
        same("extract --symbolize --no-demangle",
             [XRAYFDR, "extract", "--symbolize", "--no-demangle", workload],
             [LLVM_XRAY, "extract", "--symbolize", "--no-demangle", workload])


def convert_cases(tmp, runtime_logs, workload):
    cases = []
    for v in range(1, 6):
        for extra, label in ((["--args", "--wrap-every", "97"], "args, TSC wraps"),
                             (["--events", "--threads", "3"], "custom and typed events"),
                             (["--sched", "--threads", "4"], "scheduler events"),
                             (["--events", "--args", "--threads", "5", "--calls", "3000",
                               "--buffer-size", "256"], "many buffers per thread")):
            path = synth(os.path.join(tmp, f"c-v{v}-{len(cases)}.xray"), "-V", str(v),
                         "--seed", str(v * 7 + len(cases)), *extra)
            cases.append((f"FDR v{v}, {label}", path))
    for v in (1, 2, 3):
        path = synth(os.path.join(tmp, f"c-basic{v}.xray"), "--basic", "--args",
                     "--threads", "3", "--calls", "300")
        set_version(path, v)
        cases.append((f"basic v{v}", path))
    for n, seed in ((3, 1), (20, 2), (60, 3)):
        cases.append((f"{n} threads with equal timestamps",
                      equal_tsc_log(os.path.join(tmp, f"eq{n}.xray"), n, seed)))
    cases.append(("payloads: quoting, escapes, UTF-8 and bytes >= 0x80",
                  payload_log(os.path.join(tmp, "payloads.xray"),
                              [b"plain text", b"1234", b"true", b"- dash", b"it's", b'say "hi"',
                               b"tab\there", b"line\nbreak", b" space ", b"nul\0byte",
                               b"\x01\x1f\x7f", b"caf\xc3\xa9", b"\xe2\x80\xa8sep",
                               b"bad \x93 byte", b"#hash", b"a: b", b"~", b".5", b"0x1F",
                               # single quotes at least, double for the bytes
                               # (our runtime's info event ends in a line feed)
                               b"key=1\nlast=2\n", b"\nfirst", b"\ttab first",
                               b"-\x01", b"true\x7f"])))
    for label, path in cases:
        same(f"convert yaml, {label}", [XRAYFDR, "convert", "-f", "yaml", path],
             [LLVM_XRAY, "convert", "--output-format=yaml", path])
    for label, path in runtime_logs:
        same(f"convert yaml --symbolize, {label}",
             [XRAYFDR, "convert", "-f", "yaml", "--symbolize", "-m", workload, path],
             [LLVM_XRAY, "convert", "--output-format=yaml", "--symbolize",
              f"--instr_map={workload}", path])
    # raw: of a basic log, llvm-xray's bytes; of an FDR log, a basic log
    # llvm-xray reads with the same records (llvm-xray's own raw output of
    # an FDR log keeps the FDR header, and no reader takes it back)
    for label, path in cases:
        if label == "basic v3":
            # llvm-xray 14's raw output drops arguments; ours keeps them
            out = os.path.join(tmp, "ours.raw")
            o = run([XRAYFDR, "convert", "-f", "raw", "-o", out, path])
            tap(o.returncode == 0 and open(out, "rb").read() == open(path, "rb").read(),
                f"convert raw, {label} with arguments: the same log, byte for byte", o.stderr)
        elif label.startswith("basic"):
            continue  # (v1, v2: compared with llvm-xray's bytes below)
        else:
            out = os.path.join(tmp, "fdr.raw")
            o = run([XRAYFDR, "convert", "-f", "raw", "-o", out, path])
            if "cannot be written in a basic-mode log" in o.stderr:
                tap(o.returncode == 1, f"convert raw, {label}: custom and typed events "
                    "are refused with exit 1, having no place in a basic log", o.stderr)
                continue
            # llvm-xray makes up process ids for logs older than version 3
            old = "FDR v1" in label or "FDR v2" in label
            records = lambda text: re.sub(r", process: \d+" if old else "^$", "",
                                          text[text.find("records:"):])
            back = run([LLVM_XRAY, "convert", "--output-format=yaml", out])
            orig = run([LLVM_XRAY, "convert", "--output-format=yaml", path])
            tap(o.returncode == 0 and back.returncode == 0 and
                records(back.stdout) == records(orig.stdout) and "records:" in orig.stdout,
                f"convert raw, {label}: a basic log llvm-xray reads, with the same records",
                o.stderr + back.stderr + first_difference(records(back.stdout),
                                                         records(orig.stdout)))
    for v in (1, 2, 3):
        path = synth(os.path.join(tmp, f"raw-basic{v}.xray"), "--basic", "--threads", "3",
                     "--calls", "300")
        set_version(path, v)
        out, theirs = os.path.join(tmp, "ours.raw"), os.path.join(tmp, "theirs.raw")
        o = run([XRAYFDR, "convert", "-f", "raw", "-o", out, path])
        t = run([LLVM_XRAY, "convert", "--output-format=raw", "-o", theirs, path])
        tap(o.returncode == 0 and t.returncode == 0 and
            open(out, "rb").read() == open(theirs, "rb").read(),
            f"convert raw, basic v{v}: llvm-xray's bytes", o.stderr + t.stderr)
    # the sort through temporary files gives the same bytes
    big = synth(os.path.join(tmp, "spill.xray"), "--threads", "6", "--size", "6M", "--events")
    spilldir = os.path.join(tmp, "spill")
    os.mkdir(spilldir)
    o = run([XRAYFDR, "convert", "-f", "yaml", "--sort-memory=1M", big],
            env=dict(os.environ, TMPDIR=spilldir))
    t = run([LLVM_XRAY, "convert", "--output-format=yaml", big])
    tap(o.returncode == 0 and o.stdout == t.stdout and not os.listdir(spilldir),
        f"convert yaml through temporary files (6 MiB log, 1 MiB of RAM): "
        f"{len(t.stdout) >> 20} MiB identical, temporary files removed",
        first_difference(o.stdout, t.stdout) + o.stderr)


def account_args(extra):
    ours, theirs = [], []
    for a in extra:
        ours.append(a)
        theirs.append("-" + a.lstrip("-").replace("--", "-"))
    return ours, theirs


ACCOUNT_VARIANTS = [[], ["--sort=count", "--sortorder=dsc"], ["--format=csv", "--sort=max"],
                    ["--sort=sum", "--sortorder=dsc", "--top=4"], ["--sort=90p"],
                    ["--deduce-sibling-calls"], ["--recursive-calls-only"]]


def account_cases(tmp, runtime_logs, workload):
    # logs llvm-xray account reads directly: one thread
    direct = [(label, p) for label, p in runtime_logs if "1 thread" in label]
    direct.append(("synth, one thread",
                   synth(os.path.join(tmp, "a1.xray"), "--threads", "1", "--args", "--calls", "600")))
    for label, path in direct:
        # LLVM's basic mode logs main's exit, never its entry: both tools
        # need to be told to skip it
        k = ["--keep-going"] if "basic" in label else []
        for v in ACCOUNT_VARIANTS:
            ours, theirs = account_args(v + k)
            m = ["-m", workload] if "LLVM" in label else []
            lm = [f"-instr_map={workload}"] if "LLVM" in label else []
            same(f"account {' '.join(v + k) or '(defaults)'}, {label}",
                 [XRAYFDR, "account", "--compat"] + m + ours + [path],
                 [LLVM_XRAY, "account"] + lm + theirs + [path])
    # multi-threaded logs: llvm-xray on its own sorted YAML
    multi = [(label, p) for label, p in runtime_logs if "1 thread" not in label]
    for seed, extra in ((3, ["--threads", "4", "--args"]),
                        (4, ["--threads", "6", "--sched", "--calls", "400"]),
                        (5, ["--threads", "3", "--events", "-V", "3"])):
        multi.append((f"synth {' '.join(extra)}",
                      synth(os.path.join(tmp, f"am{seed}.xray"), "--seed", str(seed), *extra)))
    for label, path in multi:
        y = run([LLVM_XRAY, "convert", "--output-format=yaml", path])
        yaml_path = path + ".yaml"
        with open(yaml_path, "w", errors="surrogateescape") as f:
            f.write(re.sub(r"^  version: +\d+$", "  version:         1", y.stdout, count=1,
                           flags=re.M))
        k = ["--keep-going"] if "basic" in label else []
        for v in ACCOUNT_VARIANTS[:4]:
            ours, theirs = account_args(v + k)
            m = ["-m", workload] if "LLVM" in label else []
            lm = [f"-instr_map={workload}"] if "LLVM" in label else []
            same(f"account {' '.join(v + k) or '(defaults)'}, {label} (llvm-xray on its YAML)",
                 [XRAYFDR, "account", "--compat"] + m + ours + [path],
                 [LLVM_XRAY, "account"] + lm + theirs + [yaml_path])
        same(f"account of llvm-xray's YAML itself, {label}",
             [XRAYFDR, "account", "--compat"] + k + [yaml_path],
             [LLVM_XRAY, "account"] + account_args(k)[1] + [yaml_path])
    # llvm-xray's records as block mappings, with a blank line and a
    # comment inside each (YAML allows both there); no payload of this
    # trace holds ", "
    with open(multi[0][1] + ".yaml", errors="surrogateescape") as f:
        text = f.read()

    def block(m):
        first, *rest = m.group(1).split(", ")
        return "\n".join([f"  - {first}", "", "    # a comment"] + [f"    {f}" for f in rest])

    spaced = os.path.join(tmp, "spaced.yaml")
    text, records = re.subn(r"^  - \{ (.*) \}$", block, text, flags=re.M)
    with open(spaced, "w", errors="surrogateescape") as f:
        f.write(text)
    tap(records > 100, f"block-style YAML made of {records} records")
    same("account of YAML with blank lines and comments inside its records",
         [XRAYFDR, "account", "--compat", spaced], [LLVM_XRAY, "account", spaced])
    # an exit with no entry: both refuse without --keep-going, agree with it
    bad = os.path.join(tmp, "unmatched.xray")
    pre = (md(0, struct.pack("<i", 7)) + md(4, struct.pack("<QI", 1, 2)) +
           md(9, struct.pack("<i", 7)) + md(2, struct.pack("<HQ", 0, 1000)))
    body = fn(0, 1, 5) + fn(0, 2, 5) + fn(1, 3, 5) + fn(1, 2, 5) + fn(1, 1, 5) + fn(1, 4, 9)
    with open(bad, "wb") as f:
        buf = pre + body
        f.write(struct.pack("<HHIQQQ", 5, 1, 3, 1000, 4096, 0) +
                md(7, struct.pack("<Q", len(buf))) + buf)
    o, t = run([XRAYFDR, "account", "--compat", bad]), run([LLVM_XRAY, "account", bad])
    tap(o.returncode == 1 and t.returncode != 0 and "does not match function 2" in o.stderr,
        "account: an exit that does not match is an error for both, ours names it",
        o.stderr + t.stderr)
    same("account --keep-going skips what llvm-xray -k skips",
         [XRAYFDR, "account", "--compat", "--keep-going", bad], [LLVM_XRAY, "account", "-k", bad])
    same("account --deduce-sibling-calls unwinds as llvm-xray -d",
         [XRAYFDR, "account", "--compat", "-d", "-k", bad], [LLVM_XRAY, "account", "-d", "-k", bad])


STACK_VARIANTS = [[], ["--per-thread-stacks"], ["--all-stacks", "--stack-format=flame"],
                  ["--all-stacks", "--stack-format=flame", "--aggregation-type=count"]]


def stack_cases(tmp, runtime_logs, workload):
    logs = list(runtime_logs)
    for seed, extra in ((1, ["--threads", "1"]), (2, ["--threads", "4", "--args"]),
                        (3, ["--threads", "9", "--sched", "--calls", "300"]),
                        (4, ["--threads", "5", "-V", "1", "--calls", "200"])):
        logs.append((f"synth {' '.join(extra)}",
                     synth(os.path.join(tmp, f"s{seed}.xray"), "--seed", str(seed), *extra)))
    for label, path in logs:
        m = ["-m", workload] if "LLVM" in label else []
        lm = [f"-instr_map={workload}"] if "LLVM" in label else []
        variants = list(STACK_VARIANTS)
        if "1 thread" in label or "--threads 1" in label:
            variants += [["--aggregate-threads"],
                         ["--all-stacks", "--stack-format=flame", "--aggregate-threads"]]
        # LLVM's basic mode logs main's exit, never its entry: llvm-xray
        # goes on after it with -k, and so do we with its matching
        k = ["--keep-going"] if "basic" in label else []
        strict = ["--strict"] if k else []
        for v in variants:
            same(f"stack {' '.join(strict + v + k) or '(defaults)'}, {label}",
                 [XRAYFDR, "stack"] + m + strict + v + k + [path],
                 [LLVM_XRAY, "stack"] + lm + [a.replace("--", "-", 1) for a in v + k] + [path])
    # llvm-xray 14 crashes merging threads; ours must still add up
    path = logs[-1][1]
    t = run([LLVM_XRAY, "stack", "-aggregate-threads", "-all-stacks", "-stack-format=flame", path])
    o = run([XRAYFDR, "stack", "--aggregate-threads", "--all-stacks", path])
    per = run([XRAYFDR, "stack", "--all-stacks", path])
    roots = lambda out: sum(int(l.rsplit(" ", 1)[1]) for l in out.splitlines()
                            if l.rstrip().count(";") == (1 if l.startswith("thread_") else 0) + 1)
    if t.returncode < 0 or t.returncode > 128:
        tap(o.returncode == 0 and roots(o.stdout) == roots(per.stdout) > 0,
            f"stack --aggregate-threads where llvm-xray crashes (exit {t.returncode}): "
            "merged roots add up to the per-thread ones", o.stderr)
    else:
        tap(o.stdout == t.stdout, "stack --aggregate-threads, multi-threaded",
            first_difference(o.stdout, t.stdout))
    # our flame output: exclusive times add up to llvm-xray's inclusive roots
    for label, path in logs:
        m = ["-m", workload] if "LLVM" in label else []
        lm = [f"-instr_map={workload}"] if "LLVM" in label else []
        k = ["-keep-going"] if "basic" in label else []
        folded = run([XRAYFDR, "stack", "-f", "folded"] + m + [path])
        allst = run([LLVM_XRAY, "stack", "-all-stacks", "-stack-format=flame"] + lm + k + [path])
        ours_t, theirs_t = {}, {}
        for l in folded.stdout.splitlines():
            th, rest = l.split(";", 1)
            ours_t[th] = ours_t.get(th, 0) + int(rest.rsplit(" ", 1)[1])
        for l in allst.stdout.splitlines():
            frames, value = l.rsplit(" ", 1)
            if frames.count(";") == 2:  # thread_T;root;
                th = frames.split(";")[0]
                theirs_t[th] = theirs_t.get(th, 0) + int(value)
        tap(folded.returncode == 0 and ours_t == theirs_t and ours_t,
            f"stack -f folded, {label}: exclusive times add up to llvm-xray's "
            "inclusive root times, thread by thread",
            f"ours {ours_t}\nllvm-xray {theirs_t}\n{folded.stderr}")


GRAPH_VARIANTS = [[], ["-e", "count", "-v", "sum"], ["-e", "med", "-c", "sum"],
                  ["-e", "90p", "-v", "99p", "-b", "max"], ["-e", "min", "-c", "count", "-d"]]


def graph_cases(tmp, runtime_logs, workload):
    logs = list(runtime_logs)
    for seed, extra in ((1, ["--threads", "1"]), (2, ["--threads", "4", "--args"]),
                        (3, ["--threads", "9", "--sched", "--calls", "300"]),
                        (4, ["--threads", "3", "--events", "-V", "3", "--buffer-size", "512"])):
        logs.append((f"synth {' '.join(extra)}",
                     synth(os.path.join(tmp, f"g{seed}.xray"), "--seed", str(seed), *extra)))
    for label, path in logs:
        m = ["-m", workload] if "LLVM" in label else []
        lm = [f"-instr_map={workload}"] if "LLVM" in label else []
        k = ["-k"] if "basic" in label else []
        strict = ["--strict"] if k else []
        for v in GRAPH_VARIANTS:
            same(f"graph {' '.join(strict + v + k) or '(defaults)'}, {label}",
                 [XRAYFDR, "graph"] + m + strict + v + k + [path],
                 [LLVM_XRAY, "graph"] + lm + v + k + [path])


def main():
    missing = [n for n, p in (("llvm-xray", LLVM_XRAY), ("clang", CLANG), ("clang++", CLANGXX),
                              (XRAYFDR, os.path.exists(XRAYFDR) and XRAYFDR)) if not p]
    if missing:
        tap(False, "tools present", f"missing: {missing}; run 'make deps' and 'make'")
        return finish()
    with tempfile.TemporaryDirectory(prefix="xrayfdr-golden-") as tmp:
        workload = build_workload(tmp)
        runtime_logs = []
        if workload:
            for mode, config, threads, label in (
                    ("xray-fdr", "func_duration_threshold_us=0:buffer_size=4096:buffer_max=64",
                     0, "LLVM runtime FDR, 1 thread"),
                    ("xray-fdr", "func_duration_threshold_us=0:buffer_size=16384:buffer_max=64",
                     3, "LLVM runtime FDR, 4 threads"),
                    ("xray-basic", "func_duration_threshold_us=0", 0, "LLVM runtime basic, 1 thread"),
                    ("xray-basic", "func_duration_threshold_us=0", 2, "LLVM runtime basic, 3 threads")):
                log = llvm_log(tmp, workload, mode, config, threads, len(runtime_logs))
                if log:
                    runtime_logs.append((label, log))
        extract_cases(tmp, workload)
        convert_cases(tmp, runtime_logs, workload)
        account_cases(tmp, runtime_logs, workload)
        stack_cases(tmp, runtime_logs, workload)
        graph_cases(tmp, runtime_logs, workload)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
