#!/usr/bin/python3
"""The viewer's toon look in headless Chromium (issue 38 item 5): cel tones and ink lines, measured.

Writes `koma view INPUT --look plain -o DIR`, opens DIR/index.html from file:// (the page must say
data-koma-look="plain", the option), then index.html?look=toon (the URL wins: "toon"), and
measures the original (left) viewport at the middle frame in each look. The character's pixels are
those that change when the characters are hidden (window.koma.setCharactersVisible). Checks, as
issue 38 measures koma's C++ renderer:
  - coverage: the character covers 0.5-60 % of the viewport;
  - outline: >= 70 % of its silhouette pixels (the character's pixels next to a background pixel)
    are dark (luma < 80 of 255) in the toon look, and not in the plain look;
  - --untextured: the 6 most common colours (4 bits a channel) cover >= 85 % of the interior
    pixels (the character's pixels farther than the line width from its edge) in the toon look,
    and the plain look fails that same check;
  - --textured: the shade factor (luma in the toon look / luma in the flat look, i.e. over the
    unlit texture colour) takes at most 3 levels: 3 windows of +-6 % cover >= 85 % of the interior
    pixels (and not in the plain look); one level is 1 (lit = the texture's colour), and there
    the toon colour equals the flat colour channel by channel (within 12 of 255).
Prints one JSON line with the measurements. Exit 0 = pass, 1 = a check failed, 77 = skipped.

usage: check_look.py --koma KOMA --chromium CHROMIUM --work DIR --input FILE [--animation NAME]
                     (--textured | --untextured) [--screenshot OUT.png] [--looks LOOKS.png]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np  # Debian python3-numpy
    from check_viewer import Browser, Check  # exits 77 itself when websocket or PIL is missing
except ImportError as e:  # pragma: no cover - reported as a skip
    print(f"SKIP: {e.name} is missing (make deps installs python3-numpy)")
    sys.exit(77)

DARK = 80            # luma (0..255) below which a pixel is ink
COVERAGE = (0.005, 0.60)
OUTLINE_MIN = 0.70
CEL_COLOURS, CEL_MIN = 6, 0.85
LEVELS, LEVEL_HALF_WIDTH = 3, 0.06


def luma(rgb):
    return rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114


def erode(mask, n):
    """n 4-neighbour erosions (the border counts as outside)."""
    m = mask.copy()
    for _ in range(n):
        p = np.pad(m, 1, constant_values=False)
        m = p[1:-1, 1:-1] & p[:-2, 1:-1] & p[2:, 1:-1] & p[1:-1, :-2] & p[1:-1, 2:]
    return m


def top_colour_share(pixels, k):
    """Share of pixels (N x 3, uint8) in the k most common colours at 4 bits a channel."""
    q = (pixels >> 4).astype(np.int32)
    keys = (q[:, 0] << 8) | (q[:, 1] << 4) | q[:, 2]
    counts = np.sort(np.bincount(keys, minlength=4096))[::-1]
    return float(counts[:k].sum() / max(len(keys), 1))


def level_share(ratio, k, half_width):
    """Share of shade factors inside k windows of +-half_width (relative), chosen greedily where
    most factors fall; and the median factor in each window, fullest first."""
    logs = np.sort(np.log(ratio))
    w = np.log1p(half_width)
    left = np.ones(len(logs), dtype=bool)
    covered, centres = 0, []
    for _ in range(k):
        idx = np.flatnonzero(left)
        if len(idx) == 0:
            break
        v = logs[idx]
        hi = np.searchsorted(v, v + 2 * w, side="right")
        best = int(np.argmax(hi - np.arange(len(v))))
        lo_v, hi_v = v[best], v[best] + 2 * w
        inside = left & (logs >= lo_v) & (logs <= hi_v)
        covered += int(inside.sum())
        centres.append(float(np.exp(np.median(logs[inside]))))
        left &= ~inside
    return covered / max(len(logs), 1), centres


class Page:
    def __init__(self, b, url, timeout):
        self.b = b
        t0 = time.time()
        b.call("Page.navigate", url=url)
        state = None
        while time.time() - t0 < timeout:
            state = b.js("document.body ? [document.body.dataset.komaReady || '', document.body.dataset.komaError || '',"
                         " document.documentElement.dataset.komaLook || ''] : null")
            if state and (state[0] == "true" or state[1]):
                break
            time.sleep(0.1)
        if not state or state[1]:
            raise Check(f"{url}: the page reports an error: {state[1] if state else 'no body'}")
        if state[0] != "true":
            raise Check(f"{url}: komaReady not set after {timeout} s")
        self.look = state[2]
        r = b.js("(() => { const r = document.getElementById('viewports').getBoundingClientRect();"
                 " return {x: r.left, y: r.top, width: r.width, height: r.height}; })()")
        self.left = {"x": r["x"], "y": r["y"], "width": int(r["width"]) // 2, "height": r["height"]}

    def settle(self):
        self.b.js("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))", await_promise=True)

    def shot(self, look, visible=True):
        self.b.js(f"koma.setLook('{look}')")
        self.b.js(f"koma.setCharactersVisible({'true' if visible else 'false'})")
        self.settle()
        got = self.b.js("document.documentElement.dataset.komaLook")
        if got != look:
            raise Check(f"after koma.setLook('{look}') data-koma-look is '{got}'")
        return np.asarray(self.b.screenshot(self.left), dtype=np.uint8)


def save_looks(path, img, mask):
    """The character in the toon, plain and flat looks side by side (the box around it, a margin)."""
    from PIL import Image
    ys, xs = np.nonzero(mask)
    m = max(12, (ys.max() - ys.min()) // 10)
    y0, y1 = max(ys.min() - m, 0), min(ys.max() + m + 1, mask.shape[0])
    x0, x1 = max(xs.min() - m, 0), min(xs.max() + m + 1, mask.shape[1])
    Image.fromarray(np.concatenate([img[k][y0:y1, x0:x1] for k in ("toon", "plain", "flat")], axis=1)).save(path)


def measure(page, args):
    out = {}
    frames = page.b.js("koma.frames")
    page.b.js(f"koma.seek({frames // 2})")
    page.settle()
    img = {look: page.shot(look) for look in ("toon", "plain", "flat")}
    line_px = page.b.js("koma.lineWidth()")
    empty = {look: page.shot(look, visible=False) for look in ("toon", "plain")}
    page.shot("toon")
    mask = np.any(img["toon"] != empty["toon"], axis=2)
    area = mask.size
    if args.looks and mask.any():
        save_looks(args.looks, img, mask)
    out["line_px"] = round(line_px, 2)
    out["coverage"] = round(float(mask.sum() / area), 4)
    if not COVERAGE[0] <= out["coverage"] <= COVERAGE[1]:
        raise Check(f"the character covers {100 * out['coverage']:.2f} % of the viewport, expected "
                    f"{100 * COVERAGE[0]:g}-{100 * COVERAGE[1]:g} %")
    edge = mask & ~erode(mask, 1)
    dark = luma(img["toon"].astype(np.float64)) < DARK
    out["outline_dark"] = round(float(dark[edge].mean()), 4)
    plain_mask = np.any(img["plain"] != empty["plain"], axis=2)
    plain_edge = plain_mask & ~erode(plain_mask, 1)
    out["plain_outline_dark"] = round(float((luma(img["plain"].astype(np.float64)) < DARK)[plain_edge].mean()), 4)
    if out["outline_dark"] < OUTLINE_MIN:
        raise Check(f"{100 * out['outline_dark']:.1f} % of the silhouette pixels are dark (luma < {DARK}), "
                    f"expected >= {100 * OUTLINE_MIN:g} %: no ink line")
    if out["plain_outline_dark"] >= OUTLINE_MIN:
        raise Check(f"plain: {100 * out['plain_outline_dark']:.1f} % of the silhouette pixels are dark: the check "
                    "cannot tell an ink line from a dark edge here")
    inner = erode(mask, int(np.ceil(line_px)) + 1)
    out["interior_pixels"] = int(inner.sum())
    if out["interior_pixels"] < 500:
        raise Check(f"only {out['interior_pixels']} interior pixels: the character is too small to measure")
    if args.untextured:
        toon, plain = top_colour_share(img["toon"][inner], CEL_COLOURS), top_colour_share(img["plain"][inner], CEL_COLOURS)
        out["top6_colours"] = {"toon": round(toon, 4), "plain": round(plain, 4)}
        if toon < CEL_MIN:
            raise Check(f"toon: the {CEL_COLOURS} most common colours cover {100 * toon:.1f} % of the interior, "
                        f"expected >= {100 * CEL_MIN:g} %: not cel-shaded")
        if plain >= CEL_MIN:
            raise Check(f"plain: the {CEL_COLOURS} most common colours cover {100 * plain:.1f} % of the interior "
                        f"(>= {100 * CEL_MIN:g} %): the check cannot tell smooth shading from cel shading here")
    else:
        base = luma(img["flat"][inner].astype(np.float64))
        lit = base >= 40  # too dark a texel makes the ratio noise
        if lit.sum() < 500:
            raise Check(f"only {int(lit.sum())} interior pixels have a texture colour bright enough to measure")
        ratios = {look: np.maximum(luma(img[look][inner].astype(np.float64))[lit], 1.0) / base[lit]
                  for look in ("toon", "plain")}
        toon, centres = level_share(ratios["toon"], LEVELS, LEVEL_HALF_WIDTH)
        plain, _ = level_share(ratios["plain"], LEVELS, LEVEL_HALF_WIDTH)
        out["shade_levels"] = {"toon": round(toon, 4), "plain": round(plain, 4),
                               "toon_centres": [round(c, 3) for c in centres]}
        if toon < CEL_MIN:
            raise Check(f"toon: {LEVELS} shade levels cover {100 * toon:.1f} % of the textured interior, expected "
                        f">= {100 * CEL_MIN:g} %: more than {LEVELS} shade levels")
        if plain >= CEL_MIN:
            raise Check(f"plain: {LEVELS} shade levels cover {100 * plain:.1f} % of the textured interior: the check "
                        "cannot tell smooth shading from cel shading here")
        if min(abs(c - 1) for c in centres) > LEVEL_HALF_WIDTH:
            raise Check(f"no shade level is 1 (levels {', '.join(f'{c:.3f}' for c in centres)}): the lit tone is "
                        "not the texture's colour")
        r = ratios["toon"]
        at_one = np.abs(r - 1) <= LEVEL_HALF_WIDTH
        diff = np.abs(img["toon"][inner][lit][at_one].astype(int) - img["flat"][inner][lit][at_one].astype(int)).max(axis=1)
        out["lit_colour_match"] = round(float((diff <= 12).mean()), 4)
        if out["lit_colour_match"] < 0.95:
            raise Check(f"only {100 * out['lit_colour_match']:.1f} % of the lit pixels have the texture's colour "
                        "(within 12 of 255 in every channel)")
    return out


def run(args):
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    page_dir = os.path.join(args.work, "viewer")
    cmd = [args.koma, "view", args.input, "--look", "plain", "-o", page_dir]
    if args.animation:
        cmd[3:3] = ["--animation", args.animation]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise Check(f"{' '.join(cmd)} exited {r.returncode}: {r.stdout}{r.stderr}")
    width, height = 1400, 1000
    b = Browser(args.chromium, width, height)
    try:
        b.call("Runtime.enable")
        b.call("Log.enable")
        b.call("Page.enable")
        b.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        url = "file://" + os.path.abspath(os.path.join(page_dir, "index.html"))
        page = Page(b, url, args.timeout)
        if page.look != "plain":
            raise Check(f"koma view --look plain: the page opened with data-koma-look '{page.look}'")
        page = Page(b, url + "?look=toon", args.timeout)
        if page.look != "toon":
            raise Check(f"index.html?look=toon: the page opened with data-koma-look '{page.look}'")
        out = {"input": os.path.basename(args.input)}
        if args.screenshot:  # first, so a failing case can be looked at
            b.js(f"koma.seek({b.js('koma.frames') // 2})")
            page.settle()
            b.screenshot().save(args.screenshot)
        out.update(measure(page, args))
        b.call("Runtime.evaluate", expression="0")  # drain pending console events
        if b.errors:
            raise Check("console errors: " + "; ".join(b.errors[:5]))
        print(json.dumps(out))
        return 0
    finally:
        b.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--koma", required=True)
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--animation")
    kind = ap.add_mutually_exclusive_group(required=True)
    kind.add_argument("--textured", action="store_true")
    kind.add_argument("--untextured", action="store_true")
    ap.add_argument("--screenshot")
    ap.add_argument("--looks", help="write the character in the toon, plain and flat looks side by side (PNG)")
    ap.add_argument("--timeout", type=float, default=90)
    args = ap.parse_args()
    if not os.path.exists(args.input):
        print(f"SKIP: {args.input} not found (the shared corpus sits beside the checkout as ../shared/data)")
        return 77
    if not shutil.which(args.chromium) and not os.path.exists(args.chromium):
        print(f"SKIP: chromium not found ({args.chromium}); make deps installs it")
        return 77
    try:
        return run(args)
    except Check as e:
        print(f"FAIL: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
