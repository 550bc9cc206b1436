#!/usr/bin/env bash
# resnet-train's command line on any machine (GPU or not): every user error is
# one line "resnet-train: error: …" on stderr and exit status 2, before any GPU
# work; --make-cifar writes a readable dataset without a GPU.
#   resnet_train_cli.sh PATH/TO/resnet-train WORKDIR
set -u
bin=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
failures=0

# expect STATUS PATTERN -- ARGS…: exit status and one stderr line matching PATTERN.
expect() {
  local status=$1 pattern=$2
  shift 3
  local err
  err=$("$@" 2>&1 >/dev/null)
  local rc=$?
  local lines
  lines=$(printf '%s' "$err" | grep -c '' || true)
  if [ "$rc" -ne "$status" ] || ! printf '%s' "$err" | grep -qE "$pattern" || [ "$lines" -gt 1 ]; then
    echo "FAIL: $* -> exit $rc, stderr: $err (want exit $status, one line matching: $pattern)"
    failures=$((failures + 1))
  else
    echo "ok: $* -> exit $rc: $err"
  fi
}

expect 2 "^resnet-train: error: --layout: expected nhwc or nchw, got 'sideways'$" -- "$bin" --layout sideways
expect 2 "^resnet-train: error: unknown flag '--fast'" -- "$bin" --fast
expect 2 "^resnet-train: error: --bn transpose .* needs --layout nchw$" -- "$bin" --preset tuned --bn transpose
expect 2 "^resnet-train: error: $work/missing: no such directory" -- "$bin" --data "cifar:$work/missing"

mkdir -p "$work/bad"
head -c 5000 /dev/zero > "$work/bad/data_batch_1.bin"
expect 2 "^resnet-train: error: $work/bad/data_batch_1.bin \(at byte 3073\): size 5000 is not a multiple of 3073" \
  -- "$bin" --data "cifar:$work/bad"

# No GPU (hidden on a GPU machine): a clear message, not a crash.
expect 2 "^resnet-train: error: no usable CUDA GPU: " -- env CUDA_VISIBLE_DEVICES=-1 "$bin" --preset seed --steps 1
# --profile: without the capture library it says so; with it, the missing GPU is reported.
expect 2 "^resnet-train: error: (--profile: the capture library is not available|no usable CUDA GPU)" \
  -- env CUDA_VISIBLE_DEVICES=-1 "$bin" --profile "$work/out.gscope" --steps 1

# --make-cifar needs no GPU, writes the real format, and the result loads.
if "$bin" --make-cifar "$work/cifar" > "$work/make.log" 2>&1; then
  for f in data_batch_1 data_batch_2 data_batch_3 data_batch_4 data_batch_5 test_batch; do
    size=$(stat -c %s "$work/cifar/$f.bin" 2>/dev/null || echo 0)
    if [ "$size" -ne 30730000 ]; then
      echo "FAIL: $f.bin has $size bytes, want 30730000"
      failures=$((failures + 1))
    fi
  done
  if compgen -G "$work/cifar/*tmp*" > /dev/null; then
    echo "FAIL: temporary files left in $work/cifar"
    failures=$((failures + 1))
  fi
  # The dataset passes validation: the run gets as far as looking for a GPU.
  expect 2 "^resnet-train: error: no usable CUDA GPU: " -- env CUDA_VISIBLE_DEVICES=-1 "$bin" --data "cifar:$work/cifar"
else
  echo "FAIL: --make-cifar: $(cat "$work/make.log")"
  failures=$((failures + 1))
fi

"$bin" --help | grep -q -- "--make-cifar DIR" || { echo "FAIL: --help"; failures=$((failures + 1)); }

# Under mpirun (when installed): every rank reports the missing GPU cleanly
# (MPI_Init / MPI_Finalize around it), no hang, no crash.
if command -v mpirun > /dev/null 2>&1; then
  err=$(CUDA_VISIBLE_DEVICES=-1 timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 "$bin" --steps 1 2>&1)
  rc=$?
  ranks=$(printf '%s\n' "$err" | grep -c "^resnet-train: error: no usable CUDA GPU")
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || [ "$ranks" -ne 2 ]; then
    echo "FAIL: mpirun -np 2 -> exit $rc, $ranks rank error lines: $err"
    failures=$((failures + 1))
  else
    echo "ok: mpirun -np 2 -> exit $rc, both ranks: no usable CUDA GPU"
  fi
fi
rm -rf "$work"
echo "resnet_train_cli: $failures failure(s)"
[ "$failures" -eq 0 ]
