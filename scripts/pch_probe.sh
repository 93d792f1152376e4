#!/usr/bin/env bash
# What precompiled headers would save (docs/reliability.md, "Precompiled headers: measured, not
# used"): each file below is compiled alone with the Release (gcc -O3) and asan (clang -O1, ASan +
# UBSan) flags, without and with a PCH of the headers it shares with the others, and the CPU time
# (user + sys) of each compile is printed. No build folder is needed; nothing is cached.
#   scripts/pch_probe.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

warn="-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion -Wnon-virtual-dtor -Wold-style-cast -Werror"
inc="-DFMT_SHARED -DGTEST_HAS_PTHREAD=1 -DKOMA_HAVE_VIDEO=1 -DKOMA_VERSION=\"0.1.0\" -DKOMA_VIEW_ASSETS_DIR=\"/x\" -I$root/include -I$root/tests/support
     -I$root/src/io -I$root/src/gait -I$root/src/keys -isystem /usr/include/eigen3"
declare -A compiler=([gcc]=g++ [clang]=clang++)
declare -A flags=(
  [gcc]="-std=c++20 -O3 -DNDEBUG -fPIE $warn $inc"
  [clang]="-std=c++20 -O1 -gline-tables-only -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -fPIE $warn $inc"
)
printf '#include <Eigen/Core>\n#include <Eigen/Geometry>\n#include <fmt/format.h>\n#include <nlohmann/json.hpp>\n#include <gtest/gtest.h>\n#include <algorithm>\n#include <filesystem>\n#include <map>\n#include <optional>\n#include <span>\n#include <string>\n#include <vector>\n' > "$work/shared.hpp"
printf '#include <CLI/CLI.hpp>\n#include <nlohmann/json.hpp>\n#include <fmt/format.h>\n#include <Eigen/Core>\n#include <Eigen/Geometry>\n#include <filesystem>\n#include <string>\n#include <vector>\n' > "$work/cli.hpp"
shared_files=(tests/core/rotation_test.cpp tests/io/gltf_test.cpp tests/timing/retime_test.cpp src/keys/metric.cpp src/gait/adverb.cpp)
cli_files=(apps/koma/cmd_info.cpp apps/koma/cmd_view.cpp apps/koma/flags.cpp)

cpu() {  # CPU seconds of one command; its errors go to stderr
  /usr/bin/time -f '%U %S' -o "$work/time" "$@" >/dev/null
  awk '{printf "%.2f", $1 + $2}' "$work/time"
}
# header costs: each heavy header alone in a file
for h in CLI/CLI.hpp nlohmann/json.hpp Eigen/Geometry gtest/gtest.h fmt/format.h; do
  echo "#include <$h>" > "$work/one.cpp"
  for c in gcc clang; do
    # shellcheck disable=SC2086
    printf '%-18s %-5s alone %s s\n' "$h" "$c" "$(cpu ${compiler[$c]} ${flags[$c]} -c "$work/one.cpp" -o "$work/one.o")"
  done
done
for c in gcc clang; do
  for pch in shared cli; do
    if [ "$c" = gcc ]; then
      # shellcheck disable=SC2086
      t=$(cpu g++ ${flags[gcc]} -x c++-header "$work/$pch.hpp" -o "$work/$pch.hpp.gch")
      use=(-include "$work/$pch.hpp")
      size=$(stat -c %s "$work/$pch.hpp.gch")
    else
      # shellcheck disable=SC2086
      t=$(cpu clang++ ${flags[clang]} -x c++-header "$work/$pch.hpp" -Xclang -fno-pch-timestamp -o "$work/$pch.hpp.pch")
      use=(-Xclang -include-pch -Xclang "$work/$pch.hpp.pch" -include "$work/$pch.hpp")
      size=$(stat -c %s "$work/$pch.hpp.pch")
    fi
    echo "$c: making the $pch PCH: $t s, $(( size / 1000000 )) MB"
    files=("${shared_files[@]}")
    [ "$pch" = cli ] && files=("${cli_files[@]}")
    for f in "${files[@]}"; do
      # shellcheck disable=SC2086
      plain=$(cpu ${compiler[$c]} ${flags[$c]} -c "$f" -o "$work/a.o")
      # shellcheck disable=SC2086
      with=$(cpu ${compiler[$c]} ${flags[$c]} "${use[@]}" -c "$f" -o "$work/b.o")
      printf '%-5s %-32s %6s s -> %6s s with the PCH\n' "$c" "$f" "$plain" "$with"
    done
  done
done
