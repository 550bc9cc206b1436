#!/usr/bin/env python3
"""Writes a small Chrome trace shaped like a resnet-train capture, for the CPU
tests of the GPU check's judges (profile_shape_test.sh, gpu_check_dry_run.sh).

  fake_workload_trace.py seed|tuned OUT.json

seed:  one stream, kernels back to back; per step the workload's pad and
       broadcast kernels take 40% of kernel time (20% each), no concurrency;
       the CPU thread opens every layer range of tests/gpu/workload_layers.txt
       per step (as user annotations), and each kernel is launched
       (cudaLaunchKernel, by correlation) inside one of them, as an eager
       capture has it.
tuned: no pad or broadcast kernels; the overlapped update's kernel runs on a
       second stream beside the compute stream (concurrency 0.23).
The kernel names are the workload's own (docs/workload.md), so gpuscope's
category table classifies them as it will classify a real capture.
"""
import json
import os
import sys

LAYERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu", "workload_layers.txt")
CPU_PID, CPU_TID = 4242, 1

ns = "gpuscope::kernels::"
PAD = f"void {ns}pad_nchw_kernel<float>(float const*, float*, {ns}Shape, {ns}Padding2d)"
BCAST = f"void {ns}broadcast_channel_kernel<float>(float const*, float*, {ns}Shape, {ns}Layout)"
MUL = f"void {ns}elementwise_mul_kernel<float>(float const*, float const*, float*, long)"
CONV = "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1"
BN = f"void {ns}bn_forward_naive_stats_kernel<float>(float const*, {ns}Shape, {ns}Layout, double*)"
APPLY = f"void {ns}bn_forward_apply_kernel<__nv_bfloat16>(__nv_bfloat16 const*, float const*, float const*)"
SGD = f"{ns}sgd_momentum_flat_kernel(float*, float*, __nv_bfloat16 const*, unsigned short*, long, {ns}SgdHyper)"


def main(argv):
    if len(argv) != 3 or argv[1] not in ("seed", "tuned"):
        print(__doc__, file=sys.stderr)
        return 2
    events, corr = [], [0]

    def kernel(name, ts, dur, stream):
        corr[0] += 1
        events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
                       "args": {"device": 0, "stream": stream, "correlation": corr[0]}})

    with open(LAYERS) as f:
        layers = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    cpu = [0.0]

    def layer(name, launches):
        """A layer's range on the CPU thread, launching `launches` (name, start, dur) inside it."""
        start = cpu[0]
        for k_name, ts, dur in launches:
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": CPU_PID,
                           "tid": CPU_TID, "ts": cpu[0] + 0.1, "dur": 0.2, "args": {"correlation": corr[0] + 1}})
            cpu[0] += 0.4
            kernel(k_name, ts, dur, 7)
        cpu[0] += 0.5
        events.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": CPU_PID, "tid": CPU_TID,
                       "ts": start, "dur": cpu[0] - start})
        cpu[0] += 0.1

    t = 1000.0
    for _ in range(10):
        if argv[1] == "seed":
            launches = []
            for name, dur in ((PAD, 10), (CONV, 30), (BCAST, 12), (MUL, 8), (PAD, 10), (CONV, 10), (BN, 12),
                              (BCAST, 8)):
                launches.append((name, t, dur))
                t += dur + 2
            for i, name in enumerate(layers):
                layer(name, launches[i:i + 1])
        else:
            for name, dur in ((CONV, 20), (APPLY, 5), (CONV, 20), (APPLY, 5), (BN, 10)):
                kernel(name, t, dur, 7)
                t += dur + 1
            kernel(SGD, t - 40, 15, 13)
    with open(argv[2], "w") as f:
        json.dump({"traceEvents": events}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
