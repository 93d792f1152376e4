#!/bin/sh
# The before/after pictures of docs/cartoon.md "Within a body's reach": CMU 05_14 at the kick
# settings, frames 6-17 (front) and 520-531 (side), drawn over the input.
#   scripts/cartoon_bound_pictures.sh BEFORE_KOMA [AFTER_KOMA] [DATA]
# BEFORE_KOMA: a koma binary built from the commit before the bound (29f2dc1); AFTER_KOMA defaults
# to build/release/apps/koma/koma, DATA to ../shared/data. Needs this build's Python module
# (PYTHONPATH=build/release/python) to cut the frames. Writes docs/img/cartoon_bound_0514_*.png.
set -eu
before=$1
after=${2:-build/release/apps/koma/koma}
data=${3:-../shared/data}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
take="$data/bvh/cmu/cmu-daz/05_14.bvh"
"$before" cartoon "$take" -o "$tmp/before.bvh" --strength 20 --sigma 0.15s --keep-feet >/dev/null
"$after" cartoon "$take" -o "$tmp/after.bvh" --strength 20 --sigma 0.15s --keep-feet >/dev/null 2>&1
/usr/bin/python3 - "$take" "$tmp" <<'PY'
import sys, warnings
warnings.simplefilter("ignore")
import koma
take, tmp = sys.argv[1], sys.argv[2]
for tag, path in (("in", take), ("before", f"{tmp}/before.bvh"), ("after", f"{tmp}/after.bvh")):
    m = koma.read(path)
    for first in (6, 520):
        koma.write(f"{tmp}/{tag}_{first}.bvh", koma.cut(m, first, first + 12))
PY
for tag in before after; do
  "$after" render "$tmp/${tag}_6.bvh" --compare "$tmp/in_6.bvh" -o "$tmp/${tag}_6/" --size 640x360 --layout overlay --camera front -q >/dev/null
  "$after" render "$tmp/${tag}_520.bvh" --compare "$tmp/in_520.bvh" -o "$tmp/${tag}_520/" --size 640x360 --layout overlay --camera side -q >/dev/null
  cp "$tmp/${tag}_6/frame_00001.png" "docs/img/cartoon_bound_0514_${tag}.png"
  cp "$tmp/${tag}_520/frame_00001.png" "docs/img/cartoon_bound_0514_leap_${tag}.png"
done
echo "wrote docs/img/cartoon_bound_0514_{before,after}.png and cartoon_bound_0514_leap_{before,after}.png"
