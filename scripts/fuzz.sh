#!/usr/bin/env bash
# Fuzzes koma's readers with libFuzzer under ASan + UBSan (issue 17).
#
#   scripts/fuzz.sh [SECONDS_PER_HARNESS] [HARNESS...]     default: 60 s each, every harness
#   FUZZ_RUNS=10000000 scripts/fuzz.sh 0 points_csv        a campaign of a fixed number of executions
#   FUZZ_TIMEOUT=60 ...                                    seconds before an input counts as a hang (default 10)
#   FUZZ_JOBS=1 ...                                        harnesses at a time (default: nproc)
#   FUZZ_MAX_LEN=16384 ...                                 cap input length (default 256 KiB): the
#                                                          BVH and glTF harnesses run 4-20x faster
# fuzz_gltf_uris and fuzz_gltf parse in the harness's own process (KOMA_READ_IN_PROCESS=1), so
# libFuzzer sees tinygltf's coverage. fuzz_fbx reads in a child process as koma does for a user (an
# assimp crash must become bad_file); KOMA_FUZZ_IN_PROCESS=1 scripts/fuzz.sh 600 fbx parses in-process
# to hunt for assimp faults the pre-checks could name (assimp 5.2.5 has more: each is then a finding).
#
# The harnesses are built in build/asan, the asan preset's tree (clang 14, ASan + UBSan, libFuzzer's
# coverage on every library; Debian: clang, libfuzzer-14-dev), which `make test-asan` shares.
# Seeds each corpus (build/fuzz/corpus/) from tests/data, tests/data/malformed and ../shared/data
# when present, runs the harnesses for the budget, as many at a time as there are cores, and prints
# executions and coverage per harness. A finding is written to build/fuzz/findings/ and the script
# exits non-zero; add the input to tests/data/malformed/<harness>/ once it is fixed, so the CTest
# koma_fuzz_replay_test (FuzzReplay.*) replays it on every build.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
shift || true
HARNESSES=("$@")
[ ${#HARNESSES[@]} -eq 0 ] && HARNESSES=(bvh gltf fbx gltf_uris points_csv gait_json keys_report)
TREE=build/asan
BUILD=build/fuzz
cmake --preset asan >/dev/null
cmake --build "$TREE" -j "$(nproc)" --target $(printf 'fuzz_%s ' "${HARNESSES[@]}") >/dev/null
SHARED=../shared/data
mkdir -p "$BUILD/findings"
# fuzz_one HARNESS: seeds its corpus, runs it, prints one line; exits 1 on a finding.
fuzz_one() {
  local h=$1 status=0
  corpus="$BUILD/corpus/$h"
  mkdir -p "$corpus"
  [ -d "tests/data/malformed/$h" ] && cp -n tests/data/malformed/$h/* "$corpus/" 2>/dev/null || true
  case $h in
    bvh)
      cp -n tests/data/*.bvh "$corpus/" 2>/dev/null || true
      # small real takes only: the fuzzer mutates faster on short inputs
      [ -d "$SHARED" ] && find "$SHARED" -name '*.bvh' -size -64k -print0 | head -z -n 40 | xargs -0 -r cp -n -t "$corpus/" ;;
    gltf)
      cp -n tests/data/*.gltf tests/data/*.glb "$corpus/" 2>/dev/null || true
      [ -d "$SHARED/fbx" ] && find "$SHARED/fbx" \( -name '*.glb' -o -name '*.gltf' \) -size -256k -print0 | xargs -0 -r cp -n -t "$corpus/" ;;
    fbx)
      # generated FBX (tests/io/fbx_recipes.py: binary 7400/7500, zlib arrays, ASCII) and the small real ones
      python3 tests/io/fbx_recipes.py --seeds "$corpus" 2>/dev/null || true
      [ -d "$SHARED/fbx" ] && find "$SHARED/fbx" -name '*.fbx' -size -256k -print0 | xargs -0 -r cp -n -t "$corpus/" ;;
    gltf_uris) export KOMA_FUZZ_SEEDS="$corpus" ;;  # the harness writes its URI seeds (fuzz/harnesses.hpp)
    points_csv) cp -n tests/data/*.csv "$corpus/" 2>/dev/null || true ;;
    gait_json) cp -n tests/data/*.gait.json tests/data/*.adverb.json "$corpus/" 2>/dev/null || true ;;
    keys_report) cp -n tests/data/*report*.json "$corpus/" 2>/dev/null || true ;;
  esac
  [ -n "$(ls -A "$corpus")" ] || echo x > "$corpus/seed"
  log="$BUILD/fuzz_$h.log"
  budget=(-max_total_time="$SECONDS_EACH")
  [ -n "${FUZZ_RUNS:-}" ] && budget=(-runs="$FUZZ_RUNS")
  # assimp leaks on its error paths (fuzz/fbx_fuzz.cpp suppresses those reports); libFuzzer's
  # leak check after each such input took 70 % of fuzz_fbx's time, so it is off for that harness.
  extra=()
  [ "$h" = fbx ] && extra=(-detect_leaks=0)
  start=$(date +%s)
  if ! "$TREE/fuzz/fuzz_$h" "${budget[@]}" "${extra[@]}" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=4096 -max_len="${FUZZ_MAX_LEN:-262144}" \
       -artifact_prefix="$BUILD/findings/$h-" -print_final_stats=1 "$corpus" >"$log" 2>&1; then
    echo "fuzz_$h: FINDING (see $log and $BUILD/findings/)"
    status=1
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
  unset KOMA_FUZZ_SEEDS
  echo "fuzz_$h: ${execs} executions in $(( $(date +%s) - start )) s, coverage ${cov} edges, corpus $(ls "$corpus" | wc -l) files"
  return $status
}
# FUZZ_JOBS harnesses at a time (each is one process on one core); every exit status counts.
jobs=${FUZZ_JOBS:-$(nproc)}
status=0
pids=()
for h in "${HARNESSES[@]}"; do
  fuzz_one "$h" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
