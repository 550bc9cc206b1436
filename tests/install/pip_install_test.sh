#!/usr/bin/env bash
# `pip install .` into a fresh virtual environment (ctest install.pip), offline
# as docs/python.md says: Debian's pip, setuptools and wheel, numpy and pandas
# from the system (--system-site-packages), nothing downloaded. Then, outside
# the build and source trees, `import gpuscope` comes from the venv and
# reads a real trace.
#   pip_install_test.sh PYTHON SOURCE_DIR BUILD_DIR
# BUILD_DIR is the configured build, reused (GPUSCOPE_BUILD_DIR) so that the
# test does not compile the module a second time.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh" pip-install
python=${1:?}
source=${2:?}
build=${3:?}

"$python" -m venv --system-site-packages --without-pip "$work/venv" || fail "python3 -m venv (python3-venv)"
venv_python=$work/venv/bin/python
# pip as a user runs it, minus this machine's pip configuration and cache.
(cd "$source" && env -i PATH=/usr/bin:/bin HOME="$work" LANG=C.UTF-8 TMPDIR="$work" PIP_CONFIG_FILE=/dev/null \
  PIP_NO_CACHE_DIR=1 GPUSCOPE_BUILD_DIR="$build" \
  "$venv_python" -m pip install --no-build-isolation --no-index . >"$work/pip.log" 2>&1) ||
  fail "pip install: $(tail -30 "$work/pip.log")"
grep -q "Successfully installed gpuscope-" "$work/pip.log" || fail "pip: $(tail -5 "$work/pip.log")"

site=$("$venv_python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
(cd "$work" && env -i PATH=/usr/bin:/bin HOME="$work" LANG=C.UTF-8 "$venv_python" -c "
import sys, gpuscope
assert gpuscope.__file__ == '$site/gpuscope/__init__.py', gpuscope.__file__
assert not [p for p in sys.path if p.startswith('$build') or p.startswith('$source')], sys.path
t = gpuscope.open('$source/tests/data/traces/hta-triton.json.gz')
assert len(t.kernels) == 1 and gpuscope.report(t)['schema'] == 'gpuscope.report/1'
print('venv: gpuscope', gpuscope.__version__, 'from', gpuscope.__file__)
") || fail "import gpuscope from the venv"
# The module's metadata: what pip knows about it.
shown=$("$venv_python" -m pip show gpuscope 2>&1) || fail "pip show gpuscope: $shown"
grep -q "^Requires: numpy, pandas" <<<"$shown" || fail "pip show gpuscope: $shown"
# Nothing written into the source tree (setuptools' folders go into the build folder).
for left in "$source"/*.egg-info "$source"/src/python/*.egg-info "$source"/build/lib.* "$source"/build/bdist.*; do
  [ ! -e "$left" ] || fail "pip left $left in the source tree"
done
echo ok
