//! Distances between members on demand ([`DistanceOracle`]), from the simulator's topology.
//!
//! SRM needs each member's one-way distance to the source and to every requester it hears
//! (its request and repair timers scale with them). SRM learns them from session messages,
//! which — like [`crate::registry::member_distances`], one shortest-path tree per member —
//! cost O(G²) in a group of G members. [`TopologyOracle`] stands in for those estimates at
//! scale: it answers `distance(from, to)` with the shortest-path distance (the routing delay
//! the simulator's own shortest-path trees use), computed by one Dijkstra search rooted at
//! `to` the first time `to` is asked about and kept for the next questions. A group's
//! questions name few distinct `to` nodes (the source, the members that send requests), so
//! the cost grows with the number of requesters, not with the group squared.
//!
//! Routing delays are symmetric — a link has one for both directions and a bus none — so the
//! search rooted at `to` gives the distance *from* every node *to* it, and without
//! transmission times the answers equal [`crate::registry::member_distances`]'s (a test
//! compares them). With [`TopologyOracle::with_packet`] each hop also adds a packet's
//! transmission time, along the tree rooted at `to` (the path `to`'s packets take).

use crate::network::{Medium, Network, RoutingMetric};
use rmcast_proto::deploy::DistanceOracle;
use rmcast_proto::NodeId;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Distances from cached searches stop being kept past this many entries in all (8 bytes
/// each: 512 MiB); the oldest search goes first. Answers do not depend on it.
const CACHE_ENTRIES: usize = 64 << 20;

/// One edge of the snapshot: the node it leads to, its routing cost (ns; see
/// [`Network::link_cost`]), its bandwidth
/// (bits per second, 0: no transmission time).
#[derive(Debug, Clone, Copy)]
struct Edge {
    to: u32,
    route_ns: u64,
    bandwidth_bps: u64,
}

/// Shortest-path distances over a snapshot of a network's graph, per node asked about.
#[derive(Debug)]
pub struct TopologyOracle {
    /// Adjacency in compressed rows, in the order the simulator's routing visits them:
    /// node `u`'s edges are `edges[start[u]..start[u + 1]]`.
    start: Vec<u32>,
    edges: Vec<Edge>,
    /// Bytes of the packet whose transmission time each hop adds (0: none).
    packet_bytes: u64,
    /// The network's routing metric: edge costs are routing costs, distances their delays.
    routing: RoutingMetric,
    cache: Mutex<Cache>,
}

#[derive(Debug, Default)]
struct Cache {
    by_root: HashMap<u32, Arc<[u64]>>,
    order: VecDeque<u32>,
    entries: usize,
    searches: u64,
}

impl TopologyOracle {
    /// A snapshot of `net`'s graph: distances are routing delays (propagation plus mean
    /// jitter) along the simulator's shortest-path trees, as
    /// [`crate::registry::member_distances`] gives them.
    pub fn new(net: &Network) -> Self {
        Self::with_packet(net, 0)
    }

    /// As [`new`](Self::new), plus on each hop the time to transmit a packet of
    /// `packet_bytes` at the hop's bandwidth: the one-way delay such a packet meets on an idle
    /// path, which is what a member measures where links are slow enough for transmission to
    /// dominate propagation (the path is still the routing tree's).
    pub fn with_packet(net: &Network, packet_bytes: u64) -> Self {
        let mut start = Vec::with_capacity(net.nodes.len() + 1);
        let mut edges = Vec::new();
        start.push(0);
        for (u, ifaces) in net.ifaces.iter().enumerate() {
            for f in ifaces {
                match f.medium {
                    Medium::Link { link, .. } => {
                        let cfg = &net.links[link as usize].cfg;
                        edges.push(Edge {
                            to: f.peer,
                            route_ns: net.link_cost(cfg),
                            bandwidth_bps: cfg.bandwidth_bps,
                        });
                    }
                    Medium::Bus { bus, .. } => {
                        let b = &net.buses[bus as usize];
                        for &v in b.members.iter().filter(|&&v| v as usize != u) {
                            edges.push(Edge {
                                to: v,
                                route_ns: net.bus_cost(),
                                bandwidth_bps: b.cfg.bandwidth_bps,
                            });
                        }
                    }
                }
            }
            start.push(edges.len() as u32);
        }
        TopologyOracle {
            start,
            edges,
            packet_bytes,
            routing: net.routing(),
            cache: Mutex::new(Cache::default()),
        }
    }

    fn nodes(&self) -> usize {
        self.start.len() - 1
    }

    /// Searches run so far (one per distinct node asked about, plus re-runs after eviction).
    pub fn searches(&self) -> u64 {
        self.lock().searches
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The shortest-path tree from `root` with the simulator's routing order and tie-breaks
    /// (by routing cost, then hops, then parent), and every node's distance along it
    /// (`u64::MAX`: unreached): routing delays plus, per hop, the packet's transmission time.
    fn search(&self, root: u32) -> Arc<[u64]> {
        let n = self.nodes();
        let mut dist = vec![u64::MAX; n];
        let mut hops = vec![u32::MAX; n];
        let mut parent = vec![u32::MAX; n];
        let mut tx = vec![0u64; n];
        let mut done = vec![false; n];
        let mut heap = BinaryHeap::new();
        dist[root as usize] = 0;
        hops[root as usize] = 0;
        heap.push(Reverse((0u64, 0u32, root)));
        while let Some(Reverse((d, h, u))) = heap.pop() {
            if std::mem::replace(&mut done[u as usize], true) {
                continue;
            }
            let (a, b) = (self.start[u as usize], self.start[u as usize + 1]);
            for e in &self.edges[a as usize..b as usize] {
                let v = e.to as usize;
                if done[v] {
                    continue;
                }
                let (nd, nh) = (d.saturating_add(e.route_ns), h + 1);
                if (nd, nh, u) < (dist[v], hops[v], parent[v]) {
                    dist[v] = nd;
                    hops[v] = nh;
                    parent[v] = u;
                    tx[v] = tx[u as usize].saturating_add(if e.bandwidth_bps == 0 {
                        0
                    } else {
                        (self.packet_bytes * 8 * 1_000_000_000).div_ceil(e.bandwidth_bps)
                    });
                    heap.push(Reverse((nd, nh, e.to)));
                }
            }
        }
        dist.iter()
            .zip(&tx)
            .map(|(&d, &t)| {
                if d == u64::MAX {
                    d
                } else {
                    self.routing.delay_of(d).saturating_add(t)
                }
            })
            .collect()
    }

    /// Every node's distance to `root`, searched once and cached.
    fn to(&self, root: u32) -> Arc<[u64]> {
        if let Some(d) = self.lock().by_root.get(&root) {
            return d.clone();
        }
        let d = self.search(root);
        let mut c = self.lock();
        c.searches += 1;
        c.entries += d.len();
        c.by_root.insert(root, d.clone());
        c.order.push_back(root);
        while c.entries > CACHE_ENTRIES && c.order.len() > 1 {
            if let Some(old) = c.order.pop_front() {
                if let Some(x) = c.by_root.remove(&old) {
                    c.entries -= x.len();
                }
            }
        }
        d
    }
}

impl DistanceOracle for TopologyOracle {
    fn distance(&self, from: NodeId, to: NodeId) -> Option<Duration> {
        if to.0 as usize >= self.nodes() || from.0 as usize >= self.nodes() {
            return None;
        }
        let d = *self.to(to.0).get(from.0 as usize)?;
        (d != u64::MAX).then(|| Duration::from_nanos(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::member_distances;
    use crate::topo::{self, PlaneParams, TransitStub};
    use crate::{BusConfig, LinkConfig, NodeKind};

    /// The oracle's answers are the per-member shortest-path trees' distances, both ways.
    #[test]
    fn answers_equal_member_distances_on_transit_stub_graphs() {
        for seed in 1..4 {
            let ts = TransitStub {
                transit_domains: 2,
                transit_nodes: 3,
                stubs_per_transit: 2,
                stub_nodes: 3,
                ..TransitStub::default()
            };
            let mut t = topo::transit_stub(&ts, &PlaneParams::default(), seed).unwrap();
            topo::attach_hosts(
                &mut t,
                30,
                &LinkConfig::new(1_500_000, Duration::from_millis(1)),
                seed,
            )
            .unwrap();
            let mut members = vec![t.source];
            members.extend_from_slice(&t.receivers);
            let all = member_distances(&t.net, &members);
            let o = TopologyOracle::new(&t.net);
            for (i, &m) in members.iter().enumerate() {
                for &x in &members {
                    assert_eq!(o.distance(m, x), all[i].get(&x).copied(), "{m:?}→{x:?}");
                }
            }
            // One search per node asked about.
            assert_eq!(o.searches(), members.len() as u64);
        }
    }

    #[test]
    fn a_bus_joins_its_members_and_unreached_nodes_have_no_distance() {
        let mut net = Network::new();
        let a = net.add_node(NodeKind::Host);
        let b = net.add_node(NodeKind::Host);
        let c = net.add_node(NodeKind::Host);
        let r = net.add_node(NodeKind::Router);
        let alone = net.add_node(NodeKind::Host);
        net.add_bus(&[a, b, r], BusConfig::default()).unwrap();
        let l = LinkConfig::new(1_000_000, Duration::from_millis(3));
        net.add_link(r, c, l.clone()).unwrap();
        let o = TopologyOracle::new(&net);
        let hop = Duration::from_nanos(l.routing_delay_ns());
        assert_eq!(o.distance(a, b), Some(Duration::ZERO));
        assert_eq!(o.distance(a, c), Some(hop));
        assert_eq!(o.distance(c, a), Some(hop));
        assert_eq!(o.distance(a, alone), None);
        assert_eq!(o.distance(NodeId(99), a), None);
        // 1,000 bytes take 8 ms at 1 Mb/s and 0.8 ms on the 10 Mb/s bus.
        let o = TopologyOracle::with_packet(&net, 1000);
        assert_eq!(o.distance(a, b), Some(Duration::from_micros(800)));
        assert_eq!(
            o.distance(c, a),
            Some(hop + Duration::from_millis(8) + Duration::from_micros(800))
        );
    }
}
