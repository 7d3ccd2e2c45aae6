#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""`xrayfdr convert -f perfetto`: Perfetto's protobuf trace, checked by
decoding every packet with protoc against tests/tools/perfetto_subset.proto
(upstream's field numbers) and comparing what it says with our trace_event
JSON of the same input:

  - the file is a Trace: a sequence of length-delimited packets, each one
    decoded with no unknown field and no error;
  - incremental state as Perfetto wants it: each sequence starts with
    SEQ_INCREMENTAL_STATE_CLEARED, its track events need incremental state,
    every name_iid was interned on its sequence first; timestamps never go
    back on a sequence;
  - a thread track per thread (pid, tid, name) under its process's track,
    the default track of its sequence; a BOOTTIME clock snapshot;
  - slices: every BEGIN has its END on the same track, properly nested;
    in the order they end, the slices are trace_event's complete events
    one for one (name, thread, start and duration in ns against its
    microseconds), off-CPU slices included; instants for custom and typed
    events;
  - the file is several times smaller than the JSON;
  - exits that match nothing, a clock that goes back, calls open at the
    end; bad input and write errors give trace_event's messages and exit
    status; memory stays flat when the trace grows.

Inputs: synthetic logs (scheduler events, custom and typed events, FDR
version 1 without processes, many threads) and, where clang is installed,
a multi-threaded program recorded with `xrayfdr record`, named with -m.

Prints TAP.
"""
import ast
import json
import os
import re
import shutil
import sys
import tempfile

from taplib import BUILD, XRAYFDR, finish, peak_rss, run, skip, tap

HERE = os.path.dirname(os.path.abspath(__file__))
SUBSET = os.path.join(HERE, "perfetto_subset.proto")
PROTOC = shutil.which("protoc")
CLANG = shutil.which("clang") or shutil.which("clang-14")

BOOTTIME = 6


def framing(data):
    """Split a Trace into its packets by hand: (count, problem or '')."""
    i, n = 0, 0
    while i < len(data):
        if data[i] != 0x0A:  # field 1, length-delimited
            return n, f"byte {i}: tag 0x{data[i]:02x}, not Trace.packet"
        i += 1
        length, shift = 0, 0
        while True:
            if i >= len(data):
                return n, "cut in a length"
            b = data[i]
            i += 1
            length |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        if i + length > len(data):
            return n, f"packet {n} runs past the end"
        i += length
        n += 1
    return n, ""


def parse_text(text):
    """protoc's text format into nested dicts: each field a list."""
    root, stack = {}, []
    cur = root
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            cur = stack.pop()
        elif line.endswith("{"):
            child = {}
            cur.setdefault(line[:-1].strip(), []).append(child)
            stack.append(cur)
            cur = child
        else:
            key, value = line.split(":", 1)
            value = value.strip()
            if value.startswith('"'):
                value = ast.literal_eval("b" + value).decode("utf-8", "surrogateescape")
            elif value in ("true", "false"):
                value = value == "true"
            elif re.fullmatch(r"-?\d+", value):
                value = int(value)
            cur.setdefault(key, []).append(value)
    if stack:
        raise ValueError("unbalanced braces in protoc's output")
    return root


def one(msg, key, default=None):
    v = msg.get(key)
    return v[0] if v else default


def decode(path):
    """(packets, problem or '') after checking framing and protoc."""
    data = open(path, "rb").read()
    count, problem = framing(data)
    if problem:
        return None, problem
    with open(path, "rb") as f:
        p = run([PROTOC, f"--proto_path={HERE}", "--decode=perfetto.protos.Trace",
                 SUBSET], stdin=f)
    if p.returncode or p.stderr.strip():
        return None, f"protoc exited {p.returncode}: {p.stderr[:800]}"
    unknown = [l for l in p.stdout.splitlines() if re.match(r"^\s*\d+(:| \{)", l)]
    if unknown:
        return None, "unknown fields:\n" + "\n".join(unknown[:10])
    packets = parse_text(p.stdout).get("packet", [])
    if len(packets) != count:
        return None, f"{count} packets in the file, protoc decoded {len(packets)}"
    return packets, ""


class Model:
    """What the packets say, checked for Perfetto's rules on the way."""

    def __init__(self, packets, late_begins=False):
        """@late_begins: --min-duration writes a call's begin when the
        call is known to be long enough, with its own, earlier time."""
        self.problems = []
        self.slices = []  # (tid, name, start_ns, dur_ns, args) in order of END
        self.instants = []  # (tid, name, ts, annotations)
        self.threads = {}  # uuid -> (pid, tid, name, parent)
        self.processes = {}  # uuid -> pid
        self.clock = None
        self.first_ts = None
        seqs = {}
        for i, pk in enumerate(packets):
            seq = one(pk, "trusted_packet_sequence_id")
            if not seq:
                self.problems.append(f"packet {i}: no trusted_packet_sequence_id")
                continue
            flags = one(pk, "sequence_flags", 0)
            s = seqs.setdefault(seq, {"cleared": False, "names": {}, "track": None,
                                      "open": [], "ts": None})
            if flags & 1:
                s.update(cleared=True, names={})
            if one(pk, "first_packet_on_sequence") and not flags & 1:
                self.problems.append(f"packet {i}: first on sequence {seq} without "
                                     "SEQ_INCREMENTAL_STATE_CLEARED")
            ts = one(pk, "timestamp")
            late = late_begins and any(one(te, "type") == "TYPE_SLICE_BEGIN"
                                       for te in pk.get("track_event", []))
            if ts is not None and not (late and s["ts"] is not None and ts < s["ts"]):
                if s["ts"] is not None and ts < s["ts"]:
                    self.problems.append(f"packet {i}: timestamp {ts} before {s['ts']} "
                                         f"on sequence {seq}")
                s["ts"] = ts
            for d in pk.get("trace_packet_defaults", []):
                s["track"] = one(one(d, "track_event_defaults", {}), "track_uuid")
            for idata in pk.get("interned_data", []):
                for en in idata.get("event_names", []):
                    s["names"][one(en, "iid")] = one(en, "name")
            for cs in pk.get("clock_snapshot", []):
                self.clock = {one(c, "clock_id"): one(c, "timestamp") for c in cs["clocks"]}
                self.clock["primary"] = one(cs, "primary_trace_clock")
                self.first_ts = ts
            for td in pk.get("track_descriptor", []):
                uuid = one(td, "uuid")
                if "process" in td:
                    self.processes[uuid] = one(td["process"][0], "pid")
                if "thread" in td:
                    th = td["thread"][0]
                    self.threads[uuid] = (one(th, "pid"), one(th, "tid"),
                                          one(th, "thread_name"), one(td, "parent_uuid"))
            for te in pk.get("track_event", []):
                self.event(i, seq, s, flags, ts, te)
        for seq, s in seqs.items():
            if s["open"]:
                self.problems.append(f"sequence {seq}: {len(s['open'])} slices never end")

    def event(self, i, seq, s, flags, ts, te):
        where = f"packet {i} (sequence {seq})"
        if not s["cleared"] or not flags & 2:
            self.problems.append(f"{where}: a track event without incremental state")
        if s["track"] not in self.threads:
            self.problems.append(f"{where}: default track {s['track']} has no thread descriptor")
            return
        tid = self.threads[s["track"]][1]
        kind = one(te, "type")
        iid = one(te, "name_iid")
        if iid is not None and iid not in s["names"]:
            self.problems.append(f"{where}: name_iid {iid} not interned on the sequence")
        name = s["names"].get(iid)
        args = {one(a, "name"): one(a, "bool_value", one(a, "uint_value", one(a, "string_value")))
                for a in te.get("debug_annotations", [])}
        if ts is None:
            self.problems.append(f"{where}: a track event without a timestamp")
        elif kind == "TYPE_SLICE_BEGIN":
            s["open"].append((name, ts))
        elif kind == "TYPE_SLICE_END":
            if not s["open"]:
                self.problems.append(f"{where}: an END with no open slice")
                return
            n, t0 = s["open"].pop()
            self.slices.append((tid, n, t0, ts - t0, args))
        elif kind == "TYPE_INSTANT":
            self.instants.append((tid, name, ts, args))
        else:
            self.problems.append(f"{where}: event type {kind}")


def trace_event(path, extra=()):
    p = run([XRAYFDR, "convert", "-f", "trace_event"] + list(extra) + [path])
    return p, json.loads(p.stdout) if p.stdout.startswith("{") else None


def messages(stderr):
    """What convert said, less its closing count (events for trace_event,
    packets for Perfetto)."""
    return re.sub(r"^xrayfdr convert: \d+ trace (events|packets) written to .*\n", "", stderr,
                  flags=re.M)


def compare(label, path, tmp, extra=(), want_rc=0):
    """Convert @path both ways and check the Perfetto trace against the
    JSON; return the model (or None)."""
    out = os.path.join(tmp, label + ".pftrace")
    p = run([XRAYFDR, "convert", "-f", "perfetto", "-o", out] + list(extra) + [path])
    j, doc = trace_event(path, extra)
    if p.returncode != want_rc or j.returncode != want_rc or doc is None:
        tap(False, f"{label}: convert -f perfetto and -f trace_event exit {want_rc}",
            f"perfetto {p.returncode}, trace_event {j.returncode}\n{p.stderr}{j.stderr}")
        return None
    if messages(p.stderr) != messages(j.stderr):
        tap(False, f"{label}: the same messages as trace_event",
            f"perfetto:\n{p.stderr}\ntrace_event:\n{j.stderr}")
    if not PROTOC:
        skip(f"{label}: decoded with protoc", "protoc is not installed (make deps: protobuf-compiler)")
        return None
    packets, problem = decode(out)
    tap(packets is not None and len(packets) > 3,
        f"{label}: every one of {len(packets or [])} packets decodes with no unknown field",
        problem)
    if packets is None:
        return None
    said = re.search(r"convert: (\d+) trace packets written to ", p.stderr)
    tap(said and int(said.group(1)) == len(packets),
        f"{label}: convert says how many packets it wrote", p.stderr)
    m = Model(packets, "--min-duration" in " ".join(extra))
    tap(not m.problems,
        f"{label}: sequences start cleared, names interned first, timestamps never go "
        f"back{' (but late slice begins)' if '--min-duration' in ' '.join(extra) else ''}, "
        "every slice ends", "\n".join(m.problems[:20]))
    te = doc["traceEvents"]
    # threads and processes
    # the last name of each thread (the runtime may record names)
    last_name = {}
    for e in te:
        if e["ph"] == "M":
            last_name[(e["pid"], e["tid"])] = e["args"]["name"]
    want_threads = {(pid, tid, n) for (pid, tid), n in last_name.items()}
    got_threads = {(pid, tid, name) for pid, tid, name, _ in m.threads.values()}
    parents_ok = all((parent in m.processes and m.processes[parent] == pid) if pid else
                     parent is None for pid, _, _, parent in m.threads.values())
    clock_ok = (m.clock is not None and m.clock.get(BOOTTIME) == m.first_ts and
                m.clock.get("primary") == "BUILTIN_CLOCK_BOOTTIME")
    tap(want_threads == got_threads and parents_ok and clock_ok,
        f"{label}: {len(got_threads)} thread tracks (pid, tid, name) as trace_event's, "
        "under their process tracks; a BOOTTIME clock snapshot",
        f"trace_event {sorted(want_threads)[:8]}\nperfetto {sorted(got_threads)[:8]}\n"
        f"parents ok {parents_ok}, clock {m.clock} first ts {m.first_ts}")
    # slices, one for one in the order they end
    xs = [e for e in te if e["ph"] == "X"]
    problems = []
    if len(xs) != len(m.slices):
        problems.append(f"{len(xs)} complete events, {len(m.slices)} slices")
    for x, (tid, name, start, dur, args) in zip(xs, m.slices):
        bad = (x["tid"] != tid or x["name"] != name or
               abs(start / 1000 - x["ts"]) > 0.0011 or abs(dur / 1000 - x["dur"]) > 0.0021 or
               bool(x.get("args", {}).get("open_at_end")) != bool(args.get("open_at_end")) or
               bool(x.get("args", {}).get("ended_by_caller_exit")) !=
               bool(args.get("ended_by_caller_exit")))
        if bad:
            problems.append(f"trace_event {x}\nperfetto  {(tid, name, start, dur, args)}")
    calls = sum(1 for x in xs if x.get("cat") == "function")
    offs = sum(1 for x in xs if x["name"] == "off-CPU")
    tap(not problems and calls > 0,
        f"{label}: {calls} call slices{f' and {offs} off-CPU slices' if offs else ''} equal "
        "trace_event's complete events (names, threads, ns)", "\n".join(problems[:6]))
    insts = [e for e in te if e["ph"] == "i"]
    inst_ok = len(insts) == len(m.instants) and all(
        a["name"] == b[1] and a["tid"] == b[0] and abs(b[2] / 1000 - a["ts"]) < 0.0011 and
        a["args"].get("type") == b[3].get("type")
        for a, b in zip(insts, m.instants))
    if insts or m.instants:
        tap(inst_ok, f"{label}: {len(m.instants)} custom and typed events as instants",
            f"{len(insts)} instant events in trace_event, {len(m.instants)} instants")
    return m, out, j.stdout


def check_size(label, out, json_text, ratio):
    a, b = os.path.getsize(out), len(json_text.encode("utf-8", "surrogateescape"))
    tap(a * ratio <= b, f"{label}: {a} bytes of Perfetto trace, {b} of JSON "
        f"({b / max(a, 1):.1f}x; at least {ratio}x wanted)")


def synth(tmp, name, args):
    path = os.path.join(tmp, name + ".xray")
    p = run([XRAYFDR, "synth", "-o", path, "--seed", "11"] + args)
    if p.returncode:
        tap(False, f"synth {name}", p.stderr)
        return None
    return path


PROGRAM = r"""
#include <pthread.h>
#include <stdio.h>
#define T __attribute__((xray_always_instrument, noinline))
static volatile int sink;
T static int leaf(int i) { return sink += i; }
T static int middle(int i) { return leaf(i) + leaf(i + 1); }
T static void *worker(void *arg) {
  for (int i = 0; i < 300; i++) middle(i + (int)(long)arg);
  return NULL;
}
int main(void) {
  pthread_t t[3];
  for (long i = 0; i < 3; i++) pthread_create(&t[i], NULL, worker, (void *)i);
  worker(0);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  printf("%d\n", sink);
  return 0;
}
"""


def recorded(tmp):
    """A real multi-threaded program recorded by xrayfdr: (log, binary)."""
    if not CLANG:
        skip("recorded program", "clang is not installed (make deps)")
        return None
    src, exe, log = (os.path.join(tmp, n) for n in ("prog.c", "prog", "prog.xray"))
    with open(src, "w") as f:
        f.write(PROGRAM)
    p = run([CLANG, "-O1", "-fxray-instrument", "-fnoxray-link-deps", src, "-o", exe,
             "-lpthread"])
    # recorded by the plain build: XRAYFDR may be a sanitized one, which
    # has no runtime library next to it
    r = p.returncode == 0 and run([os.path.join(BUILD, "bin", "xrayfdr"), "record",
                                   "-o", log, exe])
    if p.returncode or r.returncode:
        tap(False, "build and record a multi-threaded program",
            p.stderr + (r.stderr if r else ""))
        return None
    return log, exe


YAML_HEAD = """---
header:
  version:         5
  type:            1
  constant-tsc:    true
  nonstop-tsc:     true
  cycle-frequency: 1000000000
records:
"""


def yaml_record(fid, kind, tsc, tid=7):
    return (f"  - {{ type: 0, func-id: {fid}, function: '{fid}', cpu: 0, thread: {tid}, "
            f"process: 6, kind: {kind}, tsc: {tsc}, data: '' }}\n")


def check_odd_stacks(tmp):
    """Exits that match nothing, a clock that goes back, calls open at the
    end and one ended by its caller's exit: the same slices and the same
    message as trace_event, still balanced and monotonic."""
    path = os.path.join(tmp, "odd.yaml")
    recs = [(1, "function-enter", 100), (2, "function-exit", 150),   # unmatched
            (2, "function-enter", 200), (3, "function-enter", 250),
            (2, "function-exit", 300),                                # ends 3 too
            (9, "function-exit", 320),                                # unmatched
            (4, "function-enter", 400), (4, "function-exit", 380),    # clock back
            (5, "function-enter", 500)]                               # open at end
    with open(path, "w") as f:
        f.write(YAML_HEAD + "".join(yaml_record(*r) for r in recs) + "...\n")
    res = compare("odd stacks", path, tmp)
    if not res:
        return
    m, out, _ = res
    p = run([XRAYFDR, "convert", "-f", "perfetto", "-o", out, path])
    flags = sorted(k for s in m.slices for k in s[4])
    tap("2 exits matched no entry" in p.stderr and
        flags == ["ended_by_caller_exit", "open_at_end", "open_at_end"],
        "odd stacks: 2 unmatched exits counted and left out; open_at_end and "
        "ended_by_caller_exit said as trace_event says them",
        f"{p.stderr}\nflags {flags}")


def check_bad_input(tmp, good):
    """Damaged and missing input: the same exit status and messages as
    trace_event, and what was written still decodes."""
    data = open(good, "rb").read()
    cut = os.path.join(tmp, "cut.xray")
    with open(cut, "wb") as f:
        f.write(data[:len(data) // 2 + 7])
    garbage = os.path.join(tmp, "garbage.xray")
    with open(garbage, "wb") as f:
        f.write(b"\x01\x00\x05\x00" + b"\xff" * 100)
    bad_yaml = os.path.join(tmp, "bad.yaml")
    with open(bad_yaml, "w") as f:
        f.write(YAML_HEAD + yaml_record(1, "function-enter", 1) + "  - { type: [\n")
    for label, path, extra in (("a cut log", cut, []), ("a cut log, --keep-going", cut, ["-k"]),
                               ("garbage", garbage, []), ("bad YAML", bad_yaml, []),
                               ("a missing file", os.path.join(tmp, "nope.xray"), [])):
        out = os.path.join(tmp, "bad.pftrace")
        if os.path.exists(out):
            os.unlink(out)
        p = run([XRAYFDR, "convert", "-q", "-f", "perfetto", "-o", out] + extra + [path])
        j = run([XRAYFDR, "convert", "-q", "-f", "trace_event", "-o", os.devnull] + extra + [path])
        ok = p.returncode == j.returncode and p.returncode in (1, 2) and \
            p.stderr == j.stderr and p.stderr.strip()
        diag = f"perfetto exit {p.returncode}:\n{p.stderr}\ntrace_event exit {j.returncode}:\n{j.stderr}"
        if ok and PROTOC and os.path.exists(out) and os.path.getsize(out):
            packets, problem = decode(out)
            m = packets is not None and Model(packets)
            ok = bool(m) and not m.problems
            diag += problem + ("\n".join(m.problems[:10]) if m else "")
        tap(ok, f"{label}: exit {p.returncode} and the message trace_event gives"
            f"{', what was written decodes' if os.path.exists(out) and os.path.getsize(out) else ''}",
            diag)
    p = run([XRAYFDR, "convert", "-f", "perfetto", "-o", "/dev/full", good])
    j = run([XRAYFDR, "convert", "-f", "trace_event", "-o", "/dev/full", good])
    tap(p.returncode == 2 and j.returncode == 2 and "No space left" in p.stderr,
        "a write error (/dev/full): exit 2 and why, as trace_event",
        f"perfetto {p.returncode}: {p.stderr}\ntrace_event {j.returncode}: {j.stderr}")


def check_memory(tmp):
    """Peak RSS does not grow with the trace (same threads, functions and
    depth, eight times the events)."""
    rss = {}
    for size in ("8M", "64M"):
        path = os.path.join(tmp, f"mem-{size}.xray")
        p = run([XRAYFDR, "synth", "-o", path, "--size", size, "--threads", "4", "--events",
                 "--sched", "--seed", "9", "--depth", "4", "--functions", "6"])
        if p.returncode:
            return tap(False, "synth for the memory check", p.stderr)
        rss[size] = peak_rss([XRAYFDR, "convert", "-q", "-f", "perfetto", path])[0] or 0
        os.unlink(path)
    small, big = rss["8M"], rss["64M"]
    tap(small and big and big < small + (4 << 20),
        f"peak memory {small >> 20} MiB on an 8 MiB trace, {big >> 20} MiB on a 64 MiB one")


def main():
    help_text = run([XRAYFDR, "convert", "--help"]).stdout
    tap(re.search(r"^  perfetto +Perfetto's protobuf trace", help_text, re.M),
        "convert --help describes -f perfetto", help_text[-1500:])
    with tempfile.TemporaryDirectory(prefix="xrayfdr-perfetto-") as tmp:
        logs = {
            "sched": synth(tmp, "sched", ["--threads", "3", "--sched", "--calls", "2000",
                                          "--args"]),
            "events": synth(tmp, "events", ["--threads", "4", "--events", "--calls", "1500",
                                            "--wrap-every", "300"]),
            "v1, no pids": synth(tmp, "v1", ["-V", "1", "--threads", "2", "--calls", "800"]),
            "16 threads": synth(tmp, "many", ["--threads", "16", "--calls", "300",
                                              "--depth", "12"]),
        }
        for label, path in logs.items():
            if not path:
                continue
            res = compare(label, path, tmp)
            if res and label == "sched":
                check_size(label, res[1], res[2], 3)
                compare("sched, --min-duration", path, tmp, ["--min-duration", "700ns"])
        rec = recorded(tmp)
        if rec:
            res = compare("recorded, -m", rec[0], tmp, ["-m", rec[1]])
            if res:
                names = {str(s[1]) for s in res[0].slices}
                tap({"main", "worker", "middle", "leaf"} <= names or
                    {"worker", "middle", "leaf"} <= names,
                    f"recorded, -m: slices named by the binary's symbols ({sorted(names)})")
                check_size("recorded, -m", res[1], res[2], 3)
        check_odd_stacks(tmp)
        if logs["sched"]:
            check_bad_input(tmp, logs["sched"])
        check_memory(tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
