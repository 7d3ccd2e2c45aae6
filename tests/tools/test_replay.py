#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""xrayfdr replay, checked against a model built from the raw events.

The model (`xrayfdr dump --events --json`, replayed here in Python) says
which calls each thread made, nested how deep, for how long and with how
much self time; the suite parses replay's lines back into calls and
compares, call by call, with and without each filter.  Hand-written YAML
logs cover what synthetic logs do not: a window that begins in the middle
of calls, an exception that unwinds frames, calls still open at the end.

Prints TAP.
"""
import json
import os
import pty
import re
import select
import shutil
import sys
import tempfile

from taplib import XRAYFDR, finish, run, skip, tap

FUNC = re.compile(r"^(?P<name>[^ (]+)\((?P<args>[^)]*)\)(?P<kind>;| \{)(?P<note>.*)$")
CLOSE = re.compile(r"^\} /\* (?P<name>\S+) \*/(?P<note>.*)$")
UNITS = {"us": 1e3, "ms": 1e6, " s": 1e9}


def events(path):
    p = run([XRAYFDR, "dump", "--events", "--json", path])
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    return lines[0]["header"], lines[1:]


def model(evs, sel=None, out=None, depth=0, tids=None, lo=None, hi=None):
    """Calls per thread in the order they end, as replay should show them:
    (name, level, dur, self, note) for the shown ones; filters as replay's
    --filter/--notrace sets of ids, --depth, --tid and a TSC range."""
    stacks, shown, last = {}, {}, {}
    result = {}

    def pop(key, tsc, note):
        fid, t0, child, flags, level = stacks[key].pop()
        dur = abs(tsc - t0)
        if stacks[key]:
            stacks[key][-1][2] += dur
        if flags & 4:
            result.setdefault(key[1], []).append(("#%d" % fid, level, dur, max(dur - child, 0), note))

    for e in evs:
        if tids and e["tid"] not in tids:
            continue
        if lo is not None and not lo <= e["tsc"] <= hi:
            continue
        key = (e["pid"], e["tid"])
        st = stacks.setdefault(key, [])
        last[key] = e["tsc"]
        k = e["kind"]
        if k in ("function-enter", "function-enter-arg"):
            fid = e["func_id"]
            pf = st[-1][3] if st else (0 if sel else 1)
            level = (st[-1][4] + (1 if pf & 4 else 0)) if st else 0
            flags = pf & 3
            if sel and fid in sel:
                flags |= 1
            if out and fid in out:
                flags |= 2
            if flags & 3 == 1 and (not depth or level < depth):
                flags |= 4
            st.append([fid, e["tsc"], 0, flags, level])
        elif k in ("function-exit", "function-tail-exit"):
            ids = [f[0] for f in st]
            if e["func_id"] not in ids:
                continue
            first = True
            while st:
                fid = st[-1][0]
                pop(key, e["tsc"], "" if fid == e["func_id"] else " (unwound)")
                first = False
                if fid == e["func_id"]:
                    break
    for key, st in stacks.items():
        while st:
            pop(key, last[key], " (still running)")
    return result


def parse(text):
    """Replay's lines back into calls per thread (and the other lines)."""
    calls, other, problems = {}, [], []
    for n, line in enumerate(text.splitlines()):
        if line.startswith("#"):
            continue
        m = re.match(r"^(.{16}) (.{13}) (.{13}) \[ *(\d+)\] \| ( *)(.*)$", line)
        if not m:
            problems.append(f"line {n + 1} not in replay's layout: {line!r}")
            continue
        _, dur, self_t, tid, indent, text_ = m.groups()
        tid, level = int(tid), len(indent) // 2

        def ns(field):
            field = field.strip()
            return float(field[:-3]) * UNITS[field[-2:].rjust(2)] if field else None

        f, c = FUNC.match(text_), CLOSE.match(text_)
        if c and "entered before" in c["note"]:
            other.append((tid, level, text_))
        elif c:
            calls.setdefault(tid, []).append((c["name"], level, ns(dur), ns(self_t), c["note"]))
        elif f and f["kind"] == ";":
            calls.setdefault(tid, []).append((f["name"], level, ns(dur), ns(self_t), f["note"]))
        elif not f:
            other.append((tid, level, text_))
    return calls, other, problems


def compare(got, want, freq, label):
    problems = []
    for tid in sorted(set(got) | set(want)):
        g, w = got.get(tid, []), want.get(tid, [])
        if len(g) != len(w):
            problems.append(f"thread {tid}: {len(g)} calls shown, the events say {len(w)}")
        for i, (a, b) in enumerate(zip(g, w)):
            bdur, bself = b[2] * 1e9 / freq, b[3] * 1e9 / freq
            # printed with 3 decimals of its unit
            tol = lambda v: 0.5 * (1 if v < 1e6 else 1e3 if v < 1e9 else 1e6) + 1e-6
            if a[0] != b[0] or a[1] != b[1] or a[4] != b[4] or \
                    abs(a[2] - bdur) > tol(bdur) or abs(a[3] - bself) > tol(bself):
                problems.append(f"thread {tid} call {i}: shown {a}, events say "
                                f"{(b[0], b[1], round(bdur, 3), round(bself, 3), b[4])}")
                break
    tap(not problems and any(want.values()), label, "\n".join(problems[:10]))


def replay(path, *args):
    return run([XRAYFDR, "replay", "--no-pager", "--color=never"] + list(args) + [path])


def check_synth(tmp):
    path = os.path.join(tmp, "s.xray")
    p = run([XRAYFDR, "synth", "-o", path, "-t", "3", "-c", "400", "-a", "-E", "--sched"])
    if p.returncode:
        tap(False, "synth a log", p.stderr)
        return
    hdr, evs = events(path)
    freq = hdr["cycle_frequency"]
    cases = [
        ("every call, nested and timed", [], {}),
        ("-F '#12': only #12 and its callees", ["-F", "#12"], {"sel": {12}}),
        ("-F '/^#1[23]$/' -N '#4': regex select, glob notrace", ["-F", "/^#1[23]$/", "-N", "#4"],
         {"sel": {12, 13}, "out": {4}}),
        ("-N '#13': #13 and its callees hidden", ["-N", "#13"], {"out": {13}}),
        ("--depth 2", ["--depth", "2"], {"depth": 2}),
        ("--depth 1 -F '#8'", ["--depth", "1", "-F", "#8"], {"depth": 1, "sel": {8}}),
    ]
    tid0 = evs[0]["tid"]
    cases.append((f"--tid {tid0}", ["--tid", str(tid0)], {"tids": {tid0}}))
    t0 = evs[0]["tsc"]
    lo, hi = t0 + int(2e-6 * freq), t0 + int(9e-6 * freq)
    cases.append(("--time-range 2us,9us: windows cut mid-call",
                  ["--time-range", "2us,9us"], {"lo": lo, "hi": hi}))
    cases.append((f"--time-range {lo},{hi} in TSC values", ["--time-range", f"{lo},{hi}"],
                  {"lo": lo, "hi": hi}))
    for label, args, kw in cases:
        p = replay(path, *args)
        got, _, problems = parse(p.stdout)
        if p.returncode or problems:
            tap(False, f"replay {label}", p.stderr + "\n".join(problems[:5]))
            continue
        compare(got, model(evs, **kw), freq, f"replay {label}")

    # the same driver under account: --tid and --time-range count what
    # replay shows (less the calls still running, which account leaves out)
    for label, args, kw in ((f"--tid {tid0}", ["--tid", str(tid0)], {"tids": {tid0}}),
                            ("--time-range 2us,9us", ["--time-range", "2us,9us"],
                             {"lo": lo, "hi": hi})):
        p = run([XRAYFDR, "account", "--format=json"] + args + [path])
        got = {f["function"]: f["count"] for f in json.loads(p.stdout or '{"functions":[]}')["functions"]}
        want = {}
        for cs in model(evs, **kw).values():
            for c in cs:
                if "still running" not in c[4]:
                    want[c[0]] = want.get(c[0], 0) + 1
        tap(p.returncode == 0 and got == want and want,
            f"account {label}: the calls replay shows, counted", f"{got}\n{want}\n{p.stderr}")

    # account --per-thread: each thread's calls, counted per function
    p = run([XRAYFDR, "account", "--per-thread", "--format=json", path])
    got = {(f["tid"], f["function"]): f["count"]
           for f in json.loads(p.stdout or '{"functions":[]}')["functions"]}
    want = {}
    for tid, cs in model(evs).items():
        for c in cs:
            if "still running" not in c[4]:
                want[(tid, c[0])] = want.get((tid, c[0]), 0) + 1
    tap(p.returncode == 0 and got == want and len({t for t, _ in want}) == 3,
        "account --per-thread: each thread's calls of each function", p.stderr)
    p = run([XRAYFDR, "account", "--per-thread", "--top", "2", path])
    heads = re.findall(r"^Thread thread (\d+):$", p.stdout, re.M)
    rows = [l for l in p.stdout.splitlines() if re.match(r"^ +\d+ +\d+ \[", l)]
    tap(p.returncode == 0 and len(heads) == 3 and len(rows) == 6,
        "account --per-thread --top 2: a table per thread, two rows each", p.stdout[:600])

    # --min-duration: the calls at least that long, nothing else
    p = replay(path, "--min-duration", "150ns")
    got, _, _ = parse(p.stdout)
    want = {t: [c for c in cs if c[2] * 1e9 / freq >= 150] for t, cs in model(evs).items()}
    compare(got, want, freq, "replay --min-duration 150ns: the calls that long and no others")

    # events where they happened: every typed/custom/sched event once
    p = replay(path)
    _, other, _ = parse(p.stdout)
    n_ev = sum(1 for e in evs if e["kind"] in ("custom-event", "typed-event"))
    tap(p.returncode == 0 and len(other) == n_ev and n_ev > 0,
        f"replay shows the {n_ev} custom, typed and scheduler events in place",
        f"{len(other)} event lines")
    args_entries = sum(1 for e in evs if e["kind"] == "function-enter-arg")
    shown_args = sum(1 for l in p.stdout.splitlines() if re.search(r"\(0x[0-9a-f]+\) \{$", l))
    tap(args_entries > 0 and shown_args == args_entries,
        f"replay shows the arguments of the {args_entries} entries that logged them",
        f"{shown_args} shown")


YAML_HEAD = """---
header:
  version: 1
  type: 1
  constant-tsc: true
  nonstop-tsc: true
  cycle-frequency: 1000000000
records:
"""


def yaml_log(tmp, name, records):
    """A YAML log of (kind, func, tsc) on thread 7."""
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(YAML_HEAD)
        for kind, fid, tsc in records:
            f.write(f"  - {{ type: 0, func-id: {fid}, function: '{fid}', cpu: 0, thread: 7, "
                    f"process: 1, kind: {kind}, tsc: {tsc}, data: '' }}\n")
        f.write("...\n")
    return path


def check_windows(tmp):
    ent, ex = "function-enter", "function-exit"
    # a window that begins inside 1 -> 2, an exception thrown out of 4
    # through 5 (caught in 3), and 6 still open at the end
    path = yaml_log(tmp, "w.yaml", [
        (ex, 2, 100), (ent, 3, 200), (ent, 4, 300), (ent, 5, 400), (ex, 3, 1400),
        (ex, 1, 2000), (ent, 6, 2100), (ent, 7, 2200), (ex, 7, 2300)])
    p = replay(path)
    lines = [l.split("| ", 1)[1] for l in p.stdout.splitlines() if "| " in l]
    want = ["} /* #2 */ (entered before the trace)",
            "#3() {", "  #4() {", "    #5(); (unwound)", "  } /* #4 */ (unwound)", "} /* #3 */",
            "} /* #1 */ (entered before the trace)",
            "#6() {", "  #7();", "} /* #6 */ (still running)"]
    tap(p.returncode == 0 and lines == want,
        "replay: a window that begins mid-call, an exception, a call open at the end",
        "\n".join(lines) + "\n" + p.stderr)
    tap("2 calls entered before the trace, 2 calls unwound, 1 calls still running" in p.stderr,
        "replay: says how many calls began before the trace, were unwound, still run",
        p.stderr)
    got = {}
    for l in p.stdout.splitlines():
        if "/* #4 */" in l:
            got = l
    # 4 ran from 300 to 1400 (1.1 us) with 5 inside from 400 (1.0 us)
    tap(re.search(r"1\.100 us +0\.100 us", got or ""),
        "replay: an unwound call's duration and self time end at the exit that unwound it",
        got or p.stdout)


def check_errors(tmp):
    path = yaml_log(tmp, "e.yaml", [("function-enter", 1, 1), ("function-exit", 1, 2)])
    for args, why in ((["--depth", "0"], "--depth"), (["--time-range", "5"], "--time-range"),
                      (["--time-range", "2us,1us"], "--time-range"),
                      (["--time-range", "1us,200"], "--time-range"),
                      (["--tid", "x"], "--tid"), (["--min-duration", "fast"], "--min-duration"),
                      (["-F", "/a{1000}/"], "-F"),
                      # a "]" first in a bracket is a member: the "++" is outside
                      (["-F", "/[^][^]b++/"], "repeats a repetition"),
                      (["--color=sometimes"], "--color")):
        p = replay(path, *args)
        tap(p.returncode == 2 and why in p.stderr,
            f"replay {' '.join(args)}: refused with exit 2, naming {why}", p.stderr)
    bad = os.path.join(tmp, "bad.xray")
    synth = os.path.join(tmp, "t.xray")
    run([XRAYFDR, "synth", "-o", synth, "-t", "1", "-c", "50"])
    data = open(synth, "rb").read()
    open(bad, "wb").write(data[:len(data) // 2 + 3])
    p = replay(bad)
    tap(p.returncode == 1 and "bad.xray" in p.stderr,
        "replay of a truncated log: exit 1, the file named", p.stderr)
    p = run([XRAYFDR, "replay", "--help"])
    tap(p.returncode == 0 and "--min-duration" in p.stdout and "--time-range" in p.stdout,
        "replay --help describes the options")


def check_pager(tmp):
    """On a terminal: through $PAGER, in colour."""
    path = os.path.join(tmp, "p.xray")
    run([XRAYFDR, "synth", "-o", path, "-t", "1", "-c", "20"])
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["PAGER"] = "sed s/^/PAGED:/"
        os.execv(XRAYFDR, [XRAYFDR, "replay", path])
    out = b""
    while True:
        r, _, _ = select.select([fd], [], [], 60)
        if not r:
            break
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    text = out.decode(errors="replace")
    lines = [l for l in text.splitlines() if l.strip()]
    tap(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and lines and
        all(l.startswith("PAGED:") for l in lines),
        "replay on a terminal pages through $PAGER", text[-500:])


PROGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runtime", "progs")


def check_thread_names(tmp):
    """Names the runtime recorded reach every output that shows threads."""
    name = "thread names in replay, stack, trace_event and the flame graph"
    cc = shutil.which("clang") or shutil.which("clang-14")
    if not cc:
        return skip(name, "clang is not installed (make deps)")
    prog, log = os.path.join(tmp, "names"), os.path.join(tmp, "names.xray")
    p = run([cc, "-O1", "-pthread", "-fxray-instrument", "-fxray-instruction-threshold=1",
             "-fnoxray-link-deps", "-I", PROGS, os.path.join(PROGS, "thread_names.c"),
             "-o", prog])
    if p.returncode:
        return tap(False, name, p.stderr[-500:])
    p = run([XRAYFDR, "record", "-o", log, prog, "100"])
    tids = dict(re.findall(r"^tid (\S+) (\d+)$", p.stdout, re.M))
    if p.returncode or len(tids) != 3:
        return tap(False, name, p.stderr[-500:] + p.stdout)
    want = {int(tids["alpha"]): ["alpha", "alpha-renamed"], int(tids["beta"]): ["beta"]}
    r = replay(log)
    shown = {}
    for tid, n in re.findall(r"\[ *(\d+)\] \| +/\* thread name: (\S+) \*/", r.stdout):
        shown.setdefault(int(tid), []).append(n)
    tap(all(shown.get(t) == n for t, n in want.items()),
        "replay shows each thread's names where they were recorded, renames in order",
        f"{shown}\n{r.stderr}")
    folded = run([XRAYFDR, "stack", "-f", "folded", log]).stdout
    tap(f"thread_{tids['alpha']} (alpha-renamed);" in folded and
        f"thread_{tids['beta']} (beta);" in folded,
        "stack -f folded names each thread by its last name", folded[:500])
    te = json.loads(run([XRAYFDR, "convert", "-f", "trace_event", log]).stdout)
    last = {}
    for e in te["traceEvents"]:
        if e.get("ph") == "M" and e["name"] == "thread_name":
            last[e["tid"]] = e["args"]["name"]
    tap(last.get(int(tids["alpha"])) == "alpha-renamed" and
        last.get(int(tids["beta"])) == "beta",
        "convert -f trace_event: each thread's last name metadata is its name", str(last))
    acc = run([XRAYFDR, "account", "--per-thread", log]).stdout
    tap(f"Thread alpha-renamed ({tids['alpha']}):" in acc and
        f"Thread beta ({tids['beta']}):" in acc,
        "account --per-thread heads each table with the thread's name", acc[:600])
    svg = run([XRAYFDR, "stack", "-f", "svg", log]).stdout
    tap(f"alpha-renamed ({tids['alpha']})" in svg and f"beta ({tids['beta']})" in svg,
        "the flame graph labels threads with their names", svg[:300])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        check_synth(tmp)
        check_windows(tmp)
        check_errors(tmp)
        check_pager(tmp)
        check_thread_names(tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
