//! `saw` (seed 000 §2.5) on sockets: a fixed receiver set, nothing announced but the random
//! ACK delay bound.

use super::QUEUE_LIMIT;
use super::{nodes, Announced, Me, NetProtocol, Received, SenderSettings, Start, Started};
use crate::NetError;
use rmcast_proto::{saw, GroupId, NodeId};
use std::time::Duration;

pub struct Saw;

impl NetProtocol for Saw {
    fn start(&self, s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError> {
        let mut c = saw::SenderConfig::new(NodeId(s.node), GroupId(0), nodes(&start.ids()), s.rto);
        c.session = s.session;
        c.queue_limit = QUEUE_LIMIT;
        Started::plain(saw::Sender::new(c))
    }

    fn receiver(&self, a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        let mut c = saw::ReceiverConfig::new(NodeId(me.node));
        c.session = me.session;
        c.ack_delay_max = Duration::from_micros(u64::from(a.ack_delay_us));
        Received::plain(saw::Receiver::new(c, me.rng()))
    }
}
