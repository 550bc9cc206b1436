#!/usr/bin/env python3
"""Checks the shape of a `resnet-train --preset seed` profile: padding +
broadcast >= 30% of kernel time, both among the top categories, kernel
concurrency ~ 0. Used by tests/gpu/workload_check.sh.

  workload_profile_shape.py report REPORT.json   # `gpuscope report --json` output
  workload_profile_shape.py chrome TRACE.json    # `gpuscope export --format chrome` output

The chrome form is the fallback for builds without `gpuscope report`: it
classifies only by the workload's own kernel names (pad_nchw/pad_nhwc ->
padding, broadcast -> broadcast, everything else by a coarse rule) and computes
concurrency from the kernel intervals. Prints one line ending in OK or
TARGET MISSED; exit status 0 when OK.
"""
import gzip
import json
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def from_report(r):
    cats = sorted(r.get("categories", []), key=lambda c: -c.get("share", 0))
    share = {c.get("category"): c.get("share", 0) for c in cats}
    conc = []

    def walk(o, path=""):
        if isinstance(o, dict):
            for k, v in o.items():
                if "concurrency" in k and isinstance(v, (int, float)):
                    conc.append((path + k, v))
                walk(v, path + k + ".")
        elif isinstance(o, list):
            for i, v in enumerate(o[:8]):
                walk(v, path + f"{i}.")

    walk(r)
    return share, [c.get("category") for c in cats], conc


def coarse_category(name):
    n = name.lower()
    for pattern, cat in (("nccl", "communication"), ("pad_nchw", "padding"), ("pad_nhwc", "padding"),
                         ("tensorpaddingop", "padding"), ("tensorbroadcastingop", "broadcast"),
                         ("broadcast", "broadcast"), ("transpose", "transpose"), ("sgd", "optimizer"),
                         ("bn_", "normalization"), ("conv", "convolution"), ("gemm", "gemm"), ("softmax", "softmax_loss"),
                         ("pool", "pooling"), ("reduce", "reduction"), ("elementwise", "elementwise"),
                         ("relu", "elementwise"), ("residual", "elementwise")):
        if pattern in n:
            return cat
    return "convolution" if ("cudnn" in n or "xmma" in n or "sm90" in n) else "other"


def from_chrome(t):
    events = t["traceEvents"] if isinstance(t, dict) else t
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    total = sum(e["dur"] for e in kernels) or 1.0
    by_cat = {}
    for e in kernels:
        c = coarse_category(e["name"])
        by_cat[c] = by_cat.get(c, 0) + e["dur"]
    share = {c: v / total for c, v in by_cat.items()}
    top = sorted(share, key=lambda c: -share[c])
    conc = []
    for dev in sorted({e.get("args", {}).get("device", 0) for e in kernels}):
        edges = []
        for e in kernels:
            if e.get("args", {}).get("device", 0) == dev:
                edges += [(e["ts"], 1), (e["ts"] + e["dur"], -1)]
        edges.sort()
        busy = multi = 0.0
        depth, last = 0, None
        for ts, d in edges:
            if last is not None and depth >= 1:
                busy += ts - last
                if depth >= 2:
                    multi += ts - last
            depth += d
            last = ts
        conc.append((f"device{dev}.kernel_concurrency", multi / busy if busy else 0.0))
    return share, top, conc


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("report", "chrome"):
        print(__doc__)
        return 2
    data = load(sys.argv[2])
    share, top, conc = (from_report if sys.argv[1] == "report" else from_chrome)(data)
    pb = share.get("padding", 0) + share.get("broadcast", 0)
    top4 = top[:4]
    ok = pb >= 0.30 and "padding" in top4 and "broadcast" in top4
    shares = ", ".join(f"{c} {100 * share[c]:.1f}%" for c in top[:6])
    concs = " ".join(f"{k}={v:.3f}" for k, v in conc[:4])
    print(f"capture report ({sys.argv[1]}): padding+broadcast {100 * pb:.1f}% of kernel time; "
          f"top categories: {shares}; {concs} -> {'OK' if ok else 'TARGET MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
