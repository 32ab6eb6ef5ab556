//! `ff` (seed 004 §4's full-feedback baseline) on sockets: a selective-repeat window whose
//! receivers acknowledge every DATA by unicast; the sender spaces its packets by the IPG
//! (`--ipg-us`, else one datagram at `--rate`) and repeats a packet to the whole group when a
//! receiver's ACK is missing after twice the largest RTT it measured (at least `--rto-ms`).
//! The ANNOUNCE carries the window S, the receivers' buffer.

use super::QUEUE_LIMIT;
use super::{
    nodes, Announced, Me, NetProtocol, Received, SenderSettings, Start, Started, WindowUse,
};
use crate::NetError;
use rmcast_proto::{ff, GroupId, NodeId};

pub struct Ff;

/// The sender's agent for these settings and receivers (with none, the check of the flags
/// before any receiver joins).
fn sender(s: &SenderSettings, ids: &[u32]) -> Result<ff::Sender, NetError> {
    let mut c = ff::SenderConfig::new(NodeId(s.node), GroupId(0), nodes(ids));
    c.session = s.session;
    c.window = u64::from(s.window);
    c.ipg = s.ipg();
    c.ipg_slack = s.ipg_slack();
    if c.ipg.is_zero() {
        return Err(NetError::setup(
            "--ipg-us 0: give a positive inter-packet gap",
        ));
    }
    c.min_rto = s.rto;
    c.queue_limit = QUEUE_LIMIT;
    ff::Sender::new(c).map_err(|e| NetError::setup(format!("ff: {e}")))
}

impl NetProtocol for Ff {
    /// DATA: the header, an 8-byte sequence number and the 8-byte send time.
    fn data_fields(&self, _receivers: usize) -> usize {
        16
    }

    fn check(&self, s: &SenderSettings) -> Result<(), NetError> {
        sender(s, &[]).map(|_| ())
    }

    fn window_use(&self) -> WindowUse {
        WindowUse::InFlight
    }

    fn start(&self, s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError> {
        Started::plain(sender(s, &start.ids())?)
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
