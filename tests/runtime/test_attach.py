#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""xrayfdr attach and detach on a running server-like program.

progs/attach_server.cc, built with -fxray-instrument -fnoxray-link-deps
and no runtime, runs threads blocked in read(), sleeping, spinning,
allocating, throwing C++ exceptions through traced frames, and workers
that wait for rounds.  It is attached and detached ATTACH_CYCLES times
(default 30 in thread mode, then 15 in CPU mode on the runtime's own
rings; 200 each with ATTACH_CYCLES=200) while it runs.  In each window
the program is asked for one round, so the calls of counted() and
counted_arg() in the log must equal what it did in that round exactly;
every log passes both verifiers; at the end no sled is left patched, no
descriptor is left open, and the program finishes with its own correct
result.  Then the refusals: a program without XRay, a dead pid, another
user's process, a second attach, a process record traces, a detach of
what is not attached: each a clear error, the target unchanged.  Prints
TAP.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_matrix as m  # noqa: E402

tap, run = m.tap, m.run
OUT = os.path.abspath(os.path.join(m.BUILD, "tests", "runtime", "attach"))
CYCLES = int(os.environ.get("ATTACH_CYCLES", "0"))


def build():
    exe = os.path.join(OUT, "attach_server")
    p = run([m.CLANGXX, "-O2", "-g", "-pthread"] + m.XRAY_FLAGS +
            ["-fnoxray-link-deps", os.path.join(m.PROGS, "attach_server.cc"),
             "-o", exe])
    tap(p.returncode == 0, "attach: the server builds without any runtime", p.stderr)
    return exe if p.returncode == 0 else None


class Server:
    """The program, driven through its stdin and stdout."""

    def __init__(self, exe, cmd=None):
        self.p = subprocess.Popen(cmd or [exe], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, bufsize=1)
        line = self.p.stdout.readline()
        mo = re.match(r"pid (\d+)", line)
        self.pid = int(mo.group(1)) if mo else None

    def ask(self, text):
        self.p.stdin.write(text + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def quit(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.flush()
            out, err = self.p.communicate(timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            self.p.kill()
            out, err = self.p.communicate()
        return self.p.returncode, out, err


def counts(exe, log):
    """Completed calls per function name (xrayfdr account)."""
    p = run([m.XRAYFDR, "account", "-m", exe, "-f", "csv", log])
    if p.returncode:
        raise RuntimeError(f"account {log}: {p.stderr[-500:]}")
    got = {}
    for line in p.stdout.splitlines()[1:]:
        f = line.split(",")
        got[f[-1].strip('"')] = int(f[1])
    return got


def caught_and_threads(pid):
    """The signals the process has handlers for, and its threads."""
    st = open(f"/proc/{pid}/status").read()
    return re.search(r"SigCgt:\s*(\S+)", st).group(1), len(os.listdir(f"/proc/{pid}/task"))


def fds(pid):
    d = f"/proc/{pid}/fd"
    return sorted(os.readlink(os.path.join(d, f)) for f in os.listdir(d))


def sleds_unpatched(exe, pid):
    """Every sled of @exe's instrumentation map (the program, or a shared
    object it loaded), read from the memory of process @pid, is as the
    compiler left it: entry and tail sleds jump over their nops (EB 09),
    exit sleds return (C3).  A description of those that are not."""
    p = run(["readelf", "-SW", exe])
    sec = re.search(r"xray_instr_map\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)",
                    p.stdout)
    if not sec:
        return "no xray_instr_map section"
    addr, off, size = (int(x, 16) for x in sec.groups())
    with open(exe, "rb") as f:
        f.seek(off)
        data = f.read(size)
    bias = None
    real = os.path.realpath(exe)
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == real and int(parts[2], 16) == 0:
                bias = int(parts[0].split("-")[0], 16)
                break
    if bias is None:
        return "the program's mapping was not found"
    bad = []
    with open(f"/proc/{pid}/mem", "rb") as mem:
        for i in range(0, len(data) - 31, 32):
            rel, _fn, kind, _always, version = struct.unpack_from("<qqBBB", data, i)
            sled = bias + (addr + i + rel if version >= 2 else rel)
            mem.seek(sled)
            b = mem.read(2)
            want = b"\xc3" if kind == 1 else b"\xeb\x09"
            if not b.startswith(want):
                bad.append(f"sled {i // 32} kind {kind} at {sled:#x}: {b.hex()}")
    return "; ".join(bad[:5])


def check_loaded_later(exe):
    """A shared object the program loads while attached is patched (the
    runtime looks every RT_CONTROL_TICK_MS), its calls are in the log,
    and detach unpatches it."""
    so = os.path.join(OUT, "libattach_plugin.so")
    p = run([m.CLANG, "-O2", "-g", "-fPIC", "-shared"] + m.XRAY_FLAGS +
            [os.path.join(m.PROGS, "attach_plugin.c"), "-o", so])
    if p.returncode:
        tap(False, "attach: the plugin builds", p.stderr)
        return
    srv = Server(exe)
    log = os.path.join(OUT, "later.xray")
    a = subprocess.Popen([m.XRAYFDR, "attach", "-o", log, str(srv.pid)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = a.stderr.readline()
    loaded = srv.ask(f"load {so}")
    patched = False
    for _ in range(400):  # until the runtime has seen it
        if loaded == "loaded" and sleds_unpatched(so, srv.pid):
            patched = True
            break
        time.sleep(0.05)
    done = srv.ask("plugin 100")
    d = run([m.XRAYFDR, "detach", str(srv.pid)])
    a.communicate(timeout=600)
    got = {}
    if d.returncode == 0:
        c = run([m.XRAYFDR, "account", "-f", "csv", log])
        for line in c.stdout.splitlines()[1:]:
            f = line.split(",")
            got[f[-1].strip('"')] = int(f[1])
    # (named from the object the log's info event lists)
    tap("tracing process" in first and patched and done == "plugin 100" and
        got.get("plugin_fn") == 100,
        "attach: a shared object loaded while attached is patched, its 100 calls logged"
        " and named",
        f"{first} loaded={loaded} patched={patched} {done} detach {d.returncode}"
        f" {d.stderr} counts {got}")
    bad = sleds_unpatched(so, srv.pid)
    tap(not bad, "attach: detach unpatches the object loaded later too", bad)
    code, out, _ = srv.quit()
    tap(code == 0 and "result ok" in out, "attach: its program finishes well", out)


def check_trigger(exe):
    """A signal trigger given to attach takes a snapshot while attached;
    detach ends the trigger thread and gives the signal back."""
    srv = Server(exe)
    state_before = caught_and_threads(srv.pid)
    snaps = os.path.join(OUT, "snaps")
    os.makedirs(snaps, exist_ok=True)
    log = os.path.join(OUT, "trig.xray")
    a = subprocess.Popen([m.XRAYFDR, "attach", "--trigger", "signal=USR2",
                          "--snapshot-dir", snaps, "-o", log, str(srv.pid)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = a.stderr.readline()
    srv.ask("round 100")
    os.kill(srv.pid, 12)  # SIGUSR2
    files = []
    for _ in range(400):
        files = [f for f in os.listdir(snaps) if not f.startswith(".")]
        if files:
            break
        time.sleep(0.05)
    d = run([m.XRAYFDR, "detach", str(srv.pid)])
    rest = a.communicate(timeout=600)[1]
    tap("tracing process" in first and len(files) == 1 and "signal-USR2" in files[0] and
        d.returncode == 0 and a.returncode == 0,
        "attach: --trigger signal=USR2 takes a snapshot while attached",
        f"{first} files {files} detach {d.returncode} {d.stderr} attach {a.returncode} {rest}")
    m.verify_logs("attach: the trigger's snapshot verifies",
                  [os.path.join(snaps, f) for f in files])
    state_after = caught_and_threads(srv.pid)
    tap(state_after == state_before,
        "attach: after detach the trigger's thread and its SIGUSR2 handler are gone",
        f"before {state_before}, after {state_after}")
    code, out, _ = srv.quit()
    tap(code == 0 and "result ok" in out, "attach: the triggered program finishes well", out)


def cycles(exe, mode, n, extra=()):
    """Attach (--mode @mode, and @extra), one round, detach, @n times;
    every window checked."""
    label = mode + "".join(" " + e for e in extra)
    srv = Server(exe)
    if not srv.pid:
        tap(False, f"attach {label}: the server starts", srv.p.stderr.read())
        return
    before = fds(srv.pid)
    state_before = caught_and_threads(srv.pid)
    problems, logs, round_calls = [], [], 1000
    for i in range(n):
        log = os.path.join(OUT, f"{mode}{len(extra)}.{i}.xray")
        a = subprocess.Popen([m.XRAYFDR, "attach", "--mode", mode, "-m", "1024",
                              *extra, "-o", log, str(srv.pid)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = a.stderr.readline()
        if "tracing process" not in first:
            a.wait(timeout=60)
            problems.append(f"cycle {i}: attach: {first}{a.stderr.read()}")
            break
        done = srv.ask(f"round {round_calls}")
        d = run([m.XRAYFDR, "detach", str(srv.pid)], timeout=600)
        rest = a.communicate(timeout=600)[1]
        if d.returncode or a.returncode:
            problems.append(f"cycle {i}: detach exit {d.returncode} {d.stderr}"
                            f" attach exit {a.returncode}: {rest[-600:]}")
            break
        want = dict(re.findall(r"(counted\w*)=(\d+)", done))
        try:
            got = counts(exe, log)
        except RuntimeError as e:
            problems.append(f"cycle {i}: {e}")
            break
        for fn, w in want.items():
            if got.get(fn, 0) != int(w):
                problems.append(f"cycle {i}: {fn}: {got.get(fn, 0)} in the log,"
                                f" {w} made (overwritten? {rest.strip()[-300:]})")
        logs.append(log)
        if problems:
            break
    tap(not problems, f"attach {label}: {n} attach/detach cycles, each window's counts"
        " equal the round the program made", "\n".join(problems))
    m.verify_logs(f"attach {label}: every window verifies (ours, llvm-xray)",
                  logs[:5] + logs[-5:] if len(logs) > 10 else logs)
    bad = sleds_unpatched(exe, srv.pid)
    tap(not bad, f"attach {label}: after detach no sled is left patched", bad)
    after = fds(srv.pid)
    tap(after == before, f"attach {label}: after detach no descriptor is left open",
        f"before {before}\nafter {after}")
    # (the trace's signal handlers and its threads: the channel's, the
    # trigger's, the stream's writer)
    state_after = caught_and_threads(srv.pid)
    tap(state_after == state_before,
        f"attach {label}: after detach no signal handler and no thread of the trace is left",
        f"SigCgt and threads before {state_before}, after {state_after}")
    code, out, err = srv.quit()
    tap(code == 0 and "result ok" in out,
        f"attach {label}: the program finishes with its own correct result",
        f"exit {code}: {out[-500:]} {err[-500:]}")
    for log in logs:
        os.unlink(log)


def check_refusals(exe):
    """What attach refuses says why, and leaves the target as it was."""
    # no sleds
    sl = subprocess.Popen(["sleep", "60"])
    for _ in range(1000):  # until exec() is done
        if os.readlink(f"/proc/{sl.pid}/exe").endswith("sleep"):
            break
        time.sleep(0.01)
    p = run([m.XRAYFDR, "attach", "--for", "1s", str(sl.pid)])
    same = ("libxrayfdr" not in open(f"/proc/{sl.pid}/maps").read() and
            "TracerPid:\t0\n" in open(f"/proc/{sl.pid}/status").read())
    tap(p.returncode == 1 and "no XRay sleds" in p.stderr and same,
        "attach: a program without XRay sleds is refused, unchanged",
        f"exit {p.returncode}: {p.stderr}")
    sl.kill()
    sl.wait()
    # a dead pid
    p = run([m.XRAYFDR, "attach", str(sl.pid)])
    tap(p.returncode == 1 and "no process" in p.stderr,
        "attach: a pid that is gone is refused", f"exit {p.returncode}: {p.stderr}")
    # a stopped process
    sl = subprocess.Popen(["sleep", "60"])
    time.sleep(0.2)
    os.kill(sl.pid, 19)  # SIGSTOP
    for _ in range(500):
        if "T (stopped)" in open(f"/proc/{sl.pid}/status").read():
            break
        time.sleep(0.01)
    p = run([m.XRAYFDR, "attach", str(sl.pid)])
    tap(p.returncode == 1 and "is stopped" in p.stderr,
        "attach: a stopped process is refused (continue it first)",
        f"exit {p.returncode}: {p.stderr}")
    sl.kill()
    sl.wait()
    p = run([m.XRAYFDR, "attach", "notapid"])
    tap(p.returncode == 2 and "not a process id" in p.stderr,
        "attach: a PID that is not a number is bad usage", p.stderr)

    srv = Server(exe)
    # a second attach while one runs
    log = os.path.join(OUT, "twice.xray")
    a = subprocess.Popen([m.XRAYFDR, "attach", "-o", log, str(srv.pid)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = a.stderr.readline()
    p = run([m.XRAYFDR, "attach", "-o", log + ".2", str(srv.pid)])
    tap("tracing process" in first and p.returncode == 1 and
        ("traced already" in p.stderr or "has an xrayfdr attach" in p.stderr),
        "attach: attaching twice is refused", f"{first} / exit {p.returncode}: {p.stderr}")
    d = run([m.XRAYFDR, "detach", str(srv.pid)])
    a.communicate(timeout=600)
    tap(d.returncode == 0 and a.returncode == 0 and "detached" in d.stdout,
        "attach: detach ends the attach, which checks its log",
        f"detach {d.returncode}: {d.stderr}; attach {a.returncode}")
    d = run([m.XRAYFDR, "detach", str(srv.pid)])
    tap(d.returncode == 1 and "not traced" in d.stderr,
        "attach: detaching what is not attached says so", d.stderr)
    # another user's process, as an unprivileged user
    if shutil.which("setpriv"):
        other = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534",
                                  "--clear-groups", exe],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True)
        line = other.stdout.readline()
        opid = re.match(r"pid (\d+)", line)
        p = run(["setpriv", "--reuid=1", "--regid=1", "--clear-groups",
                 m.XRAYFDR, "attach", "-o", "/tmp/xrayfdr-attach-other.xray",
                 opid.group(1) if opid else "1"])
        # (the program maps memory of its own as it runs: look for ours)
        same = opid and "libxrayfdr" not in open(f"/proc/{opid.group(1)}/maps").read()
        tap(p.returncode == 1 and "another user's" in p.stderr and same,
            "attach: another user's process is refused, unchanged",
            f"exit {p.returncode}: {p.stderr}")
        other.kill()
        other.wait()
    else:
        tap(True, "attach: another user's process is refused", skip="no setpriv")
    code, out, _ = srv.quit()
    tap(code == 0 and "result ok" in out, "attach: the refused target finishes well", out)

    # under a debugger (strace follows every thread)
    if shutil.which("strace"):
        dbg = Server(exe, ["strace", "-f", "-qq", "-o", "/dev/null", exe])
        p = run([m.XRAYFDR, "attach", str(dbg.pid)])
        tap(p.returncode == 1 and "under a debugger" in p.stderr,
            "attach: a process under a debugger is refused",
            f"exit {p.returncode}: {p.stderr}")
        dbg.quit()
    else:
        tap(True, "attach: a process under a debugger is refused", skip="no strace")

    # a process xrayfdr record traces
    rec_log = os.path.join(OUT, "recorded.xray")
    rec = subprocess.Popen([m.XRAYFDR, "record", "-q", "-o", rec_log, exe],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    mo = re.match(r"pid (\d+)", rec.stdout.readline())
    p = run([m.XRAYFDR, "attach", mo.group(1) if mo else "1"])
    d = run([m.XRAYFDR, "detach", mo.group(1) if mo else "1"])
    rec.stdin.write("quit\n")
    rec.stdin.flush()
    rec.communicate(timeout=120)
    tap(p.returncode == 1 and "traced already" in p.stderr and
        d.returncode == 1 and "not by an attach" in d.stderr and rec.returncode == 0,
        "attach: a process record traces is refused, and cannot be detached",
        f"attach {p.returncode}: {p.stderr}\ndetach {d.returncode}: {d.stderr}")


def main():
    if not m.CLANGXX or not os.path.exists(m.XRAYFDR):
        print("1..0 # SKIP clang++ or xrayfdr missing (make deps; make)")
        return 0
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    exe = build()
    if exe:
        for mode, n, extra in (("thread", CYCLES or 30, ()), ("cpu", CYCLES or 15, ()),
                               ("thread", CYCLES or 5, ("--stream",))):
            try:
                cycles(exe, mode, n, extra)
            except Exception as e:  # noqa: BLE001
                tap(False, f"attach {mode} {extra}: harness", repr(e))
        try:
            check_trigger(exe)
        except Exception as e:  # noqa: BLE001
            tap(False, "attach trigger: harness", repr(e))
        try:
            check_loaded_later(exe)
        except Exception as e:  # noqa: BLE001
            tap(False, "attach loaded later: harness", repr(e))
        try:
            check_refusals(exe)
        except Exception as e:  # noqa: BLE001
            tap(False, "attach refusals: harness", repr(e))
    print(f"1..{len(m.results)}")
    return 0 if all(m.results) else 1


if __name__ == "__main__":
    sys.exit(main())
