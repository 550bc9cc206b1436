"""The Python module under hostile input (docs/robustness.md): paths with a NUL, endless streams, files over the
memory budget, damaged files (a warning naming what was lost), report dicts that are not reports, regexes over
names long enough to break a backtracking engine."""
import json
import os
import subprocess
import sys
import warnings

import pytest

import gpuscope


def test_a_path_with_a_nul_is_refused_not_cut_short(synth, tmp_path):
    trace = synth("t.gscope", "--kernels", "100")
    with pytest.raises(ValueError, match="NUL"):
        gpuscope.open(trace + "\x00junk")
    with pytest.raises(ValueError, match="NUL"):
        gpuscope.report(trace + "\x00junk")
    with pytest.raises(ValueError, match="NUL"):
        gpuscope.diff(trace, trace + "\x00junk")
    with pytest.raises(ValueError, match="NUL"):
        gpuscope.whatif(trace + "\x00junk", remove="gemm")
    with pytest.raises(ValueError, match="NUL"):
        gpuscope.ops(trace + "\x00junk")
    with pytest.raises(ValueError, match="NUL"):  # refused before any capture starts (no GPU needed)
        gpuscope.capture(str(tmp_path / "c.gscope") + "\x00junk")


def test_dev_zero_is_refused_at_once():
    with pytest.raises(gpuscope.TraceError, match="not a trace file"):
        gpuscope.open("/dev/zero")


def test_an_endless_stream_is_read_up_to_the_budget(tmp_path):
    # /dev/zero behind a JSON-looking start: a child writes '[' forever into a FIFO.
    fifo = tmp_path / "endless.json"
    os.mkfifo(fifo)
    writer = subprocess.Popen([sys.executable, "-c",
                               "import sys\ntry:\n  f=open(sys.argv[1],'wb')\n  while True: f.write(b'['*65536)\n"
                               "except Exception: pass", str(fifo)])
    try:
        with pytest.raises(gpuscope.TraceError, match="did not end within the memory budget of 8 MiB"):
            gpuscope.open(fifo, max_memory="8M")
    finally:
        writer.kill()
        writer.wait()


def test_a_file_over_the_budget_is_refused_and_the_budget_is_checked(synth):
    trace = synth("big.gscope", "--kernels", "200000")
    with pytest.raises(gpuscope.TraceError, match="over the memory budget of 1 MiB"):
        gpuscope.open(trace, max_memory=1 << 20)
    assert len(gpuscope.open(trace, max_memory="1G").kernels) == 200000
    with pytest.raises(ValueError, match="not a size"):
        gpuscope.open(trace, max_memory="lots")
    with pytest.raises(ValueError, match="positive"):
        gpuscope.open(trace, max_memory=0)


def test_a_damaged_file_opens_with_a_warning_naming_what_was_lost(synth, tmp_path):
    whole = synth("whole.gscope", "--kernels", "200000")
    cut = tmp_path / "cut.gscope"
    with open(whole, "rb") as f:
        data = f.read()
    cut.write_bytes(data[: len(data) // 2])
    with pytest.warns(gpuscope.DamagedTraceWarning, match=r"INCOMPLETE file: truncated at byte .*kernels"):
        t = gpuscope.open(cut)
    assert 0 < len(t.kernels) < 200000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gpuscope.open(whole)  # an intact file: no warning


def test_diff_refuses_a_dict_that_is_not_a_report(synth):
    r = gpuscope.report(synth("r.gscope", "--kernels", "2000"))
    assert gpuscope.diff(r, r)["schema"] == "gpuscope.diff/1"
    broken = []
    for change in ({"schema": "gpuscope.report/2"}, {"devices": "GPU 0"}, {"kernel_time_ns": -5},
                   {"kernel_time_ns": "12"}, {"findings": [3]}, {"files": [1]}):
        bad = json.loads(json.dumps(r))
        bad.update(change)
        broken.append(bad)
    missing = json.loads(json.dumps(r))
    del missing["hotspots"]
    broken.append(missing)
    for bad in broken:
        with pytest.raises(ValueError, match="not a gpuscope.report/1 dict"):
            gpuscope.diff(bad, r)


def test_whatif_regex_over_a_fifty_thousand_character_name(tmp_path):
    name = "gemm_" + "x" * 49995  # cut to 16 KiB when read
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": 10, "dur": 5,
         "args": {"device": 0, "stream": 7, "correlation": 1}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 0, "tid": 1, "ts": 1, "dur": 2,
         "args": {"correlation": 1}}]}))
    w = gpuscope.whatif(str(path), remove="/gemm.*x$/")
    assert w["schema"] == "gpuscope.whatif/1"
    with pytest.raises(ValueError, match=r"missing \]: \[ \(at character 1\)"):
        gpuscope.whatif(str(path), remove="/[/")


def test_a_saved_report_over_one_gib_is_refused_before_it_is_read(synth, tmp_path):
    big = tmp_path / "big-report.json"
    with open(big, "wb") as f:  # sparse: a report's head, then 1 GiB of nothing
        f.write(b'{"schema": "gpuscope.report/1", "files": []')
        f.truncate((1 << 30) + 1)
    trace = synth("t.gscope", "--kernels", "100")
    with pytest.raises(gpuscope.TraceError, match="larger than 1 GiB: not a gpuscope report") as e:
        gpuscope.diff(str(big), trace)
    assert e.value.file == str(big)
