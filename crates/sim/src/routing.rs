//! Shortest-path routing by delay (or, with
//! [`RoutingMetric::Hops`](crate::RoutingMetric::Hops), by hop count, then delay). A
//! source-rooted shortest-path tree ([`Spt`]) is computed once per root with Dijkstra (ties
//! broken by hop count, then node id, so the result never depends on hash order). Multicast
//! cuts a delivery [`Tree`] from the source's tree once per (source, group) and caches it. Unicast
//! uses the tree rooted at the destination (links are symmetric, so that is a shortest path too): a
//! destination few nodes send to gets a small tree per sender from a search that stops at the
//! sender; a popular one keeps its shortest-path tree, and every sender follows it up
//! ([`Route::Toward`]) with no state of its own — a million receivers NAKing one source cost one
//! tree, not a million.
//!
//! A bus is a hyper-edge of zero routing delay: every member is a neighbour of every other,
//! and all children a node reaches over the same bus are served by one frame.

use crate::network::{Medium, Network, NONE};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// A shortest-path tree over the whole network.
#[derive(Debug, Clone)]
pub(crate) struct Spt {
    pub parent: Vec<u32>,
    /// Interface at the node leading to its parent.
    pub up_iface: Vec<u32>,
    /// Interface at the parent leading to the node.
    pub down_iface: Vec<u32>,
    pub root: u32,
}

fn bus_iface(net: &Network, node: u32, bus: u32) -> u32 {
    net.ifaces[node as usize]
        .iter()
        .position(|f| matches!(f.medium, Medium::Bus { bus: b, .. } if b == bus))
        .map_or(NONE, |i| i as u32)
}

/// Dijkstra labels over the whole network, reusable: `touched` lists the nodes whose labels
/// differ from the initial ones, so a bounded search can be undone in O(nodes it visited).
#[derive(Debug, Clone, Default)]
pub(crate) struct Labels {
    dist: Vec<u64>,
    hops: Vec<u32>,
    parent: Vec<u32>,
    up_iface: Vec<u32>,
    down_iface: Vec<u32>,
    done: Vec<bool>,
    touched: Vec<u32>,
    heap: BinaryHeap<Reverse<(u64, u32, u32)>>,
}

impl Labels {
    fn new(n: usize) -> Labels {
        Labels {
            dist: vec![u64::MAX; n],
            hops: vec![u32::MAX; n],
            parent: vec![NONE; n],
            up_iface: vec![NONE; n],
            down_iface: vec![NONE; n],
            done: vec![false; n],
            touched: Vec::new(),
            heap: BinaryHeap::new(),
        }
    }

    /// Back to the initial labels (only the nodes the last search touched).
    fn reset(&mut self) {
        for &v in &self.touched {
            let v = v as usize;
            self.dist[v] = u64::MAX;
            self.hops[v] = u32::MAX;
            self.parent[v] = NONE;
            self.up_iface[v] = NONE;
            self.down_iface[v] = NONE;
            self.done[v] = false;
        }
        self.touched.clear();
        self.heap.clear();
    }

    /// Dijkstra from `root` (ties broken by hop count, then parent id), stopping once `stop`
    /// is settled (`NONE`: run to the end). A settled node's label is final, so every node
    /// settled before stopping has the label a full run would give it.
    fn search(&mut self, net: &Network, root: u32, stop: u32) {
        let n = net.nodes.len();
        if (root as usize) >= n {
            return;
        }
        self.dist[root as usize] = 0;
        self.hops[root as usize] = 0;
        self.touched.push(root);
        self.heap.push(Reverse((0u64, 0u32, root)));
        while let Some(Reverse((d, h, u))) = self.heap.pop() {
            if self.done[u as usize] {
                continue;
            }
            self.done[u as usize] = true;
            if u == stop {
                break;
            }
            for (i, f) in net.ifaces[u as usize].iter().enumerate() {
                let mut relax = |v: u32, w: u64, v_iface: u32| {
                    let (nd, nh) = (d.saturating_add(w), h + 1);
                    let vi = v as usize;
                    if self.done[vi] {
                        return;
                    }
                    let better = (nd, nh, u) < (self.dist[vi], self.hops[vi], self.parent[vi]);
                    if better {
                        if self.dist[vi] == u64::MAX {
                            self.touched.push(v);
                        }
                        self.dist[vi] = nd;
                        self.hops[vi] = nh;
                        self.parent[vi] = u;
                        self.down_iface[vi] = i as u32;
                        self.up_iface[vi] = v_iface;
                        self.heap.push(Reverse((nd, nh, v)));
                    }
                };
                match f.medium {
                    Medium::Link { link, .. } => {
                        let l = &net.links[link as usize];
                        relax(f.peer, net.link_cost(&l.cfg), f.peer_iface);
                    }
                    Medium::Bus { bus, .. } => {
                        for &v in &net.buses[bus as usize].members {
                            if v != u {
                                let vi = bus_iface(net, v, bus);
                                relax(v, net.bus_cost(), vi);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Reusable scratch space for bounded unicast route searches (see [`Tree::unicast_bounded`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct UnicastScratch {
    labels: Option<Labels>,
}

impl Network {
    /// Whether every node can reach every other (routing's view of the graph; kept here so
    /// that `network` does not depend on `routing`).
    pub fn is_connected(&self) -> bool {
        let n = self.nodes.len();
        if n == 0 {
            return true;
        }
        let spt = Spt::compute(self, 0);
        (0..n).all(|i| spt.reachable(i as u32))
    }

    /// The first of `nodes` without a path from `from` (over links and buses, through any
    /// node), if any.
    pub fn first_unreachable(
        &self,
        from: rmcast_proto::NodeId,
        nodes: &[rmcast_proto::NodeId],
    ) -> Option<rmcast_proto::NodeId> {
        let spt = Spt::compute(self, from.0);
        nodes.iter().copied().find(|n| !spt.reachable(n.0))
    }
}

impl Spt {
    pub fn compute(net: &Network, root: u32) -> Spt {
        let mut l = Labels::new(net.nodes.len());
        l.search(net, root, NONE);
        Spt {
            parent: l.parent,
            up_iface: l.up_iface,
            down_iface: l.down_iface,
            root,
        }
    }

    pub fn reachable(&self, v: u32) -> bool {
        v == self.root || self.parent.get(v as usize).is_some_and(|&p| p != NONE)
    }
}

/// One interface a tree node sends on, and the tree nodes (local ids) it reaches.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hop {
    pub iface: u32,
    pub t0: u32,
    pub t1: u32,
}

/// A delivery tree: nodes in breadth-first order (local id 0 is the source). A hop's
/// targets `t0..t1` are the nodes of local ids `t0 + 1 .. t1 + 1` ([`Tree::target`]): each
/// node but the root is the target of exactly one hop, in that order. Stored as boxed
/// slices of exact length: a run keeps a tree per (source, group) and per (source,
/// destination) pair it sends unicast on before the destination's own tree is kept.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    pub node: Box<[u32]>,
    pub deliver: Box<[bool]>,
    pub in_iface: Box<[u32]>,
    pub hop_start: Box<[u32]>,
    pub hops: Box<[Hop]>,
    /// Destinations that could not be reached.
    pub unreachable: u32,
}

impl Tree {
    /// Build from the root and a list of edges (parent, iface at parent, child, iface at
    /// child); `deliver` marks destination nodes.
    fn build(
        root: u32,
        mut edges: Vec<(u32, u32, u32, u32)>,
        is_dest: impl Fn(u32) -> bool,
    ) -> Tree {
        edges.sort_unstable();
        let mut node = vec![root];
        let mut deliver = vec![false];
        let mut in_iface = vec![NONE];
        let mut hop_start = Vec::new();
        let mut hops = Vec::new();
        let mut i = 0;
        while i < node.len() {
            let u = node[i];
            hop_start.push(hops.len() as u32);
            // The children of u: a run of the sorted edges (no per-tree map).
            let a = edges.partition_point(|e| e.0 < u);
            let b = a + edges[a..].partition_point(|e| e.0 == u);
            let ch = &edges[a..b];
            let mut k = 0;
            while k < ch.len() {
                let iface = ch[k].1;
                // Targets are numbered as the nodes they add, less the root.
                let t0 = node.len() as u32 - 1;
                while k < ch.len() && ch[k].1 == iface {
                    let (_, _, c, ci) = ch[k];
                    node.push(c);
                    deliver.push(is_dest(c));
                    in_iface.push(ci);
                    k += 1;
                }
                hops.push(Hop {
                    iface,
                    t0,
                    t1: node.len() as u32 - 1,
                });
            }
            i += 1;
        }
        hop_start.push(hops.len() as u32);
        Tree {
            node: node.into_boxed_slice(),
            deliver: deliver.into_boxed_slice(),
            in_iface: in_iface.into_boxed_slice(),
            hop_start: hop_start.into_boxed_slice(),
            hops: hops.into_boxed_slice(),
            unreachable: 0,
        }
    }

    /// The local id of target `k` of a hop (`t0 <= k < t1`).
    #[inline]
    pub fn target(k: u32) -> u32 {
        k + 1
    }

    /// The source-rooted multicast tree from `spt` (rooted at the source) to `members`.
    pub fn multicast(spt: &Spt, members: &[u32]) -> Tree {
        let src = spt.root;
        let n = spt.parent.len();
        // Flat marks instead of hash sets: a multicast tree is O(nodes) anyway.
        let mut in_tree = vec![false; n];
        let mut is_dest = vec![false; n];
        let mut edges = Vec::new();
        let mut unreachable = 0;
        let mut path = Vec::new();
        for &m in members {
            if m == src || (m as usize) >= n {
                if (m as usize) >= n {
                    unreachable += 1;
                }
                continue;
            }
            is_dest[m as usize] = true;
            if in_tree[m as usize] {
                continue;
            }
            path.clear();
            let mut cur = m;
            let ok = loop {
                if cur == src || in_tree[cur as usize] {
                    break true;
                }
                let p = spt.parent[cur as usize];
                if p == NONE {
                    break false;
                }
                path.push(cur);
                cur = p;
            };
            if !ok {
                unreachable += 1;
                continue;
            }
            for &v in &path {
                in_tree[v as usize] = true;
                let vi = v as usize;
                edges.push((spt.parent[vi], spt.down_iface[vi], v, spt.up_iface[vi]));
            }
        }
        let mut t = Tree::build(src, edges, |c| is_dest[c as usize]);
        t.unreachable = unreachable;
        t
    }

    /// The part of `root`'s multicast tree to the members (`is_member`) that lies below the
    /// interfaces `via` of `root` — exactly the hops [`Tree::multicast`] on the full
    /// shortest-path tree would use for a packet sent only on `via`, found by a Dijkstra
    /// that stops once no node is still reached through `via` (same order, same ties), so
    /// its cost follows the size of that subtree, not of the network. For connected
    /// networks only (it cannot count unreachable members).
    pub fn multicast_via(net: &Network, root: u32, via: &[u32], is_member: &[bool]) -> Tree {
        // Fast path: one interface to a node with no other interface (a host). Every path
        // to that node ends on this link, so the direct one is the unique shortest: the
        // subtree is that node alone.
        if let [i] = via {
            if let Some(f) = net.ifaces[root as usize].get(*i as usize) {
                if matches!(f.medium, Medium::Link { .. })
                    && net
                        .ifaces
                        .get(f.peer as usize)
                        .is_some_and(|v| v.len() == 1)
                {
                    let member = is_member.get(f.peer as usize).copied().unwrap_or(false);
                    let edges = if member && f.peer != root {
                        vec![(root, *i, f.peer, f.peer_iface)]
                    } else {
                        Vec::new()
                    };
                    return Tree::build(root, edges, |c| c == f.peer && member);
                }
            }
        }
        #[derive(Clone, Copy)]
        struct L {
            dist: u64,
            hops: u32,
            parent: u32,
            down: u32,
            up: u32,
            /// The label's first hop is one of `via`.
            inset: bool,
            done: bool,
        }
        let mut lab: HashMap<u32, L> = HashMap::new();
        let mut heap = BinaryHeap::new();
        lab.insert(
            root,
            L {
                dist: 0,
                hops: 0,
                parent: NONE,
                down: NONE,
                up: NONE,
                inset: false,
                done: false,
            },
        );
        heap.push(Reverse((0u64, 0u32, root)));
        // Nodes not yet done whose current label goes through `via`.
        let mut pending_inset = 0usize;
        let mut started = false;
        let mut order = Vec::new();
        while let Some(Reverse((d, h, u))) = heap.pop() {
            if started && pending_inset == 0 {
                break;
            }
            let Some(lu) = lab.get_mut(&u) else { continue };
            if lu.done {
                continue;
            }
            lu.done = true;
            let lu = *lu;
            if lu.inset {
                pending_inset -= 1;
                order.push(u);
            }
            // Only the root and nodes reached through `via` extend the search's interest;
            // other nodes are still expanded (they may shorten paths), as in the full run.
            for (i, f) in net.ifaces[u as usize].iter().enumerate() {
                let mut relax = |v: u32, w: u64, v_iface: u32| {
                    let (nd, nh) = (d.saturating_add(w), h + 1);
                    let inset = if u == root {
                        via.contains(&(i as u32))
                    } else {
                        lu.inset
                    };
                    let e = lab.entry(v).or_insert(L {
                        dist: u64::MAX,
                        hops: u32::MAX,
                        parent: NONE,
                        down: NONE,
                        up: NONE,
                        inset: false,
                        done: false,
                    });
                    if e.done {
                        return;
                    }
                    if (nd, nh, u) < (e.dist, e.hops, e.parent) {
                        if e.inset && e.dist != u64::MAX {
                            pending_inset -= 1;
                        }
                        if inset {
                            pending_inset += 1;
                        }
                        *e = L {
                            dist: nd,
                            hops: nh,
                            parent: u,
                            down: i as u32,
                            up: v_iface,
                            inset,
                            done: false,
                        };
                        heap.push(Reverse((nd, nh, v)));
                    }
                };
                match f.medium {
                    Medium::Link { link, .. } => {
                        relax(
                            f.peer,
                            net.link_cost(&net.links[link as usize].cfg),
                            f.peer_iface,
                        );
                    }
                    Medium::Bus { bus, .. } => {
                        for &v in &net.buses[bus as usize].members {
                            if v != u {
                                let vi = bus_iface(net, v, bus);
                                relax(v, net.bus_cost(), vi);
                            }
                        }
                    }
                }
            }
            started = true;
        }
        // Keep the subtree nodes that are members or lead to one.
        let mut keep: HashMap<u32, ()> = HashMap::new();
        let mut edges = Vec::new();
        for &m in &order {
            if !is_member.get(m as usize).copied().unwrap_or(false) {
                continue;
            }
            let mut cur = m;
            while cur != root && !keep.contains_key(&cur) {
                keep.insert(cur, ());
                let Some(l) = lab.get(&cur) else { break };
                edges.push((l.parent, l.down, cur, l.up));
                cur = l.parent;
            }
        }
        Tree::build(root, edges, |c| {
            c != root && is_member.get(c as usize).copied().unwrap_or(false)
        })
    }

    /// The unicast path from `src` to the root of `spt` (the destination).
    pub fn unicast(spt: &Spt, src: u32) -> Tree {
        Tree::unicast_from(spt.root, src, |v| {
            let at = |x: &[u32]| x.get(v as usize).copied().unwrap_or(NONE);
            (at(&spt.parent), at(&spt.up_iface), at(&spt.down_iface))
        })
    }

    /// The same path as `Tree::unicast(&Spt::compute(net, dst), src)`, found by a Dijkstra
    /// from `dst` that stops once `src` is settled: its cost follows the ball around `dst`
    /// of radius `dist(dst, src)`, not the network (labels of settled nodes are final, so
    /// the path and its ties are those of the full computation).
    /// Also returns how many nodes the search labelled.
    pub fn unicast_bounded(
        net: &Network,
        dst: u32,
        src: u32,
        scratch: &mut UnicastScratch,
    ) -> (Tree, usize) {
        let n = net.nodes.len();
        let l = scratch.labels.get_or_insert_with(|| Labels::new(n));
        if l.dist.len() != n {
            *l = Labels::new(n);
        }
        l.search(net, dst, src);
        let t = Tree::unicast_from(dst, src, |v| {
            let vi = v as usize;
            if vi < n && l.done[vi] {
                (l.parent[vi], l.up_iface[vi], l.down_iface[vi])
            } else {
                (NONE, NONE, NONE)
            }
        });
        let visited = l.touched.len();
        l.reset();
        (t, visited)
    }

    /// The path from `src` up a parent relation (`label(v)` = (parent, iface at v toward
    /// the parent, iface at the parent toward v)) to `dst`.
    fn unicast_from(dst: u32, src: u32, label: impl Fn(u32) -> (u32, u32, u32)) -> Tree {
        let mut edges = Vec::new();
        let mut cur = src;
        let mut ok = true;
        while cur != dst {
            let (p, up, down) = label(cur);
            if p == NONE {
                ok = false;
                break;
            }
            edges.push((cur, up, p, down));
            cur = p;
        }
        if !ok {
            return Tree::unreachable(src);
        }
        Tree::build(src, edges, |c| c == dst && c != src)
    }

    /// The tree of a packet from `src` whose destination cannot be reached: `src` alone,
    /// one unreachable destination.
    pub fn unreachable(src: u32) -> Tree {
        Tree {
            node: Box::new([src]),
            deliver: Box::new([false]),
            in_iface: Box::new([NONE]),
            hop_start: Box::new([0, 0]),
            hops: Box::new([]),
            unreachable: 1,
        }
    }

    pub fn hops_of(&self, local: u32) -> &[Hop] {
        let l = local as usize;
        match (self.hop_start.get(l), self.hop_start.get(l + 1)) {
            (Some(&a), Some(&b)) => self.hops.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }
}

/// How the copies of a packet find their way: a [`Tree`] cut for the packet's source and
/// destination, or the way up a destination's kept shortest-path tree, shared by every node
/// that sends to it (no state per sender: the local id of a node on it is its node id).
#[derive(Debug, Clone)]
pub(crate) enum Route {
    Tree(Tree),
    Toward(Toward),
}

/// Unicast towards the root of a kept shortest-path tree from any node that reaches it: a
/// node's one hop goes to its parent, and the root is the destination.
#[derive(Debug, Clone)]
pub(crate) struct Toward {
    spt: Spt,
    /// Per node, its hop to its parent: `t0` is the node itself (see [`Route::target`]).
    up: Box<[Hop]>,
}

impl Toward {
    pub fn new(spt: Spt) -> Toward {
        let up = (0..spt.parent.len() as u32)
            .map(|v| Hop {
                iface: spt.up_iface[v as usize],
                t0: v,
                t1: v + 1,
            })
            .collect();
        Toward { spt, up }
    }

    pub fn spt(&self) -> &Spt {
        &self.spt
    }

    /// Whether a packet from `src` follows this route: `src` reaches the root and is not it
    /// (a packet to itself is not delivered, see [`Tree::unicast`]).
    pub fn serves(&self, src: u32) -> bool {
        src != self.spt.root && self.spt.reachable(src)
    }
}

impl Route {
    /// The hops of the node at `local`.
    #[inline]
    pub fn hops_of(&self, local: u32) -> &[Hop] {
        match self {
            Route::Tree(t) => t.hops_of(local),
            Route::Toward(w) => {
                let l = local as usize;
                if local == w.spt.root || w.spt.parent.get(l).is_none_or(|&p| p == NONE) {
                    &[]
                } else {
                    &w.up[l..l + 1]
                }
            }
        }
    }

    /// Target `k` of a hop (`t0 <= k < t1`): (its local id, its node, the interface it
    /// enters by).
    #[inline]
    pub fn target(&self, k: u32) -> (u32, u32, u32) {
        match self {
            Route::Tree(t) => {
                let l = Tree::target(k);
                (l, t.node[l as usize], t.in_iface[l as usize])
            }
            Route::Toward(w) => {
                let p = w.spt.parent[k as usize];
                (p, p, w.spt.down_iface[k as usize])
            }
        }
    }

    /// Whether the node at `local` is a destination.
    #[inline]
    pub fn deliver(&self, local: u32) -> bool {
        match self {
            Route::Tree(t) => t.deliver[local as usize],
            Route::Toward(w) => local == w.spt.root,
        }
    }

    /// Destinations that could not be reached.
    pub fn unreachable(&self) -> u32 {
        match self {
            Route::Tree(t) => t.unreachable,
            Route::Toward(_) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::{LinkConfig, NodeKind};
    use core::time::Duration;
    use rmcast_proto::NodeId;

    #[test]
    fn shortest_path_by_delay_not_hops() {
        // 0 -(10ms)- 1 directly, or 0 -(1ms)- 2 -(1ms)- 1.
        let mut net = Network::new();
        let n: Vec<NodeId> = (0..3).map(|_| net.add_node(NodeKind::Router)).collect();
        let ms = |x| LinkConfig::new(0, Duration::from_millis(x));
        net.add_link(n[0], n[1], ms(10)).unwrap();
        net.add_link(n[0], n[2], ms(1)).unwrap();
        net.add_link(n[2], n[1], ms(1)).unwrap();
        let spt = Spt::compute(&net, 0);
        assert_eq!(spt.parent[1], 2);
        assert_eq!(spt.parent[2], 0);
        let t = Tree::multicast(&spt, &[1, 2]);
        assert_eq!(&*t.node, &[0, 2, 1]);
        assert_eq!(&*t.deliver, &[false, true, true]);
        let u = Tree::unicast(&Spt::compute(&net, 0), 1);
        assert_eq!(&*u.node, &[1, 2, 0]);
        assert_eq!(&*u.deliver, &[false, false, true]);
    }

    #[test]
    fn hop_metric_takes_fewest_hops_then_least_delay() {
        use crate::network::RoutingMetric;
        use crate::oracle::TopologyOracle;
        use rmcast_proto::deploy::DistanceOracle;
        // 0 -(10ms)- 1 directly, or 0 -(1ms)- 2 -(1ms)- 1; 1 -(5ms)- 3 and 1 -(3ms)- 4, both
        // -(1ms)- 5: two 3-hop paths 0 → 5, the one through 4 shorter.
        let mut net = Network::new();
        let n: Vec<NodeId> = (0..6).map(|_| net.add_node(NodeKind::Router)).collect();
        let ms = |x| LinkConfig::new(0, Duration::from_millis(x));
        for (a, b, d) in [
            (0, 1, 10),
            (0, 2, 1),
            (2, 1, 1),
            (1, 3, 5),
            (1, 4, 3),
            (3, 5, 1),
            (4, 5, 1),
        ] {
            net.add_link(n[a], n[b], ms(d)).unwrap();
        }
        let by_delay = Spt::compute(&net, 0);
        assert_eq!(by_delay.parent[1], 2);
        let oracle = TopologyOracle::new(&net);
        assert_eq!(oracle.distance(n[0], n[5]), Some(Duration::from_millis(6)));
        net.set_routing(RoutingMetric::Hops);
        let spt = Spt::compute(&net, 0);
        assert_eq!(spt.parent[1], 0, "one hop of 10 ms beats two of 1 ms");
        assert_eq!(spt.parent[5], 4, "of two 3-hop paths the one of less delay");
        let t = Tree::multicast(&spt, &[5]);
        assert_eq!(&*t.node, &[0, 1, 4, 5]);
        // Distances follow the route and are its delay, not its cost.
        let oracle = TopologyOracle::new(&net);
        assert_eq!(oracle.distance(n[0], n[5]), Some(Duration::from_millis(14)));
        assert_eq!(oracle.distance(n[5], n[2]), Some(Duration::from_millis(5)));
    }

    /// The nodes (with arrival interface and delivery flag) a full tree reaches below
    /// `via` at its root, in tree order.
    fn below(t: &Tree, via: &[u32]) -> Vec<(u32, u32, bool)> {
        let mut out = Vec::new();
        let mut stack: Vec<u32> = t
            .hops_of(0)
            .iter()
            .filter(|h| via.contains(&h.iface))
            .flat_map(|h| (h.t0..h.t1).map(Tree::target))
            .collect();
        stack.sort_unstable();
        let mut i = 0;
        while i < stack.len() {
            let l = stack[i];
            out.push((
                t.node[l as usize],
                t.in_iface[l as usize],
                t.deliver[l as usize],
            ));
            for h in t.hops_of(l) {
                stack.extend((h.t0..h.t1).map(Tree::target));
            }
            i += 1;
        }
        out
    }

    /// The default transit–stub graph of `seed` with `hosts` hosts attached on 1.5 Mb/s, 1 ms
    /// links.
    fn transit_stub_with_hosts(hosts: usize, seed: u64) -> crate::topo::Topology {
        use crate::topo::{self, PlaneParams, TransitStub};
        let mut t =
            topo::transit_stub(&TransitStub::default(), &PlaneParams::default(), seed).unwrap();
        let link = LinkConfig::new(1_500_000, Duration::from_millis(1));
        topo::attach_hosts(&mut t, hosts, &link, seed).unwrap();
        t
    }

    /// Each node but the root is the target of exactly one hop, numbered in node order:
    /// what lets [`Tree::target`] stand for a stored list of targets.
    #[test]
    fn hop_targets_are_the_nodes_after_the_root_in_order() {
        let t = transit_stub_with_hosts(40, 5);
        let members: Vec<u32> = t.receivers.iter().map(|r| r.0).collect();
        let tree = Tree::multicast(&Spt::compute(&t.net, t.source.0), &members);
        assert!(tree.node.len() > 40);
        let mut next = 0;
        for l in 0..tree.node.len() as u32 {
            for h in tree.hops_of(l) {
                assert_eq!(h.t0, next, "hops in node order, contiguous");
                assert!(h.t1 > h.t0);
                for k in h.t0..h.t1 {
                    // The target's parent in the tree is l.
                    let c = Tree::target(k) as usize;
                    assert!(tree.hops_of(l).iter().any(|g| (g.t0..g.t1).contains(&k)));
                    assert!(c > l as usize && c < tree.node.len());
                }
                next = h.t1;
            }
        }
        assert_eq!(
            next as usize,
            tree.node.len() - 1,
            "every node but the root"
        );
    }

    /// The way up a kept tree ([`Route::Toward`]) takes every sender along the path its own
    /// tree ([`Tree::unicast`]) would: the same nodes, interfaces out and in, and delivery.
    #[test]
    fn the_way_up_a_kept_tree_is_each_senders_own_path() {
        /// (node, interface out, interface in at the next node, delivered) along a route.
        fn walk(r: &Route, start: u32, src: u32) -> Vec<(u32, u32, u32, bool)> {
            let (mut local, mut here) = (start, src);
            let mut out = Vec::new();
            loop {
                let hops = r.hops_of(local);
                assert!(hops.len() <= 1, "a unicast path has no branch");
                let Some(h) = hops.first() else {
                    out.push((here, NONE, NONE, r.deliver(local)));
                    return out;
                };
                assert_eq!(h.t1, h.t0 + 1, "one target");
                let (l, n, in_iface) = r.target(h.t0);
                out.push((here, h.iface, in_iface, r.deliver(local)));
                (local, here) = (l, n);
            }
        }
        for seed in 1..3 {
            let t = transit_stub_with_hosts(40, seed);
            let n = t.net.nodes.len() as u32;
            for dst in (0..n).step_by(5) {
                let spt = Spt::compute(&t.net, dst);
                let toward = Route::Toward(Toward::new(spt.clone()));
                for src in (0..n).filter(|&s| s != dst) {
                    let Route::Toward(w) = &toward else {
                        unreachable!()
                    };
                    assert!(w.serves(src), "connected: every node reaches {dst}");
                    let own = Route::Tree(Tree::unicast(&spt, src));
                    assert_eq!(
                        walk(&toward, src, src),
                        walk(&own, 0, src),
                        "{src} -> {dst}"
                    );
                    assert_eq!(toward.unreachable(), 0);
                }
            }
        }
    }

    #[test]
    fn bounded_unicast_is_the_full_computations_path() {
        let mut scratch = UnicastScratch::default();
        for seed in 1..3 {
            let t = transit_stub_with_hosts(40, seed);
            let net = &t.net;
            let n = net.nodes.len() as u32;
            for dst in (0..n).step_by(3) {
                let spt = Spt::compute(net, dst);
                for src in 0..n {
                    let full = Tree::unicast(&spt, src);
                    let (part, visited) = Tree::unicast_bounded(net, dst, src, &mut scratch);
                    assert!(visited <= n as usize);
                    assert_eq!(part.node, full.node, "seed {seed} {src} -> {dst}");
                    assert_eq!(part.in_iface, full.in_iface);
                    assert_eq!(part.deliver, full.deliver);
                    let hops = |t: &Tree| -> Vec<(u32, u32, u32)> {
                        t.hops.iter().map(|h| (h.iface, h.t0, h.t1)).collect()
                    };
                    assert_eq!(hops(&part), hops(&full));
                    assert_eq!(part.unreachable, full.unreachable);
                }
            }
        }
    }

    #[test]
    fn multicast_via_is_the_full_trees_subtree() {
        for seed in 1..4 {
            let t = transit_stub_with_hosts(150, seed);
            let net = &t.net;
            let members: Vec<u32> = t.receivers.iter().map(|r| r.0).collect();
            let mut flags = vec![false; net.nodes.len()];
            for &m in &members {
                flags[m as usize] = true;
            }
            for x in 0..net.nodes.len() as u32 {
                let full = Tree::multicast(&Spt::compute(net, x), &members);
                for i in 0..net.ifaces[x as usize].len() as u32 {
                    let part = Tree::multicast_via(net, x, &[i], &flags);
                    let mut got: Vec<(u32, u32, bool)> = part.node[1..]
                        .iter()
                        .zip(&part.in_iface[1..])
                        .zip(&part.deliver[1..])
                        .map(|((&n, &f), &d)| (n, f, d))
                        .collect();
                    let mut want = below(&full, &[i]);
                    got.sort_unstable();
                    want.sort_unstable();
                    assert_eq!(got, want, "seed {seed} node {x} iface {i}");
                    // The hop layout at the root matches too.
                    let hops: Vec<u32> = part.hops_of(0).iter().map(|h| h.iface).collect();
                    let full_hops: Vec<u32> = full
                        .hops_of(0)
                        .iter()
                        .map(|h| h.iface)
                        .filter(|f| *f == i)
                        .collect();
                    assert_eq!(hops, full_hops);
                }
            }
        }
    }

    #[test]
    fn bus_children_share_one_hop() {
        let mut net = Network::new();
        let n: Vec<NodeId> = (0..4).map(|_| net.add_node(NodeKind::Host)).collect();
        net.add_bus(&n, Default::default()).unwrap();
        let spt = Spt::compute(&net, 0);
        let t = Tree::multicast(&spt, &[1, 2, 3]);
        assert_eq!(t.hops_of(0).len(), 1);
        let h = t.hops_of(0)[0];
        assert_eq!(h.t1 - h.t0, 3);
    }

    #[test]
    fn unreachable_members_are_counted() {
        let mut net = Network::new();
        let a = net.add_node(NodeKind::Host);
        let b = net.add_node(NodeKind::Host);
        let _c = net.add_node(NodeKind::Host);
        net.add_link(a, b, LinkConfig::new(0, Duration::from_millis(1)))
            .unwrap();
        let t = Tree::multicast(&Spt::compute(&net, 0), &[1, 2]);
        assert_eq!(t.unreachable, 1);
        assert_eq!(&*t.node, &[0, 1]);
        assert!(!net.is_connected());
    }
}
