#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Per-thread time order in `xrayfdr dump --verify` (fdr-format.rst,
rule time-order), on hand-made version 5 logs.

A thread whose second buffer starts before the last record of its first
(the NewCPUId base going back), a TSCWrap moving the base back, and an
event before the record it follows are each reported with the thread,
the record's offset and the step in ticks and ns: a warning in a log of
another writer (it exits 0), an error in one the runtime wrote (its info
event ends it: exit 1).  Another thread's clock and a thread that moves
to a CPU whose base is later draw no word.  Prints TAP.
"""
import os
import re
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import XRAYFDR, finish, run, tap  # noqa: E402

HZ = 1000000  # 1 tick = 1 us

# metadata kinds (fdr-format.rst)
NEW_BUFFER, NEW_CPU, TSC_WRAP, WALLTIME, CUSTOM, EXTENTS, PID = 0, 2, 3, 4, 5, 7, 9
ENTRY, EXIT = 0, 1

INFO = (b"xrayfdr-info 1\ntsc_source=calibrated\ntsc_hz=1000000\n"
        b"events=6\noverwritten=0\ndropped=0\nmode=cpu\n")


def md(kind, body=b""):
    return bytes([kind << 1 | 1]) + body.ljust(15, b"\0")


def fn(kind, func, delta):
    return struct.pack("<II", (func << 4) | (kind << 1), delta)


def event(data, delta=0):
    return md(CUSTOM, struct.pack("<ii", len(data), delta)) + data


def buffer(tid, cpu, tsc, body):
    pre = (md(NEW_BUFFER, struct.pack("<i", tid)) +
           md(WALLTIME, struct.pack("<QI", 1, 0)) +
           md(PID, struct.pack("<I", 9)) +
           md(NEW_CPU, struct.pack("<HQ", cpu, tsc)))
    rest = pre + b"".join(body)
    return md(EXTENTS, struct.pack("<Q", len(rest))) + rest


def log(buffers):
    hdr = struct.pack("<HHIQQ", 5, 1, 3, HZ, 4096).ljust(32, b"\0")
    out, offsets = bytearray(hdr), []
    for b in buffers:
        offsets.append(len(out))
        out += b
    return bytes(out), offsets


def write(tmp, name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def main():
    tmp = tempfile.mkdtemp(prefix="xrayfdr-order.")
    # thread 1: a call entered on CPU 0 at 2000; its second buffer, on
    # CPU 1, begins at 1500 (500 us back); thread 2 runs at 5 meanwhile
    first = buffer(1, 0, 1000, [fn(ENTRY, 1, 1000)])
    other = buffer(2, 1, 5, [fn(ENTRY, 3, 1), fn(EXIT, 3, 1)])
    back = buffer(1, 1, 1500, [fn(ENTRY, 2, 700),  # 2200
                               md(TSC_WRAP, struct.pack("<Q", 2100)),
                               fn(EXIT, 2, 50),  # 2150
                               event(b"x", -20),  # 2130
                               fn(EXIT, 1, 100)])
    later = buffer(1, 1, 2000, [fn(EXIT, 1, 10)])  # moved: later base
    info = buffer(1, 0, 3000, [event(INFO)])

    data, offs = log([first, other, later])
    p = run([XRAYFDR, "dump", "--verify", "--quiet",
             write(tmp, "ordered.xray", data)])
    tap(p.returncode == 0 and "time-order" not in p.stdout + p.stderr and
        " 0 warnings" in p.stdout,
        "a thread moving to a CPU whose base is later, another thread's "
        "own clock: no word", p.stdout + p.stderr)

    data, offs = log([first, other, back])
    cpu_at = offs[2] + 16 * 4  # after BufferExtents, NewBuffer, WallTime, Pid
    wrap_at = cpu_at + 16 + 8
    ev_at = wrap_at + 16 + 8
    p = run([XRAYFDR, "dump", "--verify", "--quiet",
             write(tmp, "llvm.xray", data)])
    out = p.stdout + p.stderr
    warned = re.findall(r"^warning: .*\[time-order\]$", p.stderr, re.M)
    tap(p.returncode == 0 and len(warned) == 3 and
        f"offset {cpu_at} (0x{cpu_at:x}): NewCPUId: time goes back on "
        f"thread 1: TSC 1500 is 500 ticks (500000 ns) before TSC 2000 of "
        f"its record at offset {offs[0] + 16 * 5}" in p.stderr and
        f"offset {wrap_at} (0x{wrap_at:x}): TSCWrap: time goes back on "
        f"thread 1: TSC 2100 is 100 ticks" in p.stderr and
        f"offset {ev_at} (0x{ev_at:x}): CustomEventMarker: time goes back"
        in p.stderr and
        "3 warnings; 3 steps back in a thread's time [time-order]"
        in p.stdout,
        "another writer's log: each step back a warning with thread, "
        "offset and amount; valid", out)
    p = run([XRAYFDR, "dump", "--verify", "--quiet", "--strict",
             os.path.join(tmp, "llvm.xray")])
    tap(p.returncode == 1, "another writer's log: invalid with --strict",
        p.stdout + p.stderr)

    data, offs = log([first, other, back, info])
    path = write(tmp, "ours.xray", data)
    p = run([XRAYFDR, "dump", "--verify", "--quiet", path])
    out = p.stdout + p.stderr
    errors = re.findall(r"^error: .*\[time-order\]$", p.stderr, re.M)
    tap(p.returncode == 1 and len(errors) == 3 and
        f"error: {path}: offset {cpu_at} (0x{cpu_at:x}): NewCPUId: time "
        f"goes back on thread 1: TSC 1500 is 500 ticks (500000 ns)"
        in p.stderr and "INVALID" in p.stdout and "3 errors" in p.stdout,
        "a log the runtime wrote (its info event): each step back an "
        "error; invalid", out)
    p = run([XRAYFDR, "dump", "--verify", "--quiet", "--max-warnings=1",
             path])
    tap(p.returncode == 1 and
        len(re.findall(r"\[time-order\]$", p.stderr, re.M)) == 1 and
        "2 more warnings or time-order errors not shown" in p.stderr,
        "--max-warnings caps the time-order errors too", p.stderr)

    data, offs = log([first, other, later, info])
    p = run([XRAYFDR, "dump", "--verify", "--quiet",
             write(tmp, "ours-ordered.xray", data)])
    tap(p.returncode == 0 and "valid" in p.stdout,
        "a log the runtime wrote, in order: valid", p.stdout + p.stderr)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
