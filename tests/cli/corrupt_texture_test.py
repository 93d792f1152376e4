"""A texture that fails to decode: a warning, and the material's base colour (issue 38's bad input);
its bytes never reach an output (issue 45). Run by CTest (tests/cli/CMakeLists.txt):
    python3 corrupt_texture_test.py KOMA SHARED_DATA WORKDIR
Skips (exit 77) when the shared corpus is absent or this machine has no OpenGL.

Each case is made here from a shared glTF, in WORKDIR:
  cesium_truncated_jpeg  CesiumMan (external JPEG), the JPEG cut in half, base colour set to orange
  cesium_garbage_jpeg    the JPEG replaced by a JPEG signature and seeded random bytes, orange
  cesium_not_an_image    the JPEG replaced by text (no image signature at all), orange
  fox_garbage_png        Fox.glb with its embedded PNG (a bufferView) scrambled after byte 40, its
                         base colour left white
For each: `koma render --transparent` exits 0 with a warning that names the file and the image,
and the character's lit tone is its base colour (the intact CesiumMan, rendered the same way, is
its texture's many colours: the measure tells them apart); `koma convert` to GLB and to FBX exits 0,
warns, writes no image and none of the broken bytes, and the GLB reads back. An image URI that
leaves the asset's folder is still refused (exit 3), even when it names a good PNG.
"""
import collections
import json
import os
import random
import shutil
import struct
import subprocess
import sys

from PIL import Image

from cli_support import require_shared

koma, shared, work = sys.argv[1:4]
cesium = os.path.join(shared, "gltf/CesiumMan")
fox = os.path.join(shared, "gltf/Fox/Fox.glb")
require_shared(os.path.join(cesium, "CesiumMan.gltf"), fox)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []
ORANGE = [0.9, 0.45, 0.15, 1.0]
WHITE = [1.0, 1.0, 1.0, 1.0]


def run(*argv):
    return subprocess.run([koma, *argv], capture_output=True, text=True, errors="replace")


def glb_json(data):
    n = struct.unpack("<I", data[12:16])[0]
    return json.loads(data[20:20 + n])


def cesium_case(name, image_bytes, base=ORANGE, image_uri=None):
    """A copy of CesiumMan in WORKDIR/name/ with its JPEG replaced by `image_bytes`."""
    d = os.path.join(work, name)
    os.makedirs(d)
    doc = json.load(open(os.path.join(cesium, "CesiumMan.gltf")))
    doc["materials"][0]["pbrMetallicRoughness"]["baseColorFactor"] = base
    if image_uri:
        doc["images"][0]["uri"] = image_uri
    json.dump(doc, open(os.path.join(d, "CesiumMan.gltf"), "w"))
    shutil.copy(os.path.join(cesium, "CesiumMan_data.bin"), d)
    with open(os.path.join(d, "CesiumMan_img0.jpg"), "wb") as f:
        f.write(image_bytes)
    return os.path.join(d, "CesiumMan.gltf")


def fox_case(name):
    """Fox.glb with the bytes of its embedded PNG after the first 40 (signature, IHDR) scrambled."""
    data = bytearray(open(fox, "rb").read())
    doc = glb_json(data)
    view = doc["bufferViews"][doc["images"][0]["bufferView"]]
    start = 20 + struct.unpack("<I", data[12:16])[0] + 8 + view.get("byteOffset", 0)
    assert data[start:start + 8] == b"\x89PNG\r\n\x1a\n"
    rng = random.Random(38)
    for i in range(start + 40, start + view["byteLength"]):
        data[i] = rng.randrange(256)
    d = os.path.join(work, name)
    os.makedirs(d)
    path = os.path.join(d, "Fox.glb")
    with open(path, "wb") as f:
        f.write(data)
    return path, bytes(data[start + 40:start + view["byteLength"]])


def body_colours(png):
    """Colours of the character's lit and shadow tones: opaque pixels that are not dark ink."""
    im = Image.open(png).convert("RGBA")
    return collections.Counter(p[:3] for p in im.getdata() if p[3] > 127 and max(p[:3]) >= 80)


jpeg = open(os.path.join(cesium, "CesiumMan_img0.jpg"), "rb").read()


def render(case, path):
    out = os.path.join(work, case + "_cels") + "/"
    r = run("render", path, "-o", out, "--transparent", "--size", "320x320", "-q")
    if r.returncode != 0 and ("EGL" in r.stderr or "OpenGL" in r.stderr):
        print(f"skipped: no OpenGL here: {r.stderr.strip()}")
        sys.exit(77)
    return r, out


rng = random.Random(45)
garbage_jpeg = b"\xff\xd8\xff\xe0" + bytes(rng.randrange(256) for _ in range(20000))
cases = [
    ("cesium_truncated_jpeg", cesium_case("cesium_truncated_jpeg", jpeg[:len(jpeg) // 2]), ORANGE,
     jpeg[len(jpeg) // 4:len(jpeg) // 4 + 64], "JPEG image (1024 x 1024) does not decode"),
    ("cesium_garbage_jpeg", cesium_case("cesium_garbage_jpeg", garbage_jpeg), ORANGE, garbage_jpeg[1000:1064],
     "JPEG image header does not decode"),
    ("cesium_not_an_image", cesium_case("cesium_not_an_image", b"not a picture\n" * 500), ORANGE,
     b"not a picture\n" * 4, "is not an image"),
]
fox_path, fox_garbage = fox_case("fox_garbage_png")
cases.append(("fox_garbage_png", fox_path, WHITE, fox_garbage[1000:1064], "PNG image (1024 x 1024) does not decode"))

def base_colour_cels(name, png, base):
    """Whether the body is drawn in flat tones of `base`: its most common colour (the lit tone) is
    the base colour on at least half of it, and two tones (lit and shadow) cover 90 % of it."""
    colours = body_colours(png)
    total = sum(colours.values())
    lit, count = colours.most_common(1)[0]
    want = tuple(round(c * 255) for c in base[:3])
    two = sum(n for _, n in colours.most_common(2)) / total
    print(f"{name}: lit tone {lit} (base colour {want}) covers {count / total:.2f}; two tones {two:.2f}")
    return max(abs(a - b) for a, b in zip(lit, want)) <= 3 and count / total >= 0.5 and two >= 0.9


# The control: CesiumMan with its intact JPEG and the same orange base colour draws its texture
# (white and striped, multiplied by orange), so the measure fails on it.
r, out = render("cesium_intact", cesium_case("cesium_intact", jpeg))
if r.returncode != 0:
    failures.append(f"intact CesiumMan: render exited {r.returncode}: {r.stderr.strip()}")
elif base_colour_cels("cesium_intact", os.path.join(out, "frame_00010.png"), ORANGE):
    failures.append("intact CesiumMan: drawn in flat base-colour tones, not its texture: the measure cannot tell")

for name, path, base, broken, why in cases:
    base_name = os.path.basename(path)
    r, out = render(name, path)
    warn = r.stderr
    if r.returncode != 0:
        failures.append(f"{name}: render exited {r.returncode}: {warn.strip()}")
        continue
    want_warning = f"koma: warning: {path}: image 0"
    if want_warning not in warn or why not in warn or "keeps its base colour" not in warn:
        failures.append(f"{name}: render: no warning '{want_warning} ... {why} ... keeps its base colour': {warn.strip()}")
    if not base_colour_cels(name, os.path.join(out, "frame_00010.png"), base):
        failures.append(f"{name}: the body is not drawn in flat tones of its base colour {base[:3]}")
    for ext in ("glb", "fbx"):
        target = os.path.join(work, f"{name}.{ext}")
        r = run("convert", path, target)
        if r.returncode != 0:
            failures.append(f"{name}: convert to .{ext} exited {r.returncode}: {r.stderr.strip()}")
            continue
        if want_warning not in r.stderr:
            failures.append(f"{name}: convert to .{ext}: no warning naming {base_name} and image 0: {r.stderr.strip()}")
        data = open(target, "rb").read()
        if broken in data:
            failures.append(f"{name}: {target} holds the undecodable image's bytes")
        if ext == "glb":
            doc = glb_json(data)
            if doc.get("images") or "baseColorTexture" in json.dumps(doc.get("materials", [])):
                failures.append(f"{name}: {target} still has an image or a base colour texture")
        back = run("info", target)
        if back.returncode != 0:
            failures.append(f"{name}: {target} does not read back: {back.stderr.strip()}")

# Confinement is untouched: an image URI out of the folder is refused, even for a good picture.
outside = os.path.join(work, "outside")
os.makedirs(outside)
shutil.copy(os.path.join(cesium, "CesiumMan_img0.jpg"), os.path.join(outside, "skin.jpg"))
escape = cesium_case("cesium_image_outside", jpeg, image_uri="../outside/skin.jpg")
r = run("convert", escape, os.path.join(work, "escape.glb"))
if r.returncode != 3 or "outside that folder" not in r.stderr or os.path.exists(os.path.join(work, "escape.glb")):
    failures.append(f"image URI out of the folder: exit {r.returncode} (want 3, 'outside that folder'): {r.stderr.strip()}")

for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
