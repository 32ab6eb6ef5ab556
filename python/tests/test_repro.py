import csv
import re

import pytest

import rmcast


def test_studies_are_the_registry():
    names = [s[0] for s in rmcast.studies()]
    assert names == ["demo", "segovia", "paul", "prmp", "lms", "xtp"]


def test_repro_demo_claims_as_frame(tmp_path):
    claims = rmcast.repro("demo", quick=True, out=tmp_path)
    # The columns and rows of the claims.csv the same call wrote.
    with open(tmp_path / "claims.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert list(claims.columns) == rows[0]
    assert list(claims["id"]) == [r[0] for r in rows[1:]]
    assert len(claims) == 15
    assert set(claims["study"]) == {"demo"}
    assert set(claims["verdict"]) <= {"pass", "inconclusive", "fail"}
    assert claims["quick"].all()
    # No demo claim fails (a few quick-mode intervals lie across their band: inconclusive).
    assert (claims["verdict"] != "fail").all(), claims[claims["verdict"] == "fail"][["id", "detail"]]
    assert (tmp_path / "index.html").is_file()


def assert_same_outputs(py, cli_out):
    for name in ("claims.json", "claims.csv", "report.md"):
        ours, theirs = (py / name).read_bytes(), (cli_out / name).read_bytes()
        if name == "report.md":
            # The binary names the commit it was built from (crates/cli/build.rs); the package,
            # built by pip apart from the binary, has none to name.
            theirs = re.sub(rb" Built from commit `[^`]*`\.", b"", theirs)
        assert ours == theirs, name


def test_repro_matches_the_cli(cli, tmp_path):
    rmcast.repro(["demo"], quick=True, jobs=1, out=tmp_path / "py")
    cli("repro", "demo", "--quick", "--quiet", "--out", tmp_path / "cli")
    assert_same_outputs(tmp_path / "py", tmp_path / "cli")


def test_repro_runs_factor_matches_the_cli(cli, tmp_path):
    claims = rmcast.repro(["demo"], quick=True, jobs=1, out=tmp_path / "py", runs_factor=2)
    cli("repro", "demo", "--quick", "--quiet", "--runs-factor", "2", "--out", tmp_path / "cli")
    assert_same_outputs(tmp_path / "py", tmp_path / "cli")
    once = rmcast.repro("demo", quick=True, jobs=1)
    # The lossy claims now rest on twice the runs (the lossless ones stay at 3).
    n2, n1 = claims["n"].fillna(0), once["n"].fillna(0)
    assert (n2 >= n1).all(), claims[n2 < n1][["id", "n"]]
    assert ((n2 == 2 * n1) & (n1 > 0)).any()
    with pytest.raises(ValueError, match="runs_factor"):
        rmcast.repro("demo", runs_factor=0)


def test_repro_unknown_study():
    with pytest.raises(ValueError, match="unknown study `nope`"):
        rmcast.repro("nope")


def test_repro_reports_progress():
    seen = []
    claims = rmcast.repro("demo", progress=lambda done, total: seen.append((done, total)))
    assert len(claims) > 0
    assert seen, "progress was never called"
    done, total = seen[-1]
    assert total > 0 and done == total, seen
