//! A DSP designated endpoint `E_i1` hosted where a router's helper would be (`rmcast relay
//! --region R` between the source and region R's members): the designated role on a separate
//! host, which seed 001 leaves open (its designated receiver is one of the region's
//! destinations). The hosted endpoint sees the source's packets on their way down (and lets
//! them pass: the members need the data too), takes its members' local statuses, and
//! originates its own status to the source and its local re-multicasts on the region's
//! local group. It delivers to no application.

use super::endpoint::{Endpoint, EndpointConfig, Role};
use crate::rng::AgentRng;
use crate::SenderAgent;
use crate::{
    Agent, Dest, IfaceId, NodeId, Outbox, RouteDecision, RouterAgent, RouterTransmit, Time,
};
use rmcast_wire::{Family, Header};

/// A designated endpoint as a router agent.
pub struct HostedDesignated {
    ep: Endpoint,
    node: NodeId,
    source: NodeId,
    members: Vec<NodeId>,
    out: Outbox<RouterTransmit>,
}

impl HostedDesignated {
    /// Host the endpoint `cfg` describes; `None` unless its role is [`Role::Designated`].
    pub fn new(cfg: EndpointConfig, rng: AgentRng) -> Option<Self> {
        let Role::Designated { members, .. } = &cfg.role else {
            return None;
        };
        let members = members.clone();
        let (node, source) = (cfg.node, cfg.source);
        Some(HostedDesignated {
            ep: Endpoint::new(cfg, rng),
            node,
            source,
            members,
            out: Outbox::new(),
        })
    }

    /// The endpoint it hosts (for inspection).
    pub fn endpoint(&self) -> &Endpoint {
        &self.ep
    }

    /// Give custody up ([`Endpoint::end_to_end`]: on sockets, where the relay may die and a
    /// standby take its place); `false` if it already had.
    pub fn end_to_end(&mut self, wait: core::time::Duration) -> bool {
        self.ep.end_to_end(wait)
    }

    /// Stop waiting for `member` (the source evicted it); `true` if it was one.
    pub fn remove_member(&mut self, now: Time, member: NodeId) -> bool {
        self.members.retain(|&m| m != member);
        let was = self.ep.remove_receiver(now, member);
        self.drain();
        was
    }

    fn drain(&mut self) {
        self.out.absorb(&mut self.ep);
    }
}

impl RouterAgent for HostedDesignated {
    fn on_packet(
        &mut self,
        now: Time,
        ingress: IfaceId,
        from: NodeId,
        dest: Dest,
        packet: &[u8],
    ) -> RouteDecision {
        // What the agent on this router's own node sends is not this helper's.
        if ingress == IfaceId::LOCAL
            || !Header::parse(packet).is_ok_and(|h| h.family == Family::Tree)
        {
            return RouteDecision::Forward;
        }
        let to_me = dest == Dest::Node(self.node);
        if from == self.source && (to_me || matches!(dest, Dest::Group(_))) {
            self.ep.handle_packet(now, from, packet);
            self.drain();
            // The source's data and re-multicasts go on to the members.
            return if to_me {
                RouteDecision::Consume
            } else {
                RouteDecision::Forward
            };
        }
        if to_me && self.members.contains(&from) {
            self.ep.handle_packet(now, from, packet);
            self.drain();
            return RouteDecision::Consume;
        }
        self.out.stats.ignored += 1;
        if to_me {
            // Addressed to this node but not a member's: for the agent there, if any.
            RouteDecision::ForwardOn(vec![IfaceId::LOCAL])
        } else {
            // Someone else's, passing through (another region's, where regions nest on an
            // imported graph): consuming it left that region's members on this router
            // without their designated's local re-multicasts.
            RouteDecision::Forward
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        if self.ep.poll_timeout().is_some_and(|t| t <= now) {
            self.ep.handle_timeout(now);
        }
        self.drain();
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.ep.poll_timeout()
    }

    /// Blocks it holds for its members (reassembly and retransmission buffers).
    fn state_entries(&self) -> usize {
        self.ep
            .gauge(crate::Gauge::Held)
            .map_or(0, |h| h.max(0.0) as usize)
    }

    /// The blocks it holds: the source released them when it reported them, and a member may
    /// still lack them.
    fn custody(&self) -> Option<usize> {
        Some(self.state_entries())
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn core::any::Any> {
        Some(self)
    }

    crate::outbox_field!(out: RouterTransmit);
}
