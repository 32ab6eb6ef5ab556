"""The type stubs (`rmcast/*.pyi`) match the package as built: mypy's stubtest compares every
stub with the runtime object (names, signatures of the Python and the PyO3 functions)."""

import os
import subprocess
import sys

import pytest


def test_stubs_match_the_runtime(tmp_path):
    try:
        import mypy  # noqa: F401
    except ImportError:  # the `test` extra: pip install "./python[test]"
        if os.environ.get("CI") == "true":
            raise
        pytest.skip("mypy not installed")
    r = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "rmcast"],
        cwd=tmp_path,  # the installed package, not a source checkout on sys.path
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr
