#!/usr/bin/env python3
"""The spacing pictures of docs/keys.md: every chart on one gap of a shared walk and punch.

    /usr/bin/python3 scripts/spacing_figures.py --koma build/release/apps/koma/koma \
        --data ../shared/data --out docs/img

For each take, `koma keys --keys N --on 2 --chart CHART --report` for every chart (the same keys),
then `koma render --keys report --onion K` (K = the gap's inbetweens + 1, so the ghosts are the
gap's first key and its inbetweens, the figure its last key), and one tile per chart with the
chart's ruler under it (ticks at the reported fractions). Also the exposure sheet of the punch on
slow-in-out (the timesheet with its charts). Needs Pillow (python3-pil).
"""
import argparse
import json
import pathlib
import subprocess
import tempfile

from PIL import Image, ImageDraw, ImageFont

CHARTS = ["source", "even", "slow-in", "slow-out", "slow-in-out", "halves", "0.05,0.1,0.2,0.8,0.9,0.95"]
TAKES = {  # name: (file under the data folder, key count, the key that opens the gap to show, crop of the held panel)
    "punch": ("bvh/styles/bandai-namco-1/dataset-1_punch_normal_001.bvh", 9, 77, (40, 82, 460, 650)),
    "walk": ("bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh", 10, None, (0, 82, 500, 650)),
}
TILE_W = 300


def run(*args):
    subprocess.run([str(a) for a in args], check=True, stdout=subprocess.DEVNULL)


def font(size):
    for path in ("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
        if pathlib.Path(path).exists():
            return ImageFont.truetype(path, size)
    return ImageFont.load_default()


def pick_gap(gaps, start):
    """The gap that starts at `start`, else the one with the longest pose path among those with 4-7
    inbetweens (the onion skin shows at most 8 drawings)."""
    if start is not None:
        return next(g for g in gaps if g["from"] == start)
    fits = [g for g in gaps if 4 <= g["inbetweens"] <= 7]
    return max(fits, key=lambda g: g["path_m"])


def ruler(draw, x0, x1, y, fractions, ink=(35, 35, 40), red=(205, 40, 45)):
    """The chart as an animator draws it: the line from key to key, a tick per inbetween."""
    draw.line([(x0, y), (x1, y)], fill=ink, width=2)
    for f in fractions:
        x = x0 + f * (x1 - x0)
        draw.line([(x, y - 9), (x, y + 9)], fill=ink, width=2)
    for x in (x0, x1):
        draw.ellipse([x - 7, y - 7, x + 7, y + 7], outline=red, width=3, fill=(252, 250, 240))


def tile(frame_png, label, fractions, box):
    im = Image.open(frame_png).convert("RGB")
    w, h = im.size
    im = im.crop((w // 2, 0, w, h))  # the held result (the left panel is the smooth input)
    tile_h = TILE_W * (box[3] - box[1]) // (box[2] - box[0])
    im = im.crop(box).resize((TILE_W, tile_h))
    out = Image.new("RGB", (TILE_W, tile_h + 64), (252, 250, 240))
    out.paste(im, (0, 0))
    d = ImageDraw.Draw(out)
    d.text((10, 8), label, fill=(20, 20, 24), font=font(20 if len(label) < 14 else 14))
    ruler(d, 24, TILE_W - 24, tile_h + 32, fractions)
    return out


def take_figure(koma, data, name, tmp, out_dir):
    rel, n, start, box = TAKES[name]
    take = data / rel
    reports = {}
    for chart in CHARTS:
        stem = tmp / f"{name}_{chart.replace(',', '_')}"
        run(koma, "keys", take, "-o", f"{stem}.bvh", "--keys", n, "--on", 2, "--chart", chart, "--report", f"{stem}.json")
        reports[chart] = (stem, json.loads(pathlib.Path(f"{stem}.json").read_text()))
    gap = pick_gap(reports["even"][1]["spacing"]["gaps"], start)
    tiles = []
    for chart in CHARTS:
        stem, rep = reports[chart]
        # Only the gap is rendered: its frames cut out of the result, its drawings as kept frames.
        frames = tmp / f"{stem.name}_frames"
        run(koma, "convert", f"{stem}.bvh", f"{stem}_gap.bvh", "--range", f"{gap['from']}:{gap['to'] + 1}")
        drawn = [d["frame"] - gap["from"] for d in rep["spacing"]["drawings"] if gap["from"] <= d["frame"] <= gap["to"]]
        pathlib.Path(f"{stem}_gap.json").write_text(json.dumps({"kept_frames": drawn, "fps": 24}))
        run(koma, "render", f"{stem}_gap.bvh", "--keys", f"{stem}_gap.json", "-o", f"{frames}/", "--camera", "side",
            "--size", "1000x700", "--onion", gap["inbetweens"] + 1, "-q")
        fractions = [d["chart"] for d in rep["spacing"]["drawings"]
                     if d["kind"] == "inbetween" and gap["from"] < d["frame"] < gap["to"]]
        label = chart if "," not in chart else chart.replace(",", " ")
        tiles.append(tile(frames / f"frame_{gap['to'] - gap['from']:05d}.png", label, fractions, box))
    cols = 4
    rows = (len(tiles) + cols - 1) // cols
    tile_h = tiles[0].height
    sheet = Image.new("RGB", (cols * TILE_W + (cols + 1) * 8, rows * tile_h + (rows + 1) * 8 + 40), (230, 228, 220))
    d = ImageDraw.Draw(sheet)
    d.text((10, 10), f"{take.name}: {n} keys, on 2s, gap {gap['from']}-{gap['to']} ({gap['inbetweens']} inbetweens "
                     "as ghosts, the figure is the next key)", fill=(20, 20, 24), font=font(16))
    for i, t in enumerate(tiles):
        sheet.paste(t, (8 + (i % cols) * (TILE_W + 8), 48 + (i // cols) * (tile_h + 8)))
    path = out_dir / f"spacing_{name}.png"
    sheet.quantize(colors=96, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)  # small in the repo
    print("wrote", path)
    return reports


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--koma", default="build/release/apps/koma/koma")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--out", default="docs/img")
    a = ap.parse_args()
    out_dir = pathlib.Path(a.out)
    with tempfile.TemporaryDirectory() as t:
        tmp = pathlib.Path(t)
        for name in TAKES:
            take_figure(a.koma, pathlib.Path(a.data), name, tmp, out_dir)
        rel, n, _, _ = TAKES["punch"]
        sheet = tmp / "sheet.png"
        run(a.koma, "keys", pathlib.Path(a.data) / rel, "-o", tmp / "s.bvh", "--keys", n, "--on", 2, "--chart",
            "slow-in-out", "--xsheet-png", sheet)
        im = Image.open(sheet)
        im.crop((0, 0, im.width, min(im.height, 700))).save(out_dir / "spacing_xsheet.png", optimize=True)
        print("wrote", out_dir / "spacing_xsheet.png")


if __name__ == "__main__":
    main()
