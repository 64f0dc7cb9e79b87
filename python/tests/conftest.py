"""Shared fixtures of the Python tests: the bundled test data (tests/data), the `tessel` binary of the same build
(for CLI-versus-binding comparisons) and a scratch folder."""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("TESSEL_TEST_DATA", ROOT / "tests" / "data"))


def _binary():
    path = os.environ.get("TESSEL_BINARY")
    if path:
        return pathlib.Path(path)
    for build in ("build", "build-clang"):
        p = ROOT / build / "tools" / "tessel"
        if p.exists():
            return p
    return None


@pytest.fixture(scope="session")
def data_dir():
    return DATA


@pytest.fixture(scope="session")
def tessel_binary():
    b = _binary()
    if b is None:
        pytest.skip("no tessel binary (set TESSEL_BINARY)")
    return b


@pytest.fixture(scope="session")
def run_cli(tessel_binary):
    def run(*args, check=True):
        r = subprocess.run([str(tessel_binary), *map(str, args)], capture_output=True, text=True, timeout=600)
        if check and r.returncode != 0:
            raise AssertionError(f"tessel {' '.join(map(str, args))} failed: {r.stderr}")
        return r
    return run


@pytest.fixture(scope="session")
def cora(data_dir):
    import tessel
    return tessel.load(data_dir / "cora" / "cora")
