//! `rra` (seed 000 Ch. 5, the round-robin acknowledgment the thesis proposes) on sockets:
//! each DATA names the one receiver that acknowledges it (round robin over the receivers),
//! whose ACK reports its whole state (cumulative point and a bitmap); the sender repairs by
//! multicast what a report shows missing and polls for the tail. The ANNOUNCE carries the
//! window (unfinished messages), the receivers' buffer.

use super::QUEUE_LIMIT;
use super::{
    nodes, Announced, Me, NetProtocol, Received, SenderSettings, Start, Started, WindowUse,
};
use crate::frame::DATA_OVERHEAD;
use crate::NetError;
use rmcast_proto::{rra, GroupId, NodeId};
use rmcast_wire::HEADER_LEN;

pub struct Rra;

impl NetProtocol for Rra {
    /// DATA: the header, the 8-byte sequence number, the 8-byte oldest held message and the
    /// 4-byte acker.
    fn data_overhead(&self, _receivers: usize) -> usize {
        HEADER_LEN + DATA_OVERHEAD + 20
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rmcast_wire::{rra as wire, Message, Packet};

    #[test]
    fn the_data_overhead_is_what_a_data_packet_adds() {
        let m = Message::Rra(wire::Message::Data {
            seq: 7,
            low: 3,
            acker: 9,
            payload: &[0; 100],
        });
        assert_eq!(
            Packet::encoded_len(&m) - 100 + DATA_OVERHEAD,
            Rra.data_overhead(3)
        );
    }
}
