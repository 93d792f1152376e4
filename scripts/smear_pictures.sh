#!/usr/bin/env bash
# Re-makes the smear pictures of docs/keys.md and docs/render.md (docs/img/keys_smear_kick.png)
# from the shared corpus with the built koma: the Bandai-Namco kick (input frames 49..68, the leg
# going up and coming back), held on 2s at 24 fps, as three key-pose contact sheets stacked by
# ffmpeg: as drawn (before), --contact-sheet-smear smear (after) and multiples.
#   scripts/smear_pictures.sh [build/release/apps/koma/koma] [../shared/data]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
koma="${1:-$here/build/release/apps/koma/koma}"
data="${2:-$here/../shared/data}"
img="$here/docs/img"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$koma" convert "$data/bvh/styles/bandai-namco-1/dataset-1_kick_normal_001.bvh" "$work/kick.bvh" \
  --range 49:69 >/dev/null
# One take under three names: the sheet's title is the input's file name.
for mode in off smear multiples; do
  ln -s kick.bvh "$work/kick_$mode.bvh"
  "$koma" keys "$work/kick_$mode.bvh" --on 2 --fps 24 -o "$work/held_$mode.bvh" \
    --contact-sheet "$work/sheet_$mode.png" --contact-sheet-smear "$mode" >/dev/null
done
ffmpeg -loglevel error -y -i "$work/sheet_off.png" -i "$work/sheet_smear.png" -i "$work/sheet_multiples.png" \
  -filter_complex vstack=inputs=3 "$work/stack.png"
mv "$work/stack.png" "$img/keys_smear_kick.png"
echo "docs/img/keys_smear_kick.png"
