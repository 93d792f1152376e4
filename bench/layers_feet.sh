#!/bin/sh
# Feet under `koma keys --layers legs:3` on the Bandai-Namco punch (issue 19): the lowest foot point
# and the worst one-frame slide of a planted foot (input foot within 3 cm of its lowest and moving
# < 1 cm/frame), for the held output against the input at 24 fps.
#   bench/layers_feet.sh [koma binary] [shared/data dir]
set -e
KOMA=${1:-build/release/apps/koma/koma}
DATA=${2:-../shared/data}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$KOMA" convert "$DATA/bvh/styles/bandai-namco-1/dataset-1_punch_normal_001.bvh" "$T/in24.bvh" --fps 24 >/dev/null
"$KOMA" keys "$T/in24.bvh" -o "$T/held.bvh" --fps source --layers legs:3 >/dev/null
"$KOMA" positions "$T/in24.bvh" -o "$T/in.csv" --out-unit m >/dev/null
"$KOMA" positions "$T/held.bvh" -o "$T/held.csv" --out-unit m >/dev/null
/usr/bin/python3 - "$T/in.csv" "$T/held.csv" <<'PY'
import sys
import numpy as np
def load(p):
    return open(p).readline().strip().split(","), np.loadtxt(p, delimiter=",", skiprows=1)
h, a_all = load(sys.argv[1])
_, b_all = load(sys.argv[2])
feet = sorted({n.rsplit(".", 1)[0] for n in h if n.startswith(("Foot_L", "Foot_R", "Toes_L", "Toes_R"))})
slide, low_in, low_out = 0.0, 1e9, 1e9
for n in feet:
    i = h.index(n + ".x")
    a, b = a_all[:, i:i + 3], b_all[:, i:i + 3]
    low_in, low_out = min(low_in, a[:, 1].min()), min(low_out, b[:, 1].min())
    low = a[:, 1] < a[:, 1].min() + 0.03
    planted = low[1:] & low[:-1] & (np.linalg.norm(np.diff(a[:, [0, 2]], axis=0), axis=1) < 0.01)
    moved = np.linalg.norm(np.diff(b[:, [0, 2]], axis=0), axis=1)
    if planted.any():
        slide = max(slide, moved[planted].max())
print(f"lowest foot point {low_out * 100:.1f} cm (input {low_in * 100:.1f} cm); "
      f"worst one-frame slide of a planted foot {slide * 100:.1f} cm")
PY
