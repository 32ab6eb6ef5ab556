import threading
import time

import pandas as pd
import pytest

import rmcast

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

EXAMPLES = ["bus-saw.toml", "transit-stub.toml", "star-hybrid.toml", "edge-list.toml"]


def example(root, name):
    return root / "scenarios" / "examples" / name


@pytest.mark.parametrize("name", EXAMPLES)
def test_simulate_writes_what_rmcast_sim_writes(cli, root, tmp_path, name):
    path = example(root, name)
    runs = rmcast.simulate(path, out=tmp_path / "py")
    cli("sim", path, "--out", tmp_path / "cli", "--quiet")
    for f in ("runs.csv", "runs.jsonl"):
        assert (tmp_path / "py" / f).read_bytes() == (tmp_path / "cli" / f).read_bytes(), f
    # The frame is the CLI's runs.csv, column for column and value for value.
    expected = pd.read_csv(tmp_path / "cli" / "runs.csv")
    assert list(runs.columns) == list(expected.columns)
    pd.testing.assert_frame_equal(runs, expected, check_dtype=False)


def test_simulate_records_match_the_cli(cli, root, tmp_path):
    path = example(root, "bus-saw.toml")
    runs, packets, losses = rmcast.simulate(path, records=True, out=tmp_path / "py")
    cli("sim", path, "--out", tmp_path / "cli", "--records", "--quiet")
    for f in ("packets.csv", "losses.csv"):
        assert (tmp_path / "py" / f).read_bytes() == (tmp_path / "cli" / f).read_bytes(), f
    assert list(packets.columns) == ["run", "id", "time_s", "src", "dest", "class", "len"]
    assert list(losses.columns) == ["run", "id", "time_s", "node", "cause"]
    assert set(packets["run"]) == set(runs["run"])
    assert len(losses) == runs["lost_bernoulli"].sum()


@pytest.mark.skipif(tomllib is None, reason="tomllib needs Python 3.11")
@pytest.mark.parametrize("name", ["bus-saw.toml", "transit-stub.toml"])
def test_a_dict_runs_as_its_file(root, name):
    path = example(root, name)
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    pd.testing.assert_frame_equal(rmcast.simulate(doc), rmcast.simulate(path))


def test_a_dict_sweeps_and_threads_do_not_change_results():
    sc = {
        "seed": [1, 2, 3],
        "topology": {"kind": "binary_tree", "height": 3, "source_link": True},
        "protocol": {"name": "srm"},
        "traffic": {"messages": 20, "size": 500},
        "loss": [{"model": "bernoulli", "p": 0.05, "at": "link"}],
    }
    runs = rmcast.simulate(sc)
    assert list(runs["seed"]) == [1, 2, 3]
    assert list(runs["run"]) == [0, 1, 2]
    assert runs["completed"].all()
    pd.testing.assert_frame_equal(runs, rmcast.simulate(sc, threads=1))
    # A different seed is a different run.
    assert runs["events"].nunique() == 3


def test_errors_are_the_cli_errors(cli, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[topology]\nkind = "bus"\nreceivers = 3\n[protocol]\nname = "saw"\ntimeout_ms = -1\n')
    with pytest.raises(rmcast.ScenarioError) as e:
        rmcast.simulate(bad)
    r = cli("sim", bad, "--out", tmp_path / "o", check=False)
    assert r.returncode == 2
    assert r.stderr.strip() == f"error: {e.value}"
    assert "timeout_ms" in str(e.value)
    # Not TOML, and a file that does not exist: the CLI's words too.
    bad.write_text("[topology\n")
    with pytest.raises(rmcast.ScenarioError) as e:
        rmcast.simulate(bad)
    assert cli("sim", bad, "--out", tmp_path / "o", check=False).stderr.strip() == f"error: {e.value}"
    missing = tmp_path / "missing.toml"
    with pytest.raises(rmcast.ScenarioError, match="cannot read"):
        rmcast.simulate(missing)


def test_dict_errors_name_the_key():
    sc = {"topology": {"kind": "bus", "receivers": 3}, "protocol": {"name": "saw", "timout_ms": 5}}
    with pytest.raises(rmcast.ScenarioError, match=r"^<dict>: key `protocol.timout_ms`"):
        rmcast.simulate(sc)
    with pytest.raises(rmcast.ScenarioError, match="protocol.name"):
        rmcast.simulate({"topology": {"kind": "bus", "receivers": 3}, "protocol": {"name": "nope"}})
    with pytest.raises(TypeError, match="traffic.size"):
        rmcast.simulate({"topology": {"kind": "bus", "receivers": 3}, "protocol": {"name": "saw"},
                         "traffic": {"size": object()}})
    with pytest.raises(TypeError, match="dict or the path"):
        rmcast.simulate(42)
    assert issubclass(rmcast.ScenarioError, ValueError)


def test_simulate_releases_the_gil():
    # A sweep long enough to take a while; while it runs, this thread must keep running.
    sc = {
        "seed": list(range(1, 9)),
        "topology": {"kind": "transit_stub", "receivers": 100},
        "protocol": {"name": "srm"},
        "traffic": {"messages": 100, "size": 1000},
        "loss": [{"model": "bernoulli", "p": 0.02, "at": "link"}],
    }
    done = threading.Event()
    result = {}

    def work():
        result["runs"] = rmcast.simulate(sc)
        done.set()

    t = threading.Thread(target=work)
    start = time.monotonic()
    t.start()
    ticks = 0
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    elapsed = time.monotonic() - start
    assert len(result["runs"]) == 8
    # Held GIL: the loop above would not run while the sweep does (a tick or two at most).
    assert elapsed > 0.2, f"sweep too short to tell ({elapsed:.3f} s)"
    assert ticks > 20, f"{ticks} ticks in {elapsed:.2f} s"


SWEEP = {
    "seed": list(range(1, 41)),
    "topology": {"kind": "binary_tree", "height": 4, "source_link": True},
    "protocol": {"name": "srm"},
    "traffic": {"messages": 40, "size": 500},
    "loss": [{"model": "bernoulli", "p": 0.05, "at": "link"}],
}


def test_progress_counts_runs_to_the_total():
    seen = []
    runs = rmcast.simulate(SWEEP, progress=lambda done, total: seen.append((done, total)))
    assert len(runs) == 40
    assert seen, "progress was never called"
    assert seen[-1] == (40, 40)
    assert all(total == 40 for _, total in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


# A sweep that lasts seconds, not milliseconds: the progress callback runs every 100 ms, and
# `SWEEP` can finish before the first one on a fast machine (it did: the first report came
# at 40 of 40, and the interrupt had nothing left to stop).
LONG_SWEEP = dict(SWEEP, seed=list(range(1, 401)), traffic={"messages": 200, "size": 500})


def test_ctrl_c_stops_a_sweep():
    import os
    import signal

    seen = []

    def interrupt_once(done, total):
        # Ctrl-C as the terminal sends it, at the first report.
        seen.append(done)
        if len(seen) == 1:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        rmcast.simulate(LONG_SWEEP, progress=interrupt_once, threads=1)
    assert seen and seen[-1] < 400, seen


def test_an_exception_from_progress_stops_the_sweep():
    class Enough(Exception):
        pass

    def stop(done, total):
        raise Enough()

    with pytest.raises(Enough):
        rmcast.simulate(SWEEP, progress=stop)
