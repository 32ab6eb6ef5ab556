//! `saw` (seed 000 §2.5) on sockets: a fixed receiver set, nothing announced but the random
//! ACK delay bound.

use super::QUEUE_LIMIT;
use super::{nodes, Announced, Me, NetProtocol, Plain, Received, SenderSettings, Start, Started};
use crate::NetError;
use rmcast_proto::rng::AgentRng;
use rmcast_proto::{saw, GroupId, NodeId};
use rmcast_wire::Family;
use std::time::Duration;

pub struct Saw;

impl NetProtocol for Saw {
    fn name(&self) -> &'static str {
        "saw"
    }

    fn family(&self) -> Family {
        Family::Saw
    }

    fn start(&self, s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError> {
        let mut c = saw::SenderConfig::new(NodeId(s.node), GroupId(0), nodes(&start.ids()), s.rto);
        c.session = s.session;
        c.queue_limit = QUEUE_LIMIT;
        Ok(Started {
            agent: Box::new(saw::Sender::new(c)),
            side: Box::new(Plain),
        })
    }

    fn receiver(&self, a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        let node = NodeId(me.node);
        let mut c = saw::ReceiverConfig::new(node);
        c.session = me.session;
        c.ack_delay_max = Duration::from_micros(u64::from(a.ack_delay_us));
        let rng = AgentRng::derive(u64::from(me.session), node, 1);
        Ok(Some(Received::plain(Box::new(saw::Receiver::new(c, rng)))))
    }
}
