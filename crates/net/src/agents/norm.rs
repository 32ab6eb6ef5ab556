//! `norm` (RFC 5740, as NRL's libnorm runs it) on sockets: the sender multicasts segments of
//! 1,400 bytes (`bench/norm/normfile.cc`'s segment size) in blocks of 64, receivers multicast
//! their NACKs and probe answers to the group, which the sender reads
//! ([`NetProtocol::hears_group`]), and the sender's acking nodes are the receivers that
//! joined: their watermark ACKs end the transfer ([`NetProtocol::acknowledged`]).
//!
//! Timers on sockets (the spec's socket defaults): GRTT probes every 100 ms, so the GRTT
//! comes down from libnorm's initial 0.5 s within the first second of a LAN transfer.

use super::{socket_ms, Announced, Me, NetProtocol, Received, SenderSettings, Start, Started};
use crate::NetError;
use rmcast_proto::norm;
use rmcast_proto::{GroupId, NodeId};

pub struct Norm;

/// The segment size of `normfile.cc` (`NormSetTxFecParams`' segment, 1,400 bytes).
const SEGMENT: usize = 1_400;

fn params() -> norm::Params {
    norm::Params {
        probe: socket_ms("norm", "probe_ms"),
        ..norm::Params::default()
    }
}

impl NetProtocol for Norm {
    /// DATA's object, block, symbol and block length, and a parity symbol's length prefix.
    fn data_fields(&self, _receivers: usize) -> usize {
        12
    }

    fn hears_group(&self) -> bool {
        true
    }

    fn message_size(&self, _s: &SenderSettings) -> Result<Option<usize>, NetError> {
        Ok(Some(SEGMENT))
    }

    fn start(&self, s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError> {
        use rmcast_proto::deploy::FromParams;
        let mut c = norm::SenderConfig::from_params(&params(), (NodeId(s.node), GroupId(0)));
        c.session = s.session;
        c.receivers = start.ids().into_iter().map(NodeId).collect();
        Started::plain(norm::Sender::new(c))
    }

    fn receiver(&self, _a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        use rmcast_proto::deploy::FromParams;
        let at = (NodeId(me.node), NodeId(me.sender));
        let mut c = norm::ReceiverConfig::from_params(&params(), at);
        c.session = me.session;
        Received::plain(norm::Receiver::new(c, me.rng()))
    }
}
