#!/usr/bin/env bash
# Installs the Debian packages koma needs to build, test and run its demo.
# Only packages that are missing are installed; safe to re-run; non-interactive.
#   KOMA_DEPS_DRY_RUN=1  print what would be installed and exit.
set -euo pipefail

packages=(
  # toolchain; ccache keeps rebuilds and CI fast (cmake/ccache-launch.sh: builds work without it)
  build-essential cmake pkg-config ccache
  # architecture checks (tests/arch: function lengths)
  universal-ctags
  # core math and CLI
  libeigen3-dev libcli11-dev nlohmann-json3-dev libfmt-dev libtbb-dev
  # tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # fuzzing (make fuzz, scripts/fuzz.sh): clang with libFuzzer, ASan and UBSan
  clang libfuzzer-14-dev
  # Python module (pybind11 + numpy for /usr/bin/python3) and its pytest suite
  pybind11-dev python3-dev python3-numpy python3-pytest python3-hypothesis
  # koma.batch on a cluster (Dask distributed: LocalCluster, dask-scheduler, dask-worker); pandas
  # turns the summary into a DataFrame
  python3-dask python3-distributed python3-pandas
  # Blender 3.4 for the add-on's headless tests (measured: 2 min 48 s to download and install);
  # a virtual X display for the screenshots of its panel (Blender's UI needs a window)
  blender xvfb xauth
  # glTF 2.0 (tinygltf is header-only; its image loader uses stb)
  libtinygltf-dev libstb-dev
  # FBX input (binary and ASCII FBX 7.x), read through assimp in src/io/fbx_read.cpp only
  libassimp-dev
  # the FBX pre-check inflates zlib arrays (src/io/fbx_precheck.cpp)
  zlib1g-dev
  # render: figure rasteriser, sheets and plots (Cairo), video encoding and decoding (ffmpeg program),
  # PNGs written band by band (libpng: contact sheets of long videos never exist whole)
  libcairo2-dev libpng-dev ffmpeg
  # toon renderer: OpenGL 3.3 core through EGL, headless (Mesa's surfaceless platform: llvmpipe on
  # the CPU, the GPU's driver where there is one), GL loaded by libepoxy
  libegl-dev libepoxy-dev libgl1-mesa-dri libegl-mesa0
  # video (KOMA_BUILD_VIDEO): three OpenCV modules (regions, optical flow)
  libopencv-core-dev libopencv-imgproc-dev libopencv-video-dev
  # web viewer (koma view): npm fetches the locked three.js into view/node_modules; its tests drive
  # headless Chromium over the DevTools protocol from Python (python3-websocket) and read its
  # screenshots with python3-pil. Debian's npm
  # package is added below only when no npm is installed (a nodejs that bundles npm conflicts with it).
  nodejs chromium python3-websocket python3-pil
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# The viewer's three.js: exactly the version and integrity hash of view/package-lock.json.
vendor_three() {
  local view_dir
  view_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/view"
  if [ "${KOMA_DEPS_DRY_RUN:-0}" = 1 ]; then
    echo "install-deps: would run npm ci in $view_dir"
    return
  fi
  # npm's record of what it installed, newer than the lock file: already done
  if [ "$view_dir/node_modules/.package-lock.json" -nt "$view_dir/package-lock.json" ]; then
    echo "install-deps: three.js already installed in $view_dir/node_modules"
    return
  fi
  echo "install-deps: npm ci in $view_dir (three.js for koma view)"
  (cd "$view_dir" && npm ci --no-audit --no-fund --loglevel=error)
}

if ! command -v npm >/dev/null 2>&1; then missing+=(npm); fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  if [ "${KOMA_DEPS_DRY_RUN:-0}" != 1 ]; then
    sudo_cmd=()
    if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
fi
vendor_three
