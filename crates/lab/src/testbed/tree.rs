//! The links and routers a testbed run lays out: the source's tree (each node's parent toward
//! the source and the link to it), cut to the branches that lead to a receiver, as the
//! simulator's multicast delivery tree is (`rmcast_sim`'s `routing::Tree::multicast`). A
//! router with no receiver below it gets no relay and its link no emulator: the simulator
//! sends nothing there, and a relay would otherwise multicast the session down it (frames,
//! and loss-rule drops, that no simulated link carries).

use rmcast_proto::NodeId;
use rmcast_sim::Network;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Each node's parent toward the source and the link to it.
pub(super) type Parents = BTreeMap<NodeId, (NodeId, usize)>;

/// The tree below the source: each node's parent (toward the source) and the link to it.
pub(super) fn tree(net: &Network, source: NodeId) -> Parents {
    let mut parent = BTreeMap::new();
    let mut seen = BTreeSet::from([source]);
    let mut q = VecDeque::from([source]);
    let link_of = |a: NodeId, b: NodeId| {
        (0..net.link_count()).find(|&i| {
            net.link(i)
                .is_some_and(|(x, y, _)| (x, y) == (a, b) || (x, y) == (b, a))
        })
    };
    while let Some(n) = q.pop_front() {
        for (_, m) in net.neighbors(n) {
            if seen.insert(m) {
                if let Some(l) = link_of(n, m) {
                    parent.insert(m, (n, l));
                }
                q.push_back(m);
            }
        }
    }
    parent
}

/// `parent` cut to the receivers and the nodes on their paths to the source.
pub(super) fn to_receivers(parent: &Parents, receivers: &[NodeId]) -> Parents {
    let mut kept = Parents::new();
    for &r in receivers {
        let mut n = r;
        while let Some(&up) = parent.get(&n) {
            if kept.insert(n, up).is_some() {
                break;
            }
            n = up.0;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::time::Duration;
    use rmcast_sim::{LinkConfig, NodeKind};

    #[test]
    fn a_branch_without_receivers_is_cut_and_shared_paths_are_kept_once() {
        // s - a - b - r1, a - c - r2, a - d (no receiver), d - e (no receiver).
        let mut net = Network::new();
        let link = LinkConfig::new(1_000_000, Duration::from_millis(1));
        let s = net.add_node(NodeKind::Host);
        let [a, b, c, d, e] = [(); 5].map(|_| net.add_node(NodeKind::Router));
        let (r1, r2) = (net.add_node(NodeKind::Host), net.add_node(NodeKind::Host));
        for (x, y) in [(s, a), (a, b), (b, r1), (a, c), (c, r2), (a, d), (d, e)] {
            net.add_link(x, y, link.clone()).unwrap();
        }
        let all = tree(&net, s);
        assert_eq!(all.len(), 7, "every node but the source has a parent");
        let cut = to_receivers(&all, &[r1, r2]);
        let nodes: BTreeSet<NodeId> = cut.keys().copied().collect();
        assert_eq!(nodes, BTreeSet::from([a, b, c, r1, r2]));
        assert!(!cut.contains_key(&d) && !cut.contains_key(&e));
        assert_eq!(cut[&r1], all[&r1]);
        assert_eq!(cut[&a].0, s);
        assert!(to_receivers(&all, &[]).is_empty());
    }
}
