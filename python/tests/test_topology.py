import networkx as nx
import pytest

import rmcast
from rmcast import topology


def test_transit_stub_default_is_seed_003s_100_routers():
    g = topology.transit_stub()
    assert g.number_of_nodes() == 100
    assert all(k == "router" for _, k in g.nodes(data="kind"))
    assert nx.is_connected(g)
    classes = {c for _, _, c in g.edges(data="class")}
    assert classes == {"transit-transit", "transit-stub", "stub-stub"}
    assert len(g.graph["attach_points"]) == 96  # 4 transit nodes x 3 stubs x 8 routers
    # The same seed draws the same graph; another seed another one.
    assert nx.utils.graphs_equal(g, topology.transit_stub(seed=1))
    assert not nx.utils.graphs_equal(g, topology.transit_stub(seed=2))


def test_transit_stub_with_hosts():
    g = topology.transit_stub(receivers=10, host_seed=3)
    assert g.number_of_nodes() == 111
    hosts = [n for n, k in g.nodes(data="kind") if k == "host"]
    assert len(hosts) == 11
    assert g.nodes[g.graph["source"]]["role"] == "source"
    assert len(g.graph["receivers"]) == 10
    for r in g.graph["receivers"]:
        (router,) = g.neighbors(r)
        assert router in g.graph["attach_points"]
        assert g.edges[r, router]["class"] == "host"
        assert g.edges[r, router]["delay_s"] == pytest.approx(0.001)
    # Link delays grow with distance on the plane (0.1 ms per unit by default).
    a, b, d = next((a, b, d) for a, b, d in g.edges(data="delay_s") if g.edges[a, b]["class"] == "stub-stub")
    (xa, ya), (xb, yb) = g.nodes[a]["pos"], g.nodes[b]["pos"]
    assert d == pytest.approx(((xa - xb) ** 2 + (ya - yb) ** 2) ** 0.5 * 1e-4, abs=1e-9)


def test_trees_stars_buses_and_exchanges():
    t = topology.binary_tree(3)
    assert t.number_of_nodes() == 15 and nx.is_tree(t)
    assert len(t.graph["receivers"]) == 8
    assert t.edges[0, 1]["delay_s"] == pytest.approx(0.01)
    assert topology.binary_tree(3, source_link=True).number_of_nodes() == 16
    s = topology.star(6, class_="hybrid")
    assert sorted(c for _, _, c in s.edges(data="class")) == ["interlan"] * 2 + ["lan"] * 2 + ["wan"] * 2
    assert {l for _, _, l in s.edges(data="loss")} == {0.01, 0.10}
    b = topology.bus(4)
    assert b.degree["bus0"] == 5 and b.nodes["bus0"]["kind"] == "bus"
    le = topology.local_exchanges([10, 20], [2, 3])
    assert len(le.graph["receivers"]) == 5
    assert le.edges[0, 1]["delay_s"] == pytest.approx(0.005)


def test_random_graphs_and_edge_lists():
    w = topology.waxman(30, seed=4)
    f = topology.flat_random(30, 0.2, seed=4, receivers=5, placement="with_replacement")
    assert nx.is_connected(w) and nx.is_connected(f)
    assert f.number_of_nodes() == 36
    e = topology.edge_list("0 1 5\n1 2\n1 2 3 1000\n# comment\n")
    assert isinstance(e, nx.MultiGraph) and e.number_of_edges() == 3


def test_bad_parameters_raise():
    with pytest.raises(rmcast.TopologyError, match=r"key `topology\.p`: expected a number in \[0, 1\], got 2"):
        topology.flat_random(10, 2.0)
    with pytest.raises(rmcast.TopologyError, match="height"):
        topology.binary_tree(0)
    with pytest.raises(rmcast.TopologyError, match="placement"):
        topology.waxman(10, receivers=3, placement="nowhere")
    with pytest.raises(rmcast.TopologyError, match="edge list line 1"):
        topology.edge_list("0 0\n")


def test_unknown_keywords_are_refused():
    # The scenario's own key check: the key, and the keys that table takes.
    with pytest.raises(rmcast.TopologyError, match=r"topology\.stub_node.*known keys:.*stub_nodes"):
        topology.transit_stub(stub_node=4)
    with pytest.raises(rmcast.TopologyError, match=r"topology\.p_stub"):
        topology.waxman(10, p_stub=0.1)
    # The transit-stub keys do reach the generator.
    assert topology.transit_stub(transit_nodes=2, stubs_per_transit=1, stub_nodes=3).number_of_nodes() == 8


def test_defaults_are_the_scenarios():
    # The defaults the docstrings name, given explicitly, build the same graphs as leaving
    # them out: the package has no defaults of its own (they are the scenario code's).
    same = nx.utils.graphs_equal
    assert same(topology.bus(3), topology.bus(3, bandwidth_bps=10_000_000))
    assert same(topology.star(4), topology.star(4, class_="lan", bandwidth_bps=10_000_000))
    assert same(
        topology.local_exchanges(),
        topology.local_exchanges(
            [10, 25, 30, 40, 50, 60], destinations=25, bandwidth_bps=150_000_000, access_delay_ms=0
        ),
    )
    assert same(
        topology.binary_tree(3),
        topology.binary_tree(3, bandwidth_bps=1_500_000, delay_ms=10.0, source_link=False),
    )
    plane = dict(scale=100.0, delay_per_unit_ms=0.1, bandwidth_bps=1_500_000, attempts=1000)
    hosts = dict(placement="distinct", host_delay_ms=1.0, host_bandwidth_bps=10_000_000)
    assert same(
        topology.transit_stub(receivers=5),
        topology.transit_stub(
            receivers=5, host_seed=1, transit_domains=1, transit_nodes=4, stubs_per_transit=3,
            stub_nodes=8, p_transit=0.6, p_stub=0.4, **plane, **hosts
        ),
    )
    assert same(topology.waxman(20), topology.waxman(20, alpha=0.4, beta=0.2, **plane))
    assert same(topology.flat_random(20, 0.3), topology.flat_random(20, 0.3, **plane))
    text = "0 1\n1 2 5\n"
    assert same(
        topology.edge_list(text), topology.edge_list(text, delay_ms=1.0, bandwidth_bps=10_000_000)
    )

