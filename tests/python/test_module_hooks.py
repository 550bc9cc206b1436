"""The startup hook's nn.Module hooks (gpuscope_hook/torch_ops.py, ModulePaths) in-process, through both paths:
the C hooks (src/capture/module_hooks) and the Python fallback must name and time the same calls — nested modules,
a forward that raises, a module whose id is reused, threads, a fork — and never raise into the program."""
import collections
import json
import os
import subprocess
import sys
import threading

import pytest

try:
    import torch
except ImportError:
    pytest.skip("PyTorch is not installed (Debian: python3-torch)", allow_module_level=True)

HOOK = os.environ.get("GPUSCOPE_TEST_PYHOOK") or os.path.join(
    os.path.dirname(os.environ["GPUSCOPE_CLI"]), os.pardir, "share", "gpuscope", "pyhook")
sys.path.insert(0, os.path.abspath(HOOK))

import gpuscope  # noqa: E402
from gpuscope_hook import torch_ops  # noqa: E402

NATIVE = os.path.join(os.path.abspath(HOOK), "module_hooks", torch_ops.MODULE_HOOKS)
PATHS = ["native", "python"]


class File:
    def __init__(self):
        self.texts = []

    def string(self, text):
        self.texts.append(text)
        return len(self.texts)  # a new id each time: a path named twice shows


class Stats(dict):
    def add(self, key, n):
        self[key] = self.get(key, 0) + n


class Notes(dict):
    set = dict.__setitem__


class Recorder:
    """ModulePaths with fakes of the host file, stats and notes; `calls` as (start, end, tid, path)."""

    def __init__(self, which, on_top=None):
        if which == "native" and not os.path.exists(NATIVE):
            pytest.skip("the C hooks were not built (needs Python >= 3.10's headers: python3-dev)")
        self.file, self.stats, self.notes, self.tops = File(), Stats(), Notes(), 0
        env = {torch_ops.ENV_MODULE_HOOKS: NATIVE if which == "native" else "off"}
        self.paths = torch_ops.ModulePaths(torch, self.file, self.stats, self.notes, on_top or self._top, env=env)
        note = self.notes["capture.framework.module_hooks"]
        assert note.startswith("C hooks" if which == "native" else "Python hooks: GPUSCOPE_CAPTURE_MODULE_HOOKS=off")

    def _top(self):
        self.tops += 1

    def take(self):
        start, end, tid, name = self.paths.take()
        assert len(start) == len(end) == len(tid) == len(name)
        return [(s, e, t, self.file.texts[n - 1][len("nn.Module: "):]) for s, e, t, n in zip(start, end, tid, name)]

    def close(self):
        self.paths.remove()


@pytest.fixture(params=PATHS)
def rec(request):
    r = Recorder(request.param)
    yield r
    r.close()


def test_the_hooks_are_builtins_on_the_native_path():
    r = Recorder("native")
    try:
        hooks = list(torch.nn.modules.module._global_forward_pre_hooks.values())
        assert type(hooks[-1]).__name__ == "builtin_function_or_method"
    finally:
        r.close()


def test_nested_modules_are_named_by_their_path_and_nest_in_time(rec):
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(4, 2)))
    x = torch.randn(3, 4)
    t0 = torch_ops._time_ns()
    for _ in range(3):
        model(x)
    t1 = torch_ops._time_ns()
    calls = rec.take()
    assert [c[3] for c in calls[:5]] == ["model.0", "model.1.0", "model.1.1", "model.1", "model"]
    assert len(calls) == 15 and rec.tops == 3
    assert all(t0 <= s <= e <= t1 and t == threading.get_native_id() for s, e, t, _ in calls)
    outer = calls[4]
    assert all(outer[0] <= s <= e <= outer[1] for s, e, _, _ in calls[:4])
    assert len(set(rec.file.texts)) == len(rec.file.texts) == 5  # each path named once
    assert rec.take() == []


class Boom(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.ReLU()

    def forward(self, x):
        self.inner(x)
        raise ValueError("boom")


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.boom = Boom()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        try:
            self.boom(x)
        except ValueError:
            pass
        return self.lin(x)


def test_a_forward_that_raises_is_counted_unfinished(rec):
    net = Outer()
    net(torch.randn(2, 4))
    calls = rec.take()
    # The raised call stays open until its caller's post-hook: `lin`, called meanwhile, is looked for among
    # `boom`'s children, not found, and named as a top-level module (its class). Both paths do this.
    assert [c[3] for c in calls] == ["net.boom.inner", "Linear", "net"]
    assert rec.stats["capture.framework.modules_unfinished"] == 1
    assert "capture.framework.modules" not in rec.notes


def _call_first(first, x):
    first(x)  # named from this frame, which ends here (reading a frame's locals keeps them until it ends)


def _call_second(second, x):
    second(x)


def test_a_reused_id_is_named_afresh(rec):
    x = torch.randn(2, 4)
    first = torch.nn.Identity()
    _call_first(first, x)
    old = id(first)
    del first
    kept = []  # held, so that the allocator hands out other addresses until the freed one
    second = None
    for _ in range(5000):
        second = torch.nn.Identity()
        if id(second) == old:
            break
        kept.append(second)
    if id(second) != old:
        pytest.skip("the allocator gave no module the freed one's address")
    _call_second(second, x)
    assert [c[3] for c in rec.take()] == ["first", "second"]


def test_each_thread_has_its_own_calls(rec):
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    x = torch.randn(2, 4)
    tids = []
    barrier = threading.Barrier(3)

    def work(n):
        tids.append(threading.get_native_id())
        barrier.wait()
        for _ in range(n):
            model(x)

    threads = [threading.Thread(target=work, args=(n,)) for n in (50, 70)]
    for t in threads:
        t.start()
    barrier.wait()
    for _ in range(30):
        model(x)
    for t in threads:
        t.join()
    calls = rec.take()
    by_tid = {}
    for _, _, tid, name in calls:
        by_tid.setdefault(tid, []).append(name)
    me = threading.get_native_id()
    assert sorted(len(v) for v in by_tid.values()) == [90, 150, 210] and set(by_tid) == {me, *tids}
    assert all(v.count("model") == v.count("model.0") == v.count("model.1") for v in by_tid.values())
    assert rec.tops == 150
    assert rec.take() == []  # the threads have exited; their rows were all taken


class Forks(torch.nn.Module):
    """Forks inside its forward: the child inherits an open call that belonged to its parent."""

    def forward(self, x):
        self.child = os.fork()
        return x


def test_a_forked_child_names_its_modules_in_its_own_file(rec):
    model = torch.nn.Linear(4, 4)
    forks = Forks()
    x = torch.randn(2, 4)
    model(x)
    r, w = os.pipe()
    forks(x)
    if forks.child == 0:  # the child
        try:
            os.close(r)
            rec.file, rec.stats, rec.notes = File(), Stats(), Notes()
            rec.paths.forked(rec.file, rec.stats, rec.notes)
            tops = rec.tops
            model(x)
            out = dict(calls=rec.take(), tops=rec.tops - tops, texts=rec.file.texts, stats=rec.stats,
                       notes=rec.notes, tid=threading.get_native_id())
            os.write(w, json.dumps(out).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        child = json.load(f)
    os.waitpid(forks.child, 0)
    assert [c[3] for c in child["calls"]] == ["model"]  # not the parent's open `forks` call
    assert child["calls"][0][2] == child["tid"] == forks.child
    assert child["texts"] == ["nn.Module: model"] and child["tops"] == 1
    assert "capture.framework.modules_unfinished" not in child["stats"]
    assert "capture.framework.module_hooks" in child["notes"]
    assert [c[3] for c in rec.take()] == ["model", "forks"]


@pytest.mark.parametrize("which", PATHS)
def test_a_failing_hook_stops_recording_and_says_why(which):
    def on_top():
        raise RuntimeError("flush failed")

    r = Recorder(which, on_top=on_top)
    try:
        model = torch.nn.Linear(4, 4)
        model(torch.randn(2, 4))  # nothing raised into the program
        model(torch.randn(2, 4))
        assert r.take() == []
        assert r.notes["capture.framework.modules"] == "stopped: RuntimeError('flush failed')"
    finally:
        r.close()


def _capture(tmp, env):
    program = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_train.py")
    out = os.path.join(str(tmp), "run.gscope")
    p = subprocess.run([os.environ["GPUSCOPE_CLI"], "capture", "-o", out, "--framework", "modules",
                        "--host-sampling", "off", "--", sys.executable, program, "4"], capture_output=True, text=True,
                       cwd=str(tmp), env={**os.environ, **env}, timeout=300)
    assert p.returncode == 0, p.stderr
    return gpuscope.open(out)


def test_a_capture_gives_the_same_module_calls_both_ways(tmp_path):
    if not os.path.exists(NATIVE):
        pytest.skip("the C hooks were not built (needs Python >= 3.10's headers: python3-dev)")
    runs = {}
    for which, value in (("native", ""), ("python", "off")):
        (tmp_path / which).mkdir()
        t = _capture(tmp_path / which, {torch_ops.ENV_MODULE_HOOKS: value})
        props = t.info["properties"]
        notes = [v for k, v in props.items() if k.startswith("capture.framework.module_hooks")]
        assert len(notes) == 2, props  # the program and its DataLoader worker
        assert all(n.startswith("C hooks (") if which == "native" else n == "Python hooks: %s=off" % (
            torch_ops.ENV_MODULE_HOOKS) for n in notes), notes
        r = t.ranges
        r = r[r.domain == "python_function"]
        assert (r.end >= r.start).all()
        runs[which] = collections.Counter(r.name)
    assert runs["native"] == runs["python"]
    assert runs["native"]["nn.Module: model.features.0"] == 4 and runs["native"]["nn.Module: loss_fn"] == 4
