//! `bap` (seed 000 §2.6) on sockets: the ANNOUNCE carries the window and the receivers'
//! ACK timer; a retransmission timeout must cover a window of datagrams leaving the pacer.

use super::QUEUE_LIMIT;
use super::{
    nodes, Announced, Me, NetProtocol, Received, SenderSettings, Start, Started, WindowUse,
};
use crate::NetError;
use rmcast_proto::{bap, GroupId, NodeId};
use std::time::Duration;

pub struct Bap;

impl NetProtocol for Bap {
    /// DATA: the header, a 2-byte sequence number and the 2-byte window start.
    fn data_fields(&self, _receivers: usize) -> usize {
        4
    }

    fn window_use(&self) -> WindowUse {
        WindowUse::InFlight
    }

    fn start(&self, s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError> {
        let ids = nodes(&start.ids());
        let mut c = bap::SenderConfig::new(NodeId(s.node), GroupId(0), ids, s.window, s.rto);
        c.session = s.session;
        c.queue_limit = QUEUE_LIMIT;
        Started::plain(bap::Sender::new(c))
    }

    fn receiver(&self, a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        let window = a.window()?;
        let ack_timeout = Duration::from_micros(u64::from(a.ack_timeout_us.max(1)));
        let mut c = bap::ReceiverConfig::new(NodeId(me.node), window, ack_timeout);
        c.session = me.session;
        c.ack_delay_max = Duration::from_micros(u64::from(a.ack_delay_us));
        Received::plain(bap::Receiver::new(c, me.rng()))
    }
}
