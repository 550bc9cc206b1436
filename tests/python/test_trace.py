"""gpuscope.open: tables as DataFrames (views of the trace's memory), names as categoricals, info, errors."""
import gc
import json
import os
import sqlite3

import numpy as np
import pandas as pd
import pytest

import gpuscope

TABLES = ["kernels", "memcpys", "memsets", "api_calls", "ranges", "syncs", "counters", "memory_events", "overheads"]


@pytest.fixture(scope="module")
def small(synth):
    return synth("small.gscope", "--kernels", "20000", "--gpus", "2", "--padding-share", "0.1")


# ---- tables ------------------------------------------------------------------------------------------


def test_every_table_has_the_rows_info_counts(small):
    t = gpuscope.open(small)
    assert gpuscope.open(os.fsencode(small)).path == small  # str, bytes and PathLike paths
    for name in TABLES:
        frame = getattr(t, name)
        assert isinstance(frame, pd.DataFrame)
        assert len(frame) == t.info["tables"][name], name
    assert len(t.kernels) == 20000
    assert t.kernels is t.kernels  # built once, kept


def test_numeric_columns_are_read_only_views_of_the_trace(small):
    t = gpuscope.open(small)
    raw = {name: array for name, array, role in t._core.columns("kernels")}
    k = t.kernels
    for column in ["start", "end", "track", "correlation", "grid_x", "block_x", "registers", "api"]:
        values = k[column].to_numpy()
        assert np.shares_memory(values, raw[column]), f"{column} was copied"
        assert not values.flags.writeable, column
    assert k["start"].dtype == np.int64 and k["end"].dtype == np.int64
    assert (k["end"] >= k["start"]).all()
    with pytest.raises(ValueError):
        k["start"].to_numpy()[0] = 0


def test_arrays_keep_the_trace_alive(small):
    t = gpuscope.open(small)
    k = t.kernels
    first = int(k["start"].iloc[0])
    total = int((k["end"] - k["start"]).sum())
    del t
    gc.collect()
    again = gpuscope.open(small).kernels  # reuses freed memory, if any was freed
    assert int(k["start"].iloc[0]) == first
    assert int((k["end"] - k["start"]).sum()) == total
    assert len(again) == len(k)


def test_names_are_categoricals_over_the_string_table(small):
    t = gpuscope.open(small)
    k = t.kernels
    assert isinstance(k["name"].dtype, pd.CategoricalDtype)
    assert k["name"].cat.categories.equals(t.strings)
    ids = dict((n, a) for n, a, _ in t._core.columns("kernels"))["name"]
    assert (k["name"].cat.codes.to_numpy() == ids).all()  # codes = string ids
    assert t.strings[0] == ""
    assert k["name"].str.contains("TensorPaddingOp").any()
    assert set(t.api_calls["name"].unique()) >= {"cudaLaunchKernel"}


def test_categories_and_hotspots_agree_with_the_report(small):
    t = gpuscope.open(small)
    k = t.kernels.assign(duration=lambda f: f["end"] - f["start"])
    r = gpuscope.report(t)
    by_category = k.groupby("category", observed=True)["duration"].sum()
    for c in r["categories"]:
        assert int(by_category[c["name"]]) == c["time_ns"], c["name"]
    by_name = k.groupby("name", observed=True)["duration"].sum().sort_values(ascending=False)
    assert by_name.index[0] == r["hotspots"][0]["name"]
    assert int(by_name.iloc[0]) == r["hotspots"][0]["stats"]["total_ns"]
    padding = by_category["padding"] / k["duration"].sum()
    assert padding == pytest.approx(0.10, abs=0.002)


def test_enumerations_are_categoricals(small):
    t = gpuscope.open(small)
    assert list(t.memcpys["kind"].cat.categories[:4]) == ["unknown", "HtoD", "DtoH", "HtoA"]
    assert set(t.memcpys["kind"]) == {"HtoD"}  # the input batches
    assert set(t.memcpys["src_kind"]) == {"pinned"} and set(t.memcpys["dst_kind"]) == {"device"}
    assert set(t.api_calls["domain"].unique()) == {"runtime"}
    assert set(t.ranges["kind"].unique()) == {"push_pop"}
    assert "stream" in set(t.syncs["type"])


def test_device_and_stream_come_from_the_track(small):
    t = gpuscope.open(small)
    k, tracks = t.kernels, t.tracks
    assert tracks.index.name == "track"
    assert (k["device"].to_numpy() == tracks["device"].to_numpy()[k["track"].to_numpy()]).all()
    assert (k["stream"].to_numpy() == tracks["stream"].to_numpy()[k["track"].to_numpy()]).all()
    assert sorted(k["device"].unique()) == [0, 1]
    a = t.api_calls
    assert (a["tid"].to_numpy() == tracks["tid"].to_numpy()[a["track"].to_numpy()]).all()
    assert set(tracks["kind"]) == {"gpu", "cpu"}


def test_launch_links_point_both_ways(small):
    t = gpuscope.open(small)
    k, a = t.kernels, t.api_calls
    launched = a.loc[k["api"].to_numpy()]
    assert (launched["op_table"] == "kernel").all()
    assert (launched["op_row"].to_numpy() == np.arange(len(k))).all()
    assert (launched["correlation"].to_numpy() == k["correlation"].to_numpy()).all()


def test_descriptions(small):
    t = gpuscope.open(small)
    assert list(t.devices["id"]) == [0, 1]
    assert t.devices["name"].str.contains("Synthetic").all()
    assert len(t.processes) == 1 and t.processes["name"][0].endswith("(synthetic)")
    assert list(t.counter_series["name"]) == ["power", "power"] and list(t.counter_series["device"]) == [0, 1]
    assert set(t.counters["series"]) == {0, 1}
    assert t.memory_bytes > 0
    assert "20,000" in repr(t)


# ---- info ----------------------------------------------------------------------------------------------


def test_info_is_what_the_cli_says(small, cli):
    t = gpuscope.open(small)
    assert t.info == json.loads(cli("info", "--json", small).stdout)
    assert t.info["schema"] == "gpuscope.info/1"
    assert t.info["source_kind"] == "synthetic"


def test_real_traces_open_like_the_cli_says(real_trace_files, real_nsys_files, cli):
    assert len(real_trace_files) >= 10 and len(real_nsys_files) >= 2
    for path in real_trace_files + real_nsys_files:
        t = gpuscope.open(path)
        info = json.loads(cli("info", "--json", path).stdout)
        # Everything but memory_bytes, which depends on how the parse threads grew their columns.
        assert t.info["memory_bytes"] > 0
        assert {**t.info, "memory_bytes": 0} == {**info, "memory_bytes": 0}, path
        for name in TABLES:
            assert len(t.table(name)) == info["tables"][name], (path, name)
        k = t.kernels
        if len(k):
            assert k["name"].isna().sum() == 0
            assert (k["end"] >= k["start"]).all(), path
            assert set(k["device"].unique()) <= set(t.devices["id"]) | set(t.tracks["device"]), path


def test_memory_events_of_a_real_trace(real_trace):
    # PyTorch's [memory] events: one row each, allocations positive, frees negative.
    t = gpuscope.open(real_trace("kineto-resnet50-v100-workers0.json.gz"))
    m = t.memory_events
    assert len(m) == 12838 == t.info["tables"]["memory_events"]
    assert list(m.columns[:3]) == ["time", "series", "bytes"]
    assert (m["bytes"] > 0).any() and (m["bytes"] < 0).any()
    assert set(m["series"]) <= set(t.counter_series.index)


def test_a_trace_without_counters_has_the_columns_but_no_rows(real_trace):
    t = gpuscope.open(real_trace("hta-triton.json.gz"))
    assert len(t.counter_series) == 0 and list(t.counter_series.columns) == ["name", "device", "unit"]
    assert len(t.counters) == 0 and list(t.counters.columns) == ["time", "series", "value"]
    assert len(t.kernels) == 1 and "triton" in t.kernels["name"][0]


def test_kineto_trace_values(real_trace):
    t = gpuscope.open(real_trace("kineto-resnet50-v100-workers0.json.gz"))
    k = t.kernels
    assert len(k) == 8772
    assert (k["category"] == "convolution").sum() > 0
    assert t.devices["name"].str.contains("V100").any()
    profiler_steps = t.ranges[t.ranges["name"].str.startswith("ProfilerStep#")]
    assert len(profiler_steps) > 0


def test_nsys_export_values(real_trace):
    t = gpuscope.open(real_trace("nsys/nsys2022-saxpy-mpi-openacc.sqlite"))
    assert t.info["format"] == "nsys-sqlite" and t.info["source"] == "nsys-sqlite"
    k = t.kernels
    assert len(k) == 5 and (k["name"] == "saxpy(double *, double *, double *, double, int)").all()
    assert (k["grid_x"] == 2).all() and (k["block_x"] == 512).all() and (k["registers"] == 26).all()
    assert t.memcpys["kind"].value_counts()[["HtoD", "DtoH"]].tolist() == [10, 5]
    assert (t.ranges["kind"] == "push_pop").all() and len(t.ranges) == 22
    launched = t.api_calls.loc[k["api"].to_numpy()]
    assert (launched["op_table"] == "kernel").all() and (launched["correlation"].to_numpy() == k["correlation"]).all()
    assert t.devices["name"].tolist() == ["NVIDIA A100-SXM4-40GB"] and t.devices["sm_count"].tolist() == [108]
    assert t.info["stats"]["import.skipped.table.SCHED_EVENTS"] > 0  # what gpuscope has no place for is counted


# ---- errors --------------------------------------------------------------------------------------------


def cli_error(cli, path):
    p = cli("info", path, check=False)
    assert p.returncode == 2
    line = p.stderr.strip()
    assert line.startswith("gpuscope: error: ")
    return line[len("gpuscope: error: "):]


def test_unreadable_traces_raise_trace_error_with_the_cli_message(tmp_path, cli, small):
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"\x00\x01 not a trace")
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"traceEvents": [{"ph": "X", "ts": 1,, }]}')
    cut = tmp_path / "cut.gscope"
    cut.write_bytes(open(small, "rb").read()[:20])
    other_db = tmp_path / "other.sqlite"  # SQLite, but not an Nsight Systems export
    with sqlite3.connect(other_db) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    broken_db = tmp_path / "broken.sqlite"
    broken_db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    for path in [tmp_path / "missing.gscope", garbage, empty, bad_json, cut, other_db, broken_db, tmp_path]:
        with pytest.raises(gpuscope.TraceError) as e:
            gpuscope.open(path)
        assert str(e.value) == cli_error(cli, path), path
        assert e.value.file == str(path)
        assert e.value.reason and e.value.reason in str(e.value)
    with pytest.raises(gpuscope.TraceError) as e:
        gpuscope.open(bad_json)
    assert isinstance(e.value.offset, int)


def test_trace_error_is_an_exception_of_the_package():
    assert issubclass(gpuscope.TraceError, Exception)
    assert gpuscope.TraceError.__module__.startswith("gpuscope")
