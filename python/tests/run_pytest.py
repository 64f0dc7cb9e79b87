"""ctest's entry to the pytest suite: exits 77 (ctest's skip) when pytest or NumPy are missing, else runs pytest on
this folder with the arguments given."""
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"python tests skipped: {e} (tools/setup-deps.sh installs python3-pytest and python3-numpy)")
    sys.exit(77)

sys.exit(pytest.main(sys.argv[1:]))
