"""gpuscope.report and gpuscope.diff: the same documents as `gpuscope report --json` and `gpuscope diff --json`."""
import json

import pytest

import gpuscope


def cli_json(cli, *args):
    return json.loads(cli(*args).stdout)


def test_report_of_a_trace_is_the_cli_report(real_trace, cli):
    path = real_trace("kineto-resnet50-v100-workers0.json.gz")
    expected = cli_json(cli, "report", "--json", path)
    assert gpuscope.report(gpuscope.open(path)) == expected
    assert gpuscope.report(path) == expected
    assert expected["schema"] == "gpuscope.report/1"
    assert any(f["id"] == "input-bound" for f in expected["findings"])


def test_report_of_nsys_exports_is_the_cli_report(real_nsys_files, cli):
    for path in real_nsys_files:
        expected = cli_json(cli, "report", "--json", path)
        assert gpuscope.report(path) == expected, path
        assert expected["kernel_time_ns"] > 0 and expected["hotspots"], path


def test_report_of_several_ranks_is_one_job(real_trace, cli):
    ranks = [real_trace(f"hta-sampled-rank{i}.json.gz") for i in (0, 1)]
    expected = cli_json(cli, "report", "--json", *ranks)
    r = gpuscope.report([gpuscope.open(ranks[0]), ranks[1]])
    assert r == expected
    assert len(r["files"]) == 2
    assert {x["rank"] for x in r["ranks"]} == {0, 1}


def test_report_options(synth, cli):
    path = synth("two-gpus.gscope", "--kernels", "20000", "--gpus", "2")
    assert gpuscope.report(path, device=1, top=3, steps=2) == cli_json(
        cli, "report", "--json", "--device", "1", "--top", "3", "--steps", "2", path)
    r = gpuscope.report(path, device=1)
    assert [d["id"] for d in r["devices"]] == [1]


def cli_error(cli, *args):
    """The message `gpuscope ARGS` prints after "gpuscope: error: " (it must exit 2)."""
    p = cli(*args, check=False)
    assert p.returncode == 2, p
    assert p.stderr.startswith("gpuscope: error: ") and p.stderr.count("\n") == 1, p.stderr
    return p.stderr[len("gpuscope: error: "):].strip()


def test_a_gpu_the_trace_does_not_have_raises_the_cli_error(synth, cli, tmp_path):
    path = synth("two-gpus.gscope", "--kernels", "20000", "--gpus", "2")
    expected = cli_error(cli, "report", "--device", "7", path)
    assert expected.endswith("no GPU 7 (GPUs with activity: 0, 1)")
    for call in (lambda: gpuscope.report(gpuscope.open(path), device=7), lambda: gpuscope.report(path, device=7),
                 lambda: gpuscope.ops(path, device=7), lambda: gpuscope.diff(path, path, device=7)):
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == expected
    saved = tmp_path / "saved.json"
    saved.write_text(cli("report", "--json", path).stdout)
    with pytest.raises(ValueError) as e:
        gpuscope.diff(saved, path, device=1)
    assert str(e.value) == cli_error(cli, "diff", "--device", "1", saved, path)


def test_report_of_a_directory_reads_its_traces(synth, tmp_path, cli):
    a = synth("dir-a.gscope", "--kernels", "5000", "--gpus", "1")
    job = tmp_path / "job"
    job.mkdir()
    for i in range(2):
        (job / f"rank{i}.gscope").write_bytes(open(a, "rb").read())
    (job / "notes.txt").write_text("not a trace")
    assert gpuscope.report(job) == cli_json(cli, "report", "--json", job)


def test_diff_is_the_cli_diff(synth, cli, tmp_path):
    before = synth("before.gscope", "--kernels", "20000", "--gpus", "2", "--padding-share", "0.2")
    after = synth("after.gscope", "--kernels", "20000", "--gpus", "2")
    expected = cli_json(cli, "diff", "--json", before, after)
    d = gpuscope.diff(before, gpuscope.open(after))
    assert d == expected
    assert d["schema"] == "gpuscope.diff/1"
    assert any(f["id"] == "padding-hotspot" and f["change"] == "resolved" for f in d["findings"])
    # A saved report, or the dict report() returned, as a side.
    saved = tmp_path / "before-report.json"
    saved.write_text(cli("report", "--json", before).stdout)
    assert gpuscope.diff(saved, after) == cli_json(cli, "diff", "--json", saved, after)
    from_dict = gpuscope.diff(gpuscope.report(before), after)
    assert from_dict["findings"] == expected["findings"]
    assert from_dict["step_time_ns"] == expected["step_time_ns"]
    assert gpuscope.diff(before, after, top=2)["kernels"] == cli_json(cli, "diff", "--json", "--top", "2", before,
                                                                       after)["kernels"]


def test_ops_is_the_report_op_table(synth):
    path = synth("ops.gscope", "--kernels", "20000", "--gpus", "1", "--ops")
    r = gpuscope.report(path)
    by_shapes = gpuscope.ops(path)
    assert len(by_shapes) == len(r["ops"]) > 0
    assert list(by_shapes["name"]) == [row["name"] for row in r["ops"]]
    assert list(by_shapes["gpu_total_ns"]) == [row["gpu_total_ns"] for row in r["ops"]]
    by_name = gpuscope.ops(gpuscope.open(path), by="name")
    assert list(by_name["name"]) == [row["name"] for row in r["op_names"]]
    # Every synthetic kernel is launched inside an op; convolutions have known FLOPs.
    assert "(no op)" not in set(by_name["name"])
    conv = by_shapes[by_shapes["name"] == "aten::conv2d"]
    assert len(conv) > 0 and (conv["flops"] > 0).all()
    # Unknown figures are NaN, not 0: an op without a cost formula.
    pool = by_shapes[by_shapes["name"] == "aten::adaptive_avg_pool2d"]
    assert len(pool) > 0 and pool["flops"].isna().all()
    with pytest.raises(ValueError):
        gpuscope.ops(path, by="kernel")


def test_ops_without_recorded_shapes_are_the_nvtx_ranges_without_flops(synth):
    path = synth("no-ops.gscope", "--kernels", "5000", "--gpus", "1")
    o = gpuscope.ops(path, by="name")
    assert {"forward", "backward", "optimizer"} <= set(o["name"])
    assert o["flops"].isna().all()


def test_bad_inputs_raise(tmp_path):
    with pytest.raises(gpuscope.TraceError, match="missing.gscope: cannot open"):
        gpuscope.report(tmp_path / "missing.gscope")
    bad = tmp_path / "bad-report.json"
    bad.write_text('{"schema": "gpuscope.report/1", "devices": 3}')
    with pytest.raises(gpuscope.TraceError, match="bad-report.json"):
        gpuscope.diff(bad, bad)
    with pytest.raises(gpuscope.TraceError, match="no trace files"):
        gpuscope.report(tmp_path)
    with pytest.raises(TypeError):
        gpuscope.report(42)
    with pytest.raises(ValueError):
        gpuscope.report([])


def test_stats_are_the_cli_stats_tables(real_trace, cli):
    path = real_trace("kineto-resnet50-v100-workers0.json.gz")
    expected = cli_json(cli, "stats", "--format", "json", "--report", "all", path)
    tables = gpuscope.stats(path, reports="all")
    assert list(tables) == [r["report"] for r in expected["reports"]]
    for r in expected["reports"]:
        frame = tables[r["report"]]
        assert list(frame.columns) == r["columns"], r["report"]
        assert len(frame) == len(r["rows"]), r["report"]
        assert frame.attrs["title"] == r["title"]
        for i, row in enumerate(r["rows"]):
            for key, value in row.items():
                got = frame[key].iloc[i]
                if value is None:
                    assert gpuscope._pd.isna(got), (r["report"], key)
                else:
                    assert got == value, (r["report"], key, got, value)
    kernels = tables["kernels"]
    assert str(kernels["total_ns"].dtype) == "Int64"
    assert kernels["total_ns"].iloc[0] == kernels["total_ns"].max()


def test_stats_osrt_sum_and_the_os_calls_table(real_trace):
    path = real_trace("nsys/nsys2024-cloverleaf-a100-mpi.sqlite")
    osrt = gpuscope.stats(path, reports="osrt_sum")["osrt"]
    calls = gpuscope.open(path).os_calls
    assert len(calls) == 1828  # SELECT count(*) FROM OSRT_API WHERE eventClass = 27
    assert osrt["calls"].sum() == len(calls)
    by_name = calls.assign(dur=calls.end - calls.start).groupby("name", observed=True)["dur"].agg(["sum", "count"])
    for _, row in osrt.iterrows():
        assert (row["total_ns"], row["calls"]) == tuple(by_name.loc[row["name"]]), row["name"]
    assert osrt["name"].iloc[0] == "poll" and osrt["total_ns"].iloc[0] == 500924932
    assert set(calls.columns) >= {"pid", "tid", "name", "status", "nesting"}
    empty = gpuscope.stats(real_trace("nsys/nsys2022-saxpy-mpi-openacc.sqlite"), reports="osrt")["osrt"]
    assert len(empty) == 0
    assert empty.attrs["note"] == "no OS runtime calls recorded: the export's OSRT_API table holds no calls"


def test_stats_refuse_an_unknown_report_and_several_traces(real_trace):
    path = real_trace("kineto-resnet50-v100-workers0.json.gz")
    with pytest.raises(ValueError, match="unknown stats report 'osrt_summary'"):
        gpuscope.stats(path, reports=["osrt_summary"])
    with pytest.raises(ValueError, match="one trace"):
        gpuscope.stats([path, path])
    with pytest.raises(ValueError, match="no GPU 7"):
        gpuscope.stats(path, device=7)
