"""The examples of docs/python.md and of the package's docstring run as written, and the guide's tables of columns
are the DataFrames' columns. The examples' files (run.gscope, before.gscope) are synthetic traces made for them."""
import os
import re
import shutil
import textwrap

import pytest

import gpuscope

GUIDE = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "docs", "python.md")
# What a capture example may meet on a machine without a GPU, or in a build without CUDA.
NO_GPU = re.compile(r"no CUDA device|CUDA driver|built without CUDA|CUPTI")


def guide():
    with open(GUIDE, encoding="utf-8") as f:
        return f.read()


def python_examples(text):
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)


def docstring_example():
    """The indented lines of the package's docstring after its first line."""
    lines = gpuscope.__doc__.split("\n\n")[1]
    assert lines.startswith("    "), lines
    return textwrap.dedent(lines)


@pytest.fixture(scope="module")
def examples_dir(synth, tmp_path_factory):
    here = tmp_path_factory.mktemp("examples")
    shutil.copy(synth("doc-run.gscope", "--kernels", "20000", "--gpus", "2", "--padding-share", "0.1", "--ops"),
                here / "run.gscope")
    shutil.copy(synth("doc-before.gscope", "--kernels", "20000", "--gpus", "2", "--padding-share", "0.2", "--ops"),
                here / "before.gscope")
    return here


def run_example(label, code, namespace):
    try:
        exec(compile(code, label, "exec"), namespace)
    except gpuscope.CaptureError as e:
        # A capture example cannot capture here; everything else must run.
        if "gpuscope.capture(" not in code or not NO_GPU.search(str(e)):
            raise
    return namespace


def test_the_guide_s_examples_run(examples_dir, monkeypatch):
    monkeypatch.chdir(examples_dir)
    examples = python_examples(guide())
    assert len(examples) >= 5
    namespace = {"train_one_epoch": lambda: None}
    run_example("docs/python.md, example 1", examples[0], namespace)
    t, k = namespace["t"], namespace["k"]
    assert "share" in k.columns and "share" not in t.kernels.columns  # "stays in k, t.kernels is unchanged"
    assert namespace["o"]["dtype"].notna().any()  # the op table's column is `dtype`
    for i, code in enumerate(examples[1:], start=2):
        run_example(f"docs/python.md, example {i}", code, namespace)
    assert len(namespace["launches"]) == len(namespace["k"])


def test_the_docstring_example_runs(examples_dir, monkeypatch):
    monkeypatch.chdir(examples_dir)
    namespace = run_example("gpuscope.__doc__", docstring_example(), {})
    assert namespace["r"]["schema"] == "gpuscope.report/1"


def test_the_guide_s_tables_of_columns_are_the_dataframes_columns(real_trace):
    rows = re.findall(r"^\| `(\w+)` \| (?:\(index: (\w+)\) )?([a-z_0-9, ]+) \|$", guide(), re.M)
    documented = {name: (index, [c.strip() for c in columns.split(",")]) for name, index, columns in rows}
    t = gpuscope.open(real_trace("nsys/nsys2022-saxpy-mpi-openacc.sqlite"))
    tables = ["kernels", "memcpys", "memsets", "api_calls", "ranges", "syncs", "counters", "memory_events", "overheads",
              "os_calls", "devices", "processes", "tracks", "counter_series"]
    assert sorted(documented) == sorted(tables)
    for name in tables:
        frame = getattr(t, name)
        index, columns = documented[name]
        assert list(frame.columns) == columns, name
        assert (frame.index.name or "") == index, name
