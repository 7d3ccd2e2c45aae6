#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""A real viewer in the loop: our outputs loaded into speedscope.

speedscope (the flame-graph viewer, from npm, installed into
$BUILD/viewer by scripts/npm-deps.sh) runs in Debian's headless Chromium,
driven here over the DevTools protocol on a pipe (--remote-debugging-pipe,
no port and no Node at run time).  Each output is given to speedscope the
way a person does it, through its "Browse" file input, and counts as
loaded when speedscope has named its tab after the file and drawn its
views, without an alert ("Unrecognized format", "it's empty") or its
"Something went wrong" page:

  - `xrayfdr convert -f trace_event` of a recorded program: one profile
    per thread of the trace, frames named after the program's functions;
  - `xrayfdr stack -f folded` and `xrayfdr convert -f folded` of it: the
    frame speedscope ranks first by self time is the one our stacks give
    the most self time;
  - `convert -f trace_event` of a synthetic trace with scheduler events
    (off-CPU slices), as tests/tools/test_outputs.py makes;
  - a truncated trace_event file, one without calls and folded stacks of
    no time: the checks see speedscope refuse them (an alert, or a view
    with no frames) and judge the screenshot of its page blank, so the
    checks above can fail.

speedscope names a trace_event frame after the event's name *and* its
args, so every call of a function is a frame of its own there; the
checks strip the args to compare names.

A screenshot of each loaded view stays in $BUILD/viewer/*.png for a person
to look at.  Skips when Chromium or the npm packages are missing.
Prints TAP.
"""
import base64
import fcntl
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

from taplib import BUILD, XRAYFDR, finish, run, skip, tap

VIEWER = os.path.abspath(os.path.join(BUILD, "viewer"))
SPEEDSCOPE = os.path.join(VIEWER, "node_modules", "speedscope", "dist", "release",
                          "index.html")
# One browser step (start, a load, a view switch) may take this long on a
# loaded 2-core machine; nothing here waits for a fixed time instead.
STEP_TIMEOUT = 180
WIDTH, HEIGHT = 1200, 700

PROGRAM = r"""
#include <pthread.h>
#include <stdio.h>

#define WORK __attribute__((noinline))

WORK static int is_prime(unsigned int n)
{
	for (unsigned int d = 2; d * d <= n; d++)
		if (n % d == 0)
			return 0;
	return n > 1;
}

WORK static unsigned int count_primes(unsigned int limit)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < limit; i++)
		n += is_prime(i);
	return n;
}

WORK static long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

WORK static void *worker(void *arg)
{
	printf("fib: %ld\n", fib(*(int *)arg));
	return NULL;
}

int main(void)
{
	pthread_t t;
	int n = 15;

	pthread_create(&t, NULL, worker, &n);
	printf("primes: %u\n", count_primes(3000));
	pthread_join(t, NULL);
	return 0;
}
"""


class Chromium:
    """Headless Chromium driven over the DevTools protocol on a pipe: it
    reads commands on its fd 3 and writes replies and events on its fd 4,
    each a JSON message ended by a NUL byte."""

    def __init__(self, exe, tmp):
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()

        def child_fds():
            # above 4 first: a pipe may itself be fd 3 or 4
            a = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)       # inheritable, unlike the pipes
            os.dup2(b, 4)
        self.log_path = os.path.join(tmp, "chromium.log")
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [exe, "--headless", "--no-sandbox", "--remote-debugging-pipe",
                 # WebGL (speedscope draws with it) on the CPU, no GPU here
                 "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-quic",
                 "--disable-extensions", f"--user-data-dir={os.path.join(tmp, 'profile')}",
                 "about:blank"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                preexec_fn=child_fds, close_fds=False)
        os.close(to_r)
        os.close(from_w)
        self.w = os.fdopen(to_w, "wb")
        self.r = os.fdopen(from_r, "rb")
        self.lock = threading.Lock()
        self.cond = threading.Condition()
        self.next_id = 0
        self.replies = {}
        self.closed = False
        self.dialogs = {}       # session: messages of the alerts it opened
        self.exceptions = {}    # session: uncaught exceptions in the page
        threading.Thread(target=self._read, daemon=True).start()

    def _write(self, method, params, session):
        with self.lock:
            self.next_id += 1
            msg = {"id": self.next_id, "method": method, "params": params or {}}
            if session:
                msg["sessionId"] = session
            try:
                self.w.write(json.dumps(msg).encode() + b"\0")
                self.w.flush()
            except OSError as e:
                raise RuntimeError(f"{method}: Chromium is gone ({e})")
            return self.next_id

    def _read(self):
        try:
            self._read_messages()
        finally:
            with self.cond:
                self.closed = True
                self.cond.notify_all()

    def _read_messages(self):
        buf = b""
        while True:
            chunk = self.r.read1(1 << 16)
            if not chunk:
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    with self.cond:
                        self.replies[msg["id"]] = msg
                        self.cond.notify_all()
                    continue
                session, p = msg.get("sessionId"), msg.get("params", {})
                if msg.get("method") == "Page.javascriptDialogOpening":
                    # An open alert blocks the page's scripts and our
                    # evaluations: note it and dismiss it from this thread.
                    self.dialogs.setdefault(session, []).append(p.get("message", ""))
                    self._write("Page.handleJavaScriptDialog", {"accept": True}, session)
                elif msg.get("method") == "Runtime.exceptionThrown":
                    d = p.get("exceptionDetails", {})
                    self.exceptions.setdefault(session, []).append(
                        d.get("exception", {}).get("description") or d.get("text", ""))

    def send(self, method, params=None, session=None, timeout=STEP_TIMEOUT):
        i = self._write(method, params, session)
        deadline = time.monotonic() + timeout
        with self.cond:
            while i not in self.replies:
                left = deadline - time.monotonic()
                if self.closed:
                    raise RuntimeError(f"{method}: Chromium closed its pipe")
                if left <= 0:
                    raise RuntimeError(f"{method}: no answer from Chromium in {timeout} s")
                self.cond.wait(left)
            reply = self.replies.pop(i)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error'].get('message')}")
        return reply.get("result", {})

    def log_tail(self):
        try:
            with open(self.log_path, errors="replace") as f:
                # without its complaints of no D-Bus, which are no news
                return "".join(l for l in f if "dbus" not in l)[-1500:]
        except OSError:
            return ""

    def close(self):
        try:
            self.send("Browser.close", timeout=30)
        except RuntimeError:
            pass
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Page:
    """One tab of the browser."""

    def __init__(self, browser):
        self.b = browser
        self.target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.s = browser.send("Target.attachToTarget",
                              {"targetId": self.target, "flatten": True})["sessionId"]
        for m in ("Page.enable", "Runtime.enable"):
            self.send(m)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})

    def send(self, method, params=None):
        return self.b.send(method, params, self.s)

    def eval(self, js, promise=False):
        r = self.send("Runtime.evaluate", {"expression": js, "returnByValue": True,
                                           "awaitPromise": promise})
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluate: {r['exceptionDetails'].get('text')}")
        return r["result"].get("value")

    def wait_for(self, js, what):
        """Poll a DOM condition until it holds (its value) or STEP_TIMEOUT."""
        deadline = time.monotonic() + STEP_TIMEOUT
        while True:
            v = self.eval(js)
            if v:
                return v
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out after {STEP_TIMEOUT} s waiting for {what}")
            time.sleep(0.1)     # a poll interval, not an assertion

    def screenshot(self, path):
        # two animation frames: speedscope draws its canvases in one
        self.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
                  ".then(() => true)", promise=True)
        data = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"])
        with open(path, "wb") as f:
            f.write(data)
        return data

    def close(self):
        try:
            self.b.send("Target.closeTarget", {"targetId": self.target})
        except RuntimeError:
            pass


# speedscope's state, read from its DOM: the title it gives a loaded
# profile, its error page, its toolbar and the profile selector "(1/N)".
STATE_JS = r"""(() => {
  const text = document.body ? document.body.innerText : "";
  const m = /\((\d+)\/(\d+)\)/.exec(text);
  return {title: document.title, error: text.includes("Something went wrong"),
          toolbar: text.includes("Time Order") && text.includes("Sandwich"),
          canvases: document.querySelectorAll("canvas").length,
          profiles: m ? +m[2] : 1};
})()"""

# The rows of the sandwich view's table: [total, self, symbol name].
ROWS_JS = r"""(() => [...document.querySelectorAll("tr")]
  .map(tr => [...tr.cells].map(c => c.textContent))
  .filter(c => c.length === 3 && /%\)$/.test(c[0])))()"""

SANDWICH_JS = r"""(() => {
  const tab = [...document.querySelectorAll("div")]
    .find(d => d.childElementCount <= 1 && /Sandwich$/.test(d.textContent));
  if (tab) tab.click();
  return !!tab;
})()"""


def speedscope(browser, profile, shot):
    """Give speedscope a file through its Browse input and screenshot the
    view it opens on (the time-ordered flame chart).  A dict: ok (loaded,
    frames listed, the screenshot drawn), why not, loaded, profiles (the
    selector's "(1/N)"), rows of the sandwich view sorted by self time
    ([total, self, name], the visible ones), hues of the screenshot."""
    page = Page(browser)
    out = {"ok": False, "loaded": False, "why": "", "rows": [], "profiles": 0,
           "drawn": False, "hues": []}
    try:
        page.send("Page.navigate", {"url": "file://" + SPEEDSCOPE})
        page.wait_for("!!document.querySelector('input#file')", "speedscope's Browse input")
        node = page.send("Runtime.evaluate",
                         {"expression": "document.querySelector('input#file')"})["result"]
        page.send("DOM.setFileInputFiles", {"files": [os.path.abspath(profile)],
                                            "objectId": node["objectId"]})
        want_title = os.path.basename(profile) + " - speedscope"
        dialogs = browser.dialogs.setdefault(page.s, [])
        deadline = time.monotonic() + STEP_TIMEOUT
        while True:
            st = page.eval(STATE_JS)
            if dialogs or st["error"]:
                out["why"] = "speedscope said: " + "; ".join(
                    dialogs + (["Something went wrong"] if st["error"] else []))
                break
            if st["title"] == want_title and st["toolbar"] and st["canvases"] >= 2:
                out["loaded"], out["profiles"] = True, st["profiles"]
                break
            if time.monotonic() > deadline:
                out["why"] = f"not loaded after {STEP_TIMEOUT} s (title {st['title']!r})"
                break
            time.sleep(0.1)
        out["drawn"], out["hues"] = drawn(page.screenshot(shot))
        if out["loaded"]:
            if not page.eval(SANDWICH_JS):
                raise RuntimeError("no Sandwich tab in speedscope's toolbar")
            # the table lists the frames, or says there are none
            out["rows"] = page.wait_for(
                f"{ROWS_JS}.length ? {{rows: {ROWS_JS}}} : "
                "document.body.innerText.includes('No symbols found') && {rows: []}",
                "rows in the sandwich view")["rows"]
            if not out["rows"]:
                out["why"] = "speedscope's sandwich view says: No symbols found."
            elif not out["drawn"]:
                out["why"] = f"the screenshot looks blank: hues cover {out['hues']} % of it"
        exc = browser.exceptions.get(page.s)
        if exc:
            out["why"] += "\nuncaught in the page: " + "\n".join(exc)[:800]
        out["ok"] = out["loaded"] and bool(out["rows"]) and not out["why"]
    finally:
        page.close()
    return out


def png_rgb(data):
    """Width, height and rows of RGB(A) pixels of a PNG (8-bit RGB or RGBA,
    not interlaced: what Chromium writes)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w, h, bpp = 8, [], 0, 0, 0
    while pos + 8 <= len(data):
        n, kind = struct.unpack_from(">I4s", data, pos)
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise ValueError(f"PNG depth {depth} colour type {ctype} not read here")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    raw, stride = zlib.decompress(b"".join(idat)), w * bpp
    prev, rows = bytearray(stride), []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def drawn(png):
    """Whether a screenshot shows a drawn flame chart.  Below the toolbar,
    speedscope's frames are coloured and of several hues; its text and grid
    are grey, its pages without a profile grey and one blue (the Browse
    button, links: 2.4% of the area).  So: at least 2 hues (of 12) each
    cover 0.1% of the area, or one covers 4%: the root frames of the time
    order view span its width in two rows (6.6%), however narrow the
    callees a busy machine made.  (verdict, the hues' shares in %)."""
    try:
        w, h, bpp, rows = png_rgb(png)
    except (ValueError, zlib.error, struct.error):
        return False, []
    hues = [0] * 12
    for line in rows[24:]:
        for x in range(0, w * bpp, bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            hi, lo = max(r, g, b), min(r, g, b)
            if hi - lo < 24:
                continue
            d = hi - lo
            hue = ((g - b) / d) % 6 if hi == r else (b - r) / d + 2 if hi == g else (r - g) / d + 4
            hues[int(hue * 2) % 12] += 1
    area = w * (h - 24)
    shares = sorted((round(100 * n / area, 2) for n in hues if n), reverse=True)
    return (sum(1 for n in hues if n >= area / 1000) >= 2 or
            any(n >= area * 4 / 100 for n in hues)), shares


def base_name(shown):
    """speedscope names a trace_event frame 'NAME {ARGS as JSON}'."""
    return shown.split(" {", 1)[0]


def folded_self(text):
    """Self time per frame name in folded stacks (the leaf's), and the
    names of all frames."""
    self_t, frames = {}, set()
    for line in text.splitlines():
        stack, v = line.rsplit(" ", 1)
        frames.update(stack.split(";"))
        leaf = stack.split(";")[-1]
        self_t[leaf] = self_t.get(leaf, 0) + int(v)
    return self_t, frames


def check_trace_event(browser, path, label, stem, tmp, extra=()):
    """convert -f trace_event: the output's path."""
    out, shot = os.path.join(tmp, stem + ".json"), os.path.join(VIEWER, stem + ".png")
    p = run([XRAYFDR, "convert", "-q", "-f", "trace_event", "-o", out] + list(extra) + [path])
    if p.returncode:
        return tap(False, f"convert -f trace_event, {label}", p.stderr)
    with open(out) as f:
        te = json.load(f)["traceEvents"]
    names = {e["name"] for e in te if e.get("ph") == "X"}
    threads = {(e["pid"], e["tid"]) for e in te if e.get("ph") == "X"}
    v = speedscope(browser, out, shot)
    shown = {base_name(r[2]) for r in v["rows"]}
    problems = [v["why"]] if v["why"] else []
    if v["loaded"] and v["profiles"] != len(threads):
        problems.append(f"speedscope shows {v['profiles']} profiles, the trace has "
                        f"{len(threads)} threads")
    if shown - names:
        problems.append(f"frames not in our output: {sorted(shown - names)[:5]}")
    tap(v["ok"] and not problems,
        f"speedscope loads convert -f trace_event of {label}: {v['profiles']} thread "
        f"profiles, frames {', '.join(sorted(shown)[:4])}{'...' if len(shown) > 4 else ''}",
        "\n".join(problems))
    print(f"# screenshot: {shot}")
    return out


def check_folded(browser, cmd, path, label, stem, tmp, extra=()):
    out, shot = os.path.join(tmp, stem + ".folded"), os.path.join(VIEWER, stem + ".png")
    p = run([XRAYFDR] + cmd + ["-q", "-o", out] + list(extra) + [path])
    if p.returncode:
        return tap(False, f"{' '.join(cmd)}, {label}", p.stderr)
    with open(out) as f:
        self_t, frames = folded_self(f.read())
    ranked = sorted(self_t.items(), key=lambda kv: -kv[1])
    v = speedscope(browser, out, shot)
    problems = [v["why"]] if v["why"] else []
    shown = [r[2] for r in v["rows"]]
    if set(shown) - frames:
        problems.append(f"frames not in our output: {sorted(set(shown) - frames)[:5]}")
    # the frame with the most self time, unless two come within 1% of it
    if shown and len(ranked) > 1 and ranked[1][1] < ranked[0][1] * 0.99 and \
            shown[0] != ranked[0][0]:
        problems.append(f"speedscope ranks {shown[0]!r} first by self time, our stacks "
                        f"{ranked[0][0]!r} ({ranked[0][1]} of {sum(self_t.values())})")
    tap(v["ok"] and not problems,
        f"speedscope loads {' '.join(cmd)} of {label}: {len(frames)} frames, "
        f"first by self time {shown[0] if shown else None!r} as in our stacks",
        "\n".join(problems))
    print(f"# screenshot: {shot}")


def check_detector(browser, tmp, good_json):
    """Inputs speedscope cannot show: the checks above must see that it
    did not, with its reason (an alert or an empty frame list), and the
    page it is left on must not pass for a drawn flame chart."""
    with open(good_json, "rb") as f:
        good = f.read()
    for name, what, data in (
            ("truncated.json", "a truncated trace_event file", good[:len(good) // 2]),
            ("nocalls.json", "a trace_event file without calls",
             b'{"traceEvents":[{"name":"thread_name","ph":"M","pid":1,"tid":1,'
             b'"args":{"name":"thread 1"}}]}'),
            ("zero.folded", "folded stacks of no time", b"thread_1;main;f 0\n")):
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        v = speedscope(browser, path, path + ".png")
        tap(not v["ok"] and v["why"] and not v["drawn"],
            f"the detector sees that speedscope does not show {what}: "
            f"{v['why'].splitlines()[0] if v['why'] else 'it says it does'}",
            f"loaded {v['loaded']}, rows {v['rows'][:3]}, screenshot's hues {v['hues']} %")


def record_program(tmp):
    """A recorded trace of a small two-thread program: (binary, log) or a
    reason it could not be made."""
    cc = shutil.which("clang") or shutil.which("clang-14")
    if not cc:
        return None, "clang is not installed (make deps)"
    src, prog, log = (os.path.join(tmp, n) for n in ("prog.c", "prog", "prog.xray"))
    with open(src, "w") as f:
        f.write(PROGRAM)
    p = run([cc, "-O2", "-pthread", "-fxray-instrument", "-fxray-instruction-threshold=1",
             "-fnoxray-link-deps", src, "-o", prog])
    if p.returncode:
        return None, "clang -fxray-instrument failed: " + p.stderr[-300:]
    p = run([XRAYFDR, "record", "-o", log, prog])
    if p.returncode:
        return None, "xrayfdr record failed: " + p.stderr[-300:]
    return (prog, log), ""


def main():
    checks = ("convert -f trace_event of a recorded program",
              "stack -f folded of a recorded program",
              "convert -f folded of a recorded program",
              "convert -f trace_event of a synthetic trace with scheduler events",
              "the detector: a truncated trace_event file",
              "the detector: a trace_event file without calls",
              "the detector: folded stacks of no time")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    why = None
    if not chromium:
        why = "chromium is not installed (make deps)"
    elif not os.path.exists(SPEEDSCOPE):
        why = (f"speedscope is not installed in {VIEWER} (scripts/npm-deps.sh {BUILD}, "
               "which needs npm: make deps)")
    if why:
        for c in checks:
            skip(f"speedscope: {c}", why)
        return finish()
    with tempfile.TemporaryDirectory(prefix="xrayfdr-viewer-", ignore_cleanup_errors=True) as tmp:
        browser = Chromium(chromium, tmp)
        try:
            browser.send("Browser.getVersion")
            rec, why = record_program(tmp)
            if rec:
                prog, log = rec
                m = ["-m", prog]
                check_trace_event(browser, log, "a recorded program", "recorded-trace_event",
                                  tmp, m)
                check_folded(browser, ["stack", "-f", "folded"], log, "a recorded program",
                             "recorded-stack-folded", tmp, m)
                check_folded(browser, ["convert", "-f", "folded"], log, "a recorded program",
                             "recorded-convert-folded", tmp, m)
            else:
                for c in checks[:3]:
                    skip(f"speedscope: {c}", why)
            synth = os.path.join(tmp, "sched.xray")
            p = run([XRAYFDR, "synth", "-o", synth, "--seed", "11", "--threads", "3",
                     "--sched", "--calls", "2000", "--args"])
            te = None
            if p.returncode:
                tap(False, "synth a trace with scheduler events", p.stderr)
            else:
                te = check_trace_event(browser, synth, "a synthetic trace with scheduler events",
                                       "synth-sched-trace_event", tmp)
            if te:
                check_detector(browser, tmp, te)
        except RuntimeError as e:
            tap(False, "speedscope in headless Chromium", str(e) + "\n" + browser.log_tail())
        finally:
            browser.close()
    print(f"# screenshots of the loaded views, for a person to look at: {VIEWER}/*.png")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
