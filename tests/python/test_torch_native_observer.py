"""The native observer of PyTorch ops (src/capture/torch_observer) against PyTorch's profiler: the same training
loop (torch_train.py) captured both ways gives the same ops, shapes, sequence links, module split and steps; the
hook falls back to the profiler, and says why, where the observer was built for another torch."""
import collections
import ctypes
import json
import os
import shutil
import subprocess
import sys
import types

import pytest

import gpuscope

try:
    import torch
except ImportError:
    pytest.skip("PyTorch is not installed (Debian: python3-torch)", allow_module_level=True)

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_train.py")
HOOK = os.path.join(os.path.dirname(os.environ["GPUSCOPE_CLI"]), os.pardir, "share", "gpuscope", "pyhook")
OBSERVER = os.path.join(HOOK, "torch_observer", "torch-" + torch.__version__, "libgpuscope_torch_observer.so")

if not os.path.exists(OBSERVER):
    pytest.skip("the native observer was not built for torch %s (needs its C++ headers: libtorch-dev)" %
                torch.__version__, allow_module_level=True)


def capture(tmp, *flags, args=("6",), env=None):
    out = os.path.join(str(tmp), "run.gscope")
    p = subprocess.run([os.environ["GPUSCOPE_CLI"], "capture", "-o", out, "--host-sampling", "off", *flags, "--",
                        sys.executable, PROGRAM, *args], capture_output=True, text=True, cwd=str(tmp),
                       env={**os.environ, **(env or {})}, timeout=300)
    assert p.returncode == 0, p.stderr
    return p, gpuscope.open(out), out


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    # A whole epoch (8 batches): the worker then loads the same batches in both runs, however far it got ahead.
    native = capture(tmp_path_factory.mktemp("native"), args=("8",))
    profiler = capture(tmp_path_factory.mktemp("profiler"), args=("8",),
                       env={"GPUSCOPE_CAPTURE_TORCH_OBSERVER": "off"})
    return native, profiler


def ops(t):
    """cpu_op and user_annotation ranges, their process named by its role (pids differ from run to run)."""
    r = t.ranges
    r = r[r.domain.isin(["cpu_op", "user_annotation"]) & ~r.name.str.startswith("ProfilerStep#")].copy()
    main = t.ranges[t.ranges.name.str.startswith("ProfilerStep#")].pid.iloc[0]
    r["role"] = ["main" if p == main else "worker" for p in r.pid]
    return r


def counts(r, *columns):
    return collections.Counter(tuple(str(v) for v in row) for row in r[list(columns)].itertuples(index=False))


def test_each_path_says_it_was_used(both):
    (p, t, _), (q, u, _) = both
    assert t.info["properties"]["capture.framework.recorder"] == "native observer (built for torch %s)" % (
        torch.__version__)
    assert "on every thread (native observer)" in t.info["properties"]["capture.framework"]
    assert "framework view: pytorch %s" % torch.__version__ in p.stderr
    assert u.info["properties"]["capture.framework.recorder"] == "torch profiler: GPUSCOPE_CAPTURE_TORCH_OBSERVER=off"
    # The forked DataLoader worker uses the same path as its parent.
    worker = [k for k in t.info["properties"] if k.startswith("capture.framework.recorder.pid")]
    assert worker and t.info["properties"][worker[0]].startswith("native observer")


def test_the_same_ops_with_the_same_shapes(both):
    (_, t, _), (_, u, _) = both
    a, b = ops(t), ops(u)
    assert len(a) > 500 and (a.role == "worker").any()
    # The profiler follows the thread that imported torch (and autograd's); the observer sees every thread,
    # here also the worker's multiprocessing feeder thread, which puts each batch into shared memory.
    assert (b.tid == b.pid).all()
    others = a[a.tid != a.pid]
    assert len(others) and (others.role == "worker").all()
    assert set(others.name) <= {"aten::empty", "aten::set_", "aten::copy_", "aten::as_strided"}, set(others.name)
    a = a[a.tid == a.pid]
    assert counts(a, "role", "domain", "name", "input_dims", "input_types") == \
        counts(b, "role", "domain", "name", "input_dims", "input_types")
    ta, tb = gpuscope.ops(t), gpuscope.ops(u)
    ta, tb = ta[~ta.name.isin(set(others.name))], tb[~tb.name.isin(set(others.name))]
    assert len(ta) > 20 and counts(ta, "name", "calls", "shapes") == counts(tb, "name", "calls", "shapes")


def test_the_same_sequence_links(both):
    (_, t, _), (_, u, _) = both
    a, b = ops(t), ops(u)
    a = a[a.tid == a.pid]  # as above
    for r in (a, b):
        r["seq"] = r.sequence.fillna(-1).astype(int)
        r["backward"] = r.fwd_thread > 0
    assert (a.seq >= 0).sum() > 100
    assert counts(a, "role", "name", "seq", "backward") == counts(b, "role", "name", "seq", "backward")
    split_a, split_b = gpuscope.report(t)["module_split"], gpuscope.report(u)["module_split"]
    # Unlinked: AccumulateGrad's backward ops (a leaf's gradient added), which have no forward op.
    accumulate = (a.name == "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad").sum()
    assert split_a["unlinked"] == split_b["unlinked"] == accumulate > 0
    assert split_a["linked"] == split_b["linked"] > 0
    assert {m["name"]: m["backward_ops"] for m in split_a["modules"]} == \
        {m["name"]: m["backward_ops"] for m in split_b["modules"]}


def test_the_same_steps_and_module_nesting(both):
    (_, t, _), (_, u, _) = both
    for tr in (t, u):
        steps = tr.ranges[tr.ranges.name.str.startswith("ProfilerStep#")]
        assert len(steps) == 8
        assert tr.info["properties"]["capture.steps"].startswith("8 steps from Optimizer.step#SGD.step")
    # The observer's clock is the module hooks' (CLOCK_REALTIME): each convolution lies inside its module's call.
    r = t.ranges
    conv = r[(r.domain == "cpu_op") & (r.name == "aten::conv2d")]
    module = r[r.name == "nn.Module: model.features.0"]
    assert len(conv) == 8
    for c in conv.itertuples():
        assert ((module.start <= c.start) & (module.end >= c.end) & (module.tid == c.tid)).any()


def test_a_program_running_its_own_profiler_records_beside_it(tmp_path):
    _, t, _ = capture(tmp_path, args=("4", "--own-profiler"))
    assert "kept recording beside it" in t.info["properties"]["capture.framework.program_profiler"]
    r = t.ranges
    assert ((r.domain == "cpu_op") & (r.name == "aten::conv2d")).sum() == 6  # 4 steps and the profiler's 2


def test_a_full_buffer_drops_ops_and_counts_them(tmp_path):
    _, t, _ = capture(tmp_path, args=("2",), env={"GPUSCOPE_CAPTURE_MAX_BUFFERED_OPS": "50",
                                                   "GPUSCOPE_CAPTURE_FLUSH_MS": "100000"})
    stats = t.info["stats"]
    assert stats["capture.framework.ops_dropped"] > 0
    assert 0 < stats["capture.framework.ops"]


def test_an_observer_built_for_another_torch_is_not_loaded(tmp_path):
    hook = tmp_path / "pyhook"
    shutil.copytree(HOOK, hook, ignore=shutil.ignore_patterns("__pycache__"))
    built = hook / "torch_observer"
    (built / ("torch-" + torch.__version__)).rename(built / "torch-0.0.1")
    p, t, out = capture(tmp_path, args=("2",), env={"GPUSCOPE_PYTHON_HOOK": str(hook)})
    why = "torch profiler: no native observer built for torch %s (built for: 0.0.1)" % torch.__version__
    assert t.info["properties"]["capture.framework.recorder"] == why
    assert ((t.ranges.domain == "cpu_op") & (t.ranges.name == "aten::conv2d")).sum() == 2  # recorded all the same
    info = subprocess.run([os.environ["GPUSCOPE_CLI"], "info", out], capture_output=True, text=True)
    assert "capture.framework.recorder" in info.stdout and "no native observer built" in info.stdout


def load(fake_torch, items=("ops",), env=None):
    sys.path.insert(0, HOOK)
    try:
        from gpuscope_hook import native_ops
    finally:
        sys.path.remove(HOOK)
    return native_ops.load(fake_torch, set(items), env if env is not None else {})


def test_the_hook_checks_the_version_and_abi_the_library_was_built_for():
    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    other = types.SimpleNamespace(__version__="2.11.0", _C=types.SimpleNamespace(_GLIBCXX_USE_CXX11_ABI=abi))
    env = {"GPUSCOPE_CAPTURE_TORCH_OBSERVER": OBSERVER}
    lib, why = load(other, env=env)
    assert lib is None and why == "the native observer was built for torch %s, the program imported 2.11.0" % (
        torch.__version__)
    flipped = types.SimpleNamespace(__version__=torch.__version__,
                                    _C=types.SimpleNamespace(_GLIBCXX_USE_CXX11_ABI=1 - abi))
    lib, why = load(flipped, env=env)
    assert lib is None and "another C++ ABI" in why
    lib, why = load(torch)
    assert isinstance(lib, ctypes.CDLL) and why is None
    assert load(torch, items=("ops", "stacks"))[1] == "stacks need PyTorch's Python tracer"
    assert load(torch, env={"GPUSCOPE_CAPTURE_TORCH_OBSERVER": "off"})[1] == "GPUSCOPE_CAPTURE_TORCH_OBSERVER=off"
    lib, why = load(torch, env={"GPUSCOPE_CAPTURE_TORCH_OBSERVER": "/nonexistent/lib.so"})
    assert lib is None and why.startswith("the native observer /nonexistent/lib.so does not load")


def test_every_threads_ops_are_recorded_on_its_own_linux_thread(tmp_path):
    script = tmp_path / "threads.py"
    script.write_text(
        "import threading, torch\n"
        "def work():\n"
        "    for _ in range(5): torch.ones(3).cumsum(0)\n"
        "t = threading.Thread(target=work, name='side'); t.start(); t.join()\n"
        "torch.ones(3).cumsum(0)\n")
    out = str(tmp_path / "t.gscope")
    p = subprocess.run([os.environ["GPUSCOPE_CLI"], "capture", "-o", out, "--host-sampling", "off", "--",
                        sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    r = gpuscope.open(out).ranges
    cumsum = r[(r.domain == "cpu_op") & (r.name == "aten::cumsum")]
    assert len(cumsum) == 6
    assert (cumsum.tid == cumsum.pid).sum() == 1 and cumsum.tid.nunique() == 2  # the side thread's five, on its track


FLUSH_PROGRAM = r"""
import ctypes, json, sys, threading, torch
sys.path.insert(0, sys.argv[1])
from gpuscope_hook import host_file, native_ops
class Stats(dict):
    def add(self, k, n): self[k] = self.get(k, 0) + n
class Notes(dict):
    set = dict.__setitem__
lib, why = native_ops.load(torch, {"ops", "shapes"})
assert lib is not None, why
f = host_file.HostFile(sys.argv[2], 1)
stats = Stats()
rec = native_ops.NativeRecorder(lib, torch, f, stats, Notes(), shapes=True)
assert rec.start()
m = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU())
x = torch.randn(4, 16, requires_grad=True)
def work(n):
    for _ in range(n):
        m(x).sum().backward()
side = threading.Thread(target=work, args=(300,))
side.start()
work(1500)
side.join()
rec.flush()
# Rows taken and never formatted (a flush that failed between the two) are dropped and counted.
work(10)
lib.gpuscope_observer_collect(ctypes.byref(ctypes.c_int64()))
rec.flush(resume=False)
f.close()
print(json.dumps(stats))
"""


def test_a_flush_writes_its_rows_in_bounded_parts_as_one_line(tmp_path):
    """The rows come from the observer ~256 KiB at a time, written as they come: the host file still holds one
    compact JSON line per flush, its columns whole and of one length."""
    p = subprocess.run([sys.executable, "-c", FLUSH_PROGRAM, HOOK, str(tmp_path)], capture_output=True, text=True,
                       timeout=300, env={**os.environ, "PYTHONPATH": ""})
    assert p.returncode == 0, p.stderr
    stats = json.loads(p.stdout.strip().splitlines()[-1])
    lines = (tmp_path / "1.host").read_bytes().split(b"\n")
    assert lines[-1] == b""
    chunks = [json.loads(line) for line in lines[:-1]]
    ranges = [(line, c) for line, c in zip(lines, chunks) if c["k"] == "ranges"]
    assert len(ranges) == 1  # the second flush took nothing new
    line, c = ranges[0]
    assert len(line) > 4 * (256 << 10)  # written in several parts
    assert line == json.dumps(c, separators=(",", ":"), ensure_ascii=False).encode()
    columns = ["start", "end", "tid", "name", "cat", "dims", "types", "seq", "fwd"]
    assert [k for k in c if k not in ("k", "strings")] == columns
    assert {len(c[k]) for k in columns} == {stats["capture.framework.ops"]}
    assert len(set(c["tid"])) == 2 and all(e >= s for s, e in zip(c["start"], c["end"]))
    assert stats["capture.framework.ops_dropped"] >= 10 * 7  # the rows taken and not formatted
