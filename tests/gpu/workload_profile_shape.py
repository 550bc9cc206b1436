#!/usr/bin/env python3
"""Checks the shape of a captured resnet-train profile against the workload's targets (docs/workload.md).

  workload_profile_shape.py report seed|tuned REPORT.json   # `gpuscope report --json` output
  workload_profile_shape.py chrome seed|tuned TRACE.json    # `gpuscope export --format chrome` output
  workload_profile_shape.py ops seed REPORT.json            # the op table of `gpuscope report --json`

seed  (the report's pathologies are there): padding + broadcast >= 30% of
      kernel time, both among the top 4 categories, kernel concurrency ~ 0
      (<= 0.05 on every GPU).
tuned (and gone): padding + broadcast < 5% of kernel time, kernel concurrency
      > 0.01 on some GPU (the overlapped update and the communication stream
      run beside the backward pass).

ops   (eager captures: --preset seed; under --graphs on the layers' ranges
      exist only while the graph is captured): every layer range the trainer
      opens (tests/gpu/workload_layers.txt, forward and backward) is a row of
      the report's ops[] with at least one call, and at most 5% of GPU time
      is launched outside every op ("(no op)").

The report form reads gpuscope's own classification (schema gpuscope.report/1:
"categories": [{"name", "share"}], "devices": [{"id", "kernel_concurrency"}]).
The chrome form is the fallback for builds without `gpuscope report`: it
classifies by the workload's own kernel names (pad_* -> padding, broadcast ->
broadcast, everything else by a coarse rule) and computes concurrency from the
kernel intervals the same way (time with >= 2 kernels in flight / kernel-busy
time). Used by tests/gpu/workload_check.sh; tested on CPU by
tests/workload/profile_shape_test.sh. Prints one line ending in OK or
TARGET MISSED (naming what missed); exit status 0 when OK, 1 when missed,
2 on bad usage or an unreadable file.
"""
import gzip
import json
import os
import sys

SEED_MIN_SHARE = 0.30
SEED_MAX_CONCURRENCY = 0.05
TUNED_MAX_SHARE = 0.05
TUNED_MIN_CONCURRENCY = 0.01
MAX_NO_OP_SHARE = 0.05
LAYERS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "workload_layers.txt")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def from_report(r):
    if r.get("schema") != "gpuscope.report/1":
        raise ValueError(f"not a gpuscope.report/1 document (schema {r.get('schema')!r})")
    cats = sorted(r.get("categories", []), key=lambda c: -c.get("share", 0))
    share = {c["name"]: c.get("share", 0) for c in cats}
    conc = [(f"gpu{d.get('id', i)}", d.get("kernel_concurrency", 0.0)) for i, d in enumerate(r.get("devices", []))]
    return share, [c["name"] for c in cats], conc


def coarse_category(name):
    n = name.lower()
    for pattern, cat in (("nccl", "communication"), ("pad_nchw", "padding"), ("pad_nhwc", "padding"),
                         ("tensorpaddingop", "padding"), ("tensorbroadcastingop", "broadcast"),
                         ("broadcast", "broadcast"), ("transpose", "transpose"), ("sgd", "optimizer"),
                         ("bn_", "normalization"), ("conv", "convolution"), ("implicit_gemm", "convolution"),
                         ("fprop", "convolution"), ("dgrad", "convolution"), ("wgrad", "convolution"), ("gemm", "gemm"),
                         ("softmax", "softmax_loss"), ("pool", "pooling"), ("reduce", "reduction"),
                         ("elementwise", "elementwise"), ("relu", "elementwise"), ("residual", "elementwise")):
        if pattern in n:
            return cat
    return "convolution" if ("cudnn" in n or "xmma" in n or "sm90" in n) else "other"


def concurrency(intervals):
    """(time with >= 2 intervals open) / (time with >= 1 open)."""
    edges = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals], key=lambda x: (x[0], x[1]))
    busy = multi = 0.0
    depth, last = 0, None
    for ts, d in edges:
        if last is not None and depth >= 1:
            busy += ts - last
            if depth >= 2:
                multi += ts - last
        depth += d
        last = ts
    return multi / busy if busy else 0.0


def from_chrome(t):
    events = t["traceEvents"] if isinstance(t, dict) else t
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    if not kernels:
        raise ValueError("no kernel events")
    total = sum(float(e["dur"]) for e in kernels) or 1.0
    by_cat = {}
    for e in kernels:
        c = coarse_category(e["name"])
        by_cat[c] = by_cat.get(c, 0) + float(e["dur"])
    share = {c: v / total for c, v in by_cat.items()}
    top = sorted(share, key=lambda c: -share[c])
    conc = []
    for dev in sorted({e.get("args", {}).get("device", e.get("pid", 0)) for e in kernels}, key=str):
        iv = [(float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in kernels
              if e.get("args", {}).get("device", e.get("pid", 0)) == dev]
        conc.append((f"gpu{dev}", concurrency(iv)))
    return share, top, conc


def judge(preset, share, top, conc):
    pb = share.get("padding", 0) + share.get("broadcast", 0)
    missed = []
    if preset == "seed":
        if pb < SEED_MIN_SHARE:
            missed.append(f"padding+broadcast < {100 * SEED_MIN_SHARE:.0f}%")
        for c in ("padding", "broadcast"):
            if c not in top[:4]:
                missed.append(f"{c} not in the top 4")
        if any(v > SEED_MAX_CONCURRENCY for _, v in conc):
            missed.append(f"kernel concurrency > {SEED_MAX_CONCURRENCY}")
    else:
        if pb >= TUNED_MAX_SHARE:
            missed.append(f"padding+broadcast >= {100 * TUNED_MAX_SHARE:.0f}%")
        if not any(v > TUNED_MIN_CONCURRENCY for _, v in conc):
            missed.append(f"kernel concurrency <= {TUNED_MIN_CONCURRENCY}")
    return pb, missed


def layers():
    with open(LAYERS_FILE) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def judge_ops(preset, path):
    """The op view of a capture: one row per layer range, little GPU time without an op."""
    try:
        r = load(path)
        if r.get("schema") != "gpuscope.report/1":
            raise ValueError(f"not a gpuscope.report/1 document (schema {r.get('schema')!r})")
        rows = r.get("op_names") or r.get("ops") or []
        expected = layers()
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"capture ops ({preset}): {path}: unreadable: {e} -> TARGET MISSED")
        return 2
    calls = {}
    for row in rows:
        calls[row["name"]] = calls.get(row["name"], 0) + row.get("calls", 0)
    missing = [n for n in expected if calls.get(n, 0) < 1]
    total = sum(row.get("gpu_self_ns", 0) for row in rows) or 1
    # No op rows at all: the analysis found no op, so all GPU time is without one.
    no_op = sum(row.get("gpu_self_ns", 0) for row in rows if row["name"] == "(no op)") / total if rows else 1.0
    missed = []
    if missing:
        missed.append(f"{len(missing)} layer ranges not in ops[]: " + ", ".join(missing[:5]))
    if no_op > MAX_NO_OP_SHARE:
        missed.append(f"(no op) {100 * no_op:.1f}% of GPU time > {100 * MAX_NO_OP_SHARE:.0f}%")
    heaviest = sorted((row for row in rows if row["name"] in set(expected)), key=lambda row: -row.get("gpu_total_ns", 0))
    top = ", ".join(row["name"] for row in heaviest[:3]) or "none"
    verdict = "OK" if not missed else "TARGET MISSED (" + "; ".join(missed) + ")"
    print(f"capture ops ({preset}): {len(expected) - len(missing)} of {len(expected)} layer ranges are op rows, "
          f"(no op) {100 * no_op:.1f}% of GPU time; heaviest layers: {top} -> {verdict}")
    return 0 if not missed else 1


def main(argv):
    if len(argv) == 4 and argv[1] == "ops" and argv[2] in ("seed", "tuned"):
        return judge_ops(argv[2], argv[3])
    if len(argv) != 4 or argv[1] not in ("report", "chrome") or argv[2] not in ("seed", "tuned"):
        print(__doc__)
        return 2
    form, preset, path = argv[1:]
    try:
        share, top, conc = (from_report if form == "report" else from_chrome)(load(path))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"capture report ({preset}, {form}): {path}: unreadable: {e} -> TARGET MISSED")
        return 2
    pb, missed = judge(preset, share, top, conc)
    shares = ", ".join(f"{c} {100 * share[c]:.1f}%" for c in top[:6])
    concs = " ".join(f"{k} concurrency {v:.3f}" for k, v in conc[:4])
    verdict = "OK" if not missed else "TARGET MISSED (" + "; ".join(missed) + ")"
    # The verdict is the line's end: workload_check.sh greps for "OK$".
    print(f"capture report ({preset}, {form}): padding+broadcast {100 * pb:.1f}% of kernel time; "
          f"top categories: {shares}; {concs} -> {verdict}")
    return 0 if not missed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
