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
    # Built once and kept; each access is a new DataFrame over the same columns.
    assert t.kernels is not t.kernels
    assert np.shares_memory(t.kernels["start"].to_numpy(), t.kernels["start"].to_numpy())


def test_columns_added_to_a_frame_stay_in_it(small):
    t = gpuscope.open(small)
    k = t.kernels
    first = int(k["start"].iloc[0])
    k["mine"] = 1
    k["start"] = k["start"] - first
    k["name"] = k["name"].astype(str)
    d = t.devices
    d["mine"] = 2
    again = t.kernels
    assert "mine" not in again.columns and "mine" not in t.devices.columns
    assert int(again["start"].iloc[0]) == first and int(k["start"].iloc[0]) == 0
    assert isinstance(again["name"].dtype, pd.CategoricalDtype)


def test_dur_is_end_minus_start(small, real_trace):
    for path in (small, real_trace("nsys/nsys2022-saxpy-mpi-openacc.sqlite")):
        t = gpuscope.open(path)
        for name in ("kernels", "memcpys", "memsets", "api_calls", "ranges", "syncs", "overheads"):
            frame = t.table(name)
            assert list(frame.columns[:3]) == ["start", "end", "dur"], name
            assert frame["dur"].dtype == np.int64, name
            assert (frame["dur"] == frame["end"] - frame["start"]).all(), name
        assert "dur" not in t.counters.columns and "dur" not in t.memory_events.columns


def test_numeric_columns_are_read_only_views_of_the_trace(small):
    t = gpuscope.open(small)
    raw = {name: array for name, array, role in t._core.columns("kernels")}
    k = t.kernels
    # (`track` is computed: a loaded trace keeps where each track's rows begin.)
    for column in ["start", "end", "correlation", "grid_x", "block_x", "registers", "api"]:
        array = k[column].array
        values = array._data if isinstance(array, pd.arrays.IntegerArray) else k[column].to_numpy()  # NA: a mask beside
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


def test_names_are_categoricals_of_the_names_present(small):
    t = gpuscope.open(small)
    k = t.kernels
    assert isinstance(k["name"].dtype, pd.CategoricalDtype)
    ids = dict((n, a) for n, a, _ in t._core.columns("kernels"))["name"]
    assert (k["name"].astype(object).to_numpy() == t.strings[ids].to_numpy()).all()  # the texts of the string ids
    categories = k["name"].cat.categories
    assert list(categories) == sorted(set(t.strings[ids]))  # those present, sorted, nothing else
    assert len(categories) < len(t.strings)
    assert t.strings[0] == ""
    assert k["name"].str.contains("TensorPaddingOp").any()
    assert set(t.api_calls["name"].unique()) >= {"cudaLaunchKernel"}


def test_a_plain_groupby_by_name_has_no_empty_groups(real_trace):
    t = gpuscope.open(real_trace("kineto-resnet50-v100-workers0.json.gz"))
    k = t.kernels
    by_name = k.groupby("name")["dur"].sum()  # observed=False, pandas' default for categoricals
    assert len(by_name) == k["name"].nunique() == 67 and (by_name > 0).all()
    assert len(t.strings) > 500
    assert by_name.sum() == k["dur"].sum()
    for name in ("category", "mangled"):
        assert len(k.groupby(name).size()) == k[name].nunique(), name
    for table, column in (("api_calls", "name"), ("ranges", "name"), ("ranges", "domain"), ("memcpys", "kind")):
        frame = t.table(table)
        assert (frame.groupby(column).size() > 0).all(), (table, column)


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
    assert list(t.memcpys["kind"].cat.categories) == ["HtoD"]  # the input batches: the kinds present
    names, present = gpuscope._ENUM_NAMES["kernel_category"], set(t.kernels["category"].astype(str))
    assert list(t.kernels["category"].cat.categories) == [n for n in names if n in present]  # in the enumeration's order
    assert len(present) < len(names)
    assert (t.memcpys["kind"] == "HtoD").all() and not (t.memcpys["kind"] == "DtoH").any()
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
    assert k["api"].notna().all()
    launched = a.loc[k["api"]]
    assert (launched["op_table"] == "kernel").all()
    assert (launched["op_row"].to_numpy() == np.arange(len(k))).all()
    assert (launched["correlation"].to_numpy() == k["correlation"].to_numpy()).all()


# ---- unknown values ------------------------------------------------------------------------------------


KERNEL_WITHOUT_LAUNCH = """{"traceEvents": [
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
  "args": {"correlation": 5}},
 {"ph": "X", "cat": "kernel", "name": "launched", "pid": 0, "tid": 7, "ts": 20, "dur": 10,
  "args": {"correlation": 5, "device": 0, "stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "orphan", "pid": 0, "tid": 7, "ts": 40, "dur": 10,
  "args": {"correlation": 99, "device": 0, "stream": 7}}]}"""


def test_a_kernel_without_a_launching_call_has_na_and_the_documented_lookup_works(tmp_path):
    path = tmp_path / "orphan.json"
    path.write_text(KERNEL_WITHOUT_LAUNCH)
    t = gpuscope.open(path)
    k, calls = t.kernels, t.api_calls
    assert list(k["name"]) == ["launched", "orphan"]
    assert k["api"].dtype == "UInt32" and k["api"].isna().tolist() == [False, True]
    with pytest.raises(KeyError):
        calls.loc[k["api"]]  # why docs/python.md shows reindex
    launches = calls.reindex(k["api"])  # docs/python.md: one row per kernel, NA where none launched it
    assert len(launches) == len(k)
    assert launches["name"].tolist()[0] == "cudaLaunchKernel" and pd.isna(launches["name"].tolist()[1])
    assert calls.loc[k["api"].dropna()]["name"].tolist() == ["cudaLaunchKernel"]
    assert calls["op_row"].tolist() == [0] and calls["op_table"].tolist() == ["kernel"]


def test_no_uint32_column_shows_the_model_s_none_value(real_trace_files, real_nsys_files):
    # 4294967295 is the model's "no row" / "no id": the DataFrames say NA instead.
    seen_na = set()
    for path in real_trace_files + real_nsys_files:
        t = gpuscope.open(path)
        frames = {name: t.table(name) for name in TABLES}
        frames.update(devices=t.devices, tracks=t.tracks, counter_series=t.counter_series, processes=t.processes)
        for name, frame in frames.items():
            for column in frame.columns:
                values = frame[column]
                if values.dtype.kind in "iu" or str(values.dtype) in ("UInt32", "Int32", "UInt64", "Int64"):
                    assert not (values == 0xFFFFFFFF).any(), (path, name, column)
                    if values.isna().any():
                        seen_na.add((name, column))
    assert {("syncs", "stream"), ("syncs", "event"), ("tracks", "device"), ("tracks", "tid")} <= seen_na, seen_na


def test_description_tables_say_na_for_unknown(real_trace):
    t = gpuscope.open(real_trace("kineto-resnet50-v100-workers0.json.gz"))
    d = t.devices
    assert d["compute_major"].tolist() == [7] and d["compute_minor"].tolist() == [0]  # 7.0: a 0 that is known
    assert d["peak_fp32_flops"].isna().all() and d["sm_count"].tolist() == [80]
    assert t.processes["rank"].isna().all()
    tracks = t.tracks
    gpu = tracks["kind"] == "gpu"
    assert tracks.loc[~gpu, ["device", "stream"]].isna().all().all() and tracks.loc[gpu, "tid"].isna().all()
    assert tracks.loc[gpu, "device"].notna().all()


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
    r = t.ranges
    samples = r[r["domain"] == "host_sample"]  # nsys' CPU sampling: SELECT count(*) FROM COMPOSITE_EVENTS
    assert len(samples) == 5451 and (samples["kind"] == "mark").all()
    nvtx = r[r["domain"] != "host_sample"]
    assert (nvtx["kind"] == "push_pop").all() and len(nvtx) == 22
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
