#!/usr/bin/env bash
# `gpuscope capture` where CUPTI cannot be loaded (ctest install.capture_without_cupti):
# it refuses before running the program, saying CUPTI is missing and where to
# get it, and --check-setup says the same. The injection library given
# (GPUSCOPE_INJECT_LIBRARY) needs libcupti.so.999, which no folder holds.
#   capture_without_cupti.sh GPUSCOPE STAND_IN_LIBRARY
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "$0")/common.sh" capture-without-cupti
gpuscope=${1:?}
stand_in=${2:?}
export GPUSCOPE_INJECT_LIBRARY=$stand_in LD_LIBRARY_PATH=$work/nowhere

status=0
"$gpuscope" capture -o "$work/out.gscope" -- touch "$work/ran" >"$work/out" 2>"$work/err" || status=$?
cat "$work/err"
[ "$status" = 2 ] || fail "capture exited $status, not 2"
[ ! -e "$work/ran" ] || fail "the program ran although nothing could be captured"
[ "$(wc -l <"$work/err")" = 1 ] || fail "more than one line on stderr"
grep -qF "gpuscope: error: capture: cannot load the injection library $stand_in: libcupti.so.999: cannot open shared object file" "$work/err" ||
  fail "the error does not name the missing libcupti"
grep -qE "capture needs CUPTI from the CUDA toolkit \(libcupti\.so\.[0-9]+" "$work/err" || fail "the error does not say what to install"
grep -qF "docs/install.md" "$work/err" || fail "the error does not point at docs/install.md"

status=0
"$gpuscope" capture --check-setup >"$work/out" 2>"$work/err" || status=$?
cat "$work/out" "$work/err"
[ "$status" = 2 ] || fail "capture --check-setup exited $status, not 2"
grep -qxF "injection library  $stand_in (GPUSCOPE_INJECT_LIBRARY)" "$work/out" || fail "--check-setup: injection library"
grep -q "^CUPTI              not loaded: libcupti.so.999: cannot open shared object file" "$work/out" ||
  fail "--check-setup: CUPTI"
echo ok
