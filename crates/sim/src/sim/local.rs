//! Between a router agent and the host agent on the same node (members on routers, as in an
//! imported graph where every node routes): the exchanges that cross no link, addressed
//! with [`IfaceId::LOCAL`]. An LMS router whose replier is its own node's receiver sends it
//! DREQs this way, and that receiver's repair to its own node (the turning point) reaches
//! the router this way.

use super::{Copy, Sim};
use crate::network::NONE;
use rmcast_proto::{IfaceId, NodeId, Transmit};
use rmcast_wire::Header;

impl Sim {
    /// A datagram node `x`'s agent addressed to its own node, where a router agent sits: the
    /// router sees it on [`IfaceId::LOCAL`]. It is recorded as originated (it is in the trace
    /// like any packet) but crosses no link; whatever the router does not consume ends here,
    /// as a datagram to its own node always did.
    pub(super) fn hand_to_router(&mut self, x: u32, t: Transmit) {
        let class = Header::parse(&t.payload).ok().map(|h| h.class());
        let id = self.pool.next_id();
        let now = self.kernel.now();
        self.rec.originated(id, now, x, t.dest, class, &t.payload);
        let Some(mut r) = self.routers[x as usize].take() else {
            return;
        };
        r.on_packet(now, IfaceId::LOCAL, NodeId(x), t.dest, &t.payload);
        self.routers[x as usize] = Some(r);
        self.drain_router(x);
    }

    /// A datagram node `x`'s router agent sent via [`IfaceId::LOCAL`]: to the node's own agent,
    /// through its receive queue and processing delay like any arrival, on no link.
    pub(super) fn hand_to_agent(&mut self, x: u32, t: &Transmit) {
        let class = Header::parse(&t.payload).ok().map(|h| h.class());
        let id = self.pool.next_id();
        self.rec
            .originated(id, self.kernel.now(), x, t.dest, class, &t.payload);
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
