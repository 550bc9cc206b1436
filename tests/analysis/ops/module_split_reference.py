#!/usr/bin/env python3
"""The forward/backward split of a Kineto trace, computed from its JSON alone.

The expected figures of ModuleSplitGolden (module_split_golden_test.cpp):
backward ops are the op ranges (cpu_op, user_annotation) with a "Fwd thread
id" > 0, or named "autograd::engine::evaluate_function: …" (AccumulateGrad has
no forward op), and no such op around them on their thread; each links to the forward
ops (a "Sequence number", "Fwd thread id" 0) of its number in its process
when those are all on one thread, to the one that started last; a GPU op's
time goes to the backward op around the innermost op around its launch call
(found by correlation). Kineto's own "fwdbwd" flows are counted beside, as a
second opinion on the links. Times are exact: the JSON's decimals are read as
decimals.

    python3 module_split_reference.py tests/data/traces/hta-ns-resolution-v100.json.gz
"""
import bisect
import collections
import decimal
import gzip
import json
import sys

OPS = {"cpu_op", "operator", "user_annotation"}
GPU = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}
LAUNCH = {"cuda_runtime", "runtime", "cuda_driver", "driver"}


def ns(x):
    return int(decimal.Decimal(x) * 1000)


def main(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    ops = []  # (pid, tid, start, end, args)
    for e in events:
        if e.get("ph") == "X" and str(e.get("cat", "")).lower() in OPS:
            s = ns(e["ts"])
            ops.append((int(e["pid"]), int(e["tid"]), s, s + ns(e.get("dur", 0)), e.get("args", {}), e.get("name", "")))
    # Nesting per thread: start order, the longer first.
    by_thread = collections.defaultdict(list)
    for i, o in enumerate(ops):
        by_thread[(o[0], o[1])].append(i)
    outer_bwd = [None] * len(ops)
    starts, order = {}, {}
    for key, rows in by_thread.items():
        rows.sort(key=lambda i: (ops[i][2], -ops[i][3]))
        stack = []
        for i in rows:
            while stack and ops[stack[-1]][3] <= ops[i][2]:
                stack.pop()
            parent = stack[-1] if stack else None
            # autograd's node ranges without a forward op (AccumulateGrad and its hooks) are backward too
            bwd = (ops[i][4].get("Fwd thread id", 0) > 0 and "Sequence number" in ops[i][4]) or ops[i][5].startswith(
                "autograd::engine::evaluate_function:")
            outer_bwd[i] = outer_bwd[parent] if parent is not None and outer_bwd[parent] is not None else (
                i if bwd else None)
            stack.append(i)
        starts[key] = [ops[i][2] for i in rows]
        order[key] = rows
    forward = collections.defaultdict(list)
    for i, (pid, tid, s, _, a, _name) in enumerate(ops):
        if "Sequence number" in a and a.get("Fwd thread id", 0) == 0:
            forward[(pid, a["Sequence number"])].append((s, tid, i))
    linked = unlinked = 0
    link = {}
    for i, o in enumerate(ops):
        if outer_bwd[i] != i:
            continue
        cands = forward.get((o[0], o[4]["Sequence number"]), []) if "Sequence number" in o[4] else []
        if cands and len({t for _, t, _ in cands}) == 1:
            linked += 1
            link[i] = max(cands)[2]
        else:
            unlinked += 1
    # GPU ops -> launch call -> innermost op around its start -> backward op.
    launch = {}
    for e in events:
        if e.get("ph") == "X" and str(e.get("cat", "")).lower() in LAUNCH and "correlation" in e.get("args", {}):
            launch[e["args"]["correlation"]] = (int(e["pid"]), int(e["tid"]), ns(e["ts"]))
    bwd_ns = unlinked_ns = launched_ns = 0
    for e in events:
        if e.get("ph") != "X" or str(e.get("cat", "")).lower() not in GPU:
            continue
        c = e.get("args", {}).get("correlation")
        if c not in launch:
            continue
        d = ns(e["dur"])
        launched_ns += d
        pid, tid, s = launch[c]
        rows = order.get((pid, tid), [])
        # the innermost op around s: the last one starting at or before s that ends after it
        j = bisect.bisect_right(starts.get((pid, tid), []), s) - 1
        inner = None
        while j >= 0:
            i = rows[j]
            if ops[i][3] >= s:
                inner = i
                break
            j -= 1
        if inner is None or outer_bwd[inner] is None:
            continue
        bwd_ns += d
        if outer_bwd[inner] not in link:
            unlinked_ns += d
    flows = sum(1 for e in events if e.get("cat") == "fwdbwd" and e.get("ph") == "f")
    print(json.dumps(dict(backward_ops=linked + unlinked, linked=linked, unlinked=unlinked, backward_gpu_ns=bwd_ns,
                          unlinked_gpu_ns=unlinked_ns, forward_gpu_ns=launched_ns - bwd_ns,
                          kineto_fwdbwd_flows=flows)))


if __name__ == "__main__":
    main(sys.argv[1])
