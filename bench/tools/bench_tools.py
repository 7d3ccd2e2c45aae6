#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Tool throughput: xrayfdr against llvm-xray on the same files, side by
side, wall time and peak memory (RSS), with their ratios.

  1. account and convert --output-format=yaml on a synthetic FDR trace of
     BENCH_TOOLS_SIZE (default 1G; 4 threads), the size the issue asks for;
  2. convert on a smaller trace (BENCH_TOOLS_SMALL, default 64M) that
     llvm-xray can finish;
  3. account on llvm-xray's YAML of a 16M trace, as llvm-xray can account
     a multi-threaded trace only there (on the binary log its account
     rejects every record older than the first it reads);
  4. account on a log LLVM's own runtime wrote (FDR mode, one thread, of
     about BENCH_TOOLS_LLVM, default 70M: bench/runtime/calls.c built
     against LLVM's runtime), which llvm-xray reads as it reads its
     users' logs;
  5. every analysis command's throughput on the large trace, in MB/s of
     input per second of CPU time (user + system, which other tenants
     disturb less than wall time), its peak memory, and its time over
     sha1sum's on the same file, a ratio that survives a busy machine
     better than MB/s, and the wall time beside it, with the MB/s and the
     ratio to sha1sum's wall time it makes (account, stack and graph read
     with two threads, and their '-j1' rows with one: what two cores save
     shows in wall time, at some cost in CPU time).  The median of
     BENCH_TOOLS_ROUNDS (default 3)
     interleaved rounds, with min and max; with BENCH_TOOLS_BASELINE set
     to another xrayfdr binary (an earlier build), that one too, round by
     round, and the speedup.

BENCH_TOOLS_THROUGHPUT_ONLY=1 runs part 5 alone.

llvm-xray runs under a memory cap (BENCH_TOOLS_MEMCAP, default 12G of
address space) and a time limit (BENCH_TOOLS_TIMEOUT seconds, default
900): running out is reported as a result, not an error.  The load
average is printed beside each run, as other work may share the machine.
Traces are kept in $BUILD/bench-tools between runs.  Reports; never fails
on a time.
"""
import os
import resource
import shutil
import subprocess
import sys
import time

BUILD = os.environ.get("BUILD", "build")
XRAYFDR = os.path.abspath(os.path.join(BUILD, "bin", "xrayfdr"))
DIR = os.path.abspath(os.path.join(BUILD, "bench-tools"))


def size_bytes(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * units[s[-1].upper()] if s[-1].upper() in units else int(s)


SIZE = os.environ.get("BENCH_TOOLS_SIZE", "1G")
SMALL = os.environ.get("BENCH_TOOLS_SMALL", "64M")
MEMCAP = size_bytes(os.environ.get("BENCH_TOOLS_MEMCAP", "12G"))
TIMEOUT = int(os.environ.get("BENCH_TOOLS_TIMEOUT", "900"))
LLVM_LOG = os.environ.get("BENCH_TOOLS_LLVM", "70M")


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def measure(cmd, cap=None, stdout=subprocess.DEVNULL, stdin=None):
    """(seconds, peak RSS in bytes, exit status, signal) of one run."""
    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    start = time.monotonic()
    # without preexec_fn Python spawns with vfork: the child's peak RSS is
    # its own, not a copy of this script's
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.DEVNULL, stdin=stdin,
                         preexec_fn=limits if cap else None)
    deadline = start + TIMEOUT
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            p.kill()
            pid, status, usage = os.wait4(p.pid, 0)
            return time.monotonic() - start, usage.ru_maxrss * 1024, None, "timeout"
        time.sleep(0.01)
    secs = time.monotonic() - start
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    rc = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    measure.cpu = usage.ru_utime + usage.ru_stime
    return secs, usage.ru_maxrss * 1024, rc, sig


def human(n):
    return f"{n / (1 << 30):.2f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.1f} MiB"


def outcome(secs, rss, rc, sig, ok_codes=(0,)):
    if sig == "timeout":
        return f"did not finish in {TIMEOUT} s", False
    if sig or rc not in ok_codes:
        what = f"signal {sig}" if sig else f"exit {rc}"
        if rss > MEMCAP * 0.6 or sig == 6:
            return f"out of memory at {human(rss)} ({what}, cap {human(MEMCAP)})", False
        return f"failed ({what}) after {secs:.1f} s", False
    return f"{secs:7.1f} s {human(rss):>10}", True


def row(label, ours, theirs, theirs_ok):
    o_secs, o_rss = ours
    line = f"  {label:<44} {o_secs:7.1f} s {human(o_rss):>10}   {theirs[0]:<40}"
    if theirs_ok:
        t_secs, t_rss = theirs[1]
        line += f" {t_secs / o_secs:6.1f}x  {t_rss / max(o_rss, 1):7.1f}x"
    print(line + f"   (load {load()})")
    sys.stdout.flush()


def synth(path, size, *extra):
    if os.path.exists(path) and os.path.getsize(path) >= size_bytes(size) * 0.99:
        return path
    subprocess.run([XRAYFDR, "synth", "-o", path, "--size", size, "--threads", "4",
                    "--seed", "42"] + list(extra), check=True)
    return path


def compare(label, ours_cmd, llvm_cmd, llvm_ok=(0,)):
    o = measure(ours_cmd)
    if o[2] != 0:
        print(f"  {label}: xrayfdr failed (exit {o[2]}, signal {o[3]})")
        return False
    t = measure(llvm_cmd, cap=MEMCAP)
    text, ok = outcome(*t, ok_codes=llvm_ok)
    row(label, (o[0], o[1]), (text, (t[0], t[1])), ok)
    return True


ROUNDS = int(os.environ.get("BENCH_TOOLS_ROUNDS", "3"))
# another xrayfdr (an earlier build) to run beside this one, round by round
BASELINE = os.environ.get("BENCH_TOOLS_BASELINE")


def throughput(path):
    """Each command's CPU time on @path, interleaved rounds, against
    sha1sum's (and BASELINE's, if set)."""
    mb = os.path.getsize(path) / 1e6
    cmds = [("sha1sum", ["sha1sum", path])]
    labels = []
    baseline_jobs = BASELINE and "--jobs" in subprocess.run(
        [BASELINE, "account", "--help"], capture_output=True, text=True).stdout
    for label, args in (("account", ["account"]), ("account -j1", ["account", "-j1"]),
                        ("stack", ["stack"]), ("stack -j1", ["stack", "-j1"]),
                        ("graph", ["graph"]), ("graph -j1", ["graph", "-j1"]),
                        ("replay", ["replay", "--no-pager"]),
                        ("convert -f trace_event", ["convert", "-f", "trace_event"]),
                        ("convert -f perfetto", ["convert", "-f", "perfetto"]),
                        ("convert -f yaml --no-sort", ["convert", "-f", "yaml", "--no-sort"])):
        labels.append(label)
        cmds.append((label, [XRAYFDR] + args[:1] + ["-q"] + args[1:] + [path]))
        if BASELINE:
            # a build older than --jobs reads with one thread, and
            # refuses -j
            plain = args if baseline_jobs else [a for a in args if a != "-j1"]
            cmds.append(("baseline " + label,
                         [BASELINE] + plain[:1] + ["-q"] + plain[1:] + [path]))
    times = {label: [] for label, _ in cmds}
    walls = {label: [] for label, _ in cmds}
    rss = {}
    for _ in range(ROUNDS):
        for label, cmd in cmds:
            wall, peak, rc, sig = measure(cmd)
            if rc != 0:
                print(f"  {label}: failed (exit {rc}, signal {sig})")
                return False
            times[label].append(measure.cpu)
            walls[label].append(wall)
            rss[label] = max(rss.get(label, 0), peak)

    def med(label):
        t = sorted(times[label])
        return t[len(t) // 2]

    def med_wall(label):
        w = sorted(walls[label])
        return w[len(w) // 2]

    sha = med("sha1sum")
    sha_wall = med_wall("sha1sum")
    print(f"\nthroughput on the {mb:.0f} MB trace, CPU time (user + system), "
          f"median of {ROUNDS} interleaved rounds [min, max]"
          + (f"; 'before': {BASELINE}" if BASELINE else ""))
    print(f"  {'':<28} {'CPU s':>7} {'[min, max]':>16} {'MB/s':>8} "
          f"{'x sha1sum':>10} {'peak RSS':>10} {'wall s':>7} {'MB/s':>6} "
          f"{'x sha1sum':>9}"
          + ("   before   speedup" if BASELINE else ""))
    for label in ["sha1sum"] + labels:
        t = sorted(times[label])
        m = med(label)
        extra = ""
        if BASELINE and label != "sha1sum":
            b = med("baseline " + label)
            extra = f" {b:7.2f} s {b / max(m, 1e-9):7.2f}x"
        w = med_wall(label)
        print(f"  {label:<28} {m:7.2f} [{t[0]:6.2f}, {t[-1]:6.2f}] "
              f"{mb / max(m, 1e-9):8.0f} {m / max(sha, 1e-9):9.1f}x "
              f"{human(rss[label]):>10} {w:7.2f} {mb / max(w, 1e-9):6.0f} "
              f"{w / max(sha_wall, 1e-9):8.1f}x{extra}   (load {load()})")
        sys.stdout.flush()
    return True


def llvm_runtime_log():
    """A log of about LLVM_LOG bytes written by LLVM's FDR runtime (kept
    between runs), or None if the workload is not built."""
    path = os.path.join(DIR, f"llvm-runtime-{LLVM_LOG}.xray")
    want = size_bytes(LLVM_LOG)
    if os.path.exists(path) and os.path.getsize(path) >= want * 0.9:
        return path
    exe = os.path.join(DIR, "calls-xray-llvm")
    clang = shutil.which("clang") or shutil.which("clang-14")
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not clang or subprocess.run(
            [clang, "-O2", "-fxray-instrument", "-DBENCH_LLVM",
             "-I", os.path.join(top, "lib", "include"),
             os.path.join(top, "bench", "runtime", "calls.c"), "-o", exe]).returncode:
        return None
    base = os.path.join(DIR, "llvm-runtime-tmp-")
    buffer_size = 1 << 20
    # LLVM's FDR mode keeps the first buffers: make more than they hold
    # (a call is 2 records of 8 bytes, 3 calls an iteration)
    iterations = want // 48 * 2
    subprocess.run([exe, str(iterations), "fdr",
                    f"func_duration_threshold_us=0 buffer_size={buffer_size} "
                    f"buffer_max={want // buffer_size}"],
                   env=dict(os.environ, XRAY_OPTIONS=f"xray_mode=xray-fdr xray_logfile_base={base}"),
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    logs = [os.path.join(DIR, f) for f in os.listdir(DIR) if f.startswith("llvm-runtime-tmp-")]
    if len(logs) != 1:
        return None
    os.rename(logs[0], path)
    return path


def main():
    llvm = shutil.which("llvm-xray") or shutil.which("llvm-xray-14")
    if not os.path.exists(XRAYFDR) or not llvm:
        print("bench tools: needs build/bin/xrayfdr and llvm-xray (make deps && make)")
        return 1
    os.makedirs(DIR, exist_ok=True)
    if os.environ.get("BENCH_TOOLS_THROUGHPUT_ONLY"):
        return 0 if throughput(synth(os.path.join(DIR, f"synth-{SIZE}.xray"), SIZE)) else 1
    print(f"xrayfdr vs llvm-xray; llvm-xray capped at {human(MEMCAP)} of address space "
          f"and {TIMEOUT} s; 'x' columns: llvm-xray's time and memory over ours")
    print(f"  {'':<44} {'xrayfdr':>20}   {'llvm-xray':<40} {'time':>7} {'memory':>8}")
    ok = True
    for size in (SIZE, SMALL):
        path = synth(os.path.join(DIR, f"synth-{size}.xray"), size)
        mib = os.path.getsize(path) / (1 << 20)
        # llvm-xray -k prints every record it rejects with every thread's
        # stack; on a log it can load, that alone takes many minutes
        if size == SIZE:
            ok &= compare(f"account, {mib:.0f} MiB FDR log",
                          [XRAYFDR, "account", "-q", "-k", path],
                          [llvm, "account", "-k", path])
        ok &= compare(f"convert --output-format=yaml, {mib:.0f} MiB",
                      [XRAYFDR, "convert", "-q", "-f", "yaml", path],
                      [llvm, "convert", "--output-format=yaml", path])
    # account where llvm-xray can: its own sorted YAML, version 1
    small = synth(os.path.join(DIR, "synth-16M.xray"), "16M")
    yaml = os.path.join(DIR, "synth-16M.yaml")
    if not os.path.exists(yaml):
        subprocess.run([XRAYFDR, "convert", "-q", "-f", "yaml", "-o", yaml, small], check=True)
        with open(yaml, "r+b") as f:
            head = f.read(64)
            at = head.index(b"version:         5") + len(b"version:         ")
            f.seek(at)
            f.write(b"1")  # the only version llvm-xray reads back
    mib = os.path.getsize(yaml) / (1 << 20)
    ok &= compare(f"account, {mib:.0f} MiB YAML (a 16 MiB log)",
                  [XRAYFDR, "account", "-q", yaml], [llvm, "account", yaml])
    # a log of LLVM's own runtime: one thread, which llvm-xray account
    # reads whole
    log = llvm_runtime_log()
    if log:
        mib = os.path.getsize(log) / (1 << 20)
        ok &= compare(f"account, {mib:.0f} MiB log of LLVM's runtime",
                      [XRAYFDR, "account", "-q", log], [llvm, "account", "-k", log])
    else:
        print("  account, a log of LLVM's runtime: not measured (clang cannot build "
              "bench/runtime/calls.c against LLVM's runtime)")
    ok &= throughput(synth(os.path.join(DIR, f"synth-{SIZE}.xray"), SIZE))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
