#!/usr/bin/python3
"""Opens a `koma view` folder in headless Chromium from file:// and checks the page (issue 21).

Driven over the DevTools protocol (python3-websocket); screenshots are read with python3-pil.
Checks, each failing with a message:
  - the page sets data-koma-ready and no data-koma-error; no console errors or exceptions;
  - data-koma-drawings equals --drawings (the report's key count);
  - the character is visible in both viewport halves: pixels that change when the characters are
    hidden, in each half;
  - scrubbing from a drawing's first frame to the next frame inside its hold leaves the result half
    pixel-identical, and moving to the next drawing changes it;
  - playback: the shared clock advances at the clip's rate; the animation-frame rate is measured.
Prints one JSON line with the measurements. Exit 0 = pass, 1 = a check failed, 77 = skipped.

usage: check_viewer.py --chromium PATH --page DIR/index.html --drawings N [--screenshot OUT.png]
"""
import argparse
import base64
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

try:
    import websocket  # Debian python3-websocket
    from PIL import Image, ImageChops  # Debian python3-pil
except ImportError as e:  # pragma: no cover - reported as a skip
    print(f"SKIP: {e.name} is missing (make deps installs python3-websocket and python3-pil)")
    sys.exit(77)


class Check(Exception):
    pass


class Browser:
    def __init__(self, chromium, width, height):
        self.profile = tempfile.mkdtemp(prefix="koma-view-chromium-")
        args = [chromium, "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist",
                f"--window-size={width},{height}", "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}", "about:blank"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not os.path.exists(port_file) or os.path.getsize(port_file) == 0:
            if self.proc.poll() is not None or time.time() > deadline:
                err = self.proc.stderr.read().decode(errors="replace")[-2000:] if self.proc.poll() is not None else ""
                raise Check(f"chromium did not start its DevTools server: {err}")
            time.sleep(0.1)
        port = int(open(port_file).read().split()[0])
        pages = []
        while not pages and time.time() < deadline:
            pages = [t for t in json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
                     if t.get("type") == "page"]
            time.sleep(0.05)
        if not pages:
            raise Check("chromium has no page target")
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=120, suppress_origin=True)
        self.next_id = 0
        self.errors = []

    def _event(self, msg):
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append("console." + p["type"] + ": " +
                               " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.errors.append("exception: " + d.get("exception", {}).get("description", d.get("text", "")))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            self.errors.append("log: " + p["entry"].get("text", ""))

    def call(self, method, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise Check(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._event(msg)

    def js(self, expression, await_promise=False):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=await_promise)
        if "exceptionDetails" in r:
            raise Check(f"{expression}: {r['exceptionDetails'].get('exception', {}).get('description', r)}")
        return r.get("result", {}).get("value")

    def screenshot(self, clip=None):
        params = {"format": "png"}
        if clip:
            params["clip"] = dict(clip, scale=1)
        data = self.call("Page.captureScreenshot", **params)["data"]
        return Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")

    def close(self):
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            shutil.rmtree(self.profile, ignore_errors=True)


def changed_pixels(a, b):
    """Number of pixels that differ between two same-size images."""
    diff = ImageChops.difference(a, b).convert("L").point(lambda v: 255 if v > 0 else 0)
    return diff.histogram()[255]


def run(args):
    width, height = 1400, 1000
    b = Browser(args.chromium, width, height)
    out = {"page": args.page}
    try:
        b.call("Runtime.enable")
        b.call("Log.enable")
        b.call("Page.enable")
        b.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        url = "file://" + os.path.abspath(args.page)
        t0 = time.time()
        b.call("Page.navigate", url=url)
        state = None
        while time.time() - t0 < args.timeout:
            state = b.js("document.body ? [document.body.dataset.komaReady || '', document.body.dataset.komaError || '',"
                         " document.body.dataset.komaDrawings || ''] : null")
            if state and (state[0] == "true" or state[1]):
                break
            time.sleep(0.1)
        out["load_seconds"] = round(time.time() - t0, 2)
        if not state or state[1]:
            raise Check(f"the page reports an error: {state[1] if state else 'no body'}")
        if state[0] != "true":
            raise Check(f"komaReady not set after {args.timeout} s")
        drawings = int(state[2])
        out["drawings"] = drawings
        if drawings != args.drawings:
            raise Check(f"komaDrawings = {drawings}, the report has {args.drawings} keys")

        rect = b.js("(() => { const r = document.getElementById('viewports').getBoundingClientRect();"
                    " return {x: r.left, y: r.top, width: r.width, height: r.height}; })()")
        half = int(rect["width"]) // 2
        left = {"x": rect["x"], "y": rect["y"], "width": half, "height": rect["height"]}
        right = {"x": rect["x"] + half, "y": rect["y"], "width": rect["width"] - half, "height": rect["height"]}
        settle = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"

        def seek(f):
            b.js(f"koma.seek({f})")
            b.js(settle, await_promise=True)

        # The character in both halves: pixels that change when the characters are hidden.
        frames = b.js("koma.frames")
        seek(frames // 2)
        if args.screenshot:
            b.js("koma.setOnion(true)")
            b.js(settle, await_promise=True)
            b.screenshot().save(args.screenshot)
            b.js("koma.setOnion(false)")
            b.js(settle, await_promise=True)
        with_l, with_r = b.screenshot(left), b.screenshot(right)
        b.js("koma.setCharactersVisible(false)")
        b.js(settle, await_promise=True)
        without_l, without_r = b.screenshot(left), b.screenshot(right)
        b.js("koma.setCharactersVisible(true)")
        area = half * rect["height"]
        cl, cr = changed_pixels(with_l, without_l), changed_pixels(with_r, without_r)
        out["character_pixels"] = [cl, cr]
        for name, n in (("original (left)", cl), ("result (right)", cr)):
            if n < args.min_character_fraction * area:
                raise Check(f"the character is not visible in the {name} viewport: {n} of {int(area)} pixels")

        # Scrubbing: inside a hold the result is pixel-identical, across a drawing change it is not.
        starts = b.js("koma.drawings")
        pick = None
        for d in range(len(starts) - 1):
            if starts[d + 1] - starts[d] >= 2 and starts[d] >= frames // 4:
                pick = d
                break
        if pick is None:
            pick = next((d for d in range(len(starts) - 1) if starts[d + 1] - starts[d] >= 2), None)
        if pick is None:
            raise Check("no hold of two or more frames to scrub in")
        f0, nxt = starts[pick], starts[pick + 1]
        seek(f0)
        r0, l0 = b.screenshot(right), b.screenshot(left)
        seek(f0 + 1)
        r1, l1 = b.screenshot(right), b.screenshot(left)
        seek(nxt)
        r2 = b.screenshot(right)
        same, changed, smooth = changed_pixels(r0, r1), changed_pixels(r0, r2), changed_pixels(l0, l1)
        out["scrub"] = {"frames": [f0, f0 + 1, nxt], "hold_changed_pixels": same, "drawing_changed_pixels": changed,
                        "original_changed_pixels": smooth}
        if same != 0:
            raise Check(f"frames {f0} and {f0 + 1} are one drawing, but {same} result pixels differ (interpolated?)")
        if changed == 0:
            raise Check(f"frame {nxt} starts a new drawing, but the result pixels equal frame {f0}'s")

        # Playback on the shared clock.
        m = b.js(f"koma.measure({int(args.play_seconds * 1000)})", await_promise=True)
        expected = m["seconds"] * m["clipFps"]
        out["playback"] = {"seconds": round(m["seconds"], 3), "render_fps": round(m["fps"], 1),
                           "clip_fps": m["clipFps"], "clip_frames_advanced": m["clipFrame"],
                           "expected_frames": round(expected, 1), "ms_per_render": round(m["msPerRender"], 1),
                           "renderer": m["renderer"]}
        if m["fps"] < args.min_fps:
            raise Check(f"the page drew {m['fps']:.1f} frames per second while playing, below {args.min_fps}")
        # Looping clips wrap; compare modulo the clip length.
        advanced = m["clipFrame"]
        exp_mod = expected % frames
        err = min(abs(advanced - exp_mod), frames - abs(advanced - exp_mod))
        if err > max(3, 0.1 * expected):
            raise Check(f"after {m['seconds']:.2f} s at {m['clipFps']} fps the clock is at frame {advanced}, "
                        f"expected about {exp_mod:.0f}")
        b.call("Runtime.evaluate", expression="0")  # drain pending console events
        if b.errors:
            raise Check("console errors: " + "; ".join(b.errors[:5]))
        print(json.dumps(out))
        return 0
    finally:
        b.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--page", required=True)
    ap.add_argument("--drawings", type=int, required=True)
    ap.add_argument("--screenshot")
    ap.add_argument("--timeout", type=float, default=90)
    ap.add_argument("--play-seconds", type=float, default=3.0)
    ap.add_argument("--min-fps", type=float, default=0.4)
    ap.add_argument("--min-character-fraction", type=float, default=0.002)
    args = ap.parse_args()
    if not shutil.which(args.chromium) and not os.path.exists(args.chromium):
        print(f"SKIP: chromium not found ({args.chromium}); make deps installs it")
        return 77
    if not os.path.exists(args.page):
        print(f"FAIL: {args.page} was not written")
        return 1
    try:
        return run(args)
    except Check as e:
        print(f"FAIL: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
