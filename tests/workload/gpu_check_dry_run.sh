#!/usr/bin/env bash
# CPU dry run of tests/gpu/workload_check.sh: the whole script, end to end,
# with stand-ins for what needs a GPU — a fake resnet-train that prints lines
# in the real program's formats (and, with --profile, writes a seed- or
# tuned-shaped trace through the real `gpuscope import`), a fake kernel check,
# a fake nvidia-smi and a fake PyTorch baseline. It checks the script's own
# logic (sections, budget, parsing, ratios, the capture judges, the table),
# so the one GPU call it gets is not wasted on a shell mistake. A second part
# makes sure the formats the script parses are still the ones trainer.cpp,
# kernel_check.cpp and pytorch_baseline.py print.
#   gpu_check_dry_run.sh PATH/TO/gpuscope WORKDIR
set -u
gpuscope=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
rm -rf "$work" && mkdir -p "$work/bin" "$work/path"
work=$(cd "$work" && pwd)
failures=0
bad() { echo "FAIL: $*"; failures=$((failures + 1)); }

# ---- the formats the check parses are the programs' real ones ------------------------
need() {  # FILE FIXED-STRING
  grep -qF -- "$2" "$root/$1" || bad "$1 no longer prints: $2"
}
need workloads/resnet/trainer.cpp '"summary: preset=%s gpus=%d batch=%d steps=%d img/s per GPU=%.0f total=%.0f step ms=%.3f "'
need workloads/resnet/trainer.cpp '"model TFLOP/s per GPU=%.2f loss %.4f -> %.4f\n"'
need workloads/resnet/trainer.cpp '"memory: GPU arena'
need workloads/resnet/trainer.cpp 'print("verify: %s (worst gradient'
need workloads/resnet/trainer.cpp 'ok ? "PASS" : "FAIL"'
need workloads/resnet/trainer.cpp 'print("gradients bit-identical across %d rank%s after every step: yes'
need workloads/resnet/trainer.cpp 'std::printf("profile: %s (%s; %llu kernels'
need tests/workload/kernel_check.cpp 'std::printf("ok   %-52s'
need tests/workload/kernel_check.cpp 'std::printf("FAIL %-52s'
need tests/gpu/pytorch_baseline.py 'print(f"RESULT {mode} img/s={ips:.0f}'
need tests/gpu/pytorch_baseline.py 'print(f"NETWORK parameters={'
need tests/workload/reference_net_test.cpp 'EXPECT_EQ(net.parameter_count, 701466);'

# ---- stand-ins ----------------------------------------------------------------------------
cat > "$work/bin/resnet-train" << EOF
#!/usr/bin/env bash
# Fake resnet-train: the real program's output lines, made-up numbers.
preset=tuned profile="" verify=0 sync=0 gpus=1
while [ \$# -gt 0 ]; do
  case \$1 in
    --preset) preset=\$2; shift ;;
    --profile) profile=\$2; shift ;;
    --gpus) gpus=\$2; shift ;;
    --verify) verify=1 ;;
    --check-sync) sync=1 ;;
    --help) echo "usage: resnet-train [flags]"; echo "(fake)"; exit 0 ;;
    --*) case \$2 in --*|"") ;; *) shift ;; esac ;;
  esac
  shift
done
if [ \$verify = 1 ]; then
  echo "resnet-train --verify: preset=\$preset"
  echo "loss: GPU 2.302600, reference 2.302585, relative error 6.51e-06 (tolerance 1e-04)"
  echo "verify: PASS (worst gradient stage1.block0.conv1.weight 3.10e-04, tolerance 2e-03)"
  exit 0
fi
ips=\$([ "\$preset" = seed ] && echo 5000 || echo 60000)
echo "resnet-train: preset=\$preset"
echo "step 0: loss 2.3026"
echo "step 150: \$ips img/s per GPU, \$((ips * gpus)) img/s total, 2.000 ms/step, loss 0.9000, accuracy 0.700"
echo "memory: GPU arena 300.0 MiB (activations 200.0, cuDNN workspace 20.0), device in use 900.0 MiB; host RSS 400.0 MiB"
echo "ranks in sync: yes"
[ \$sync = 1 ] && echo "gradients bit-identical across \$gpus rank\$([ \$gpus = 1 ] || echo s) after every step: yes (12 steps checked)"
echo "summary: preset=\$preset gpus=\$gpus batch=128 steps=150 img/s per GPU=\$ips total=\$((ips * gpus)) step ms=2.133 model TFLOP/s per GPU=1.26 loss 2.3026 -> 0.9000"
if [ -n "\$profile" ]; then
  python3 "$here/fake_workload_trace.py" "\$preset" "\$profile.json" && "$gpuscope" import -q -o "\$profile" "\$profile.json" || exit 1
  echo "profile: \$profile (ok; 90 kernels, 0 dropped records)"
fi
exit 0
EOF
cat > "$work/bin/workload_kernel_check" << 'EOF'
#!/usr/bin/env bash
echo "workload_kernel_check on FAKE GPU, seed 1 (repeat with --seed 1)"
echo "ok   pad_nchw float                                       4096 elements, max abs error 0"
echo "ok   broadcast_channel float                              4096 elements, max abs error 0"
echo "workload_kernel_check: 2 checks, 0 failed"
EOF
cat > "$work/path/nvidia-smi" << 'EOF'
#!/usr/bin/env bash
case "$*" in
  -L) echo "GPU 0: FAKE H200 (UUID: GPU-0)" ;;
  *name,memory*) echo "name, memory.total [MiB], clocks.max.sm [MHz]"; echo "FAKE H200, 143771 MiB, 1980 MHz" ;;
  *driver_version*) echo "999.99" ;;
  *name*) echo "FAKE H200" ;;
esac
EOF
cat > "$work/bin/pytorch_baseline" << 'EOF'
#!/usr/bin/env bash
echo "pytorch FAKE, cuDNN 0, FAKE H200"
echo "NETWORK parameters=701466"
echo "RESULT eager img/s=30000 step_ms=4.267 loss=2.3026->1.0000"
echo "RESULT compile img/s=40000 step_ms=3.200 loss=2.3026->1.0000"
EOF
ln -s "$(cd "$(dirname "$gpuscope")" && pwd)/$(basename "$gpuscope")" "$work/bin/gpuscope"
chmod +x "$work/bin/"* "$work/path/"*

# ---- the dry run --------------------------------------------------------------------------------
run_check() {  # BUDGET
  env PATH="$work/path:$PATH" OUT="$work/out" WORKLOAD_CHECK_BIN="$work/bin" WORKLOAD_CHECK_RESULTS="$work/results" \
    WORKLOAD_CHECK_ASSETS="$work/assets" WORKLOAD_CHECK_PYTORCH="$work/bin/pytorch_baseline" WORKLOAD_CHECK_BUDGET=$1 \
    bash "$root/tests/gpu/workload_check.sh" > "$work/stdout.txt" 2>&1
}
mkdir -p "$work/out"
run_check 600
rc=$?
table=$(ls "$work"/results/workload-*.md 2>/dev/null | head -1)
[ "$rc" -eq 0 ] || bad "workload_check.sh exited $rc; last lines: $(tail -5 "$work/stdout.txt")"
if [ -z "$table" ]; then
  bad "no results table; output: $(tail -20 "$work/stdout.txt")"
else
  expect_line() { grep -qE -- "$1" "$table" || bad "table lacks /$1/"; }
  expect_line "^# resnet-train on FAKE H200 "
  expect_line "^GPU: FAKE H200 x 1; driver 999.99"
  expect_line "^tuned vs eager: 2\.00x$"
  expect_line "^tuned vs compile: 1\.50x$"
  expect_line "^\| seed +\| +5000 \| +2\.133 \| +1\.26 \|$"
  expect_line "^\| tuned +\| +60000 \|"
  expect_line "^\| seed --graphs on +\| +5000 \|"
  expect_line "^tuned memory: GPU arena 300\.0 MiB"
  expect_line "^kernel checks: 2 ok, 0 failed \(exit 0\)$"
  expect_line "^--verify: 8 of 8 configurations match the CPU reference$"
  expect_line "^training: seed loss 2\.3026 -> 0\.9000 \(exit 0\); tuned loss 2\.3026 -> 0\.9000 \(exit 0\)$"
  expect_line "^capture report \(seed, report\): padding\+broadcast 40\.0% .* -> OK$"
  expect_line "^capture report \(tuned, report\): padding\+broadcast 0\.0% .* -> OK$"
  expect_line "^capture ops \(seed\): 101 of 101 layer ranges are op rows, \(no op\) 0\.0% of GPU time; .* -> OK$"
  expect_line "^gradients across ranks: NOT CHECKED, one GPU"
  expect_line "^all checks that ran passed$"
  grep -q "^skipped" "$table" && bad "dry run with a full budget skipped something: $(grep '^skipped' "$table")"
fi
for f in assets/workload-seed.gscope assets/workload-tuned.gscope assets/workload-captures.md results/$(basename "${table:-none}"); do
  [ -s "$work/out/$f" ] || bad "\$OUT/$f was not copied"
done
# The log has everything, up to the last line.
log=$(ls "$work"/results/workload-*.log 2>/dev/null | head -1)
grep -q "^took [0-9]* s$" "$work/out/results/$(basename "${log:-none}")" 2>/dev/null || bad "\$OUT's log is incomplete"

# Out of time: sections are skipped and said so, and the run still ends with a table.
rm -rf "$work/results" "$work/out" && mkdir -p "$work/out"
run_check 30
table=$(ls "$work"/results/workload-*.md 2>/dev/null | head -1)
if [ -z "$table" ]; then
  bad "no table when out of time"
else
  grep -q "^skipped: .*out of time" "$table" || bad "out of time: no 'skipped' line in the table"
  grep -q "^tuned vs eager: " "$table" || bad "out of time: no ratio line"
fi

[ "$failures" -eq 0 ] && rm -rf "$work"
echo "gpu_check_dry_run: $failures failure(s)"
[ "$failures" -eq 0 ]
