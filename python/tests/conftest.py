"""Shared fixtures: the repository root and the `rmcast` binary the results are compared with."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _find_cli():
    """`RMCAST_BIN`, else the workspace's release or debug build, else `rmcast` on PATH."""
    if os.environ.get("RMCAST_BIN"):
        return Path(os.environ["RMCAST_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for profile in ("release", "debug"):
        p = target / profile / "rmcast"
        if p.is_file():
            return p
    found = shutil.which("rmcast")
    return Path(found) if found else None


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def cli():
    """Run the `rmcast` binary; the comparison tests need it (CI builds it first and sets
    RMCAST_BIN). Without it they are skipped, except under CI=true, where they fail."""
    path = _find_cli()
    if path is None or not path.is_file():
        msg = "no rmcast binary (build it with cargo build --release -p rmcast or set RMCAST_BIN)"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)

    def run(*args, check=True):
        return subprocess.run(
            [str(path), *map(str, args)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=check,
        )

    return run
