#!/bin/sh
# build.ccache_launcher: cmake/ccache-launch.sh compiles through ccache when it is on PATH, with the
# settings that let another checkout hit the cache, and runs the compiler itself when ccache is gone
# (a user who removes it keeps a working build folder).
#   ccache_launcher_test.sh LAUNCHER WORKDIR
set -eu
launcher=$1
work=$2
rm -rf "$work"
mkdir -p "$work/with" "$work/without"
# A stand-in ccache that reports what it was given.
cat > "$work/with/ccache" <<'FAKE'
#!/bin/sh
echo "ccache base=$CCACHE_BASEDIR nohashdir=${CCACHE_NOHASHDIR:-} args=$*"
FAKE
chmod +x "$work/with/ccache"
fail() { echo "FAIL: $*"; exit 1; }

out=$(env -u CCACHE_BASEDIR -u CCACHE_NOHASHDIR -u CCACHE_HASHDIR PATH="$work/with" \
      /bin/sh "$launcher" /the/base /bin/echo compiled)
echo "with ccache:    $out"
[ "$out" = "ccache base=/the/base nohashdir=1 args=/bin/echo compiled" ] ||
  fail "expected the compile to go through ccache with base_dir and no dir hash"

out=$(env CCACHE_BASEDIR=/mine CCACHE_HASHDIR=1 PATH="$work/with" /bin/sh "$launcher" /the/base /bin/echo compiled)
echo "user settings:  $out"
case $out in
  "ccache base=/mine nohashdir= args=/bin/echo compiled") ;;
  *) fail "the user's CCACHE_BASEDIR / CCACHE_HASHDIR must win" ;;
esac

out=$(PATH="$work/without" /bin/sh "$launcher" /the/base /bin/echo compiled)
echo "without ccache: $out"
[ "$out" = "compiled" ] || fail "without ccache the compiler must run directly"

# The compiler's exit status comes back through the launcher.
if PATH="$work/without" /bin/sh "$launcher" /the/base /bin/false; then fail "a failed compile must fail"; fi
echo "ok"
