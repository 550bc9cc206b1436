#!/usr/bin/env bash
# CPU test of tests/gpu/torch_compare.py's comparison (device_run.sh's
# section 5) on Kineto-shaped traces with known differences, read through
# gpuscope's importer and SQLite export as on the GPU machine:
#   torch_compare_test.sh PATH/TO/gpuscope WORKDIR
set -u
# shellcheck disable=SC2016  # the expected lines hold literal backquotes
gpuscope=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
failures=0
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }

# make NAME [extra-kernel] [other-copy] [no-ranges] [slow]: a Kineto-shaped
# trace of 3 timed steps (2 warm-up steps before them, as gpuscope's capture
# has) on stream STREAM, as NAME.sqlite.
make() {
  python3 - "$work/$1.json" "${@:2}" <<'PY'
import json, sys
path, opts = sys.argv[1], set(sys.argv[2:])
stream = 13 if "stream13" in opts else 7
ev, corr, t = [], [0], 1_000_000.0
def gpu(cat, name, ts, dur, **args):
    corr[0] += 1
    ev.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
               "args": dict(device=0, stream=stream, correlation=corr[0], **args)})
for step in range(5):
    name = f"warmup {step}" if step < 2 else f"step {step - 2}"
    t0 = t
    gpu("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", t + 1, 20, bytes=1572864)
    gpu("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)" if "other-copy" not in opts or step != 3
        else "Memcpy DtoD (Device -> Device)", t + 22, 1, bytes=1024)
    t += 25
    kernels = [("void conv_fwd<float>(float*)", 100.0), ("void bn_fwd<float>(float*)", 10.0),
               ("void relu<float>(float*)", 2.0), ("void sgd_update<float>(float*)", 50.0)]
    if "extra-kernel" in opts and step == 3:
        kernels.insert(2, ("void extra_kernel(int)", 3.0))
    for i, (k, dur) in enumerate(kernels):
        if "slow" in opts and i == 0:
            dur *= 1.05      # 5 %: outside the tolerance
        elif "slow" in opts and i == 1:
            dur += 0.5       # 5 % but 0.5 us: inside
        gpu("kernel", k, t, dur)
        t += dur + 1
    gpu("gpu_memset", "Memset (Device)", t, 1, bytes=4096)
    t += 5
    if "no-ranges" not in opts:
        ev.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": 100, "tid": 100, "ts": t0, "dur": t - t0})
    t += 50
json.dump({"schemaVersion": 1, "traceEvents": ev}, open(path, "w"))
PY
  "$gpuscope" export "$work/$1.json" -o "$work/$1.sqlite" >/dev/null 2>"$work/$1.err" || bad "gpuscope export $1: $(cat "$work/$1.err")"
}
compare() {  # OUT-NAME ARGS…: exit status in $rc, output in WORK/OUT-NAME.txt
  local name=$1
  shift
  python3 "$here/torch_compare.py" compare "$@" >"$work/$name.txt" 2>&1
  rc=$?
}
expect() {  # FILE REGEX
  grep -qE -- "$2" "$work/$1.txt" || bad "$1: no line /$2/ in: $(cat "$work/$1.txt")"
}

make base
make same stream13 slow
make extra stream13 extra-kernel other-copy
make bare no-ranges

# Agreeing traces (other raw stream ids, one kernel 5 % slower): exit 0.
compare agree "$work/base.sqlite" "$work/same.sqlite" --step-ms "plain=10,gpuscope=10.2,kineto=11.5" --md "$work/agree.md"
[ "$rc" = 0 ] || bad "agreeing traces: exit $rc, want 0: $(cat "$work/agree.txt")"
expect agree '^\| timed steps \(found by\) \| 3 \(ranges\) \| 3 \(ranges\) \| yes \|$'
expect agree '^\| kernels per step \(median; all steps\) \| 4; 12 \| 4; 12 \| yes \|$'
expect agree '^\| kernel names per step \(as a set; in order\) \| \| \| yes; yes \|$'
expect agree '\| 9 of 12 \(75\.0%\); median difference 0\.250 us \|$'
expect agree '^\| run-to-run floor: .* \| 8 of 8 \(100\.0%\) \| \| \|$'
expect agree '^\| streams used; kernels on the same stream \| 1 \| 1 \| yes \(12 of 12\) \|$'
expect agree '^\| copies per step \(kind, bytes; first step\) \| 2 HtoD \(1573888 B\) \| 2 HtoD \(1573888 B\) \| yes \|$'
expect agree '^\| memsets per step \| \| \| yes \|$'
expect agree '^\| step time, median \(plain 10\.000 ms\) \| 10\.200 ms \(\+2\.0%\) \| 11\.500 ms \(\+15\.0%\) \| gpuscope lower \|$'
expect agree '^- largest duration difference: `conv_fwd` 100\.000 us \(gpuscope\) vs 105\.000 us \(Kineto\)$'
expect agree '^- largest duration difference: `bn_fwd` 10\.000 us \(gpuscope\) vs 10\.500 us \(Kineto\)$'
[ "$(grep -c 'largest duration difference: `conv_fwd`' "$work/agree.txt")" = 1 ] || bad "a kernel named twice among the largest differences"
expect agree '^RESULT torch-compare: kernels, names, streams and copies agree in 3 steps; durations 75\.0% within'
cmp -s "$work/agree.txt" "$work/agree.md" || bad "--md differs from what was printed"
ls "$work"/agree.md.tmp.* >/dev/null 2>&1 && bad "a temporary file of --md was left"

# An extra kernel in one step and another copy: exit 1, said where.
compare differ "$work/base.sqlite" "$work/extra.sqlite"
[ "$rc" = 1 ] || bad "differing traces: exit $rc, want 1"
expect differ '^\| kernels per step \(median; all steps\) \| 4; 12 \| 4; 13 \| NO \(2 of 3 steps\) \|$'
expect differ '^\| kernel names per step \(as a set; in order\) \| \| \| NO \(2 of 3 steps\); NO \(2 of 3 steps\) \|$'
expect differ '^- first kernel that differs: step 1, kernel 2: gpuscope `void relu<float>\(float\*\)`, Kineto `void extra_kernel\(int\)`$'
expect differ '^\| copies per step .* \| NO \(2 of 3 steps\) \|$'
expect differ '^\| streams used; kernels on the same stream \| 1 \| 1 \| yes \(12 of 12\) \|$'
expect differ '^RESULT torch-compare: DIFFER in 3 steps'

# No ranges: the steps are the last N copies of the input's size.
compare copies "$work/bare.sqlite" "$work/base.sqlite" --steps 3 --input-bytes 1572864
[ "$rc" = 0 ] || bad "steps found by input copies: exit $rc, want 0: $(cat "$work/copies.txt")"
expect copies '^\| timed steps \(found by\) \| 3 \(input copies \(1572864 B\)\) \| 3 \(ranges\) \| yes \|$'
compare noranges "$work/bare.sqlite" "$work/base.sqlite"
[ "$rc" = 2 ] || bad "no ranges, no input size: exit $rc, want 2"
expect noranges "bare\.sqlite: no step ranges"

# Unreadable input: exit 2, naming the file.
compare missing "$work/nonexistent.sqlite" "$work/base.sqlite"
[ "$rc" = 2 ] || bad "missing file: exit $rc, want 2"
expect missing "^torch_compare: .*nonexistent\.sqlite: no such file$"
compare notdb "$work/base.json" "$work/base.sqlite"
[ "$rc" = 2 ] || bad "not a database: exit $rc, want 2"
expect notdb "^torch_compare: .*base\.json: not a gpuscope SQLite export"

[ "$failures" -eq 0 ] && rm -rf "$work"
echo "torch_compare_test: $failures failure(s)"
[ "$failures" -eq 0 ]
