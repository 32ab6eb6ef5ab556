//! `ff` (seed 004 §4's full-feedback baseline) on sockets: a selective-repeat window whose
//! receivers acknowledge every DATA by unicast; the sender spaces its packets by the IPG
//! (`--ipg-us`, else one datagram at `--rate`) and repeats a packet to the whole group when a
//! receiver's ACK is missing after twice the largest RTT it measured (at least `--rto-ms`).
//! The ANNOUNCE carries the window S, the receivers' buffer.

use super::QUEUE_LIMIT;
use super::{
    nodes, Announced, Me, NetProtocol, Received, SenderSettings, Start, Started, WindowUse,
};
use crate::frame::DATA_OVERHEAD;
use crate::NetError;
use rmcast_proto::{ff, GroupId, NodeId};
use rmcast_wire::HEADER_LEN;

pub struct Ff;

/// The sender's configuration for these settings (also checks the flags before any receiver
/// joins).
fn config(s: &SenderSettings, ids: &[u32]) -> Result<ff::SenderConfig, NetError> {
    let mut c = ff::SenderConfig::new(NodeId(s.node), GroupId(0), nodes(ids));
    c.session = s.session;
    c.window = u64::from(s.window);
    c.ipg = s.ipg();
    if c.ipg.is_zero() {
        return Err(NetError::setup(
            "--ipg-us 0: give a positive inter-packet gap",
        ));
    }
    c.min_rto = s.rto;
    c.queue_limit = QUEUE_LIMIT;
    ff::Sender::new(c.clone()).map_err(|e| NetError::setup(format!("ff: {e}")))?;
    Ok(c)
}

impl NetProtocol for Ff {
    /// DATA: the header, an 8-byte sequence number and the 8-byte send time.
    fn data_overhead(&self, _receivers: usize) -> usize {
        HEADER_LEN + DATA_OVERHEAD + 16
    }

    fn check(&self, s: &SenderSettings) -> Result<(), NetError> {
        config(s, &[]).map(|_| ())
    }

    fn window_use(&self) -> WindowUse {
        WindowUse::InFlight
    }

    fn start(&self, s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError> {
        let agent = ff::Sender::new(config(s, &start.ids())?)
            .map_err(|e| NetError::setup(format!("ff: {e}")))?;
        Started::plain(agent)
    }

    fn receiver(&self, a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        let mut c = ff::ReceiverConfig::new(NodeId(me.node), u64::from(a.window()?));
        c.session = me.session;
        Received::plain(ff::Receiver::new(c))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rmcast_wire::{ff as wire, Message, Packet};

    #[test]
    fn the_data_overhead_is_what_a_data_packet_adds() {
        let m = Message::Ff(wire::Message::Data {
            seq: u64::MAX,
            ts: u64::MAX,
            payload: &[0; 100],
        });
        assert_eq!(
            Packet::encoded_len(&m) - 100 + DATA_OVERHEAD,
            Ff.data_overhead(3)
        );
    }

    #[test]
    fn a_zero_gap_or_window_is_refused_before_anyone_joins() {
        let mut s = crate::agents::tests::settings();
        assert!(Ff.check(&s).is_ok());
        s.prmp.ipg = Some(std::time::Duration::ZERO);
        assert!(matches!(Ff.check(&s), Err(NetError::Setup(_))));
        let mut s = crate::agents::tests::settings();
        s.window = 0;
        assert!(matches!(Ff.check(&s), Err(NetError::Setup(_))));
    }
}
