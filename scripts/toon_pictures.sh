#!/usr/bin/env bash
# Re-makes the toon-look pictures of docs/render.md and the README (docs/img/toon_*.png) from the
# shared corpus with the built koma: every picture is one frame of a `koma render` run.
#   scripts/toon_pictures.sh [build/release/apps/koma/koma] [../shared/data]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
koma="${1:-$here/build/release/apps/koma/koma}"
data="${2:-$here/../shared/data}"
img="$here/docs/img"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# frame NAME FRAME ARGS...: renders PNG frames with ARGS and keeps frame FRAME as docs/img/NAME.png.
frame() {
  local name="$1" n="$2"
  shift 2
  "$koma" render "$@" -o "$work/$name/" -q
  cp "$work/$name/$(printf 'frame_%05d.png' "$n")" "$img/$name.png"
  echo "docs/img/$name.png"
}

# A textured glTF (CesiumMan) and the Fox, perspective, 960x540.
frame toon_cesiumman 14 "$data/gltf/CesiumMan/CesiumMan.gltf" --camera persp --size 960x540
frame toon_fox 30 "$data/gltf/Fox/Fox.glb" --camera persp --size 960x540
# A Quaternius FBX (material colours) walking, beside itself held on 2s (koma keys --on 2).
"$koma" keys "$data/fbx/quaternius_Male_Casual.fbx" --animation 'HumanArmature|Man_Walk' --on 2 \
  -o "$work/male_keys.glb" --report "$work/male_keys.json" >/dev/null
frame toon_compare 9 "$data/fbx/quaternius_Male_Casual.fbx" --animation 'HumanArmature|Man_Walk' \
  --keys "$work/male_keys.json" --camera persp --size 1280x540
# A BVH take: the generated mannequin, a Xia walk in perspective and a Bandai-Namco walk from the side.
frame toon_mannequin 40 "$data/bvh/styles/xia2015/proud_01_000.bvh" --camera persp --size 960x540
# The key-pose contact sheet of a CMU walk on 3s, in the toon look.
"$koma" keys "$data/bvh/styles/bandai-namco-1/dataset-1_walk_normal_001.bvh" --on 3 --fps 24 \
  -o "$work/bn_keys.bvh" --contact-sheet "$img/toon_contact_sheet.png" >/dev/null
echo "docs/img/toon_contact_sheet.png"
