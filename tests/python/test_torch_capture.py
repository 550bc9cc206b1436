"""`gpuscope capture` of an unmodified PyTorch training loop (torch_train.py: conv, batch norm, linear, SGD, a
DataLoader with one worker process) on a machine without a GPU: the host side — ops with shapes, module paths,
steps, Python stacks around ops, host samples, the worker's own tracks — is kept and reported."""
import os
import subprocess
import sys

import pytest

import gpuscope

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_train.py")

try:
    import torch  # noqa: F401  (the captured program's interpreter is this one)
except ImportError:
    pytest.skip("PyTorch is not installed (Debian: python3-torch)", allow_module_level=True)


def capture(tmp, *flags, args=("6",), env=None):
    out = os.path.join(tmp, "run.gscope")
    p = subprocess.run([os.environ["GPUSCOPE_CLI"], "capture", "-o", out, *flags, "--", sys.executable, PROGRAM,
                        *args], capture_output=True, text=True, cwd=tmp, env={**os.environ, **(env or {})},
                       timeout=300)
    return p, out


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("torch"))
    p, out = capture(tmp, "--framework", "ops,shapes,modules,stacks")
    assert p.returncode == 0, p.stderr
    return p, gpuscope.open(out), out


def ranges(trace, domain=None):
    r = trace.ranges
    if domain is not None:
        r = r[r.domain == domain]
    return r


def test_the_capture_says_what_it_kept(run):
    p, _, out = run
    assert "step 5 loss" in p.stdout  # the program ran unmodified
    assert "no GPU work was captured; the host side was" in p.stderr
    assert out + " (" in p.stderr and "[host side only]" in p.stderr
    assert "framework view: pytorch" in p.stderr
    assert "steps: 6 steps from Optimizer.step#SGD.step" in p.stderr


def test_ops_carry_shapes_dtypes_and_their_backward(run):
    _, t, _ = run
    ops = ranges(t, "cpu_op")
    conv = ops[ops.name == "aten::conv2d"]
    assert len(conv) == 6
    # input_dims and input_types are categoricals of the texts present (docs/python.md)
    assert set(conv.input_dims) == {"[[8,3,16,16],[8,3,3,3],[8],[],[],[],[]]"}
    assert set(conv.input_types) == {'["float","float","float","","","","Scalar"]'}
    assert (ops.name == "ConvolutionBackward0").sum() == 6
    assert (ops.name == "aten::native_batch_norm").sum() == 6
    assert (ops.name == "aten::addmm").sum() >= 6
    # Views and allocations carry no shapes (reading them is the costly part).
    views = ops[ops.name.isin(["aten::empty", "aten::t", "aten::as_strided"])]
    assert len(views) and (views.input_dims == "").all()
    # The op table is the one a Kineto trace gives, with shapes.
    table = gpuscope.ops(t)
    row = table[table.name == "aten::conv2d"].iloc[0]
    assert row.calls == 6 and row.shapes == "[[8,3,16,16],[8,3,3,3],[8],[],[],[],[]]"


def test_backward_ops_carry_the_sequence_number_of_their_forward_op(run):
    _, t, _ = run
    ops = ranges(t, "cpu_op")
    backward = ops[ops.name == "autograd::engine::evaluate_function: ConvolutionBackward0"]
    assert len(backward) == 6
    assert backward.sequence.notna().all() and (backward.fwd_thread > 0).all()
    forward = ops[ops.sequence.notna() & (ops.fwd_thread == 0)]
    assert len(forward) and (ops[ops.sequence.isna()].fwd_thread == 0).all()
    modules = ranges(t, "python_function")
    conv = modules[modules.name == "nn.Module: model.features.0"]
    for b in backward.itertuples():
        # The forward ops of its number: in its process, on one thread (the main one), the last of them
        # inside the convolution module's call that came before it.
        mine = forward[(forward.sequence == b.sequence) & (forward.pid == b.pid)]
        assert mine.tid.nunique() == 1 and (mine.tid == mine.pid).all(), mine
        last = mine.sort_values("start").iloc[-1]
        assert last.end <= b.start
        assert ((conv.start <= last.start) & (conv.end >= last.end) & (conv.tid == last.tid)).any()
    # The report links every backward op that has a forward op; AccumulateGrad's (a leaf's gradient added) has
    # none. With no GPU there is no GPU time to split, only the counts.
    split = gpuscope.report(t)["module_split"]
    accumulate = ops[ops.name == "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"]
    assert len(accumulate) >= 6 and accumulate.sequence.isna().all()
    assert split["known"] and split["backward_ops"] >= 6 * 3 + len(accumulate)  # conv, batch norm, linear, … per step
    assert split["unlinked"] == len(accumulate) and split["linked"] == split["backward_ops"] - len(accumulate)
    by_name = {m["name"]: m for m in split["modules"]}
    assert by_name["model.features.0"]["backward_ops"] == 6  # ConvolutionBackward0, once per step
    assert by_name["model.classifier"]["backward_ops"] >= 6


def test_the_hooks_flushes_are_overheads_on_the_recording_thread(run):
    _, t, _ = run
    o = t.overheads
    flushes = o[o.kind == "gpuscope: taking PyTorch's ops"]
    assert len(flushes) >= 2  # at least the first module call's (the Python tracer starts there) and the exit's
    assert t.info["stats"]["capture.framework.flushes"] >= len(flushes)


def test_modules_are_named_by_their_path(run):
    _, t, _ = run
    names = set(ranges(t, "python_function").name)
    for path in ("model", "model.features", "model.features.0", "model.features.1", "model.classifier", "loss_fn"):
        assert "nn.Module: " + path in names
    main = ranges(t, "python_function")
    assert (main.name == "nn.Module: model.features.0").sum() == 6


def test_steps_come_from_the_optimizer(run):
    _, t, _ = run
    ann = ranges(t, "user_annotation")
    steps = ann[ann.name.str.startswith("ProfilerStep#")].sort_values("start")
    opt = ann[ann.name == "Optimizer.step#SGD.step"].sort_values("start")
    assert len(steps) == 6 and len(opt) == 6
    assert list(steps.end) == list(opt.end)
    assert (steps.tid == steps.pid).all()  # on the main thread
    assert t.info["properties"]["capture.steps"] == "6 steps from Optimizer.step#SGD.step on thread %d" % steps.pid.iloc[0]
    loader = ann[ann.name.str.startswith("enumerate(DataLoader)#")]
    assert len(loader) >= 6
    assert steps.start.iloc[0] == loader.start.min()  # the first step begins with its batch


def test_python_frames_enclose_the_ops(run):
    _, t, _ = run
    r = ranges(t)
    frames = r[(r.domain == "python_function") & ~r.name.str.startswith("nn.Module: ")]
    forward = frames[frames.name.str.contains(r"torch_train\.py\(\d+\): forward")]
    assert len(forward) >= 5  # from the first top-level module call on (the Python tracer starts there)
    conv = r[(r.domain == "cpu_op") & (r.name == "aten::conv2d")]
    inside = [((forward.start <= c.start) & (forward.end >= c.end) & (forward.tid == c.tid)).any()
              for c in conv.itertuples()]
    assert sum(inside) >= 5


def test_samples_hold_every_threads_stack(run):
    _, t, _ = run
    samples = ranges(t, "host_sample")
    assert len(samples) > 20
    assert (samples.kind == "mark").all()
    main = samples[samples.tid == samples.pid]
    assert main.name.str.contains("torch_train.py").any()
    assert main.name.str.split(";").map(len).max() <= 64
    stats = t.info["stats"]
    assert stats["capture.host.samples.taken"] == len(samples)
    assert "capture.host.samples.missed" in stats or stats["capture.host.samples.taken"] > 0


def test_the_data_loader_worker_has_its_own_tracks(run):
    _, t, _ = run
    pids = set(ranges(t).pid)
    assert len(pids) == 2
    ann = ranges(t, "user_annotation")
    main = ann[ann.name.str.startswith("ProfilerStep#")].pid.iloc[0]
    worker = (pids - {main}).pop()
    w = ranges(t)[ranges(t).pid == worker]
    assert (w[w.domain == "cpu_op"].name == "aten::stack").sum() >= 6  # its collate
    assert (w.domain == "host_sample").any()
    props = t.info["properties"]
    assert props["capture.framework.pid%d" % worker].startswith("pytorch ")


def test_the_report_shows_the_op_table(run):
    _, _, out = run
    report = subprocess.run([os.environ["GPUSCOPE_CLI"], "report", out], capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    assert "framework ops" in report.stdout
    assert "ProfilerStep*" in report.stdout and "Optimizer.step#SGD.step" in report.stdout
    info = subprocess.run([os.environ["GPUSCOPE_CLI"], "info", out], capture_output=True, text=True)
    assert "capture.steps" in info.stdout and "capture.host.samples.taken" in info.stdout


def test_a_program_running_its_own_profiler_wins_without_a_crash(tmp_path):
    # PyTorch's profiler path (the native observer records beside the program's: test_torch_native_observer.py).
    p, out = capture(str(tmp_path), "--host-sampling", "off", args=("4", "--own-profiler"),
                     env={"GPUSCOPE_CAPTURE_TORCH_OBSERVER": "off"})
    assert p.returncode == 0, p.stderr
    assert "own profiler events:" in p.stdout
    t = gpuscope.open(out)
    assert "gpuscope recorded no ops on its thread while it ran" in t.info["properties"][
        "capture.framework.program_profiler"]
    ops = ranges(t, "cpu_op")
    assert (ops.name == "aten::conv2d").sum() == 4  # ours before and after, the program's in between
    assert not (ranges(t).domain == "host_sample").any()
    # The default records no Python stacks: the only Python ranges are module calls.
    assert ranges(t, "python_function").name.str.startswith("nn.Module: ").all()


def test_options_choose_what_is_recorded(tmp_path):
    p, out = capture(str(tmp_path), "--framework", "ops", "--host-sampling", "100", args=("2",))
    assert p.returncode == 0, p.stderr
    t = gpuscope.open(out)
    r = ranges(t)
    assert (r[r.domain == "cpu_op"].input_dims == "").all()  # the empty text: no shapes
    assert not (r.domain == "python_function").any()
    assert "100 Hz" in t.info["properties"]["capture.host_sampling"]


def test_bad_options_are_refused(cli):
    for flags, message in ((("--framework", "kernels"), "unknown item 'kernels'"),
                           (("--framework", "shapes"), "add ops"),
                           (("--host-sampling", "0"), "not a rate from 1 to 10000"),
                           (("--host-sampling", "fast"), "not a rate")):
        p = cli("capture", *flags, "--", "true", check=False)
        assert p.returncode == 2 and message in p.stderr, p.stderr


def test_an_unsupported_torch_says_why_and_keeps_the_samples(tmp_path):
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("__version__ = '1.12.1'\n")
    script = tmp_path / "old.py"
    script.write_text("import time, torch\nt = time.time()\nwhile time.time() - t < 0.3:\n    sum(range(1000))\n")
    out = str(tmp_path / "old.gscope")
    p = subprocess.run([os.environ["GPUSCOPE_CLI"], "capture", "-o", out, "--", sys.executable, str(script)],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path / "fake")})
    assert p.returncode == 0, p.stderr
    assert "framework view unavailable: torch 1.12.1 is older than 1.13" in p.stderr
    t = gpuscope.open(out)
    assert (ranges(t).domain == "host_sample").sum() > 0


def test_sampling_keeps_none_of_the_programs_objects_alive(tmp_path):
    # A sample holds every thread's frames only while it reads them: a local
    # is freed when its function returns, not when the garbage collector runs.
    script = tmp_path / "lifetime.py"
    script.write_text(
        "import gc, sys, time, weakref\n"
        "gc.disable()\n"
        "class Big: pass\n"
        "refs = []\n"
        "def work():\n"
        "    b = Big(); refs.append(weakref.ref(b))\n"
        "    t = time.time()\n"
        "    while time.time() - t < 0.02: pass\n"
        "for _ in range(20): work()\n"
        "alive = sum(r() is not None for r in refs)\n"
        "print('alive', alive)\n"
        "sys.exit(1 if alive else 0)\n")
    out = str(tmp_path / "l.gscope")
    p = subprocess.run([os.environ["GPUSCOPE_CLI"], "capture", "-o", out, "--framework", "none", "--host-sampling",
                        "2000", "--", sys.executable, str(script)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (ranges(gpuscope.open(out)).domain == "host_sample").sum() > 0


def test_a_hook_that_cannot_start_leaves_the_program_alone(tmp_path):
    hook = os.path.join(os.path.dirname(os.environ["GPUSCOPE_CLI"]), os.pardir, "share", "gpuscope", "pyhook")
    env = {**os.environ, "PYTHONPATH": hook, "GPUSCOPE_CAPTURE_HOST_DIR": str(tmp_path / "missing")}
    p = subprocess.run([sys.executable, "-c", "import torch; print(torch.ones(2).sum().item())"], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 0 and p.stdout.strip() == "2.0", p.stderr
    assert "gpuscope: framework view unavailable: the startup hook failed" in p.stderr
