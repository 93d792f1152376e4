#!/bin/sh
# The compiler launcher of koma's builds (CMAKE_CXX_COMPILER_LAUNCHER, set by CMakeLists.txt when
# KOMA_CCACHE is ON): runs the compile through ccache when ccache is installed, else the compiler
# itself, so a build dir configured with ccache keeps working after ccache is removed.
#   ccache-launch.sh BASE_DIR COMPILER ARGS...
# BASE_DIR is the folder above the checkout. With it as ccache's base_dir and hash_dir off, a fresh
# clone in another folder (CI) hits the cache that this one filled: ccache rewrites the absolute
# paths below it to relative ones. Settings the user exported (CCACHE_BASEDIR, CCACHE_HASHDIR or
# CCACHE_NOHASHDIR) win; the cache itself is ccache's usual ~/.cache/ccache.
base=$1
shift
if command -v ccache >/dev/null 2>&1; then
  : "${CCACHE_BASEDIR:=$base}"
  export CCACHE_BASEDIR
  if [ -z "${CCACHE_HASHDIR+x}" ] && [ -z "${CCACHE_NOHASHDIR+x}" ]; then
    export CCACHE_NOHASHDIR=1
  fi
  exec ccache "$@"
fi
exec "$@"
