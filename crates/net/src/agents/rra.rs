//! `rra` (seed 000 Ch. 5, the round-robin acknowledgment the thesis proposes) on sockets:
//! each DATA names the one receiver that acknowledges it (round robin over the receivers),
//! whose ACK reports its whole state (cumulative point and a bitmap); the sender repairs by
//! multicast what a report shows missing and polls for the tail. The ANNOUNCE carries the
//! window (unfinished messages), the receivers' buffer.

use super::QUEUE_LIMIT;
use super::{
    nodes, Announced, Me, NetProtocol, Received, SenderSettings, Start, Started, WindowUse,
};
use crate::NetError;
use rmcast_proto::{rra, GroupId, NodeId};

pub struct Rra;

impl NetProtocol for Rra {
    /// DATA: the header, the 8-byte sequence number, the 8-byte oldest held message and the
    /// 4-byte acker.
    fn data_fields(&self, _receivers: usize) -> usize {
        20
    }

    fn window_use(&self) -> WindowUse {
        WindowUse::InFlight
    }

    fn start(&self, s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError> {
        let ids = nodes(&start.ids());
        let window = usize::from(s.window.max(1));
        let mut c = rra::SenderConfig::new(NodeId(s.node), GroupId(0), ids, window, s.rto);
        c.session = s.session;
        c.queue_limit = QUEUE_LIMIT;
        Started::plain(rra::Sender::new(c))
    }

    fn receiver(&self, a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        let mut c = rra::ReceiverConfig::new(NodeId(me.node), usize::from(a.window()?));
        c.session = me.session;
        Received::plain(rra::Receiver::new(c))
    }
}
