#!/usr/bin/env bash
# Times the whole `koma keys` call on long takes, per SIMD path, with peak memory (the CLI rows of
# docs/perf.md "At scale, per SIMD path"). Takes are CMU 01_01.bvh repeated to N frames (written to
# a temporary folder, removed afterwards); needs the shared corpus and GNU time.
#
#   bash bench/keys_scale.sh [build dir] [frame counts...]      e.g. bash bench/keys_scale.sh build/release 10000 1000000
set -euo pipefail
build=${1:-build/release}
shift || true
sizes=("${@:-10000}")
koma="$build/apps/koma/koma"
src="${KOMA_SHARED_DATA:-$(dirname "$0")/../../shared/data}/bvh/cmu/assimp/01_01.bvh"
[ -f "$src" ] || { echo "keys_scale.sh: $src not found (set KOMA_SHARED_DATA)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "CPU flags: $(grep -m1 -o -w -E 'sse4_2|avx|avx2|fma|bmi2|avx512f|avx512bw|avx512dq|avx512vl' /proc/cpuinfo | tr '\n' ' ')"
for n in "${sizes[@]}"; do
  take="$tmp/take_$n.bvh"
  /usr/bin/python3 - "$src" "$take" "$n" <<'PY'
import sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(src).read().split("\n")
m = lines.index("MOTION")
rows = [l for l in lines[m + 3:] if l.strip()]
with open(out, "w") as f:
    f.write("\n".join(lines[:m + 1]) + f"\nFrames: {n}\n{lines[m + 2]}\n")
    k = 0
    while k < n:
        chunk = rows[:min(len(rows), n - k)]
        f.write("\n".join(chunk) + "\n")
        k += len(chunk)
PY
  keys=$((n / 3))
  for isa in scalar avx2 avx512; do
    if ! KOMA_ISA=$isa "$koma" --version >/dev/null 2>&1; then echo "$n frames $isa: not supported here"; continue; fi
    rm -f "$tmp/out.bvh"  # replacing a 750 MB file would add its page-cache teardown to the timing
    /usr/bin/time -f "$n frames $isa, n = N/3, --max-hold 48: wall %e s, user %U s, system %S s, peak RSS %M KB" \
      env KOMA_ISA=$isa "$koma" keys "$take" -o "$tmp/out.bvh" --fps source --keys "$keys" --max-hold 48 \
      2>&1 >/dev/null | grep -E "frames $isa"
  done
  [ "$n" -le 20000 ] && rm -f "$tmp/out.bvh" && /usr/bin/time -f "$n frames avx2, --exact-method levels: wall %e s, user %U s, peak RSS %M KB" \
    env KOMA_ISA=avx2 "$koma" keys "$take" -o "$tmp/out.bvh" --fps source --keys "$keys" --max-hold 48 --exact-method levels \
    2>&1 >/dev/null | grep -E "levels"
  # The issue's long-take call: --ratio 0.1, with the 48-frame hold of its measurement and with the
  # default hold (2 s of output: 240 frames at the source's 120 fps).
  if [ "$n" -ge 100000 ]; then
    for hold in "--max-hold 48" ""; do
      rm -f "$tmp/out.bvh"
      /usr/bin/time -f "$n frames avx2, --ratio 0.1 ${hold:-default hold}: wall %e s, user %U s, system %S s, peak RSS %M KB" \
        env KOMA_ISA=avx2 "$koma" keys "$take" -o "$tmp/out.bvh" --fps source --ratio 0.1 $hold --json \
        2>&1 >"$tmp/summary.json" | grep -E "ratio"
      /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); c=d['layers'][0]['certificate']; print('   keys', d['key_count'], 'optimal', c['optimal'], 'solves', c['solves'], 'selection', round(d['seconds'], 2), 's')" "$tmp/summary.json"
    done
  fi
  rm -f "$take"
done
