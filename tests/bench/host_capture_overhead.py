"""What the host half of `gpuscope capture` costs a Python program: per recorded PyTorch op, per host sample,
and in a CPU-bound loop at 1 kHz sampling (docs/PERFORMANCE.md, "Capture: the host side").

    python3 tests/bench/host_capture_overhead.py [--hook src/capture/pyhook] [--observer LIB] [--module-hooks LIB]
                                                 [--runs 5] [--ops 200000]

Each case runs a fresh interpreter (the one running this script, which needs torch) with the startup hook
installed the way `gpuscope capture` installs it (PYTHONPATH, GPUSCOPE_CAPTURE_*), or without it, interleaved
run by run; the program times its own loop, so interpreter start and import are left out. Reports medians, in
CPU time (what the capture costs the machine; it moves far less than wall time on a loaded machine) and wall.

- ops: a 16-wide Linear + ReLU called in a loop (12 aten ops per call), with the flush interval set beyond the
  run so that every op is taken at exit. "inline" is the main thread's extra CPU time in the loop (what an op
  costs while it runs); "flush" is the flush's CPU time and wall time (taking PyTorch's results and writing
  them, which a capture pays at a flush point every flush interval); both per recorded op, and their sum. Each
  framework case runs twice: through PyTorch's profiler (GPUSCOPE_CAPTURE_TORCH_OBSERVER=off) and through the
  native observer (--observer, by default the one build/ made for this torch; those rows are left out when
  there is none). Stacks only have the profiler path. The module hooks are the C ones (--module-hooks, by default
  the ones build/ made; "off": the Python hooks) wherever the hook under test has them.
- modules: CPU time per nn.Module call (a Sequential of 20 Identity, in-process): PyTorch's own call, with an empty
  global hook pair (PyTorch's slow path), with gpuscope's Python hooks and with its C hooks (--module-hooks).
- sampling: a pure-Python loop and a torch loop (256x256 matmuls, one thread), each a few seconds, with
  --host-sampling 1000 against off: the process's extra CPU time (every thread, the sampler's included) and the
  loop's extra wall time; per sample, the sampler's own CPU time.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

OPS_PROGRAM = r"""
import json, sys, time, torch
n = int(sys.argv[1])
m = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU())
x = torch.randn(4, 16)
with torch.no_grad():
    for _ in range(200):
        m(x)
    t, c = time.perf_counter_ns(), time.thread_time_ns()
    for _ in range(n // 12):
        m(x)
    dt, dc = time.perf_counter_ns() - t, time.thread_time_ns() - c
print(json.dumps({"loop_ns": dt, "cpu_ns": dc}))
"""

MODULES_PROGRAM = r"""
import json, statistics, sys, time, torch
sys.path.insert(0, sys.argv[1])
from gpuscope_hook import torch_ops
class File:
    n = 0
    def string(self, text):
        self.n += 1
        return self.n
class Stats(dict):
    def add(self, k, n): self[k] = self.get(k, 0) + n
class Notes(dict):
    set = dict.__setitem__
m = torch.nn.Sequential(*[torch.nn.Identity() for _ in range(20)])
x = torch.zeros(1)
mm = torch.nn.modules.module
def loop(n=5000):
    c = time.thread_time_ns()
    for _ in range(n):
        m(x)
    return (time.thread_time_ns() - c) / (n * 21)
def case(kind):
    if kind == "none":
        return loop()
    if kind == "empty hooks":
        h = [mm.register_module_forward_pre_hook(lambda *a: None), mm.register_module_forward_hook(lambda *a: None)]
    else:
        env = {torch_ops.ENV_MODULE_HOOKS: "off" if kind == "Python hooks" else sys.argv[2]}
        p = torch_ops.ModulePaths(torch, File(), Stats(), Notes(), lambda: None, env=env)
        assert (p._native is not None) == (kind == "C hooks"), p.hooks_note
        h = p._handles
    try:
        return loop()
    finally:
        for x_ in h:
            x_.remove()
kinds = ["none", "empty hooks", "Python hooks"] + (["C hooks"] if sys.argv[2] != "off" else [])
out = {k: [] for k in kinds}
for k in kinds:
    case(k)
for _ in range(int(sys.argv[3])):
    for k in kinds:
        out[k].append(case(k))
print(json.dumps({k: statistics.median(v) for k, v in out.items()}))
"""

PYTHON_LOOP = r"""
import json, time
t, c = time.perf_counter_ns(), time.process_time_ns()
s = 0
for i in range(12_000_000):
    s += i * i % 7
print(json.dumps({"loop_ns": time.perf_counter_ns() - t, "cpu_ns": time.process_time_ns() - c}))
"""

TORCH_LOOP = r"""
import json, time, torch
torch.set_num_threads(1)
a = torch.randn(256, 256)
for _ in range(20):
    a @ a
t, c = time.perf_counter_ns(), time.process_time_ns()
for _ in range(2500):
    b = a @ a
print(json.dumps({"loop_ns": time.perf_counter_ns() - t, "cpu_ns": time.process_time_ns() - c}))
"""


def host_stats(directory):
    stats = {}
    for name in os.listdir(directory):
        if not name.endswith(".host"):
            continue
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            for line in f:
                try:
                    chunk = json.loads(line)
                except ValueError:
                    continue
                if chunk.get("k") == "meta":
                    for k, v in chunk.get("stats", {}).items():
                        stats[k] = stats.get(k, 0) + v
    return stats


def run(program, args, hook, framework, sampling, flush_ms=None, observer="off", module_hooks=None):
    env = dict(os.environ)
    env["GPUSCOPE_CAPTURE_TORCH_OBSERVER"] = observer
    if module_hooks:
        env["GPUSCOPE_CAPTURE_MODULE_HOOKS"] = module_hooks
    if flush_ms is not None:
        env["GPUSCOPE_CAPTURE_FLUSH_MS"] = str(flush_ms)
    with tempfile.TemporaryDirectory() as host_dir:
        if hook:
            env["PYTHONPATH"] = hook + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            env["GPUSCOPE_CAPTURE_HOST_DIR"] = host_dir
            env["GPUSCOPE_CAPTURE_FRAMEWORK"] = framework
            env["GPUSCOPE_CAPTURE_HOST_SAMPLING"] = sampling
        p = subprocess.run([sys.executable, "-c", program, *args], capture_output=True, text=True, env=env,
                           check=True)
        out = json.loads(p.stdout.strip().splitlines()[-1])
        out["stats"] = host_stats(host_dir) if hook else {}
    return out


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def per_op(rs, plain_cpu):
    """Medians, per recorded op, of: inline CPU, flush CPU, flush wall."""
    inline, flush, flush_wall, ops = [], [], [], []
    for r in rs:
        st = r["stats"]
        n = max(1, st.get("capture.framework.ops", 0))
        inline.append((r["cpu_ns"] - plain_cpu) / n)
        flush.append(st.get("capture.framework.flush_cpu_ns", 0) / n)
        flush_wall.append(st.get("capture.framework.flush_ns", 0) / n)
        ops.append(n)
    return median(inline), median(flush), median(flush_wall), median(ops)


def bench_ops(args):
    cases = {"plain": None}
    for framework in ("ops,shapes", "ops,shapes,modules", "ops,shapes,modules,stacks"):
        cases[framework + " (profiler)"] = (framework, "off", "off")
        if args.observer and "stacks" not in framework:
            cases[framework + " (native)"] = (framework, "off", args.observer)
    results = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, case in cases.items():
            # No flush inside the loop: its extra CPU time is the inline cost alone, and
            # the flush at exit takes every op (each op costs the same at any flush).
            framework, sampling, observer = case or ("", "", "off")
            results[name].append(run(OPS_PROGRAM, [str(args.ops)], args.hook if case else None, framework, sampling,
                                     flush_ms=10**9, observer=observer, module_hooks=args.module_hooks))
    plain_cpu = median([r["cpu_ns"] for r in results["plain"]])
    plain_wall = median([r["loop_ns"] for r in results["plain"]])
    print("ops: %d calls of Linear+ReLU, median of %d runs; plain loop %.1f ms CPU, %.1f ms wall" % (
        args.ops // 12, args.runs, plain_cpu / 1e6, plain_wall / 1e6))
    print("| framework (path) | recorded ops | loop CPU | inline CPU per op | flush CPU per op | in all per op (CPU) "
          "| flush wall per op |")
    print("|---|---|---|---|---|---|---|")
    for name in cases:
        if name == "plain":
            continue
        rs = results[name]
        inline, flush, flush_wall, ops = per_op(rs, plain_cpu)
        print("| %s | %d | %.1f ms | %.2f µs | %.2f µs | %.2f µs | %.2f µs |" % (
            name, ops, median([r["cpu_ns"] for r in rs]) / 1e6, inline / 1e3, flush / 1e3, (inline + flush) / 1e3,
            flush_wall / 1e3))


def default_observer(here):
    """The native observer build/ made for this interpreter's torch, or None."""
    try:
        import torch
    except ImportError:
        return None
    path = os.path.join(here, "..", "..", "build", "share", "gpuscope", "pyhook", "torch_observer",
                        "torch-" + torch.__version__, "libgpuscope_torch_observer.so")
    return os.path.abspath(path) if os.path.exists(path) else None


def default_module_hooks(here):
    """The C module hooks build/ made, or None."""
    path = os.path.join(here, "..", "..", "build", "share", "gpuscope", "pyhook", "module_hooks", "_module_hooks.abi3.so")
    return os.path.abspath(path) if os.path.exists(path) else None


def bench_modules(args):
    """Per nn.Module call (a Sequential of 20 Identity, 5,000 calls, in-process): PyTorch's own call, its slow
    path under any global hook (an empty Python pair), gpuscope's Python hooks and its C hooks."""
    hooks = args.module_hooks or "off"
    p = subprocess.run([sys.executable, "-c", MODULES_PROGRAM, args.hook, hooks, str(args.runs)],
                       capture_output=True, text=True, check=True)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    print("modules: CPU per module call, median of %d rounds (the cases interleaved)" % args.runs)
    print("| hooks | per module call | above PyTorch's own call |")
    print("|---|---:|---:|")
    for k, v in r.items():
        print("| %s | %.2f µs | %.2f µs |" % (k, v / 1e3, (v - r["none"]) / 1e3))


def bench_sampling(args):
    for label, program in (("pure-Python loop", PYTHON_LOOP), ("torch matmul loop", TORCH_LOOP)):
        off, on = [], []
        for _ in range(args.runs):
            off.append(run(program, [], args.hook, "none", "off"))
            on.append(run(program, [], args.hook, "none", "1000"))
        cpu_off, cpu_on = median([r["cpu_ns"] for r in off]), median([r["cpu_ns"] for r in on])
        t_off, t_on = median([r["loop_ns"] for r in off]), median([r["loop_ns"] for r in on])
        taken = median([r["stats"].get("capture.host.samples.taken", 0) for r in on])
        missed = median([r["stats"].get("capture.host.samples.missed", 0) for r in on])
        per_sample = median([r["stats"].get("capture.host.samples.cost_ns", 0) /
                             max(1, r["stats"].get("capture.host.samples.taken", 1)) for r in on])
        print("| %s | %.0f / %.0f ms | %+.1f %% | %+.1f %% | %d taken, %d ticks missed | %.1f µs |" % (
            label, cpu_off / 1e6, t_off / 1e6, 100.0 * (cpu_on - cpu_off) / cpu_off,
            100.0 * (t_on - t_off) / t_off, taken, missed, per_sample / 1e3))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hook", default=os.path.join(here, "..", "..", "src", "capture", "pyhook"))
    ap.add_argument("--observer", default=default_observer(here),
                    help="the native observer library for this torch (default: build/'s, if any)")
    ap.add_argument("--module-hooks", default=default_module_hooks(here),
                    help="the C nn.Module hooks' library, or off (default: build/'s, if any)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--ops", type=int, default=200000)
    ap.add_argument("--only", choices=["ops", "modules", "sampling"])
    args = ap.parse_args()
    args.hook = os.path.abspath(args.hook)
    if args.only in (None, "ops"):
        bench_ops(args)
    if args.only in (None, "modules"):
        bench_modules(args)
    if args.only in (None, "sampling"):
        print("\nsampling at 1000 Hz against off (framework none), median of %d runs:" % args.runs)
        print("| loop | off: CPU / wall | CPU overhead | wall overhead | samples | CPU per sample |")
        print("|---|---|---|---|---|---|")
        bench_sampling(args)


if __name__ == "__main__":
    main()
