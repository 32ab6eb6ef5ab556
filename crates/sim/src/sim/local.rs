//! Between a router agent and the host agent on the same node (members on routers, as in an
//! imported graph where every node routes): the exchanges that cross no link, addressed
//! with [`IfaceId::LOCAL`]. The router sees whatever its node's agent sends before it leaves
//! the node (a PGM network element then holds repair state for a NAK of its own node's
//! receiver, an LMS router passes its own receiver's requests up), and what it sends via
//! `LOCAL` (an NCF, a DREQ for the receiver that is its replier) reaches that agent.

use super::{Copy, Sim};
use crate::network::NONE;
use rmcast_proto::{Dest, IfaceId, NodeId, RouteDecision, Transmit};
use rmcast_wire::{Header, PacketClass};

impl Sim {
    /// Record a datagram node `x` sends (it is in the trace like any packet, whether or not
    /// it crosses a link): its id and class.
    pub(super) fn record_origin(&mut self, x: u32, t: &Transmit) -> (u64, Option<PacketClass>) {
        let class = Header::parse(&t.payload).ok().map(|h| h.class());
        let id = self.pool.next_id();
        self.rec
            .originated(id, self.kernel.now(), x, t.dest, class, &t.payload);
        (id, class)
    }

    /// A datagram node `x`'s agent sent, where a router agent sits: the router sees it on
    /// [`IfaceId::LOCAL`] first, as a router sees what an attached host sends. Then it leaves
    /// as the router decides: routed from `x` (`Forward`), on the named interfaces only
    /// (`ForwardOn`; `LOCAL` among them is where it came from), or nowhere (`Consume`). A
    /// datagram to the node itself crosses no link whatever the router decides: it ends
    /// here, as one always did.
    pub(super) fn through_router(&mut self, x: u32, t: Transmit) {
        let (id, class) = self.record_origin(x, &t);
        let Some(mut r) = self.routers[x as usize].take() else {
            return;
        };
        let now = self.kernel.now();
        let decision = r.on_packet(now, IfaceId::LOCAL, NodeId(x), t.dest, &t.payload);
        self.routers[x as usize] = Some(r);
        self.drain_router(x);
        if t.dest == Dest::Node(NodeId(x)) {
            return;
        }
        match decision {
            RouteDecision::Forward => self.send_from(x, id, class, t, None),
            RouteDecision::Consume => self.rec.counters.router_consumed += 1,
            RouteDecision::ForwardOn(ifs) => {
                let (links, _) = split_local(&ifs);
                if !links.is_empty() {
                    self.send_from(x, id, class, t, Some(&links));
                }
            }
        }
    }

    /// A datagram node `x`'s router agent sent via [`IfaceId::LOCAL`]: to the node's own agent,
    /// through its receive queue and processing delay like any arrival, on no link.
    pub(super) fn hand_to_agent(&mut self, x: u32, t: &Transmit) {
        let (id, class) = self.record_origin(x, t);
        let p = self
            .pool
            .insert(id, t.payload.clone(), x, t.dest, NONE, class);
        let cp = Copy {
            pkt: p,
            local: NONE,
            node: x,
            iface: IfaceId::LOCAL.0,
        };
        self.admit(cp, class);
    }
}

/// Interfaces a router named: the links among them, and whether [`IfaceId::LOCAL`] (the
/// agent on its own node) is one.
pub(super) fn split_local(ifs: &[IfaceId]) -> (Vec<u32>, bool) {
    let links = ifs
        .iter()
        .filter(|&&i| i != IfaceId::LOCAL)
        .map(|i| i.0)
        .collect();
    (links, ifs.contains(&IfaceId::LOCAL))
}
