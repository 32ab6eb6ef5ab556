//! Routing state of a run: static group membership and the caches of routing trees built
//! from it (multicast trees per (source, group), unicast paths per (source, destination),
//! partial trees of router agents' pinned packets, and the (S,G) forwarding state routers
//! with an agent keep). Trees are computed on first use and kept for the run.

use crate::network::Network;
use crate::routing::{Route, Spt, Toward, Tree, UnicastScratch};
use rmcast_proto::Dest;
use std::collections::{BTreeMap, HashMap};

#[derive(Default)]
pub(crate) struct Routes {
    groups: BTreeMap<u32, Vec<u32>>,
    /// Destinations whose shortest-path tree is kept → their [`Route::Toward`] (in `trees`),
    /// which every node sending to them follows.
    toward: HashMap<u32, u32>,
    trees: Vec<Route>,
    tree_index: HashMap<(u32, bool, u32), u32>,
    /// Multicast trees of packets a router agent sends only on some interfaces:
    /// (source, group, interfaces) → tree (see `Tree::multicast_via`).
    via_index: HashMap<(u32, u32, Vec<u32>), u32>,
    /// Per group, a membership flag per node (for `Tree::multicast_via`).
    member_flags: HashMap<u32, Vec<bool>>,
    /// Multicast forwarding state at routers with an agent: (router, group) → (tree, local
    /// id of the router in it) of the last original data packet to the group that crossed
    /// the router. A router agent's packet to the group pinned to some interfaces follows
    /// this distribution tree below the router (as (S,G) forwarding state would carry it).
    data_trees: HashMap<(u32, u32), (u32, u32)>,
    /// Nodes labelled so far by bounded unicast searches, per destination without a kept
    /// shortest-path tree.
    unicast_work: HashMap<u32, usize>,
    unicast_scratch: UnicastScratch,
    /// Whether the network is connected (computed when first needed).
    connected: Option<bool>,
}

impl Routes {
    /// Set the members of `group` (sorted, deduplicated) and forget what was built for it.
    pub(crate) fn set_group(&mut self, group: u32, mut members: Vec<u32>) {
        members.sort_unstable();
        members.dedup();
        self.groups.insert(group, members);
        // Membership changed: forget the trees built for this group.
        self.tree_index
            .retain(|&(_, unicast, d), _| unicast || d != group);
        self.via_index.retain(|(_, g, _), _| *g != group);
        self.member_flags.remove(&group);
        self.data_trees.retain(|&(_, g), _| g != group);
    }

    pub(crate) fn tree(&self, t: u32) -> &Route {
        &self.trees[t as usize]
    }

    /// Whether `node` is a destination of `dest`.
    pub(crate) fn addressed(&self, node: u32, dest: Dest) -> bool {
        match dest {
            Dest::Node(n) => n.0 == node,
            Dest::Group(g) => self
                .groups
                .get(&g.0)
                .is_some_and(|m| m.binary_search(&node).is_ok()),
        }
    }

    /// An original data packet to `group` on `tree` crossed router `x` (at `local`).
    pub(crate) fn note_data_tree(&mut self, x: u32, group: u32, tree: u32, local: u32) {
        self.data_trees.insert((x, group), (tree, local));
    }

    /// The group's distribution tree through router `x`, if data has crossed it on one and
    /// every interface of `via` is a hop of it there: (tree, local id of `x`).
    pub(crate) fn pinned(&self, x: u32, group: u32, via: &[u32]) -> Option<(u32, u32)> {
        self.data_trees
            .get(&(x, group))
            .copied()
            .filter(|&(tr, l)| {
                let hops = self.trees[tr as usize].hops_of(l);
                via.iter().all(|i| hops.iter().any(|h| h.iface == *i))
            })
    }

    /// The route a packet from `src` to `dest` follows (sent only on interfaces `via`, if
    /// given), built if new, and the local id `src` starts at on it.
    pub(crate) fn tree_for(
        &mut self,
        net: &Network,
        src: u32,
        dest: Dest,
        via: Option<&[u32]>,
    ) -> (u32, u32) {
        if let (Dest::Group(g), Some(via)) = (dest, via) {
            // A router agent's packet down some interfaces only: build just that part of
            // its tree (the full one costs a Dijkstra over the whole network per router).
            let connected = *self.connected.get_or_insert_with(|| net.is_connected());
            if connected {
                let key = (src, g.0, via.to_vec());
                if let Some(&t) = self.via_index.get(&key) {
                    return (t, 0);
                }
                let n = net.nodes.len();
                let flags = self.member_flags.entry(g.0).or_insert_with(|| {
                    let mut f = vec![false; n];
                    for &m in self.groups.get(&g.0).map_or(&[][..], |v| v.as_slice()) {
                        if let Some(x) = f.get_mut(m as usize) {
                            *x = true;
                        }
                    }
                    f
                });
                let tree = Tree::multicast_via(net, src, via, flags);
                let id = self.push(Route::Tree(tree));
                self.via_index.insert(key, id);
                return (id, 0);
            }
        }
        let key = match dest {
            Dest::Group(g) => (src, false, g.0),
            Dest::Node(n) => (src, true, n.0),
        };
        if let Some(&t) = self.tree_index.get(&key) {
            return (t, 0);
        }
        let tree = match dest {
            Dest::Group(g) => {
                let empty = Vec::new();
                let members = self.groups.get(&g.0).unwrap_or(&empty);
                // A shortest-path tree computed only for a multicast tree is not kept (it
                // is O(nodes) and unicast routing is the only other user; recomputing it
                // gives the same tree).
                match self.kept_spt(src) {
                    Some(spt) => Tree::multicast(spt, members),
                    None => Tree::multicast(&Spt::compute(net, src), members),
                }
            }
            Dest::Node(n) => match self.unicast(net, src, n.0) {
                Ok(shared) => return (shared, src),
                Err(tree) => tree,
            },
        };
        let id = self.push(Route::Tree(tree));
        self.tree_index.insert(key, id);
        (id, 0)
    }

    fn push(&mut self, r: Route) -> u32 {
        self.trees.push(r);
        self.trees.len() as u32 - 1
    }

    /// The kept shortest-path tree rooted at `node`, if any.
    fn kept_spt(&self, node: u32) -> Option<&Spt> {
        match self.toward.get(&node).map(|&t| &self.trees[t as usize]) {
            Some(Route::Toward(w)) => Some(w.spt()),
            _ => None,
        }
    }

    /// The path from `src` to node `dst`: the destination's shared [`Route::Toward`] when
    /// its shortest-path tree is kept (`Ok`, no state for this pair), else a tree of its own.
    fn unicast(&mut self, net: &Network, src: u32, dst: u32) -> Result<u32, Tree> {
        if (dst as usize) >= net.nodes.len() {
            return Err(Tree::unreachable(src));
        }
        if !self.toward.contains_key(&dst) {
            // Few senders to a destination: a search from it that stops at the sender
            // (same path). Once such searches to one destination have labelled as many
            // nodes as the network has, its full shortest-path tree is computed and kept
            // (so a popular destination costs one).
            let n_nodes = net.nodes.len();
            let work = self.unicast_work.entry(dst).or_insert(0);
            if *work < n_nodes {
                let (t, visited) = Tree::unicast_bounded(net, dst, src, &mut self.unicast_scratch);
                *work += visited;
                return Err(t);
            }
            self.unicast_work.remove(&dst);
            let id = self.push(Route::Toward(Toward::new(Spt::compute(net, dst))));
            self.toward.insert(dst, id);
        }
        let id = self.toward[&dst];
        match &self.trees[id as usize] {
            Route::Toward(w) if w.serves(src) => Ok(id),
            Route::Toward(w) => Err(Tree::unicast(w.spt(), src)),
            Route::Tree(_) => unreachable!("`toward` holds Toward routes only"),
        }
    }
}
