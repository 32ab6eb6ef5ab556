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
    with pytest.raises(rmcast.TopologyError, match="p must be a probability"):
        topology.flat_random(10, 2.0)
    with pytest.raises(rmcast.TopologyError, match="height"):
        topology.binary_tree(0)
    with pytest.raises(rmcast.TopologyError, match="placement"):
        topology.waxman(10, receivers=3, placement="nowhere")
    with pytest.raises(rmcast.TopologyError, match="edge list line 1"):
        topology.edge_list("0 0\n")


def test_unknown_keywords_are_refused():
    with pytest.raises(TypeError, match="unexpected keyword argument `stub_node`"):
        topology.transit_stub(stub_node=4)
    with pytest.raises(TypeError, match="unexpected keyword argument `p_stub`"):
        topology.waxman(10, p_stub=0.1)
    # The transit-stub keys do reach the generator.
    assert topology.transit_stub(transit_nodes=2, stubs_per_transit=1, stub_nodes=3).number_of_nodes() == 8
