#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The outputs llvm-xray does not have, checked against the trace itself.

Each check recomputes what an output should say from the raw events
(`xrayfdr dump --events --json`, read here in Python) or from another of
our outputs, so a wrong number fails:

  - trace_event JSON: one complete event per call, durations that add up
    to account's sums; off-CPU slices that add up to the scheduler events;
  - account's self time against folded stacks, and its on/off-CPU columns
    against the scheduler events;
  - TraceLog: read back by our reader with the same calls, and its thread
    CPU records equal to the on-CPU time of the scheduler events;
  - FDR re-encoding: llvm-xray accepts it and sees the same records;
  - YAML read back: converting our YAML again gives the same bytes;
  - the SVG flame graph: well-formed XML whose root frames add up, opened
    in headless Chromium and screenshotted;
  - memory: each command's peak RSS stays flat when the trace grows.

Prints TAP.
"""
import json
import re
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from taplib import XRAYFDR, finish, peak_rss, results, run, skip, tap
import xml.etree.ElementTree as ET






def events(path):
    p = run([XRAYFDR, "dump", "--events", "--json", path])
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    return lines[0]["header"], lines[1:]


def sched(e):
    """(kind, tid) of a scheduler event, or None."""
    if e["kind"] != "custom-event":
        return None
    data = bytes.fromhex(e["data"])
    if len(data) != 16 or data[:4] != b"XFSC":
        return None
    return data[4], struct.unpack_from("<I", data, 12)[0]


def calls(evs):
    """Completed calls with self and off-CPU time, per the unwinding rules
    of our tools: an exit pops down to its entry, unmatched exits are
    ignored; calls still open at the end are left out."""
    stacks, off, off_since, out = {}, {}, {}, []
    for e in evs:
        key = (e["pid"], e["tid"])
        st = stacks.setdefault(key, [])
        k = e["kind"]
        s = sched(e)
        if s:
            if s[0] == 1 and key not in off_since:
                off_since[key] = e["tsc"]
            elif s[0] == 2 and key in off_since:
                off[key] = off.get(key, 0) + e["tsc"] - off_since.pop(key)
            continue
        if k in ("function-enter", "function-enter-arg"):
            st.append([e["func_id"], e["tsc"], 0, off.get(key, 0)])
        elif k in ("function-exit", "function-tail-exit"):
            ids = [f[0] for f in st]
            if e["func_id"] not in ids:
                continue
            while st:
                fid, t0, child, off0 = st.pop()
                dur = e["tsc"] - t0
                o = off.get(key, 0) + (e["tsc"] - off_since[key] if key in off_since else 0) - off0
                out.append((key, fid, dur, dur - child, o))
                if st:
                    st[-1][2] += dur
                if fid == e["func_id"]:
                    break
    return out


def per_function(cs):
    agg = {}
    for _, fid, dur, self_t, off in cs:
        a = agg.setdefault(fid, [0, 0, 0, 0])
        a[0] += 1
        a[1] += dur
        a[2] += self_t
        a[3] += off
    return agg


def account_json(path, *extra):
    p = run([XRAYFDR, "account", "--format=json"] + list(extra) + [path])
    if p.returncode:
        raise RuntimeError(p.stderr)
    return json.loads(p.stdout)


def check_account(path, label):
    hdr, evs = events(path)
    freq = hdr["cycle_frequency"]
    want = per_function(calls(evs))
    got = account_json(path)
    problems = []
    has_sched = any(sched(e) for e in evs)
    for f in got["functions"]:
        w = want.get(f["id"])
        if not w:
            problems.append(f"function {f['id']} not in the events")
            continue
        if f["count"] != w[0]:
            problems.append(f"function {f['id']}: count {f['count']}, events say {w[0]}")
        for name, value in (("sum", w[1]), ("self", w[2])) + \
                ((("off_cpu", w[3]), ("on_cpu", w[1] - w[3])) if has_sched else ()):
            if abs(f[name] * freq - value) > max(1.0, value * 1e-8):
                problems.append(f"function {f['id']}: {name} {f[name] * freq:.0f} ticks, "
                                f"events say {value}")
    if has_sched != ("on_cpu" in (got["functions"] or [{}])[0]):
        problems.append("on/off-CPU columns do not follow the scheduler events")
    tap(not problems and got["functions"],
        f"account {label}: counts, sums, self{' and on/off-CPU' if has_sched else ''} "
        "time equal what the events say", "\n".join(problems[:10]))


def filtered(evs, selected, left_out):
    """The events -F (ids in @selected) and -N (ids in @left_out) keep, by
    replay.h's rules: each thread counts its open calls of matching
    functions; other events than calls' are kept."""
    sel, out, keep = {}, {}, []
    for e in evs:
        k = e["kind"]
        if k not in ("function-enter", "function-enter-arg", "function-exit",
                     "function-tail-exit"):
            keep.append(e)
            continue
        key, fid = (e["pid"], e["tid"]), e["func_id"]
        entry = k.startswith("function-enter")
        if fid in left_out:
            if entry:
                out[key] = out.get(key, 0) + 1
            elif out.get(key):
                out[key] -= 1
            continue
        if out.get(key):
            continue
        if entry:
            if fid in selected:
                sel[key] = sel.get(key, 0) + 1
            if not selected or sel.get(key):
                keep.append(e)
            continue
        if selected and not sel.get(key):
            continue
        if fid in selected:
            sel[key] -= 1
        keep.append(e)
    return keep


def check_filters(path, label):
    """account -F/-N count what the calls the filters keep say."""
    hdr, evs = events(path)
    freq = hdr["cycle_frequency"]
    busiest = sorted(per_function(calls(evs)).items(), key=lambda kv: -kv[1][0])
    a, b = busiest[0][0], busiest[1][0]
    for sel, out in (({a}, set()), (set(), {b}), ({a}, {b})):
        args = [x for fid in sel for x in ("-F", f"#{fid}")] + \
            [x for fid in out for x in ("-N", f"#{fid}")]
        want = per_function(calls(filtered(evs, sel, out)))
        got = account_json(path, *args)
        problems = [f"{len(got['functions'])} functions, the filtered events have {len(want)}"] \
            if len(got["functions"]) != len(want) else []
        for f in got["functions"]:
            w = want.get(f["id"], [0, 0])
            if f["count"] != w[0] or abs(f["sum"] * freq - w[1]) > max(1.0, w[1] * 1e-8):
                problems.append(f"function {f['id']}: {f['count']} calls, {f['sum'] * freq:.0f}"
                                f" ticks; the filtered events say {w[0]}, {w[1]}")
        tap(not problems and want and len(want) < len(busiest) + (not out),
            f"account {' '.join(args)} {label}: the calls the filters keep",
            "\n".join(problems[:10]))
    # convert keeps the same events: its FDR log accounts as the filters do
    cut = path + ".filtered.xray"
    c = run([XRAYFDR, "convert", "-q", "-f", "fdr", "-F", f"#{a}", "-N", f"#{b}", "-o", cut, path])
    direct = run([XRAYFDR, "account", "-q", "--format=json", "-F", f"#{a}", "-N", f"#{b}", path])
    again = run([XRAYFDR, "account", "-q", "--format=json", cut])
    tap(c.returncode == 0 and direct.returncode == 0 and direct.stdout == again.stdout and
        f'"id": {b},' not in again.stdout and f'"id":{b},' not in again.stdout,
        f"convert -F #{a} -N #{b} {label}: the log keeps what account -F/-N counts",
        c.stderr + direct.stderr + again.stderr)
    tid = min(e["tid"] for e in evs)
    te = run([XRAYFDR, "convert", "-q", "-f", "trace_event", "--tid", str(tid), path])
    tids = {e["tid"] for e in json.loads(te.stdout)["traceEvents"]} if te.returncode == 0 else None
    tap(tids == {tid}, f"convert -f trace_event --tid {tid} {label}: that thread alone",
        f"{tids} {te.stderr}")
    # stack and graph read through the same driver
    folded = run([XRAYFDR, "stack", "-q", "-f", "folded", "-N", f"#{b}", path])
    frames = {f for line in folded.stdout.splitlines() for f in line.rsplit(" ", 1)[0].split(";")}
    graph = run([XRAYFDR, "graph", "-q", "-F", f"#{a}", path])
    tap(folded.returncode == 0 and frames and f"#{b}" not in frames and
        graph.returncode == 0 and f"#{a}" in graph.stdout,
        f"stack -N #{b}, graph -F #{a} {label}: the filters apply", folded.stderr + graph.stderr)


def check_jobs(path, label, tmp):
    """account, stack and graph --jobs: workers that share the log's threads out
    write what one reader writes, and where they cannot (a damaged log,
    options that follow the whole log), one reader does, saying the same."""
    env = dict(os.environ, XRAYFDR_DEBUG="jobs")
    cut = os.path.join(tmp, label + ".cut.xray")
    with open(path, "rb") as f:
        data = f.read()
    with open(cut, "wb") as f:
        f.write(data[:len(data) * 2 // 3 + 5])
    workers, again = "read by workers", "read again by one reader"
    tid = str(next(e["tid"] for e in events(path)[1] if e.get("tid")))
    for cmd, log, args, way in (
            ("account", path, [], workers),
            ("account", path, ["-s", "sum", "-r", "dsc", "-f", "csv"], workers),
            ("account", path, ["-f", "json", "--min-duration", "300ns"], workers),
            # the durations through the temporary file
            ("account", path, ["--sort-memory", "64K"], workers),
            ("account", cut, [], again),
            # --keep-going: workers on a valid log, one reader on a damaged one
            ("account", path, ["-k"], workers),
            ("account", cut, ["-k"], again),
            ("account", path, ["--per-thread"], None),
            ("account", path, ["--strict", "-k"], None),
            ("stack", path, [], workers),
            ("stack", path, ["-f", "folded"], workers),
            ("stack", path, ["--all-stacks", "--aggregation-type", "count"], workers),
            ("stack", path, ["--aggregate-threads"], workers),
            ("stack", path, ["--per-thread-stacks", "--min-duration", "300ns"], workers),
            ("stack", cut, ["-f", "folded"], again),
            ("stack", path, ["-k"], workers),
            ("stack", cut, ["-k", "-f", "folded"], again),
            ("stack", path, ["--strict"], None),
            ("stack", path, ["-N", "#1"], None),
            ("graph", path, [], workers),
            ("graph", path, ["-e", "count", "-v", "med", "-b", "99p"], workers),
            ("graph", path, ["--sort-memory", "64K", "-e", "90p"], workers),
            ("graph", cut, [], again),
            ("graph", path, ["-k"], workers),
            ("graph", path, ["--min-duration", "300ns"], None),
            ("graph", path, ["--tid", tid], None)):
        one = run([XRAYFDR, cmd, "-j1"] + args + [log])
        many = [run([XRAYFDR, cmd, f"-j{j}"] + args + [log], env=env) for j in (2, 3)]
        said = [re.findall(rf"{cmd}: .*: ({workers}|{again})\n", m.stderr) for m in many]
        same = all(m.returncode == one.returncode and m.stdout == one.stdout and
                   re.sub(rf"xrayfdr {cmd}: .*: ({workers}|{again})\n", "", m.stderr) ==
                   one.stderr for m in many)
        tap(same and (one.stdout or log == cut) and said == [[way] if way else []] * 2,
            f"{cmd} {' '.join(args)} {label}{' (cut)' if log == cut else ''}: -j2 and -j3 "
            f"write what -j1 does ({way or 'one reader: the options follow the whole log'})",
            f"said {said}; exit {one.returncode} {[m.returncode for m in many]}\n"
            f"{one.stderr}{many[0].stderr}")


def check_jobs_ties(tmp):
    """--jobs on a log whose threads make the same calls at the same
    times: which thread saw a function first is decided as one reader
    decides it (the first in the log), not by the workers' order."""
    head = ("---\nheader:\n  version: 5\n  type: 1\n  constant-tsc: true\n"
            "  nonstop-tsc: true\n  cycle-frequency: 1000000000\nrecords:\n")

    def rec(fid, kind, tsc, tid):
        return (f"  - {{ type: 0, func-id: {fid}, function: '{fid}', cpu: 0, thread: {tid}, "
                f"process: 6, kind: {kind}, tsc: {tsc}, data: '' }}\n")
    recs = []
    for i, tid in enumerate((5, 2, 7, 4, 3)):
        recs += [rec(9, "function-enter", 100, tid), rec(10, "function-enter", 110, tid),
                 rec(10, "function-exit", 120, tid), rec(20 + i, "function-enter", 120, tid),
                 rec(20 + i, "function-exit", 125, tid), rec(9, "function-exit", 130, tid)]
    yaml, log = os.path.join(tmp, "ties.yaml"), os.path.join(tmp, "ties.xray")
    with open(yaml, "w") as f:
        f.write(head + "".join(recs) + "...\n")
    p = run([XRAYFDR, "convert", "-q", "-f", "fdr", "--no-sort", "-o", log, yaml])
    if p.returncode:
        return tap(False, "a log of equal times on five threads", p.stderr)
    for cmd in (["account"], ["stack", "-f", "folded"], ["graph", "-e", "count"]):
        outs = [run([XRAYFDR, cmd[0], f"-j{j}"] + cmd[1:] + [log]) for j in (1, 2, 3)]
        tap(outs[0].stdout and all(o.stdout == outs[0].stdout and o.returncode == 0
                                   for o in outs),
            f"{' '.join(cmd)} -j2, -j3 of five threads' equal times: as -j1",
            "".join(o.stderr for o in outs))
    # a call of no time: llvm-xray's minimum forgets what came before it,
    # so its order counts, and graph's workers leave the log to one reader
    with open(yaml, "w") as f:
        f.write(head + "".join(recs) + rec(31, "function-enter", 140, 3) +
                rec(31, "function-exit", 140, 3) + rec(31, "function-enter", 150, 4) +
                rec(31, "function-exit", 155, 4) + "...\n")
    p = run([XRAYFDR, "convert", "-q", "-f", "fdr", "--no-sort", "-o", log, yaml])
    one = run([XRAYFDR, "graph", "-j1", "-e", "min", log])
    two = run([XRAYFDR, "graph", "-j2", "-e", "min", log],
              env=dict(os.environ, XRAYFDR_DEBUG="jobs"))
    tap(p.returncode == 0 and one.returncode == 0 and two.stdout == one.stdout and
        "read again by one reader" in two.stderr,
        "graph -j2 with a call of no time: read again by one reader, as -j1",
        p.stderr + one.stderr + two.stderr)


def check_jobs_large(tmp):
    """stack -j2 on a log of a few hundred thousand distinct stacks, whose
    workers' tries are copied together in pieces, their pages given back
    as they go; account and graph -j2 with their durations in a file."""
    path = os.path.join(tmp, "large.xray")
    p = run([XRAYFDR, "synth", "-o", path, "--size", "16M", "--threads", "4", "--seed", "5"])
    if p.returncode:
        return tap(False, "synth a 16M log", p.stderr)
    one = run([XRAYFDR, "stack", "-q", "-j1", "-f", "folded", path])
    two = run([XRAYFDR, "stack", "-q", "-j2", "-f", "folded", path],
              env=dict(os.environ, XRAYFDR_DEBUG="jobs"))
    lines = one.stdout.count("\n")
    tap(one.returncode == 0 and two.stdout == one.stdout and lines > 100000 and
        "read by workers" in two.stderr,
        f"stack -j2 -f folded, 16M log: {lines} stacks, as -j1 writes them",
        one.stderr + two.stderr)
    # a million durations in 1 MiB: the workers write dozens of arrays to
    # the file outside the store's lock, and two threads read it back
    for cmd, args in (("account", []), ("graph", ["-e", "90p", "-v", "99p"])):
        one = run([XRAYFDR, cmd, "-q", "-j1", "--sort-memory=1M"] + args + [path])
        two = run([XRAYFDR, cmd, "-q", "-j2", "--sort-memory=1M"] + args + [path],
                  env=dict(os.environ, XRAYFDR_DEBUG="jobs"))
        tap(one.returncode == 0 and two.stdout == one.stdout and one.stdout and
            "read by workers" in two.stderr,
            f"{cmd} -j2 --sort-memory=1M, 16M log: as -j1 writes it",
            one.stderr + two.stderr)


def check_min_duration(path, label):
    """--min-duration: every command shows the calls that lasted long
    enough; a call left out keeps its time in its caller's self time."""
    hdr, evs = events(path)
    freq = hdr["cycle_frequency"]
    cs = calls(evs)
    durs = sorted(c[2] for c in cs)
    limit = durs[len(durs) * 3 // 4] * 10**9 // freq + 1  # nanoseconds
    kept = [c for c in cs if c[2] * 10**9 >= limit * freq]
    want = per_function(kept)
    arg = f"--min-duration={limit}ns"
    got = account_json(path, arg)
    problems = [f"{len(got['functions'])} functions, the long calls are of {len(want)}"] \
        if len(got["functions"]) != len(want) else []
    for f in got["functions"]:
        w = want.get(f["id"], [0, 0, 0])
        if f["count"] != w[0] or any(abs(f[k] * freq - v) > max(1.0, v * 1e-8)
                                     for k, v in (("sum", w[1]), ("self", w[2]))):
            problems.append(f"function {f['id']}: {f['count']} calls, sum {f['sum'] * freq:.0f}, "
                            f"self {f['self'] * freq:.0f} ticks; the long calls say {w[:3]}")
    tap(not problems and 0 < len(kept) < len(cs),
        f"account {arg} {label}: {len(kept)} of {len(cs)} calls, self times with the short "
        "callees in them", "\n".join(problems[:10]))
    te = run([XRAYFDR, "convert", "-q", "-f", "trace_event", arg, path])
    counts = {}
    for e in json.loads(te.stdout)["traceEvents"] if te.returncode == 0 else []:
        if e.get("cat") == "function" and not e["args"].get("open_at_end"):
            counts[e["args"]["func_id"]] = counts.get(e["args"]["func_id"], 0) + 1
    tap(counts == {fid: w[0] for fid, w in want.items()},
        f"convert -f trace_event {arg} {label}: an event per long call",
        f"{sorted(counts.items())[:10]}\n{te.stderr}")
    folded = run([XRAYFDR, "stack", "-q", "-f", "folded", arg, path])
    selfs = {}
    for line in folded.stdout.splitlines():
        frames, v = line.rsplit(" ", 1)
        leaf = int(frames.split(";")[-1][1:])
        selfs[leaf] = selfs.get(leaf, 0) + int(v)
    tap(folded.returncode == 0 and selfs == {fid: w[2] for fid, w in want.items()},
        f"stack -f folded {arg} {label}: the long calls' self times",
        f"{sorted(selfs.items())[:10]}\n{folded.stderr}")
    graph = run([XRAYFDR, "graph", "-q", "-e", "count", arg, path])
    vertices = {int(m) for m in re.findall(r"^F(\d+) \[", graph.stdout, re.M)}
    edges = sum(int(m) for m in re.findall(r'-> F\d+ \[label="(\d+)"', graph.stdout))
    tap(graph.returncode == 0 and vertices == set(want) and edges == len(kept),
        f"graph {arg} {label}: the functions and calls of the long calls",
        f"vertices {sorted(vertices)}, want {sorted(want)}; {edges} calls on edges, "
        f"want {len(kept)}\n{graph.stderr}")


def check_trace_event(path, label):
    hdr, evs = events(path)
    freq = hdr["cycle_frequency"]
    p = run([XRAYFDR, "convert", "-f", "trace_event", path])
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        return tap(False, f"trace_event {label}: valid JSON", str(e))
    te = doc["traceEvents"]
    want = per_function(calls(evs))
    got = {}
    for e in te:
        if e.get("cat") == "function" and not e["args"].get("open_at_end"):
            g = got.setdefault(e["args"]["func_id"], [0, 0.0])
            g[0] += 1
            g[1] += e["dur"]
    problems = []
    for fid, w in want.items():
        g = got.get(fid, [0, 0])
        if g[0] != w[0] or abs(g[1] - w[1] * 1e6 / freq) > 0.002 * g[0] + 0.01:
            problems.append(f"function {fid}: {g[0]} events, {g[1]:.3f} us; "
                            f"the trace has {w[0]} calls, {w[1] * 1e6 / freq:.3f} us")
    offs = sum(e["dur"] for e in te if e.get("name") == "off-CPU")
    off_ticks, since = 0, {}
    for e in evs:
        s = sched(e)
        if s and s[0] == 1:
            since.setdefault((e["pid"], e["tid"]), e["tsc"])
        elif s and s[0] == 2 and (e["pid"], e["tid"]) in since:
            off_ticks += e["tsc"] - since.pop((e["pid"], e["tid"]))
    if abs(offs - off_ticks * 1e6 / freq) > 0.01 * max(1, len(te)):
        problems.append(f"off-CPU slices {offs:.3f} us, scheduler events {off_ticks * 1e6 / freq:.3f} us")
    ok_meta = all(e["ph"] in ("X", "M", "i") for e in te)
    tap(p.returncode == 0 and not problems and ok_meta and want,
        f"trace_event {label}: a complete event per call, durations and off-CPU "
        "slices add up", "\n".join(problems[:10]) + p.stderr)
    said = re.search(r"convert: (\d+) trace events written to standard output", p.stderr)
    tap(said and int(said.group(1)) == len(te),
        f"trace_event {label}: convert says how many events it wrote ({len(te)})", p.stderr)


def check_tracelog(path, label, tmp):
    hdr, evs = events(path)
    tl = os.path.join(tmp, "out.tl")
    p = run([XRAYFDR, "convert", "-f", "tracelog", "-o", tl, path])
    if p.returncode:
        return tap(False, f"tracelog {label}", p.stderr)
    with open(tl) as f:
        text = f.read().splitlines()
    want = per_function(calls(evs))
    back = account_json(tl)
    got = {f["id"]: f["count"] for f in back["functions"]}
    problems = [f"function {fid}: {got.get(fid)} calls read back, {w[0]} in the trace"
                for fid, w in want.items() if got.get(fid) != w[0]]
    if not text[0].startswith("prf stm ") or not any(l.startswith("fun nam ") for l in text):
        problems.append("no prf stm / fun nam records")
    # thr cpu: on-CPU microseconds between switches, per thread
    freq = hdr["cycle_frequency"]
    iid_tid = {}
    for l in text:
        if l.startswith("thr aos "):
            _, _, iid, tid = l.split()
            iid_tid[int(iid, 16)] = int(tid)
    cpu = {}
    for l in text:
        if l.startswith("thr cpu "):
            _, _, iid, ms, us = l.split()
            cpu[iid_tid[int(iid, 16)]] = cpu.get(iid_tid[int(iid, 16)], 0) + int(us)
    on, first, last, since, running = {}, {}, {}, {}, {}
    for e in evs:
        t = e["tid"]
        first.setdefault(t, e["tsc"])
        last[t] = e["tsc"]
        running.setdefault(t, True)
        since.setdefault(t, e["tsc"])
        s = sched(e)
        if s and s[0] == 1 and running[t]:
            on[t] = on.get(t, 0) + e["tsc"] - since[t]
            running[t] = False
        elif s and s[0] == 2 and not running[t]:
            since[t] = e["tsc"]
            running[t] = True
    has_sched = any(sched(e) for e in evs)
    if has_sched:
        for t in first:
            total = on.get(t, 0) + (last[t] - since[t] if running[t] else 0)
            want_us = total * 1e6 / freq
            n = sum(1 for l in text if l.startswith("thr cpu "))
            if abs(cpu.get(t, 0) - want_us) > n + 1:
                problems.append(f"thread {t}: thr cpu adds up to {cpu.get(t, 0)} us, "
                                f"scheduler events say {want_us:.0f} us")
    tap(not problems and want,
        f"tracelog {label}: read back with every call{', thr cpu equal to on-CPU time' if has_sched else ''}",
        "\n".join(problems[:10]))


def check_fdr(path, label, tmp, llvm_xray):
    for v in ("5", "1"):
        out = os.path.join(tmp, f"re{v}.xray")
        p = run([XRAYFDR, "convert", "-f", "fdr", "--fdr-version", v, "-o", out, path])
        if p.returncode:
            tap(False, f"fdr v{v} {label}", p.stderr)
            continue
        # version 1 has no process ids, and custom events no CPU
        def key(e):
            return (e["tid"], e["tsc"], e["kind"], e["func_id"], tuple(e.get("args", ())),
                    e.get("data"), e.get("event_type"),
                    None if v == "1" else (e["pid"], e["cpu"]))
        a = sorted(key(e) for e in events(path)[1])
        b = sorted(key(e) for e in events(out)[1])
        ok = a == b and len(a) > 10
        diag = "" if ok else f"{len(a)} vs {len(b)} events; first difference " + \
            str(next(((x, y) for x, y in zip(a, b) if x != y), None))
        if llvm_xray:
            vp = run([llvm_xray, "fdr-dump", "-verify", out])
            ok = ok and vp.returncode == 0
            diag += vp.stderr
        tap(ok, f"convert -f fdr --fdr-version {v}, {label}: the same records, "
            "accepted by llvm-xray fdr-dump -verify", diag)


def check_yaml_roundtrip(path, label, tmp):
    y1 = os.path.join(tmp, "a.yaml")
    p = run([XRAYFDR, "convert", "-f", "yaml", "-o", y1, path])
    q = run([XRAYFDR, "convert", "-f", "yaml", y1])
    with open(y1, errors="replace") as f:
        first = f.read()
    tap(p.returncode == 0 and q.returncode == 0 and q.stdout == first,
        f"yaml {label}: our YAML read back and written again is the same bytes",
        p.stderr + q.stderr)


def check_folded(path, label):
    hdr, evs = events(path)
    p = run([XRAYFDR, "stack", "-f", "folded", path])
    want = per_function(calls(evs))
    got = {}
    for l in p.stdout.splitlines():
        frames, v = l.rsplit(" ", 1)
        leaf = frames.split(";")[-1]
        got[int(leaf[1:])] = got.get(int(leaf[1:]), 0) + int(v)
    # folded also closes calls open at the end: compare with no open calls
    problems = [f"function {fid}: self {got.get(fid, 0)} in folded stacks, {w[2]} in the trace"
                for fid, w in want.items() if got.get(fid, 0) != w[2]]
    tap(p.returncode == 0 and not problems and want,
        f"folded {label}: each function's self time adds up to the trace's",
        "\n".join(problems[:10]) + p.stderr)


def check_svg(path, tmp):
    svg = os.path.join(tmp, "flame.svg")
    p = run([XRAYFDR, "stack", "-f", "svg", "--title", "golden <flame> & co", "-o", svg, path])
    try:
        root = ET.parse(svg).getroot()
    except (ET.ParseError, OSError) as e:
        return tap(False, "svg: well-formed XML", f"{e}\n{p.stderr}")
    ns = "{http://www.w3.org/2000/svg}"
    rects = root.findall(f".//{ns}g/{ns}rect")
    titles = [t.text for t in root.findall(f".//{ns}g/{ns}title")]
    widths = {}
    for g in root.findall(f".//{ns}g"):
        r, t = g.find(f"{ns}rect"), g.find(f"{ns}title")
        widths[t.text.split(" (")[0]] = widths.get(t.text.split(" (")[0], 0) + float(r.get("width"))
    threads = sum(w for n, w in widths.items() if n.startswith("thread "))
    ok = (p.returncode == 0 and len(rects) > 20 and titles[0].startswith("all (") and
          abs(threads - widths["all"]) < 0.5 and
          "golden &lt;flame&gt; &amp; co" in open(svg).read())
    tap(ok, f"svg: well-formed, {len(rects)} frames, the threads' widths add up to the root's",
        f"{p.stderr} threads {threads} all {widths.get('all')}")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        return skip("svg opened in headless Chromium", "chromium is not installed (make deps)")
    png = os.path.join(tmp, "flame.png")
    prof = os.path.join(tmp, "chromium-profile")
    c = run(["timeout", "120", chromium, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-quic", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={prof}",
             f"--screenshot={png}", "--window-size=1200,400", f"file://{svg}"])
    data = open(png, "rb").read() if os.path.exists(png) else b""
    # a blank page compresses to a few KiB; a drawn flame graph does not
    tap(c.returncode == 0 and data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 8192,
        f"svg opened in headless Chromium and screenshotted ({len(data)} bytes of PNG)",
        c.stderr[-800:])


def check_memory(tmp):
    """Memory does not grow with the trace: the same commands on a trace
    eight times larger, with the same functions and call stacks, use about
    the same peak RSS (the sort is held to 8 MiB and spills the rest to
    $TMPDIR).  The stack trie grows with the number of distinct stacks, as
    its output does, so the traces keep that number bounded.  The RSS
    includes what this script had when it forked: compare, do not add."""
    sizes = {}
    for size in ("8M", "64M"):
        path = os.path.join(tmp, f"mem-{size}.xray")
        p = run([XRAYFDR, "synth", "-o", path, "--size", size, "--threads", "4",
                 "--events", "--seed", "9", "--depth", "4", "--functions", "6"])
        if p.returncode:
            return tap(False, "synth for the memory check", p.stderr)
        sizes[size] = path
    for name, cmd in (("account", ["account", "-q", "--sort-memory=8M"]),
                      ("graph", ["graph", "-q", "--sort-memory=8M"]),
                      ("stack -f folded", ["stack", "-q", "-f", "folded"]),
                      ("convert -f yaml", ["convert", "-q", "-f", "yaml", "--sort-memory=8M"]),
                      ("convert -f trace_event", ["convert", "-q", "-f", "trace_event"])):
        small, e1 = peak_rss([XRAYFDR] + cmd + [sizes["8M"]])
        big, e2 = peak_rss([XRAYFDR] + cmd + [sizes["64M"]])
        tap(small and big and big < small + (6 << 20),
            f"{name}: peak memory {small and small >> 20} MiB on an 8 MiB trace, "
            f"{big and big >> 20} MiB on a 64 MiB one",
            e1 + e2)


def main():
    llvm_xray = shutil.which("llvm-xray") or shutil.which("llvm-xray-14")
    with tempfile.TemporaryDirectory(prefix="xrayfdr-outputs-") as tmp:
        logs = {}
        for name, args in (("sched", ["--threads", "3", "--sched", "--calls", "2000", "--args"]),
                           ("events", ["--threads", "4", "--events", "--calls", "1500",
                                       "--wrap-every", "300"]),
                           ("v1", ["-V", "1", "--threads", "2", "--calls", "800"])):
            path = os.path.join(tmp, name + ".xray")
            p = run([XRAYFDR, "synth", "-o", path, "--seed", "11"] + args)
            if p.returncode:
                tap(False, f"synth {name}", p.stderr)
                continue
            logs[name] = path
        for name, path in logs.items():
            for check in (check_account, check_jobs, check_filters, check_min_duration,
                          check_trace_event,
                          check_tracelog,
                          check_folded, check_yaml_roundtrip):
                try:
                    if check in (check_tracelog, check_yaml_roundtrip, check_jobs):
                        check(path, name, tmp)
                    else:
                        check(path, name)
                except (RuntimeError, ValueError, KeyError) as e:
                    tap(False, f"{check.__name__} {name}", str(e))
        check_fdr(logs["sched"], "sched", tmp, llvm_xray)
        check_svg(logs["sched"], tmp)
        check_jobs_large(tmp)
        check_jobs_ties(tmp)
        check_memory(tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
