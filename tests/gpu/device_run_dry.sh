#!/usr/bin/env bash
# CPU dry run of tests/gpu/device_run.sh, the GPU machine's one call, so that
# the script cannot rot between the rare runs on a GPU: the whole script under
# `bash -u` (an unset variable fails it here, not there), no build, no GPU
# program. Every section must be reported, skipped with its reason; the results
# are at most 8 files with the versions and runtime at the top, the summary
# comes last, and nothing is left in TMPDIR.
#   device_run_dry.sh BUILD_DIR WORKDIR
set -u
build=$1
work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$work" && mkdir -p "$work/tmp"
work=$(cd "$work" && pwd)
failures=0
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }
run() {  # OUT ARGS…: exit status in $rc, output in $work/stdout.txt
  local out=$1
  shift
  mkdir -p "$out"
  env OUT="$out" TMPDIR="$work/tmp" bash -u "$root/tests/gpu/device_run.sh" "$@" >"$work/stdout.txt" 2>&1
  rc=$?
}
skipped_as() {  # N REASON-REGEX: the summary's line of section N
  grep -qE "^$1\. .* SKIPPED +0 s  ($2)$" "$work/summary.txt" || bad "section $1 is not skipped for /$2/: $(grep "^$1\. " "$work/summary.txt")"
}

# ---- the whole script, dry ------------------------------------------------------------------
run "$work/out" --dry-run --build-dir "$build"
[ "$rc" = 0 ] || bad "--dry-run exited $rc: $(tail -5 "$work/stdout.txt")"
sed -n '/^==== gpuscope device run .*: summary/,$p' "$work/stdout.txt" >"$work/summary.txt"
[ -s "$work/summary.txt" ] || bad "no summary: $(tail -5 "$work/stdout.txt")"
[ "$(grep -cE '^[1-8]\. ' "$work/summary.txt")" = 8 ] || bad "the summary does not list 8 sections: $(cat "$work/summary.txt")"
for n in 1 2 3 4 5 6 7 8; do skipped_as $n "no GPU: skipped|dry run: skipped"; done
grep -q "^every check that ran passed$" "$work/summary.txt" || bad "the summary does not say that nothing failed"
tail -1 "$work/stdout.txt" | grep -qE "^files in $work/out \(2 of at most 8\): " ||
  bad "the summary is not last, or not 2 files: $(tail -1 "$work/stdout.txt")"
nfiles=$(find "$work/out" -type f | wc -l)
[ "$nfiles" -le 8 ] || bad "$nfiles files in \$OUT, at most 8 come back"
md=$(find "$work/out" -name 'device-*.md' | head -1)
log=$(find "$work/out" -name 'device-*.log' | head -1)
if [ -z "$md" ] || [ -z "$log" ]; then
  bad "no device-<UTC>.md and .log in \$OUT: $(ls "$work/out")"
else
  for key in GPU driver "CUDA toolkit \(nvcc\)" cuDNN NCCL PyTorch runtime commit build; do
    grep -qE "^\| $key \| .+ \|$" "$md" || bad "$(basename "$md") has no row '$key' at the top"
  done
  grep -qE "^\| 8 \| single-switch ablations and what-if \| SKIPPED \| 0 s \| " "$md" || bad "$(basename "$md") lacks section 8"
  # The log has everything, up to the summary's last line.
  [ "$(tail -1 "$log")" = "$(tail -1 "$work/stdout.txt")" ] || bad "the log ends before the summary"
fi
[ -z "$(ls -A "$work/tmp")" ] || bad "temporary files left: $(ls -A "$work/tmp")"

# ---- some sections only ----------------------------------------------------------------------
run "$work/out-only" --dry-run --only 3,5
[ "$rc" = 0 ] || bad "--only 3,5 exited $rc"
sed -n '/^==== gpuscope device run .*: summary/,$p' "$work/stdout.txt" >"$work/summary.txt"
for n in 1 2 4 6 7 8; do skipped_as $n "not selected \(--only 3,5\)"; done
for n in 3 5; do skipped_as $n "no GPU: skipped|dry run: skipped"; done

# ---- bad usage: exit 2, one line, nothing written --------------------------------------------
for args in "--only 9" "--only 1,,2" "--budget soon" "--build-dir $work/none" "--frobnicate"; do
  # shellcheck disable=SC2086  # ARGS are several words
  run "$work/out-bad" $args
  [ "$rc" = 2 ] || bad "device_run.sh $args exited $rc, want 2"
  grep -q "^device_run.sh: error: " "$work/stdout.txt" || bad "device_run.sh $args: no error line: $(head -3 "$work/stdout.txt")"
  [ -z "$(ls -A "$work/out-bad")" ] || bad "device_run.sh $args wrote $(ls "$work/out-bad")"
done
[ -z "$(ls -A "$work/tmp")" ] || bad "temporary files left: $(ls -A "$work/tmp")"
run "$work/out-bad" --help
[ "$rc" = 0 ] && grep -q "^  --dry-run " "$work/stdout.txt" || bad "--help: exit $rc, $(head -3 "$work/stdout.txt")"

[ "$failures" -eq 0 ] && rm -rf "$work"
echo "device_run_dry: $failures failure(s)"
[ "$failures" -eq 0 ]
