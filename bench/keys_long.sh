#!/usr/bin/env bash
# Long takes at disk speed (issue 43 part 2): times the whole `koma keys IN.bvh -o OUT --fps source
# --ratio 0.1` call at --max-hold 48 and at the default hold (2 s = 240 frames at 120 fps), with its
# peak memory, on takes of N frames, against a baseline measured in the same run: `koma convert` of
# the same take (read + write, no selection: koma's own disk speed). Prints the CPU flags and the
# load average around every measurement, the median of R runs (runs of the cases interleaved, so
# load drifts spread over all of them), each case's ratio to its baseline, and the growth ratio
# between sizes 10x apart (the issue's "10x the frames costs at most 12x the time").
#
#   bash bench/keys_long.sh [build dir] [frame counts...]     e.g. bash bench/keys_long.sh build/release 20000 200000 1000000
#
# Environment: R (runs per case, default 3); KOMA_TAKE = cmu (CMU 01_01, 2752 frames at 120 fps,
# 31 joints + 7 end sites: the take of the issue's figures, read from the shared corpus, never
# copied into the repository) or sample (koma's own built-in walk, `koma demo`, converted to
# 120 fps: 19 joints); default cmu when the corpus is there. Takes are written to a temporary
# folder and removed afterwards. Needs GNU time and /usr/bin/python3.
set -euo pipefail
build=${1:-build/release}
shift || true
sizes=("${@:-20000 200000}")
read -r -a sizes <<<"${sizes[*]}"
runs=${R:-3}
koma="$(cd "$build" && pwd)/apps/koma/koma"
cmu="${KOMA_SHARED_DATA:-$(dirname "$0")/../../shared/data}/bvh/cmu/assimp/01_01.bvh"
take_kind=${KOMA_TAKE:-$([ -f "$cmu" ] && echo cmu || echo sample)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "CPU flags: $(grep -o -w -E 'avx512f|avx2|fma' /proc/cpuinfo | sort -u | tr '\n' ' ')($(nproc) cores)"
echo "koma: $koma ($(KOMA_ISA= "$koma" --version 2>/dev/null | head -1))"
if [ "$take_kind" = cmu ]; then
  [ -f "$cmu" ] || { echo "keys_long.sh: $cmu not found (KOMA_TAKE=sample uses the built-in walk)" >&2; exit 2; }
  base="$cmu"
else
  "$koma" demo -o "$tmp/demo" >/dev/null
  "$koma" convert "$tmp/demo/walk.bvh" "$tmp/walk120.bvh" --fps 120 >/dev/null
  base="$tmp/walk120.bvh"
fi
echo "take: $take_kind ($base repeated to N frames)"

make_take() {  # make_take SOURCE OUT N: the source's motion rows repeated to N frames
  /usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(src).read().split("\n")
m = next(i for i, l in enumerate(lines) if l.strip() == "MOTION")
rows = [l for l in lines[m + 3:] if l.strip()]
with open(out, "w") as f:
    f.write("\n".join(lines[:m + 1]) + f"\nFrames: {n}\n{lines[m + 2]}\n")
    k = 0
    while k < n:
        chunk = rows[:min(len(rows), n - k)]
        f.write("\n".join(chunk) + "\n")
        k += len(chunk)
PY
}

# One run of a case: prints "wall user sys rss_kb" (rss in KB). A fresh output file per run
# (replacing a large file would add its page-cache teardown to the timing).
run_case() {  # run_case TAKE CASE
  local take=$1 case=$2 args
  case $case in
    convert) args=(convert "$take" "$tmp/out.bvh") ;;
    hold48) args=(keys "$take" -o "$tmp/out.bvh" --fps source --ratio 0.1 --max-hold 48) ;;
    default) args=(keys "$take" -o "$tmp/out.bvh" --fps source --ratio 0.1) ;;
  esac
  rm -f "$tmp/out.bvh"
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/time.txt" "$koma" "${args[@]}" >/dev/null
  cat "$tmp/time.txt"
}

declare -A median
for n in "${sizes[@]}"; do
  take="$tmp/take_$n.bvh"
  make_take "$base" "$take" "$n"
  echo
  echo "== $n frames ($(du -m "$take" | cut -f1) MB), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  declare -A walls=() cpus=() rss=()
  for ((r = 1; r <= runs; ++r)); do
    for c in convert hold48 default; do
      read -r wall user sys kb < <(run_case "$take" "$c")
      walls[$c]+="$wall "
      cpus[$c]+="$(/usr/bin/python3 -c "print($user + $sys)") "
      rss[$c]+="$kb "
    done
  done
  for c in convert hold48 default; do
    /usr/bin/python3 - "$n" "$c" "${walls[$c]}" "${cpus[$c]}" "${rss[$c]}" "${walls[convert]}" "${cpus[convert]}" <<'PY'
import statistics as st, sys
n, case, walls, cpus, rss, bw, bc = sys.argv[1], sys.argv[2], *[list(map(float, a.split())) for a in sys.argv[3:]]
label = {"convert": "koma convert (baseline: read + write)", "hold48": "keys --ratio 0.1 --max-hold 48",
         "default": "keys --ratio 0.1, default hold (240)"}[case]
mw, mc = st.median(walls), st.median(cpus)
print(f"{n:>8} {label:<40} wall {mw:6.2f} s [{min(walls):.2f}-{max(walls):.2f}]  cpu {mc:6.2f} s  "
      f"peak RSS {max(rss) / 1048576:5.2f} GiB  wall / baseline {mw / st.median(bw):5.2f}  cpu / baseline {mc / st.median(bc):5.2f}")
PY
    median[$n,$c]=$(/usr/bin/python3 -c "import statistics,sys; print(statistics.median(map(float, sys.argv[1].split())))" "${walls[$c]}")
    median[$n,$c,cpu]=$(/usr/bin/python3 -c "import statistics,sys; print(statistics.median(map(float, sys.argv[1].split())))" "${cpus[$c]}")
  done
  echo "   load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  rm -f "$take" "$tmp/out.bvh"
done

echo
echo "Growth (medians; target: 10x the frames at most 12x the time):"
for a in "${sizes[@]}"; do
  for b in "${sizes[@]}"; do
    [ "$b" -eq $((a * 10)) ] || continue
    for c in convert hold48 default; do
      /usr/bin/python3 -c "import sys; a,b,c,wa,wb,ca,cb = sys.argv[1:]; print(f'  {b} / {a} frames, {c:<8} wall {float(wb)/float(wa):5.2f}x  cpu {float(cb)/float(ca):5.2f}x')" \
        "$a" "$b" "$c" "${median[$a,$c]}" "${median[$b,$c]}" "${median[$a,$c,cpu]}" "${median[$b,$c,cpu]}"
    done
  done
done
