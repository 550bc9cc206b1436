#!/usr/bin/env python3
"""Independent reference numbers for tests/import/chrome_json_golden_test.cpp.

Reads every tests/data/traces/*.json.gz with Python's json module (numbers as
decimal.Decimal, so microsecond timestamps stay exact) and prints, per file,
the numbers the golden test asserts. Run it again and paste its output into the
test's table if the traces change:

    python3 tests/import/golden_counts.py tests/data/traces

How each number is obtained (categories compared case-insensitively, so the
2021 schema's "Kernel"/"Runtime"/... count like "kernel"/"cuda_runtime"/...):
  kernels   X events with cat "kernel"
  memcpys   X events with cat "gpu_memcpy" or "memcpy"
  memsets   X events with cat "gpu_memset" or "memset"
  api_calls X events with cat "cuda_runtime", "runtime", "cuda_driver" or "driver"
  syncs     X events with cat "cuda_sync"
  ranges    every other X event, plus every i/I event (marks) but [memory]
  memory    i/I events named "[memory]" with "Bytes" (allocations and frees)
            of the host (Device Type 0) or a GPU (Device Type 1)
  flows     s/t/f events (dropped: their link is args.correlation)
  steps     X events whose name starts with "ProfilerStep#" (CPU and GPU side)
  linked    kernels+memcpys+memsets whose args.correlation equals the
            args.correlation of some runtime/driver event
  ac2g      of those, the ones whose correlation is also the id of an
            ac2g/launch flow start ("s")
  kernel_ns sum over kernels of dur, in ns (Decimal(dur) * 1000, exact)
  first_ns  the earliest kernel start in ns: baseTimeNanoseconds + ts * 1000
  devices   sorted device ids of kernels/memcpys/memsets (args.device)
  rank, world_size from distributedInfo (-1 / 0 when absent)
  sub_us    1 if any ts or dur is not a whole number of microseconds
"""
import decimal
import glob
import gzip
import json
import os
import sys


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../data/traces")
    for path in sorted(glob.glob(os.path.join(folder, "*.json.gz"))):
        doc = json.loads(gzip.open(path).read(), parse_float=decimal.Decimal, parse_int=decimal.Decimal)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        base = int(doc.get("baseTimeNanoseconds", 0)) if isinstance(doc, dict) else 0
        dist = doc.get("distributedInfo", {}) if isinstance(doc, dict) else {}
        n = dict(kernels=0, memcpys=0, memsets=0, api_calls=0, syncs=0, ranges=0, flows=0, steps=0, memory=0)
        api_corr, flow_starts, ops = set(), set(), []
        kernel_ns, first_ns, devices, sub_us = 0, None, set(), 0
        for e in events:
            ph, cat = e.get("ph"), str(e.get("cat", "")).lower()
            for key in ("ts", "dur"):
                if key in e and isinstance(e[key], decimal.Decimal) and e[key] != e[key].to_integral_value():
                    sub_us = 1
            if ph in ("s", "t", "f"):
                n["flows"] += 1
                if ph == "s" and e.get("cat") in ("ac2g", "async"):
                    flow_starts.add(int(e["id"]))
                continue
            if ph in ("i", "I"):
                if e.get("name") != "[memory]":
                    n["ranges"] += 1
                elif "Bytes" in e.get("args", {}) and e["args"].get("Device Type", 0) in (0, 1):
                    n["memory"] += 1
                continue
            if ph != "X":
                continue
            args = e.get("args", {})
            if str(e.get("name", "")).startswith("ProfilerStep#"):
                n["steps"] += 1
            if cat == "kernel":
                n["kernels"] += 1
                kernel_ns += int(e["dur"] * 1000)
                start = base + int(e["ts"] * 1000)
                first_ns = start if first_ns is None else min(first_ns, start)
            elif cat in ("gpu_memcpy", "memcpy"):
                n["memcpys"] += 1
            elif cat in ("gpu_memset", "memset"):
                n["memsets"] += 1
            elif cat in ("cuda_runtime", "runtime", "cuda_driver", "driver"):
                n["api_calls"] += 1
                if "correlation" in args:
                    api_corr.add(int(args["correlation"]))
                continue
            elif cat == "cuda_sync":
                n["syncs"] += 1
                continue
            else:
                n["ranges"] += 1
                continue
            devices.add(int(args["device"]))
            ops.append(int(args.get("correlation", 0)))
        linked = sum(1 for c in ops if c and c in api_corr)
        ac2g = sum(1 for c in ops if c and c in api_corr and c in flow_starts)
        print('{"%s", %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %dLL, %dLL, {%s}, %d, %d, %d, %d},' % (
            os.path.basename(path), n["kernels"], n["memcpys"], n["memsets"], n["api_calls"], n["syncs"],
            n["ranges"], n["flows"], n["steps"], linked, ac2g, kernel_ns, first_ns or 0,
            ", ".join(str(d) for d in sorted(devices)), int(dist.get("rank", -1)), int(dist.get("world_size", 0)),
            sub_us, n["memory"]))


if __name__ == "__main__":
    main()
