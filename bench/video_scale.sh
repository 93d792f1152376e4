#!/usr/bin/env bash
# Video at scale (docs/perf.md "Video at scale", issue 43): time and peak memory of `koma keys` on
# long videos, each beside a plain ffmpeg decode of the same clip measured in the same run (the
# "real time" baseline). The clips are made here with ffmpeg (in a temporary folder, removed
# afterwards; nothing is committed):
#
#   gif37     37 s, 1600x720 GIF at 12 fps: the shared 01_01_bvh.gif (a character on a light
#             background, 720x1600) looped and turned to 1600x720, the size of the held-out case
#   gif37s    37 s, 1600x720 GIF at 25 fps of ffmpeg's testsrc2 (64 colours, no dithering)
#   clip5m    5 minutes of 1080p H.264 at 24 fps of testsrc2
#
#   bash bench/video_scale.sh [build dir] [case ...]      e.g. bash bench/video_scale.sh build/release gif37 clip5m
#
# Prints the CPU flags, then per run: wall, CPU (user + system of koma and its ffmpeg children),
# peak resident memory (koma, or the largest child it ran), and x real time = clip seconds / wall.
set -euo pipefail
build=${1:-build/release}
shift || true
cases=("${@:-gif37 gif37s clip5m}")
read -r -a cases <<< "${cases[*]}"
koma="$build/apps/koma/koma"
shared="${KOMA_SHARED_DATA:-$(dirname "$0")/../../shared/data}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "CPU flags: $(grep -m1 -o -w -E 'sse4_2|avx|avx2|fma|bmi2|avx512f|avx512bw|avx512dq|avx512vl' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "cores: $(nproc), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
timed() {  # label, command...
  /usr/bin/time -f "$1: wall %e s, CPU %U + %S s, peak RSS %M KB" "${@:2}" 2>&1 >/dev/null | grep -F "$1:"
}
for c in "${cases[@]}"; do
  case $c in
    gif37)
      [ -f "$shared/video/01_01_bvh.gif" ] || { echo "gif37: $shared/video/01_01_bvh.gif missing"; continue; }
      clip="$tmp/gif37.gif"; secs=37
      ffmpeg -nostdin -v error -y -stream_loop 1 -i "$shared/video/01_01_bvh.gif" -vf "transpose=1,trim=duration=37" -r 12 "$clip" ;;
    gif37s)
      clip="$tmp/gif37s.gif"; secs=37
      ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=1600x720:rate=25:duration=37" \
        -filter_complex "[0]split[a][b];[a]palettegen=max_colors=64[p];[b][p]paletteuse=dither=none" "$clip" ;;
    clip5m)
      clip="$tmp/clip5m.mp4"; secs=300
      ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=1920x1080:rate=24:duration=300" -c:v libx264 -preset ultrafast \
        -crf 23 -pix_fmt yuv420p "$clip" ;;
    *) echo "unknown case $c (gif37, gif37s, clip5m)"; continue ;;
  esac
  echo "== $c: $(ffprobe -v error -select_streams v:0 -show_entries stream=width,height,r_frame_rate,nb_frames -of csv=p=0 "$clip"), ${secs} s"
  timed "baseline ffmpeg decode (analysis size)" ffmpeg -nostdin -v error -i "$clip" -vf "scale=640:-2:flags=area" -f rawvideo -pix_fmt rgb24 -y /dev/null
  timed "baseline ffmpeg decode (full size)" ffmpeg -nostdin -v error -i "$clip" -f rawvideo -pix_fmt rgb24 -y /dev/null
  for sheet in "" "--contact-sheet $tmp/sheet.png"; do
    rm -f "$tmp/held.mp4" "$tmp/sheet.png"
    label="koma keys --on 2 ${sheet:+--contact-sheet}"
    out=$(/usr/bin/time -f "TIME %e %U %S %M" "$koma" keys "$clip" -o "$tmp/held.mp4" --on 2 $sheet 2>&1)
    read -r _ wall user sys rss <<< "$(grep '^TIME' <<< "$out")"
    echo "$label: wall $wall s, CPU $user + $sys s, peak RSS $rss KB, $(/usr/bin/python3 -c "print(f'{$secs / $wall:.2f}')")x real time"
    grep -E "region tracks|time:" <<< "$out" | sed 's/^/    /'
  done
  rm -f "$clip"
done
