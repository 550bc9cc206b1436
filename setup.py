"""`pip install .`: gpuscope's Python module, built with CMake for the interpreter that runs pip.

    python3 -m pip install --no-build-isolation --no-index .    # offline, with Debian's pip, setuptools, wheel

Only the module's targets are built (gpuscope_python: the extension, and the
capture extension in CUDA builds); tests, benchmarks, the viewer and MPI are
left out. The package and its metadata come from pyproject.toml; this file
drives CMake (docs/python.md, "pip install").

Environment:
  GPUSCOPE_BUILD_DIR   the CMake build folder (default: build-python/ in the source tree, kept, so that a second
                       install rebuilds only what changed). A folder already configured is built as it is: it must
                       be for this interpreter's Python version.
  GPUSCOPE_CMAKE_ARGS  more options for configuring a new folder ("-DGPUSCOPE_CUDA=OFF ...").
  CMAKE_BUILD_PARALLEL_LEVEL  jobs (CMake's own variable).
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

SOURCE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(os.environ.get("GPUSCOPE_BUILD_DIR") or os.path.join(SOURCE, "build-python"))


def project_version():
    with open(os.path.join(SOURCE, "CMakeLists.txt"), encoding="utf-8") as f:
        match = re.search(r"project\(gpuscope VERSION ([0-9.]+)", f.read())
    if not match:
        sys.exit("setup.py: no `project(gpuscope VERSION ...)` in CMakeLists.txt")
    return match.group(1)


def run(command):
    print("setup.py:", " ".join(shlex.quote(c) for c in command), flush=True)
    subprocess.run(command, check=True)


def interpreter():
    """This Python; in a venv, the interpreter it was made from (the same version and headers), which outlives it."""
    base = getattr(sys, "_base_executable", "")
    return base if base and os.path.isfile(base) else sys.executable


def cmake_build():
    """Configures (when new) and builds the module's targets; returns the built package folder."""
    if not os.path.isfile(os.path.join(BUILD, "CMakeCache.txt")):
        command = ["cmake", "-S", SOURCE, "-B", BUILD, "-DCMAKE_BUILD_TYPE=Release",
                   f"-DPython3_EXECUTABLE={interpreter()}", "-DGPUSCOPE_PYTHON=ON", "-DGPUSCOPE_BUILD_TESTS=OFF",
                   "-DGPUSCOPE_BUILD_BENCH=OFF", "-DGPUSCOPE_VIEWER=OFF", "-DGPUSCOPE_MPI=OFF", "-DGPUSCOPE_WERROR=OFF"]
        if shutil.which("ninja"):
            command += ["-G", "Ninja"]
        command += shlex.split(os.environ.get("GPUSCOPE_CMAKE_ARGS", ""))
        run(command)
    run(["cmake", "--build", BUILD, "--target", "gpuscope_python"])
    package = os.path.join(BUILD, "python", "gpuscope")
    built = glob.glob(os.path.join(package, "_gpuscope.*"))
    if not any(f.endswith(tuple(EXTENSION_SUFFIXES)) for f in built):
        sys.exit(f"setup.py: {BUILD} holds {', '.join(map(os.path.basename, built)) or 'no extension'}, not one for "
                 f"this Python ({sys.executable}, {sys.version.split()[0]}): it was configured for another "
                 "interpreter; set GPUSCOPE_BUILD_DIR to a new folder")
    return package


class BuildWithCMake(build_py):
    """build_py, plus the extensions CMake built, into the wheel's gpuscope/."""

    def run(self):
        super().run()
        package = cmake_build()
        target = os.path.join(self.build_lib, "gpuscope")
        os.makedirs(target, exist_ok=True)
        for built in glob.glob(os.path.join(package, "*.so")):
            shutil.copy2(built, target)


class BinaryDistribution(Distribution):
    """A wheel for this platform and Python (it holds compiled extensions)."""

    def has_ext_modules(self):
        return True


setuptools_dir = os.path.join(BUILD, "setuptools")  # never ./build, which is CMake's usual folder
os.makedirs(setuptools_dir, exist_ok=True)
setup(
    version=project_version(),
    packages=["gpuscope"],
    package_dir={"gpuscope": "src/python/gpuscope"},
    distclass=BinaryDistribution,
    cmdclass={"build_py": BuildWithCMake},
    options={"build": {"build_base": setuptools_dir}, "egg_info": {"egg_base": setuptools_dir}},
    zip_safe=False,
)
