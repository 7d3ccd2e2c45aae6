#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The host's half of tests/guest/matrix_guest.sh.

    check_matrix.py FILES_DIR SELFTEST_DIR

FILES_DIR holds what the guest exported: m-NAME.out (the program's
output: its own counts) and m-NAME.xray[.PID] (its logs, recorded in CPU
mode on the module's rings; NAME@stream: streamed; NAME@discard: with
discard=true through rings it fills; NAME@killed: the dump of its kept
session after SIGKILL, with no counts).  For each program: the log
counts every call the program counts (signals: up to what the log
reports lost; a discarded log: the events it kept and those it reports
dropped add up to those the program made, and some were dropped), each
thread's calls nest in the log's order (not where the log lost records)
and its time never goes back, a streamed log lost nothing (no event dropped or
overwritten, no scheduler record lost: kernel_lost is 0 and each
thread's switch-ins and switch-outs pair up, but for the one in flight
when the trace ended), every log passes
xrayfdr dump --verify (which checks each thread's time order too) and
llvm-xray fdr-dump -verify, and where the log has the scheduler's
records, every function's on-CPU and off-CPU time add up to its calls'
duration within 1 us (xrayfdr account: each call's on-CPU time is its
duration less its off-CPU time, so any call whose off-CPU time exceeds
its duration shows in the sums), and the summary lines of the runtime
at exit (m-NAME.err) and of xrayfdr-ctl dump (m-NAME.ctl) say what the
log's info event counts as lost.  Prints
"ok DESCRIPTION" / "not ok DESCRIPTION" lines, with "# " diagnostics.
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "runtime"))
import test_matrix as tm  # noqa: E402


SCHED_MAGIC_HEX = "58465343"  # "XFSC", <xrayfdr/fdr.h>


def line(ok, name, diag=""):
    print(f"{'ok' if ok else 'not ok'} {name}")
    for d in diag.splitlines()[:20]:
        print(f"# {d}")


def check(files, bins, out):
    name = os.path.basename(out)[2:-4]
    streamed = name.endswith("@stream")
    killed = name.endswith("@killed")
    discarded = name.endswith("@discard")
    exe = os.path.join(bins, "m_" + name.split("@")[0])
    logs = sorted(l for l in glob.glob(os.path.join(files, f"m-{name}.xray*"))
                  if not l.endswith(".b64"))
    counts = tm.program_counts(open(out, errors="replace").read())
    if not logs or not (counts or killed):
        line(False, f"guest matrix {name}: a log and the program's counts",
             f"logs {logs}, counts {counts}")
        return
    ids = tm.symbol_ids(exe)
    ours, other = {}, {}
    lost, order, stream_lost, unpaired = 0, [], [], []
    kept, dropped, kernel_lost = 0, 0, 0
    for log in logs:
        # the scheduler's events (payload "XFSC") are not the program's
        every = tm.events_of(log)
        events = [e for e in every
                  if not (e["kind"] == "custom-event" and
                          str(e.get("data", "")).startswith(SCHED_MAGIC_HEX))]
        c, _, o, info = tm.tally(events)
        # (exceptions and longjmp leave calls without exits; a killed
        # process's calls were entered before the flight recorder's
        # window; a discarding ring drops a call's exit it kept the entry
        # of, while the thread's records still go in another CPU's ring)
        if name.split("@")[0] not in ("exceptions", "cxx", "longjmp"):
            order += tm.order_problems(events, times=True) \
                if not (killed or discarded) \
                else [o for o in tm.order_problems(events, times=True)
                      if "time goes back" in o]
        kept += sum(v for (_, _, what), v in c.items()
                    if what in ("entry", "exit"))
        dropped += tm.info_value(info, "dropped")
        kernel_lost += tm.info_value(info, "kernel_lost")
        if streamed and (tm.info_value(info, "dropped") or
                         tm.info_value(info, "overwritten")):
            stream_lost.append(f"{os.path.basename(log)}: dropped "
                               f"{tm.info_value(info, 'dropped')}, overwritten "
                               f"{tm.info_value(info, 'overwritten')}")
        if streamed:
            if tm.info_value(info, "kernel_lost"):
                unpaired.append(f"{os.path.basename(log)}: kernel_lost "
                                f"{tm.info_value(info, 'kernel_lost')}")
            unpaired += switch_problems(log, every)
        for k, v in c.items():
            ours[k] = ours.get(k, 0) + v
        for k, v in o.items():
            other[k] = other.get(k, 0) + v
        lost += tm.info_value(info, "dropped") + tm.info_value(info, "overwritten")
    problems, missing = [], 0
    for (pid, sym), n in sorted(counts.items() if not killed else []):
        if sym.startswith("@"):
            kind = {"@custom": "custom-event", "@typed": "typed-event"}[sym]
            got = other.get((pid, kind), 0)
        elif sym not in ids:
            problems.append(f"{sym}: no function id")
            continue
        else:
            got = ours.get((pid, ids[sym], "entry"), 0)
        if got != n and not (got < n and name == "signals"):
            problems.append(f"pid {pid} {sym}: program {n}, log {got}")
        missing += n - got
    if name == "signals" and missing > lost:
        problems.append(f"{missing} events missing, the log reports {lost} lost")
    if discarded:
        # every call returned (the threads were joined): an entry and an
        # exit each, main's too (it has no counter)
        made = 2 * (sum(counts.values()) + 1)
        line(dropped and kept + dropped == made,
             f"guest matrix {name}: the ring filled and dropped events: kept + "
             "dropped = made",
             f"{kept} + {dropped} of {made}; {kernel_lost} scheduler records lost")
    elif not killed:
        line(not problems, f"guest matrix {name}: the logs count every call the program counts",
             "\n".join(problems))
    line(not order, f"guest matrix {name}: each thread's calls nest in the log's order, "
         "in time order", "\n".join(order[:10]))
    if streamed:
        line(not stream_lost, f"guest matrix {name}: streamed, nothing dropped or overwritten",
             "\n".join(stream_lost))
        line(not unpaired, f"guest matrix {name}: streamed, no scheduler record lost: "
             "kernel_lost 0, each thread's switch-outs pair with its switch-ins",
             "\n".join(unpaired[:10]))
    bad = []
    for log in logs:
        for cmd in ([tm.XRAYFDR, "dump", "--verify", "--quiet", log],
                    [tm.LLVM_XRAY, "fdr-dump", "-verify", log]):
            p = tm.run(cmd)
            if p.returncode:
                bad.append(f"{os.path.basename(log)}: {cmd[1]}: {(p.stderr or p.stdout)[-300:]}")
    line(not bad, f"guest matrix {name}: every log passes xrayfdr dump --verify "
         "and llvm-xray fdr-dump -verify", "\n".join(bad))
    bad = summary_problems(files, name, logs)
    line(not bad, f"guest matrix {name}: the summary lines say what the log lost",
         "\n".join(bad[:10]))
    if name.startswith("mixed"):
        bad, sched = on_off_problems(logs)
        line(sched and not bad, f"guest matrix {name}: every function's on-CPU and "
             "off-CPU time add up to its calls' duration within 1 us",
             "\n".join(bad[:10]) if sched else "no scheduler records in the log")


LOSSES = (("overwritten", "overwritten"), ("dropped", "dropped"),
          ("kernel_lost", "scheduler records lost"),
          ("damaged", "damaged parts of the rings skipped"))


def summary_problems(files, name, logs):
    """Summary lines (the runtime's at exit: "xrayfdr: wrote N events to
    'FILE' (...)", xrayfdr-ctl dump's: "session ID: wrote ... to FILE
    (...)") whose counts of what was lost are not the info event's of
    their log: each count there, kernel_lost and damaged only when not 0."""
    by_name = {os.path.basename(l)[2:]: l for l in logs}
    bad, seen = [], 0
    for what in ("err", "ctl"):
        path = os.path.join(files, f"m-{name}.{what}")
        if not os.path.exists(path):
            continue
        for text in open(path, errors="replace").read().splitlines():
            m = re.search(r"wrote \d+ events (?:in \d+ buffers )?to '?([^' ]+)'? "
                          r"\((.*)\)", text)
            if not m or os.path.basename(m.group(1)) not in by_name:
                continue
            seen += 1
            _, _, _, info = tm.tally(tm.events_of(by_name[os.path.basename(m.group(1))]))
            for key, words in LOSSES:
                n = tm.info_value(info, key)
                said = re.search(rf"(\d+) {words}", m.group(2))
                if (int(said.group(1)) if said else None) != \
                        (n if n or key in ("overwritten", "dropped") else None):
                    bad.append(f"m-{name}.{what}: '{text}': the log's {key} is {n}")
    if not seen:
        bad.append(f"m-{name}: no summary line names its log")
    return bad


def switch_problems(log, events):
    """Threads of a log whose switch-outs and switch-ins differ by more
    than the one in flight at either end of the trace."""
    ins, outs = {}, {}
    for e in events:
        data = bytes.fromhex(str(e.get("data", ""))) \
            if e["kind"] == "custom-event" else b""
        if len(data) != 16 or data[:4] != b"XFSC" or data[4] not in (1, 2):
            continue
        tid = int.from_bytes(data[12:16], "little")
        d = ins if data[4] == 2 else outs
        d[tid] = d.get(tid, 0) + 1
    return [f"{os.path.basename(log)}: thread {tid}: {ins.get(tid, 0)} "
            f"switch-ins, {outs.get(tid, 0)} switch-outs"
            for tid in sorted(set(ins) | set(outs))
            if abs(ins.get(tid, 0) - outs.get(tid, 0)) > 1]


def on_off_problems(logs):
    """Functions whose on-CPU + off-CPU time differs from their calls'
    duration by more than 1 us (xrayfdr account --format json), and
    whether the logs had on/off-CPU columns at all."""
    bad, sched = [], False
    for log in logs:
        p = tm.run([tm.XRAYFDR, "account", "--format", "json", log])
        if p.returncode:
            bad.append(f"{os.path.basename(log)}: account: {p.stderr[-300:]}")
            continue
        for row in json.loads(p.stdout)["functions"]:
            if "on_cpu" not in row:
                continue
            sched = True
            gap = row["on_cpu"] + row["off_cpu"] - row["sum"]
            if abs(gap) > 1e-6:
                bad.append(f"{os.path.basename(log)}: function {row['id']}: "
                           f"{row['count']} calls, {row['sum']:.9f} s, on-CPU "
                           f"{row['on_cpu']:.9f} + off-CPU {row['off_cpu']:.9f}")
    return bad, sched


def main():
    files, bins = sys.argv[1], sys.argv[2]
    outs = sorted(glob.glob(os.path.join(files, "m-*.out")))
    if not outs:
        line(False, "guest matrix: the guest exported its programs' output")
        return 1
    for out in outs:
        try:
            check(files, bins, out)
        except Exception as e:  # a harness error is a failure, said
            line(False, f"guest matrix {os.path.basename(out)}: harness", repr(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
