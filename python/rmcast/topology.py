"""The simulator's topology generators (``rmcast_sim::topo``) as networkx graphs.

Every function returns a :class:`networkx.Graph` (a :class:`networkx.MultiGraph` if the
network has parallel links, as an edge list may):

* node attributes: ``kind`` (``"host"``, ``"router"``, or ``"bus"`` for the node that stands
  for a shared bus), ``pos`` (x, y on the plane of the generated graphs) and ``role``
  (``"source"``, ``"receiver"`` or absent);
* edge attributes: ``link`` (its index in the simulator's network), ``delay_s``,
  ``bandwidth_bps``, ``class`` (``"transit-stub"``, ``"lan"``, ``"host"`` ...), and where set
  ``jitter_mean_s``, ``jitter_sd_s``, ``queue``, ``loss`` (a class's error rate);
* graph attributes: ``source``, ``receivers``, ``attach_points`` (routers where hosts may be
  attached) and ``generator``.

Node ids are the simulator's node ids, so a graph from :func:`transit_stub` with the same
parameters and seeds is the network a scenario with ``kind = "transit_stub"`` builds. The
generated graphs (:func:`flat_random`, :func:`waxman`, :func:`transit_stub`) get a source and
``receivers`` hosts when ``receivers`` is given, placed with ``host_seed`` (a scenario uses
its run ``seed`` there and ``topology.seed`` for the graph). Every function builds the
scenario's ``[topology]`` table of its ``kind`` and hands it to the simulator's own scenario
code, so a key left out takes the scenario's default (the defaults named below are that
code's, checked by the tests), any other key of that table is a keyword argument, and bad
parameters raise :class:`rmcast.TopologyError` with ``rmcast sim``'s one-line message.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Sequence

from . import _native

__all__ = [
    "bus",
    "star",
    "local_exchanges",
    "binary_tree",
    "flat_random",
    "waxman",
    "transit_stub",
    "edge_list",
]


def _graph(d: Dict[str, Any], generator: str):
    import networkx as nx

    pairs = [(min(a, b), max(a, b)) for a, b, _ in d["links"]]
    multi = len(set(pairs)) != len(pairs)
    g = nx.MultiGraph() if multi else nx.Graph()
    g.graph.update(
        generator=generator,
        source=d["source"],
        receivers=list(d["receivers"]),
        attach_points=list(d["attach_points"]),
    )
    receivers = set(d["receivers"])
    for i, kind, x, y in d["nodes"]:
        attrs = {"kind": kind, "pos": (x, y)}
        if i == d["source"]:
            attrs["role"] = "source"
        elif i in receivers:
            attrs["role"] = "receiver"
        g.add_node(i, **attrs)
    for a, b, attrs in d["links"]:
        g.add_edge(a, b, **attrs)
    for k, members in enumerate(d["buses"]):
        hub = f"bus{k}"
        g.add_node(hub, kind="bus", pos=(0.0, 0.0))
        for m in members:
            g.add_edge(hub, m, bus=k)
    return g


def _build(kind: str, host_seed: Optional[int] = None, dir: Optional[str] = None, **keys: Any):
    """The ``[topology]`` table ``kind = kind`` with ``keys`` (``None`` values left out, so
    the scenario's defaults apply), built by the simulator's scenario code."""
    table = {"kind": kind}
    table.update({k: v for k, v in keys.items() if v is not None})
    return _graph(_native.topology(table, host_seed, dir), kind)


def _generated(kind: str, plane: Dict[str, Any], **keys: Any):
    """A generated graph: hosts only when ``receivers`` is given, placed with ``host_seed``."""
    plane = dict(plane)
    host_seed = plane.pop("host_seed", None)
    if plane.get("receivers") is not None:
        host_seed = 1 if host_seed is None else host_seed
    else:
        host_seed = None
    return _build(kind, host_seed, **keys, **plane)


def bus(receivers: int, bandwidth_bps: Optional[int] = None, **params: Any):
    """Seed 000's shared Ethernet bus: the sender (node 0) and ``receivers`` hosts, all on
    one bus (drawn as a node ``"bus0"`` joined to every member). ``bandwidth_bps``
    defaults to 10 Mb/s; a scenario's other bus keys (``overhead``, ``min_frame``,
    ``backoff``, ``max_attempts``) are taken as keyword arguments."""
    return _build("bus", receivers=receivers, bandwidth_bps=bandwidth_bps, **params)


def star(
    children: int,
    class_: Optional[str] = None,
    bandwidth_bps: Optional[int] = None,
    **params: Any,
):
    """Seed 004's star: the sender (node 0) and ``children`` receivers, each on its own link
    of connection class ``class_`` (``"lan"`` by default, ``"interlan"``, ``"wan"`` or
    ``"hybrid"``: Table 1's latency as ``jitter_mean_s``/``jitter_sd_s`` and error rate as
    ``loss``; ``class_loss=False`` leaves the error rate out), 10 Mb/s by default."""
    return _build(
        "star", children=children, bandwidth_bps=bandwidth_bps, **{"class": class_}, **params
    )


def local_exchanges(
    rtds_ms: Optional[Sequence[float]] = None,
    per_exchange: Optional[Sequence[int]] = None,
    bandwidth_bps: Optional[int] = None,
    access_delay_ms: Optional[float] = None,
    **params: Any,
):
    """Seed 001 section 7: the source reaches local exchanges (routers) with the given
    round-trip delays (10, 25, 30, 40, 50 and 60 ms by default); exchange ``i`` serves
    ``per_exchange[i]`` destinations (or ``destinations=25`` spread over them); links of
    150 Mb/s by default."""
    return _build(
        "local_exchanges",
        rtds_ms=None if rtds_ms is None else list(rtds_ms),
        per_exchange=None if per_exchange is None else list(per_exchange),
        bandwidth_bps=bandwidth_bps,
        access_delay_ms=access_delay_ms,
        **params,
    )


def binary_tree(
    height: int,
    bandwidth_bps: Optional[int] = None,
    delay_ms: Optional[float] = None,
    source_link: Optional[bool] = None,
    **params: Any,
):
    """A complete binary tree of height ``height`` (1..24) with links of 1.5 Mb/s and 10 ms
    by default: the sender at the root, or with ``source_link`` one link above a root router
    (seed 003); ``2**height`` receiver hosts at the leaves."""
    return _build(
        "binary_tree",
        height=height,
        bandwidth_bps=bandwidth_bps,
        delay_ms=delay_ms,
        source_link=source_link,
        **params,
    )


def flat_random(n: int, p: float, seed: int = 1, **plane: Any):
    """GT-ITM flat random graph: ``n`` routers on the plane, each pair linked with
    probability ``p``, redrawn until connected (link delay proportional to distance).

    Keyword arguments of every generated graph: ``scale`` (side of the plane, 100),
    ``delay_per_unit_ms`` (0.1), ``bandwidth_bps`` (1.5 Mb/s), ``attempts`` (1000),
    ``receivers`` (hosts to attach; none by default), ``placement`` (``"distinct"`` or
    ``"with_replacement"``), ``host_delay_ms`` (1.0), ``host_bandwidth_bps`` (10 Mb/s),
    ``host_seed`` (1)."""
    return _generated("flat_random", plane, n=n, p=p, seed=seed)


def waxman(
    n: int,
    alpha: Optional[float] = None,
    beta: Optional[float] = None,
    seed: int = 1,
    **plane: Any,
):
    """Waxman graph: ``n`` routers, pair (u, v) linked with probability
    ``alpha * exp(-d(u, v) / (beta * L))`` (``alpha`` 0.4 and ``beta`` 0.2 by default);
    redrawn until connected. Keyword arguments as :func:`flat_random`."""
    return _generated("waxman", plane, n=n, alpha=alpha, beta=beta, seed=seed)


def transit_stub(seed: int = 1, **params: Any):
    """GT-ITM transit-stub graph. ``transit_domains`` (1), ``transit_nodes`` (4),
    ``stubs_per_transit`` (3), ``stub_nodes`` (8), ``p_transit`` (0.6), ``p_stub`` (0.4):
    seed 003's 100 routers by default. Link classes ``transit-transit``, ``transit-stub``,
    ``stub-stub``; stub routers are the attach points. Keyword arguments as
    :func:`flat_random`."""
    return _generated("transit_stub", params, seed=seed)


def edge_list(
    text: str,
    delay_ms: Optional[float] = None,
    bandwidth_bps: Optional[int] = None,
    **params: Any,
):
    """An edge list as a scenario's ``edge_list`` file reads it: one link per line,
    ``a b [delay_ms [bandwidth_bps]]``, ``#`` comments; nodes are routers; links without a
    delay or bandwidth get ``delay_ms`` (1.0) and ``bandwidth_bps`` (10 Mb/s). A scenario's
    ``source``, ``receiver_ids`` and ``receivers`` keys are taken as keyword arguments."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rmcast-edges-") as d:
        with open(os.path.join(d, "edges.txt"), "w", encoding="utf-8") as f:
            f.write(text)
        return _build(
            "edge_list",
            dir=d,
            file="edges.txt",
            delay_ms=delay_ms,
            bandwidth_bps=bandwidth_bps,
            **params,
        )
