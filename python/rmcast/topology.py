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
its run ``seed`` there and ``topology.seed`` for the graph). Bad parameters raise
:class:`rmcast.TopologyError`.
"""

from __future__ import annotations

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


def bus(receivers: int, bandwidth_bps: Optional[int] = None):
    """Seed 000's shared Ethernet bus: the sender (node 0) and ``receivers`` hosts, all on
    one bus (drawn as a node ``"bus0"`` joined to every member). ``bandwidth_bps``
    defaults to 10 Mb/s."""
    return _graph(_native.bus(receivers, bandwidth_bps), "bus")


def star(children: int, class_: str = "lan", bandwidth_bps: int = 10_000_000):
    """Seed 004's star: the sender (node 0) and ``children`` receivers, each on its own link
    of connection class ``class_`` (``"lan"``, ``"interlan"``, ``"wan"`` or ``"hybrid"``:
    Table 1's latency as ``jitter_mean_s``/``jitter_sd_s`` and error rate as ``loss``)."""
    return _graph(_native.star(children, class_, bandwidth_bps), "star")


def local_exchanges(
    rtds_ms: Sequence[float],
    per_exchange: Sequence[int],
    bandwidth_bps: int = 150_000_000,
    access_delay_ms: float = 0.0,
):
    """Seed 001 section 7: the source reaches local exchanges (routers) with the given
    round-trip delays; exchange ``i`` serves ``per_exchange[i]`` destinations."""
    return _graph(
        _native.local_exchanges(
            list(rtds_ms), list(per_exchange), bandwidth_bps, access_delay_ms
        ),
        "local_exchanges",
    )


def binary_tree(
    height: int,
    bandwidth_bps: int = 1_500_000,
    delay_ms: float = 10.0,
    source_link: bool = False,
):
    """A complete binary tree of height ``height`` (1..24): the sender at the root, or with
    ``source_link`` one link above a root router (seed 003); ``2**height`` receiver hosts
    at the leaves."""
    return _graph(
        _native.binary_tree(height, bandwidth_bps, delay_ms, source_link), "binary_tree"
    )


def flat_random(n: int, p: float, seed: int = 1, **plane: Any):
    """GT-ITM flat random graph: ``n`` routers on the plane, each pair linked with
    probability ``p``, redrawn until connected (link delay proportional to distance).

    Keyword arguments of every generated graph: ``scale`` (side of the plane, 100),
    ``delay_per_unit_ms`` (0.1), ``bandwidth_bps`` (1.5 Mb/s), ``attempts`` (1000),
    ``receivers`` (hosts to attach; none by default), ``placement`` (``"distinct"`` or
    ``"with_replacement"``), ``host_delay_ms`` (1.0), ``host_bandwidth_bps`` (10 Mb/s),
    ``host_seed`` (1)."""
    return _graph(_native.flat_random(n, p, seed=seed, **plane), "flat_random")


def waxman(n: int, alpha: float = 0.4, beta: float = 0.2, seed: int = 1, **plane: Any):
    """Waxman graph: ``n`` routers, pair (u, v) linked with probability
    ``alpha * exp(-d(u, v) / (beta * L))``; redrawn until connected. Keyword arguments as
    :func:`flat_random`."""
    return _graph(_native.waxman(n, alpha, beta, seed=seed, **plane), "waxman")


def transit_stub(seed: int = 1, **params: Any):
    """GT-ITM transit-stub graph. ``transit_domains`` (1), ``transit_nodes`` (4),
    ``stubs_per_transit`` (3), ``stub_nodes`` (8), ``p_transit`` (0.6), ``p_stub`` (0.4):
    seed 003's 100 routers by default. Link classes ``transit-transit``, ``transit-stub``,
    ``stub-stub``; stub routers are the attach points. Keyword arguments as
    :func:`flat_random`."""
    return _graph(_native.transit_stub(seed=seed, **params), "transit_stub")


def edge_list(text: str, delay_ms: float = 1.0, bandwidth_bps: int = 10_000_000):
    """An edge list as a scenario's ``edge_list`` file reads it: one link per line,
    ``a b [delay_ms [bandwidth_bps]]``, ``#`` comments; nodes are routers."""
    return _graph(_native.edge_list(text, delay_ms, bandwidth_bps), "edge_list")
