"""Fixtures of the Python module's tests: where the real traces are, and synthetic traces made by `gpuscope synth`."""
import os
import subprocess

import pytest


def _env(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through ctest, which sets it")
    return value


@pytest.fixture(scope="session")
def traces_dir():
    """The real traces (GPUSCOPE_TRACES_DIR, from CMake)."""
    d = _env("GPUSCOPE_TRACES_DIR")
    assert os.path.isdir(d), f"GPUSCOPE_TRACES_DIR={d} is not a directory"
    return d


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
