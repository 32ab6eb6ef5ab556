"""rmcast from Python: reliable-multicast simulations, study reproduction and topologies.

The protocol code, the simulator and the studies are rmcast's Rust crates, compiled into
``rmcast._native``; this package hands their results over as pandas DataFrames and networkx
graphs.

* :func:`protocols` -- every protocol and its parameters (``rmcast protocols --json``);
* :func:`simulate` -- run a scenario (a TOML file or a dict with the same keys) as
  ``rmcast sim`` does, runs as a DataFrame with the columns of ``runs.csv``;
* :func:`repro` -- re-run studies claim by claim as ``rmcast repro`` does, claims as a
  DataFrame with the columns of ``claims.csv``;
* :mod:`rmcast.topology` -- the simulator's topology generators as networkx graphs.

Example::

    import rmcast
    runs = rmcast.simulate("scenarios/examples/bus-saw.toml")
    print(runs[["topology.receivers", "seed", "throughput_bps"]])
"""

from __future__ import annotations

import io
import json
import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _native
from ._native import ScenarioError, TopologyError
from . import topology

__all__ = [
    "ScenarioError",
    "TopologyError",
    "protocols",
    "simulate",
    "repro",
    "studies",
    "topology",
    "__version__",
]

__version__: str = _native.__version__

PathLike = Union[str, "os.PathLike[str]"]


def protocols() -> List[Dict[str, Any]]:
    """Every protocol this build implements, with its parameters.

    The same document as ``rmcast protocols --json``: a list of dicts with ``name``,
    ``seed``, ``summary``, ``sockets`` (whether ``rmcast send``/``recv`` run it) and
    ``params`` (each with ``key``, ``scenario``, ``flag``, ``unit``, ``range``, ``default``,
    ``on_sockets`` and ``help``). ``pandas.json_normalize(rmcast.protocols(), "params",
    ["name"])`` gives one row per parameter.
    """
    return json.loads(_native.protocols_json())


def _frame(text: str):
    import pandas as pd

    return pd.read_csv(io.StringIO(text))


def simulate(
    scenario: Union[PathLike, Mapping[str, Any]],
    *,
    records: bool = False,
    out: Optional[PathLike] = None,
    threads: Optional[int] = None,
    progress: Optional[Callable[[int, int], Any]] = None,
):
    """Run a scenario (or a sweep) in the simulator, as ``rmcast sim`` does.

    Parameters
    ----------
    scenario:
        The path of a scenario file (TOML), or a dict with the same keys and tables
        (``{"topology": {"kind": "bus", "receivers": [5, 10]}, "protocol": {"name":
        "saw"}, ...}``; ``[[loss]]`` is a list of dicts). As in a file, any scalar may be a
        list (a sweep); ``None`` leaves a key out. Relative paths in a dict (an edge list)
        are resolved from the current directory.
    records:
        Also return the per-packet and per-loss records (``rmcast sim --records``).
    out:
        Also write ``runs.csv`` and ``runs.jsonl`` (and with ``records``, ``packets.csv``,
        ``losses.csv`` and ``recoveries.csv``) into this directory, byte for byte as
        ``rmcast sim --out``.
    threads:
        Worker threads for the sweep (default: ``RAYON_NUM_THREADS`` or every core, as
        ``rmcast sim``). Results do not depend on it.
    progress:
        Called as ``progress(finished, total)`` (runs) from the calling thread, at most ten
        times a second while the counts move, e.g. ``lambda d, n: print(f"{d}/{n}", end="\\r")``
        or a ``tqdm`` bar's update. An exception it raises stops the sweep like Ctrl-C.

    Returns
    -------
    pandas.DataFrame
        One row per run, the columns of ``runs.csv`` (swept keys, ``seed``, metrics), in
        run order. With ``records=True``, a tuple ``(runs, packets, losses)`` of frames.

    Raises
    ------
    ScenarioError
        For a scenario ``rmcast sim`` refuses; the message is the CLI's one-line error
        (without its ``error:`` prefix), naming the file (``<dict>`` for a dict) and key.

    KeyboardInterrupt
        On Ctrl-C: the runs in flight finish, no other run starts, and the exception is
        raised then (within about one run's time).

    The runs execute in Rust with the GIL released, in parallel.
    """
    import pandas as pd

    if not isinstance(scenario, Mapping):
        try:
            scenario = os.fspath(scenario)
        except TypeError:
            raise TypeError(
                "scenario: expected a dict or the path of a TOML file, got "
                + type(scenario).__name__
            ) from None
    if out is not None:
        out = os.fspath(out)
    cols, table, packets, losses = _native.simulate(
        scenario, records=records, out=out, threads=threads, progress=progress
    )
    runs = pd.DataFrame(table, columns=cols)
    if records:
        return runs, _frame(packets), _frame(losses)
    return runs


def studies() -> List[Tuple[str, str, str]]:
    """The registered studies as ``(name, title, source)``, in report order
    (``rmcast repro --list``)."""
    return [tuple(s) for s in _native.studies()]


def repro(
    study: Union[str, Sequence[str], None] = None,
    *,
    quick: bool = True,
    jobs: Optional[int] = None,
    claims: Optional[PathLike] = None,
    out: Optional[PathLike] = None,
    progress: Optional[Callable[[int, int], Any]] = None,
    runs_factor: int = 1,
):
    """Re-run studies claim by claim, as ``rmcast repro`` does.

    Parameters
    ----------
    study:
        A study name (``"demo"``, ``"segovia"``, ``"paul"``, ``"prmp"``, ``"lms"``,
        ``"xtp"``; see :func:`studies`), a list of names, or ``None`` for every study.
    quick:
        Reduced sweeps (``--quick``), as CI runs them; ``False`` runs the full sweeps
        (long: 48 minutes for all studies on 2 cores).
    jobs:
        Worker threads (``--jobs``); default every core.
    claims:
        A directory with ``<study>/claims.toml`` files to use instead of the built-in ones
        (``--claims``).
    out:
        Also write the report (``index.html``, ``report.md``, ``claims.csv``,
        ``claims.json``, SVG plots) into this directory (``--out``).
    progress:
        Called as ``progress(finished, total)`` (work units of the studies, the total
        growing as each study starts), as for :func:`simulate`.
    runs_factor:
        Run this many times the mode's runs at every point (``--runs-factor``): narrower
        intervals, fewer inconclusive verdicts, as many times the CPU time.

    Returns
    -------
    pandas.DataFrame
        One row per claim, the columns of ``claims.csv`` (``id``, ``study``, ``statement``,
        ``paper_value``, ``mean``, ``ci_lo``, ``ci_hi``, ``verdict``, ``detail`` ...).

    Raises
    ------
    KeyboardInterrupt
        On Ctrl-C, once the study in flight has finished (no later study starts).
    """
    import pandas as pd

    if study is None:
        names: List[str] = []
    elif isinstance(study, str):
        names = [study]
    else:
        names = list(study)
    text = _native.repro(
        names,
        quick=quick,
        jobs=jobs,
        claims=None if claims is None else os.fspath(claims),
        out=None if out is None else os.fspath(out),
        progress=progress,
        runs_factor=runs_factor,
    )
    rows = json.loads(text)
    columns = list(rows[0].keys()) if rows else None
    return pd.DataFrame(rows, columns=columns)
