//! Shortest-path routing by delay. A source-rooted shortest-path tree ([`Spt`]) is computed
//! once per root with Dijkstra (ties broken by hop count, then node id, so the result never
//! depends on hash order); a delivery [`Tree`] is cut from it once per (source, destination)
//! and cached. Multicast uses the tree rooted at the source; unicast uses the tree rooted at
//! the destination (links are symmetric, so that is a shortest path too) and reuses one
//! Dijkstra for every node that sends to the same destination.
//!
//! A bus is a hyper-edge of zero routing delay: every member is a neighbour of every other,
//! and all children a node reaches over the same bus are served by one frame.

use crate::network::{Medium, Network, NONE};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

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

impl Spt {
    pub fn compute(net: &Network, root: u32) -> Spt {
        let n = net.nodes.len();
        let mut dist = vec![u64::MAX; n];
        let mut hops = vec![u32::MAX; n];
        let mut parent = vec![NONE; n];
        let mut up_iface = vec![NONE; n];
        let mut down_iface = vec![NONE; n];
        let mut done = vec![false; n];
        let mut heap = BinaryHeap::new();
        if (root as usize) < n {
            dist[root as usize] = 0;
            hops[root as usize] = 0;
            heap.push(Reverse((0u64, 0u32, root)));
        }
        while let Some(Reverse((d, h, u))) = heap.pop() {
            if done[u as usize] {
                continue;
            }
            done[u as usize] = true;
            for (i, f) in net.ifaces[u as usize].iter().enumerate() {
                let mut relax = |v: u32, w: u64, v_iface: u32| {
                    let (nd, nh) = (d.saturating_add(w), h + 1);
                    let vi = v as usize;
                    if done[vi] {
                        return;
                    }
                    let better = (nd, nh, u) < (dist[vi], hops[vi], parent[vi]);
                    if better {
                        dist[vi] = nd;
                        hops[vi] = nh;
                        parent[vi] = u;
                        down_iface[vi] = i as u32;
                        up_iface[vi] = v_iface;
                        heap.push(Reverse((nd, nh, v)));
                    }
                };
                match f.medium {
                    Medium::Link { link, dir } => {
                        let l = &net.links[link as usize];
                        let v = f.peer;
                        // The peer's interface on the same link.
                        let v_iface = net.ifaces[v as usize]
                            .iter()
                            .position(|g| {
                                matches!(g.medium, Medium::Link { link: k, dir: e } if k == link && e != dir)
                            })
                            .map_or(NONE, |x| x as u32);
                        relax(v, l.cfg.routing_delay_ns(), v_iface);
                    }
                    Medium::Bus { bus, .. } => {
                        for &v in &net.buses[bus as usize].members {
                            if v != u {
                                let vi = bus_iface(net, v, bus);
                                relax(v, 0, vi);
                            }
                        }
                    }
                }
            }
        }
        Spt {
            parent,
            up_iface,
            down_iface,
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

/// A delivery tree: nodes in breadth-first order (local id 0 is the source).
#[derive(Debug, Clone, Default)]
pub(crate) struct Tree {
    pub node: Vec<u32>,
    pub deliver: Vec<bool>,
    pub in_iface: Vec<u32>,
    pub hop_start: Vec<u32>,
    pub hops: Vec<Hop>,
    pub targets: Vec<u32>,
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
        let mut children: BTreeMap<u32, Vec<(u32, u32, u32)>> = BTreeMap::new();
        for (p, pi, c, ci) in edges {
            children.entry(p).or_default().push((pi, c, ci));
        }
        let mut t = Tree::default();
        t.node.push(root);
        t.deliver.push(false);
        t.in_iface.push(NONE);
        let mut i = 0;
        while i < t.node.len() {
            let u = t.node[i];
            t.hop_start.push(t.hops.len() as u32);
            if let Some(ch) = children.get(&u) {
                let mut k = 0;
                while k < ch.len() {
                    let iface = ch[k].0;
                    let t0 = t.targets.len() as u32;
                    while k < ch.len() && ch[k].0 == iface {
                        let (_, c, ci) = ch[k];
                        let local = t.node.len() as u32;
                        t.node.push(c);
                        t.deliver.push(is_dest(c));
                        t.in_iface.push(ci);
                        t.targets.push(local);
                        k += 1;
                    }
                    t.hops.push(Hop {
                        iface,
                        t0,
                        t1: t.targets.len() as u32,
                    });
                }
            }
            i += 1;
        }
        t.hop_start.push(t.hops.len() as u32);
        t
    }

    /// The source-rooted multicast tree from `spt` (rooted at the source) to `members`.
    pub fn multicast(spt: &Spt, members: &[u32]) -> Tree {
        let src = spt.root;
        let mut in_tree: HashMap<u32, ()> = HashMap::with_capacity(members.len() * 2);
        let mut edges = Vec::new();
        let mut unreachable = 0;
        let mut path = Vec::new();
        for &m in members {
            if m == src || in_tree.contains_key(&m) {
                continue;
            }
            path.clear();
            let mut cur = m;
            let ok = loop {
                if cur == src || in_tree.contains_key(&cur) {
                    break true;
                }
                let p = spt.parent.get(cur as usize).copied().unwrap_or(NONE);
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
                in_tree.insert(v, ());
                let vi = v as usize;
                edges.push((spt.parent[vi], spt.down_iface[vi], v, spt.up_iface[vi]));
            }
        }
        let dests: std::collections::HashSet<u32> =
            members.iter().copied().filter(|&m| m != src).collect();
        let mut t = Tree::build(src, edges, |c| dests.contains(&c));
        t.unreachable = unreachable;
        t
    }

    /// The unicast path from `src` to the root of `spt` (the destination).
    pub fn unicast(spt: &Spt, src: u32) -> Tree {
        let dst = spt.root;
        let mut edges = Vec::new();
        let mut cur = src;
        let mut ok = true;
        while cur != dst {
            let ci = cur as usize;
            let p = spt.parent.get(ci).copied().unwrap_or(NONE);
            if p == NONE {
                ok = false;
                break;
            }
            edges.push((cur, spt.up_iface[ci], p, spt.down_iface[ci]));
            cur = p;
        }
        if !ok {
            return Tree {
                node: vec![src],
                deliver: vec![false],
                in_iface: vec![NONE],
                hop_start: vec![0, 0],
                unreachable: 1,
                ..Tree::default()
            };
        }
        Tree::build(src, edges, |c| c == dst && c != src)
    }

    pub fn hops_of(&self, local: u32) -> &[Hop] {
        let l = local as usize;
        match (self.hop_start.get(l), self.hop_start.get(l + 1)) {
            (Some(&a), Some(&b)) => self.hops.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
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
        assert_eq!(t.node, vec![0, 2, 1]);
        assert_eq!(t.deliver, vec![false, true, true]);
        let u = Tree::unicast(&Spt::compute(&net, 0), 1);
        assert_eq!(u.node, vec![1, 2, 0]);
        assert_eq!(u.deliver, vec![false, false, true]);
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
        assert_eq!(t.node, vec![0, 1]);
        assert!(!net.is_connected());
    }
}
