#!/usr/bin/env bash
# gpuscope installed where the training runs, checked from the installed files
# alone (ctest: install.prefix, install.deb, install.tgz).
#
#   install_test.sh prefix   `cmake --install` into a temporary prefix, which is then moved
#   install_test.sh deb      the .deb cpack makes, unpacked with dpkg-deb -x (prefix: its usr/)
#   install_test.sh tgz      the .tar.gz cpack makes, unpacked
#
# In each: `gpuscope --version`, `report` on a real trace (the same JSON as the
# build tree's), `capture --help`, where `capture` finds its injection library
# (CUDA builds), `import gpuscope` and a report from Python, all run in a clean
# environment outside the build and source trees; no installed program or
# Python extension links a CUDA library (readelf). `prefix` also builds a
# program against the installed capture library (find_package and
# pkg-config); `deb` checks the package's dependencies.
#
# Environment (set by tests/install/CMakeLists.txt): GPUSCOPE_BUILD_DIR,
# GPUSCOPE_SOURCE_DIR, GPUSCOPE_PYTHON (the interpreter the module was built
# for; empty without the module), GPUSCOPE_PYTHONDIR (the package's folder in
# a prefix), GPUSCOPE_HAVE_CUDA and GPUSCOPE_HAVE_VIEWER (ON/OFF).
set -euo pipefail

mode=${1:?usage: install_test.sh prefix|deb|tgz}
build=${GPUSCOPE_BUILD_DIR:?}
source=${GPUSCOPE_SOURCE_DIR:?}
trace=$source/tests/data/traces/hta-triton.json.gz
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh" "install-$mode"

# Runs a command as a user would on another machine: a minimal environment
# (no PYTHONPATH, no LD_LIBRARY_PATH), in a folder outside both trees.
clean() {
  (cd "$work" && env -i PATH=/usr/bin:/bin HOME="$work" LANG=C.UTF-8 TMPDIR="$work" "$@")
}

# The installed tree of this mode; prints its prefix.
installed_prefix() {
  case "$mode" in
    prefix)
      cmake --install "$build" --prefix "$work/first" >"$work/install.log" || fail "cmake --install: $(tail -5 "$work/install.log")"
      mv "$work/first" "$work/moved"  # a moved prefix still works
      echo "$work/moved"
      ;;
    deb | tgz)
      local generator=DEB
      [ "$mode" = tgz ] && generator=TGZ
      cpack --config "$build/CPackConfig.cmake" -G "$generator" -B "$work/packages" >"$work/cpack.log" 2>&1 ||
        fail "cpack -G $generator: $(tail -5 "$work/cpack.log")"
      mkdir "$work/root"
      if [ "$mode" = deb ]; then
        local deb
        deb=$(ls "$work"/packages/gpuscope_*.deb) || fail "cpack made no .deb"
        dpkg-deb -x "$deb" "$work/root"
        dpkg-deb -f "$deb" Depends >"$work/depends"
        echo "$work/root/usr"
      else
        local tgz
        tgz=$(ls "$work"/packages/gpuscope-*.tar.gz) || fail "cpack made no .tar.gz"
        tar -xzf "$tgz" -C "$work/root"
        ls -d "$work"/root/gpuscope-*
      fi
      ;;
    *) fail "unknown mode $mode" ;;
  esac
}

prefix=$(installed_prefix)
echo "$mode: installed in $prefix"
gpuscope=$prefix/bin/gpuscope
[ -x "$gpuscope" ] || fail "no bin/gpuscope in $prefix"
if [ "$GPUSCOPE_HAVE_VIEWER" = ON ]; then
  [ -x "$prefix/bin/gpuscope-view" ] || fail "no bin/gpuscope-view in $prefix"
fi
[ -f "$prefix/share/doc/gpuscope/docs/install.md" ] || fail "no share/doc/gpuscope/docs/install.md in $prefix"

# ---- the CLI ---------------------------------------------------------------------------------------
clean "$gpuscope" --version | grep -q "^gpuscope [0-9]" || fail "gpuscope --version"
clean "$gpuscope" report --json "$trace" >"$work/installed.json" || fail "report from the installed gpuscope"
"$build/bin/gpuscope" report --json "$trace" >"$work/built.json"
cmp -s "$work/installed.json" "$work/built.json" || fail "the installed report differs from the build tree's"
clean "$gpuscope" capture --help | grep -q -- "--check-setup" || fail "capture --help"

if [ "$GPUSCOPE_HAVE_CUDA" = ON ]; then
  # Where capture finds its injection library: inside this prefix, whatever the build tree.
  status=0
  clean "$gpuscope" capture --check-setup >"$work/setup.txt" 2>"$work/setup.err" || status=$?
  expected="injection library  $prefix/lib/gpuscope/libgpuscope_inject.so (next to $gpuscope)"
  grep -qxF "$expected" "$work/setup.txt" || fail "capture --check-setup said: $(cat "$work/setup.txt" "$work/setup.err")"
  grep -q "^CUPTI  " "$work/setup.txt" || fail "capture --check-setup names no CUPTI: $(cat "$work/setup.txt")"
  [ "$status" = 0 ] || [ "$status" = 2 ] || fail "capture --check-setup exited $status"
  # Without a GPU the program runs uncaptured and capture says why; with one, it captures nothing (no CUDA).
  clean "$gpuscope" capture -o "$work/none.gscope" -- true 2>"$work/capture.err" ||
    fail "capture -- true: $(cat "$work/capture.err")"
  grep -q "true exited with status 0" "$work/capture.err" || fail "capture -- true: $(cat "$work/capture.err")"
fi

# ---- no CUDA library linked into what analyses traces ----------------------------------------------
elves=("$gpuscope")
[ -x "$prefix/bin/gpuscope-view" ] && elves+=("$prefix/bin/gpuscope-view")
if [ -n "$GPUSCOPE_PYTHON" ]; then
  elves+=("$prefix/$GPUSCOPE_PYTHONDIR"/gpuscope/_gpuscope*.so)
fi
for elf in "${elves[@]}"; do
  [ -f "$elf" ] || fail "missing $elf"
  if readelf -d "$elf" | grep -E '\(NEEDED\)' | grep -Ei 'libcupti|libcuda|libcudart|libnvidia-ml|libnvrtc'; then
    fail "$elf links a CUDA library: analysis must run without CUDA"
  fi
  if readelf -d "$elf" | grep -E '\((RPATH|RUNPATH)\)' | grep -F "$build"; then
    fail "$elf looks into the build tree"
  fi
done

# ---- Python ----------------------------------------------------------------------------------------
if [ -n "$GPUSCOPE_PYTHON" ]; then
  site=$prefix/$GPUSCOPE_PYTHONDIR
  [ -f "$site/gpuscope/__init__.py" ] || fail "no gpuscope package in $site"
  clean PYTHONPATH="$site" "$GPUSCOPE_PYTHON" -c "
import sys, gpuscope
assert gpuscope.__file__.startswith('$site/'), gpuscope.__file__
assert not [p for p in sys.path if p.startswith('$build') or p.startswith('$source')], sys.path
t = gpuscope.open('$trace')
assert gpuscope.report(t)['schema'] == 'gpuscope.report/1' and len(t.kernels) == 1
print('python: gpuscope', gpuscope.__version__, 'from', gpuscope.__file__)
" || fail "import gpuscope from $site"
fi

# ---- the capture library, from a program built against the installed tree --------------------------
if [ "$mode" = prefix ] && [ "$GPUSCOPE_HAVE_CUDA" = ON ]; then
  cmake -S "$source/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >"$work/consumer.log" 2>&1 || fail "find_package(gpuscope): $(tail -20 "$work/consumer.log")"
  cmake --build "$work/consumer" >>"$work/consumer.log" 2>&1 || fail "building against gpuscope::capture: $(tail -20 "$work/consumer.log")"
  clean "$work/consumer/consumer" "$work/consumer.gscope" | grep -q "^capture started: " ||
    fail "the find_package program did not run"
  flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs gpuscope) || fail "pkg-config gpuscope"
  # shellcheck disable=SC2086
  c++ -std=c++17 "$source/tests/install/consumer/main.cpp" $flags -o "$work/pc-consumer" || fail "c++ \$(pkg-config gpuscope)"
  clean LD_LIBRARY_PATH="$prefix/lib" "$work/pc-consumer" "$work/pc.gscope" | grep -q "^capture started: " ||
    fail "the pkg-config program did not run"
fi

# ---- the .deb's dependencies: Debian's package names, no CUDA ---------------------------------------
if [ "$mode" = deb ]; then
  echo "Depends: $(cat "$work/depends")"
  grep -q "libzstd1" "$work/depends" || fail "Depends lacks libzstd1: $(cat "$work/depends")"
  if [ -n "$GPUSCOPE_PYTHON" ]; then
    grep -q "python3-pandas" "$work/depends" || fail "Depends lacks python3-pandas: $(cat "$work/depends")"
  fi
  if grep -qi "cuda\|cupti" "$work/depends"; then
    fail "Depends names CUDA, which is no Debian package: $(cat "$work/depends")"
  fi
fi
echo "$mode: ok"
