"""gpuscope.capture: on a machine without a GPU (or a build without CUDA) it raises a clear CaptureError."""
import os
import re

import pytest

import gpuscope


def test_capture_without_a_gpu_raises_a_clear_error(tmp_path):
    out = tmp_path / "out.gscope"
    ran = []
    try:
        with gpuscope.capture(out) as c:
            ran.append(True)
    except gpuscope.CaptureError as e:
        message = str(e)
        assert not ran, "the block ran although the capture did not start"
        assert re.search(r"CUDA|GPU|driver|CUPTI", message), message
        assert "nothing was captured" in message
        if not gpuscope.built_with_capture:
            assert "built without CUDA support" in message
        assert not out.exists()
        return
    # A machine with a GPU: the block ran and the file is a trace.
    assert ran and c.summary["ok"], c.summary
    assert gpuscope.open(c.output).info["source"] == "cupti"


def test_capture_options_are_checked():
    # A CUDA build checks the options before it starts; a build without CUDA says it has no capture.
    expected = (ValueError, "unknown kind 'kernels'") if gpuscope.built_with_capture else (
        gpuscope.CaptureError, "built without CUDA support")
    with pytest.raises(expected[0], match=expected[1]):
        with gpuscope.capture(os.devnull, trace=["kernels"]):
            pass


def test_nothing_captured_has_nothing_to_open():
    with pytest.raises(gpuscope.CaptureError, match="nothing was captured"):
        gpuscope.capture("x.gscope").open()
