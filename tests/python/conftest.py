"""Fixtures of the Python module's tests: the real traces of tests/data/traces, and synthetic traces made by
`gpuscope synth`."""
import os
import re
import subprocess

import pytest


def _env(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through ctest, which sets it")
    return value


_REAL_TRACES_H = os.path.join(os.path.dirname(__file__), os.pardir, "support", "real_traces.h")


def _listed(function):
    """The file names a list function of tests/support/real_traces.h returns: one list for the C++ and Python tests."""
    with open(_REAL_TRACES_H, encoding="utf-8") as f:
        text = f.read()
    body = re.search(function + r"\(\) \{(.*?)\n\}", text, re.S)
    assert body, f"{_REAL_TRACES_H}: no {function}()"
    names = re.findall(r'"([^"]+)"', body.group(1))
    assert names, f"{_REAL_TRACES_H}: {function}() lists no files"
    return names


@pytest.fixture(scope="session")
def real_trace():
    """real_trace(name) -> the path of tests/data/traces/name (GPUSCOPE_TRACES_DIR); a missing file fails the test."""
    root = _env("GPUSCOPE_TRACES_DIR")

    def path(name):
        p = os.path.join(root, name)
        if not os.path.isfile(p):
            pytest.fail(f"missing test data: {p} (see tests/data/traces/README.md)")
        return p

    return path


@pytest.fixture(scope="session")
def real_trace_files(real_trace):
    """Every Chrome/Kineto JSON trace of tests/data/traces (the list of tests/support/real_traces.h)."""
    return [real_trace(n) for n in _listed("real_trace_files")]


@pytest.fixture(scope="session")
def real_nsys_files(real_trace):
    """The Nsight Systems SQLite exports of tests/data/traces/nsys."""
    return [real_trace(n) for n in _listed("real_nsys_files")]


@pytest.fixture(scope="session")
def cli():
    """Runs the gpuscope CLI built beside the module; returns the CompletedProcess."""
    exe = _env("GPUSCOPE_CLI")

    def run(*args, check=True):
        p = subprocess.run([exe, *map(str, args)], capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError(f"gpuscope {' '.join(map(str, args))} exited {p.returncode}: {p.stderr}")
        return p

    return run


@pytest.fixture(scope="session")
def synth(cli, tmp_path_factory):
    """synth(name, *flags) -> path of a synthetic trace written by `gpuscope synth` (made once per flags)."""
    made = {}
    root = tmp_path_factory.mktemp("synth")

    def make(name, *flags):
        key = (name, flags)
        if key not in made:
            path = root / name
            cli("synth", "-o", path, *flags)
            made[key] = str(path)
        return made[key]

    return make
