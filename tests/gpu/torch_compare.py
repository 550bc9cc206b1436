#!/usr/bin/env python3
"""A PyTorch training program captured two ways, by gpuscope and by PyTorch's
own profiler (Kineto), and the comparison of the two traces
(tests/gpu/device_run.sh, section 5).

  torch_compare.py run --mode plain|gpuscope|kineto [--steps N] [--warmup N] [--batch N] [--trace OUT.json]
      Trains a ResNet-18 (the CIFAR layout of tests/gpu/pytorch_baseline.py
      with widths 64/128/256/512) on one random 32x32 batch held in pinned
      host memory, copied to the GPU at the start of every step; bf16
      autocast, SGD; cuDNN's heuristics rather than its benchmark, so that
      two runs choose the same kernels. Every step is one NVTX range and one
      record_function range, "warmup I" or "step I" (the timed steps), with a
      device sync at its end, so the GPU work of a step lies inside its range.
      plain and gpuscope run the same code (gpuscope: under `gpuscope
      capture`); kineto runs the timed steps under torch.profiler (CPU and
      CUDA activities) and writes its trace to OUT.json. Prints
      "INPUT bytes=B" and "STEPTIME mode=M median_ms=X steps=N".

  torch_compare.py compare GPUSCOPE.sqlite KINETO.sqlite [--steps N] [--input-bytes B]
                           [--step-ms plain=X,gpuscope=Y,kineto=Z] [--md OUT.md]
      Reads both traces as gpuscope exports them (`gpuscope export T -o
      T.sqlite`; a Kineto JSON goes through gpuscope's importer) and compares
      the timed steps: kernel count and names per step, each kernel's duration
      (within 1 % or 1 us), its stream (streams named by order of first use),
      and the copies and memsets (kind, bytes). Steps are found by their
      ranges ("step I"), else by the last N host-to-device copies of B bytes.
      The two traces come from two runs, so durations also differ by what
      varies from run to run: the table gives, as a floor, how many kernels of
      one trace stay within the tolerance from one step to the next. With
      --step-ms, each profiler's overhead on the step time. Prints a table
      (also written to OUT.md); exit status 0 when kernels, names, streams and
      copies agree in every step, 1 when they do not, 2 when a file cannot be
      read or holds no steps.
"""
import argparse
import difflib
import os
import re
import sqlite3
import statistics
import sys
import time

STEP_RE = re.compile(r"^step (\d+)$")
TOL_REL, TOL_NS = 0.01, 1000


# ---- the training program ------------------------------------------------------------------------
def run(args):
    import torch
    import torch.nn.functional as F
    from pytorch_baseline import Net

    if not torch.cuda.is_available():
        print("torch_compare: no CUDA GPU", file=sys.stderr)
        return 2
    torch.backends.cudnn.benchmark = False
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = Net(widths=(64, 128, 256, 512)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    x_host = torch.randn(args.batch, 3, 32, 32).pin_memory()
    y_host = torch.randint(0, 10, (args.batch,)).pin_memory()
    print(f"INPUT bytes={x_host.numel() * x_host.element_size()}", flush=True)

    def step(name):
        torch.cuda.nvtx.range_push(name)
        with torch.profiler.record_function(name):
            t0 = time.perf_counter()
            x = x_host.to(dev, non_blocking=True)
            y = y_host.to(dev, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = F.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            torch.cuda.synchronize()
            ms = 1e3 * (time.perf_counter() - t0)
        torch.cuda.nvtx.range_pop()
        return ms

    for i in range(args.warmup):
        step(f"warmup {i}")
    if args.mode == "kineto":
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            times = [step(f"step {i}") for i in range(args.steps)]
        prof.export_chrome_trace(args.trace)
    else:
        times = [step(f"step {i}") for i in range(args.steps)]
    print(f"STEPTIME mode={args.mode} median_ms={statistics.median(times):.3f} steps={args.steps}", flush=True)
    return 0


# ---- reading a trace -----------------------------------------------------------------------------
class Trace:
    """The kernels, copies, memsets and step ranges of one SQLite export."""

    def __init__(self, path):
        if not os.path.isfile(path):
            raise ValueError(f"{path}: no such file")
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            self.kernels = db.execute(
                "SELECT k.start, k.end, k.deviceId, k.streamId, d.value, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                "JOIN StringIds d ON d.id = k.demangledName LEFT JOIN StringIds s ON s.id = k.shortName "
                "ORDER BY k.start").fetchall()
            self.copies = db.execute(
                "SELECT c.start, COALESCE(e.label, c.copyKind), c.bytes, c.streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY c "
                "LEFT JOIN ENUM_CUDA_MEMCPY_OPER e ON e.id = c.copyKind ORDER BY c.start").fetchall()
            self.memsets = db.execute(
                "SELECT start, bytes, streamId FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY start").fetchall()
            ranges = db.execute("SELECT text, start, end FROM NVTX_EVENTS WHERE end IS NOT NULL").fetchall()
            ranges += db.execute("SELECT s.value, a.start, a.end FROM GPUSCOPE_ANNOTATIONS a "
                                 "JOIN StringIds s ON s.id = a.nameId").fetchall()
        except sqlite3.Error as e:
            raise ValueError(f"{path}: not a gpuscope SQLite export ({e})")
        finally:
            db.close()
        hull = {}
        for name, start, end in ranges:
            m = STEP_RE.match(name or "")
            if m:
                i = int(m.group(1))
                lo, hi = hull.get(i, (start, end))
                hull[i] = (min(lo, start), max(hi, end))
        self.steps = hull
        self.found_by = "ranges"

    def steps_from_copies(self, steps, input_bytes):
        """Steps as the last STEPS host-to-device copies of INPUT_BYTES, each up to the next."""
        starts = [c[0] for c in self.copies if c[2] == input_bytes and "htod" in str(c[1]).lower()][-steps:]
        ends = starts[1:] + [max([k[1] for k in self.kernels] + [c[0] for c in self.copies]) + 1]
        self.steps = {i: (s, e - 1) for i, (s, e) in enumerate(zip(starts, ends))}
        self.found_by = f"input copies ({input_bytes} B)"

    def step_rows(self, rows, i):
        lo, hi = self.steps[i]
        return [r for r in rows if lo <= r[0] <= hi]


# ---- comparing two traces ------------------------------------------------------------------------
def aligned(a, b):
    """Pairs (i, j) of kernels with the same name, in order (difflib's matching blocks)."""
    sm = difflib.SequenceMatcher(None, [k[4] for k in a], [k[4] for k in b], autojunk=False)
    return [(m.a + t, m.b + t) for m in sm.get_matching_blocks() for t in range(m.size)]


def within(da, db):
    return abs(da - db) <= max(TOL_REL * db, TOL_NS)


def stream_names(kernels):
    """Each (device, stream) named by its order of first use."""
    names = {}
    for k in kernels:
        names.setdefault((k[2], k[3]), f"s{len(names)}")
    return names


def compare(g, k):
    common = sorted(set(g.steps) & set(k.steps))
    r = {"steps": common, "count_eq": 0, "names_eq": 0, "order_eq": 0, "pairs": 0, "dur_ok": 0, "stream_ok": 0,
         "copies_eq": 0, "memsets_eq": 0, "deltas": [], "worst": [], "first_diff": None, "floor_pairs": 0,
         "floor_ok": 0, "counts": [], "copy_desc": ("", "")}
    gk_all = [x for i in common for x in g.step_rows(g.kernels, i)]
    kk_all = [x for i in common for x in k.step_rows(k.kernels, i)]
    gs, ks = stream_names(gk_all), stream_names(kk_all)
    r["streams"] = (len(gs), len(ks))
    prev = None
    for i in common:
        a, b = g.step_rows(g.kernels, i), k.step_rows(k.kernels, i)
        r["counts"].append((len(a), len(b)))
        r["count_eq"] += len(a) == len(b)
        r["names_eq"] += sorted(x[4] for x in a) == sorted(x[4] for x in b)
        r["order_eq"] += [x[4] for x in a] == [x[4] for x in b]
        if r["first_diff"] is None and [x[4] for x in a] != [x[4] for x in b]:
            d = next(((j, x[4], y[4]) for j, (x, y) in enumerate(zip(a, b)) if x[4] != y[4]),
                     (min(len(a), len(b)), "(end)" if len(a) < len(b) else a[len(b)][4],
                      "(end)" if len(b) < len(a) else b[len(a)][4]))
            r["first_diff"] = (i,) + d
        for ia, ib in aligned(a, b):
            x, y = a[ia], b[ib]
            dx, dy = x[1] - x[0], y[1] - y[0]
            r["pairs"] += 1
            r["dur_ok"] += within(dx, dy)
            r["stream_ok"] += gs[(x[2], x[3])] == ks[(y[2], y[3])]
            r["deltas"].append(abs(dx - dy))
            r["worst"].append((abs(dx - dy), x[5] or x[4], dx, dy))
        if prev is not None:  # run-to-run floor: one trace against itself, step to step
            for ia, ib in aligned(prev, a):
                r["floor_pairs"] += 1
                r["floor_ok"] += within(a[ib][1] - a[ib][0], prev[ia][1] - prev[ia][0])
        prev = a
        ca = [(c[1], c[2]) for c in g.step_rows(g.copies, i)]
        cb = [(c[1], c[2]) for c in k.step_rows(k.copies, i)]
        r["copies_eq"] += ca == cb
        r["memsets_eq"] += [m[1] for m in g.step_rows(g.memsets, i)] == [m[1] for m in k.step_rows(k.memsets, i)]
        if i == common[0]:
            r["copy_desc"] = (describe_copies(ca), describe_copies(cb))
    worst = {}
    for w in r["worst"]:  # the largest difference of each kernel name
        worst[w[1]] = max(worst.get(w[1], w), w)
    r["worst"] = sorted(worst.values(), reverse=True)[:3]
    return r


def describe_copies(copies):
    if not copies:
        return "none"
    kinds = {}
    for kind, size in copies:
        kinds.setdefault(kind, []).append(size)
    return ", ".join(f"{len(v)} {kind} ({sum(v)} B)" for kind, v in sorted(kinds.items()))


def pct(n, d):
    return f"{100.0 * n / d:.1f}%" if d else "n/a"


def table(g, k, r, step_ms):
    n = len(r["steps"])

    def eq(x):
        return "yes" if n and x == n else f"NO ({x} of {n} steps)"

    counts_g = [c[0] for c in r["counts"]]
    counts_k = [c[1] for c in r["counts"]]

    def med(v):
        return f"{statistics.median(v):g}" if v else "-"

    lines = [
        "| check | gpuscope capture | torch.profiler (Kineto) | agree |",
        "| --- | --- | --- | --- |",
        f"| timed steps (found by) | {len(g.steps)} ({g.found_by}) | {len(k.steps)} ({k.found_by}) | "
        f"{'yes' if n and len(g.steps) == len(k.steps) == n else f'{n} in both'} |",
        f"| kernels per step (median; all steps) | {med(counts_g)}; {sum(counts_g)} | {med(counts_k)}; "
        f"{sum(counts_k)} | {eq(r['count_eq'])} |",
        f"| kernel names per step (as a set; in order) | | | {eq(r['names_eq'])}; {eq(r['order_eq'])} |",
        f"| kernel durations within 1 % or 1 us (pairs of the same name) | | | {r['dur_ok']} of {r['pairs']} "
        f"({pct(r['dur_ok'], r['pairs'])}); median difference "
        f"{(statistics.median(r['deltas']) / 1000 if r['deltas'] else 0):.3f} us |",
        f"| run-to-run floor: one trace's kernels within 1 % or 1 us from step to step | {r['floor_ok']} of "
        f"{r['floor_pairs']} ({pct(r['floor_ok'], r['floor_pairs'])}) | | |",
        f"| streams used; kernels on the same stream | {r['streams'][0]} | {r['streams'][1]} | "
        f"{'yes' if r['stream_ok'] == r['pairs'] and r['pairs'] else 'NO'} ({r['stream_ok']} of {r['pairs']}) |",
        f"| copies per step (kind, bytes; first step) | {r['copy_desc'][0]} | {r['copy_desc'][1]} | "
        f"{eq(r['copies_eq'])} |",
        f"| memsets per step | | | {eq(r['memsets_eq'])} |",
    ]
    if step_ms.get("plain"):
        base = step_ms["plain"]

        def cell(m):
            return f"{step_ms[m]:.3f} ms ({100 * (step_ms[m] / base - 1):+.1f}%)" if m in step_ms else "n/a"
        lines.append(f"| step time, median (plain {base:.3f} ms) | {cell('gpuscope')} | {cell('kineto')} | "
                     f"{lower_overhead(step_ms)} |")
    notes = []
    if r["first_diff"]:
        i, j, a, b = r["first_diff"]
        notes.append(f"first kernel that differs: step {i}, kernel {j}: gpuscope `{a[:120]}`, Kineto `{b[:120]}`")
    for d, name, dx, dy in r["worst"]:
        notes.append(f"largest duration difference: `{name[:80]}` {dx / 1000:.3f} us (gpuscope) vs {dy / 1000:.3f} us "
                     f"(Kineto)")
    return lines, notes


def lower_overhead(step_ms):
    if "gpuscope" not in step_ms or "kineto" not in step_ms:
        return "n/a"
    return "gpuscope lower" if step_ms["gpuscope"] < step_ms["kineto"] else "Kineto lower"


def parse_step_ms(text):
    out = {}
    for part in filter(None, (text or "").split(",")):
        key, _, value = part.partition("=")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            pass
    return out


def compare_main(args):
    try:
        g, k = Trace(args.gpuscope), Trace(args.kineto)
    except ValueError as e:
        print(f"torch_compare: {e}", file=sys.stderr)
        return 2
    for t, name in ((g, args.gpuscope), (k, args.kineto)):
        if not t.steps and args.input_bytes:
            t.steps_from_copies(args.steps, args.input_bytes)
        if not t.steps:
            print(f"torch_compare: {name}: no step ranges ('step I') and no input copies to find steps by",
                  file=sys.stderr)
            return 2
    r = compare(g, k)
    lines, notes = table(g, k, r, parse_step_ms(args.step_ms))
    n = len(r["steps"])
    agree = n > 0 and all(r[key] == n for key in ("count_eq", "names_eq", "copies_eq")) and \
        r["stream_ok"] == r["pairs"]
    verdict = f"RESULT torch-compare: {'kernels, names, streams and copies agree' if agree else 'DIFFER'} " \
              f"in {n} steps; durations {pct(r['dur_ok'], r['pairs'])} within 1 % or 1 us"
    text = "\n".join(lines + [""] + [f"- {x}" for x in notes] + ["", verdict]) + "\n"
    sys.stdout.write(text)
    if args.md:
        tmp = f"{args.md}.tmp.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, args.md)
    return 0 if agree else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--mode", choices=["plain", "gpuscope", "kineto"], required=True)
    r.add_argument("--steps", type=int, default=10)
    r.add_argument("--warmup", type=int, default=5)
    r.add_argument("--batch", type=int, default=128)
    r.add_argument("--trace", default="kineto.json")
    c = sub.add_parser("compare")
    c.add_argument("gpuscope")
    c.add_argument("kineto")
    c.add_argument("--steps", type=int, default=10)
    c.add_argument("--input-bytes", type=int, default=0)
    c.add_argument("--step-ms", default="")
    c.add_argument("--md")
    args = p.parse_args()
    return run(args) if args.cmd == "run" else compare_main(args)


if __name__ == "__main__":
    sys.exit(main())
