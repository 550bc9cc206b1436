"""Runs pytest on the given test files. A missing pytest, numpy or pandas fails the test, naming the package."""
import sys

try:
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pytest
except ImportError as e:
    print(f"{sys.executable} cannot import {e.name}: scripts/setup.sh installs python3-numpy, python3-pandas and "
          "python3-pytest")
    sys.exit(1)

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", *sys.argv[1:]]))
