"""import gpuscope: needs no CUDA, and says which Python its extension was built for when it cannot load."""
import glob
import os
import shutil
import subprocess
import sys

import pytest

import gpuscope

PACKAGE = os.path.dirname(gpuscope.__file__)


def run_python(code, pythonpath):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)


def copy_package(tmp_path, keep_extension=True):
    """A copy of the built package in tmp_path/gpuscope (the Python files, and the extension if asked)."""
    target = tmp_path / "gpuscope"
    target.mkdir()
    for f in glob.glob(os.path.join(PACKAGE, "*.py")):
        shutil.copy(f, target)
    if keep_extension:
        for f in glob.glob(os.path.join(PACKAGE, "_gpuscope*.so")):
            shutil.copy(f, target)
    return target


def test_import_loads_no_cuda_library(real_trace):
    # Reading and analysing a trace maps no CUDA library into the process: libcupti comes only with a capture.
    code = ("import gpuscope, sys; t = gpuscope.open(sys.argv[1]); gpuscope.report(t); t.kernels; "
            "print(open('/proc/self/maps').read())")
    p = subprocess.run([sys.executable, "-c", code, real_trace("hta-triton.json.gz")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "_gpuscope" in p.stdout
    for lib in ("libcupti", "libcuda.so", "libcudart", "libnvidia-ml"):
        assert lib not in p.stdout, lib


def test_an_extension_for_another_python_gives_an_import_error_naming_it(tmp_path):
    target = copy_package(tmp_path, keep_extension=False)
    built = glob.glob(os.path.join(PACKAGE, "_gpuscope*.so"))
    assert len(built) == 1
    shutil.copy(built[0], target / "_gpuscope.cpython-39-x86_64-linux-gnu.so")  # not this interpreter's tag
    p = run_python("import gpuscope", tmp_path)
    assert p.returncode != 0
    last = p.stderr.strip().splitlines()[-1]
    this = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert last.startswith("ImportError: "), p.stderr
    assert "was built for Python 3.9" in last and f"this is Python {this}" in last, last
    assert "circular import" not in p.stderr
    assert "pip install" in last and "docs/python.md" in last


def test_a_package_without_its_extension_says_so(tmp_path):
    copy_package(tmp_path, keep_extension=False)
    p = run_python("import gpuscope", tmp_path)
    assert p.returncode != 0
    assert "has no compiled extension (_gpuscope*.so)" in p.stderr.strip().splitlines()[-1], p.stderr


@pytest.mark.skipif(not gpuscope.built_with_capture, reason="a build without CUDA has no capture extension")
def test_capture_without_a_loadable_cupti_raises_capture_error(tmp_path):
    # The capture extension links CUPTI; one that cannot be loaded makes capture() fail with the reason,
    # while everything else works.
    target = copy_package(tmp_path)
    capture = glob.glob(os.path.join(PACKAGE, "_capture*.so"))
    assert len(capture) == 1
    (target / os.path.basename(capture[0])).write_bytes(b"not a shared library")
    code = ("import gpuscope\n"
            "assert gpuscope.built_with_capture\n"
            "try:\n"
            "    with gpuscope.capture('x.gscope'):\n"
            "        print('ran')\n"
            "except gpuscope.CaptureError as e:\n"
            "    print('CaptureError:', e)\n")
    p = run_python(code, tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("CaptureError: capture needs CUPTI"), p.stdout
    assert "docs/install.md" in p.stdout and "nothing was captured" in p.stdout
