#!/usr/bin/env bash
# The README's first command: sets everything up, builds, and runs gpuscope's
# main job.
#
#   With an NVIDIA GPU: profiles the bundled ResNet workload twice under
#   `gpuscope capture` — the report's configuration (--preset seed) and the
#   tuned one — then prints the diagnosis of the first and the diff of the two,
#   and writes Chrome traces for Perfetto.
#   Without a GPU (or without the CUDA toolkit): says so, and does the same
#   with bundled traces: captures of the workload made on a GPU machine
#   (assets/workload-{seed,tuned}.gscope, written by tests/gpu/workload_check.sh)
#   when the repository has them, else the two SYNTHETIC samples in assets/
#   (made by `gpuscope synth` with the workload's network: the report's job,
#   with its numbers and causes, and that job tuned), not measurements.
#
# Environment: BUILD_DIR (default build), OUT (default runs), STEPS (timed
# steps per run, default 60), GPUS (default: all visible).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
OUT=${OUT:-runs}
STEPS=${STEPS:-60}
GPUS=${GPUS:-}

bash scripts/setup.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
# Only what the demo runs: gpuscope (with the injection library capture loads)
# and, where CUDA was found, the bundled workload. The test command
# (scripts/test.sh) builds the rest: tests, benchmarks, fuzzers, the viewer.
targets=(gpuscope)
if cmake --build "$BUILD_DIR" --target help | grep '^resnet-train:' >/dev/null; then targets+=(resnet-train); fi
cmake --build "$BUILD_DIR" -j "$(nproc)" --target "${targets[@]}"
G="$BUILD_DIR/bin/gpuscope"
mkdir -p "$OUT"

banner() { printf '\n==== %s\n\n' "$*"; }

gpu_reason=""
if [ ! -x "$BUILD_DIR/bin/resnet-train" ]; then
  gpu_reason="the bundled workload was not built (no CUDA toolkit found by CMake)"
elif ! command -v nvidia-smi >/dev/null 2>&1; then
  gpu_reason="no NVIDIA driver (nvidia-smi not found)"
elif ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  gpu_reason="nvidia-smi lists no GPU"
fi

if [ -z "$gpu_reason" ]; then
  gpu_flag=()
  [ -n "$GPUS" ] && gpu_flag=(--gpus "$GPUS")
  for preset in seed tuned; do
    banner "Profiling the bundled workload: resnet-train --preset $preset (${STEPS} steps)"
    "$G" capture -o "$OUT/resnet-$preset.gscope" -- \
      "$BUILD_DIR/bin/resnet-train" --preset "$preset" --steps "$STEPS" --warmup 10 --log-every 20 ${gpu_flag[@]+"${gpu_flag[@]}"}
  done
  before="$OUT/resnet-seed.gscope"
  after="$OUT/resnet-tuned.gscope"
  what="captured on this machine's GPU(s)"
elif [ -f assets/workload-seed.gscope ] && [ -f assets/workload-tuned.gscope ]; then
  cat <<EOF

==== No GPU here: $gpu_reason.
==== gpuscope cannot profile the bundled workload without one, so this run
==== analyses the bundled captures of it instead: assets/workload-seed.gscope
==== and assets/workload-tuned.gscope, recorded with \`gpuscope capture\` on a
==== GPU machine by tests/gpu/workload_check.sh (real measurements, not of
==== this machine).
EOF
  before=assets/workload-seed.gscope
  after=assets/workload-tuned.gscope
  what="bundled captures from a GPU machine, not from this one"
else
  cat <<EOF

==== No GPU here: $gpu_reason.
==== gpuscope cannot profile the bundled workload without one, so this run
==== analyses the two bundled SAMPLE traces instead. They are SYNTHETIC
==== (made by \`gpuscope synth\`, not measured), with the bundled workload's
==== network, kernels and NVTX ranges. assets/sample-report-job.gscope is the
==== report's 4-GPU job: GPUs busy ~35% of the run and ~50% inside the steps,
==== 21.4% of kernel time in padding, 20% in broadcast kernels, no kernel
==== concurrency; Python between steps, each batch prepared in the step and
==== copied from pageable memory, blocking; the weight update alone after the
==== all-reduce. assets/sample-clean-job.gscope is that job tuned.
EOF
  before=assets/sample-report-job.gscope
  after=assets/sample-clean-job.gscope
  what="bundled synthetic samples, not measurements"
fi

banner "gpuscope info $before"
"$G" info "$before"
banner "gpuscope report $before"
"$G" report "$before" | tee "$OUT/report.txt"
"$G" report --json "$before" -o "$OUT/report.json"
banner "gpuscope diff $before $after"
"$G" diff "$before" "$after" | tee "$OUT/diff.txt"
"$G" export "$before" -o "$OUT/$(basename "${before%.gscope}").json.gz"

banner "Done ($what)"
cat <<EOF
  report:        $OUT/report.txt  (JSON: $OUT/report.json)
  diff:          $OUT/diff.txt
  Chrome trace:  $OUT/$(basename "${before%.gscope}").json.gz  (open in https://ui.perfetto.dev or chrome://tracing)
  viewer:        $G view $before $after  (build it first: cmake --build $BUILD_DIR --target gpuscope-view)
EOF
