"""Runs pytest on the given test files; exit 77 (ctest: skipped) when pytest, numpy or pandas is missing."""
import sys

try:
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pytest
except ImportError as e:
    print(f"skipped: {sys.executable} cannot import {e.name} (scripts/setup.sh installs python3-numpy, "
          "python3-pandas and python3-pytest)")
    sys.exit(77)

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", *sys.argv[1:]]))
