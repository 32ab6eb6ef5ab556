//! `norm` (RFC 5740, as NRL's libnorm runs it) on sockets: the sender multicasts segments of
//! 1,400 bytes (`bench/norm/normfile.cc`'s segment size) in blocks of 64, receivers multicast
//! their NACKs and probe answers to the group, which the sender reads
//! ([`NetProtocol::hears_group`]), and the sender's acking nodes are the receivers that
//! joined: their watermark ACKs end the transfer ([`NetProtocol::acknowledged`]).
//!
//! Timers on sockets (the spec's socket defaults): GRTT probes every 100 ms, so the GRTT
//! comes down from libnorm's initial 0.5 s within the first second of a LAN transfer.
//!
//! On the wire an unkeyed session's packets are RFC 5740's, on the group's port + 1
//! ([`crate::normwire`], the running ANNOUNCE's [`crate::normwire::PARAM_RFC5740`]); the
//! session layer stays on the group's port. Keyed sessions and `--rmcast-header` carry the
//! agents' own packets in rmcast's 20-byte header.

use super::{socket_ms, Announced, Me, NetProtocol, Received, SenderSettings, Start, Started};
use crate::normwire::{self, Framing};
use crate::NetError;
use rmcast_proto::norm;
use rmcast_proto::{GroupId, NodeId};
use std::net::SocketAddr;

pub struct Norm;

/// A receiver of RFC 5740 messages: it reads them on the group at the data port.
struct Rfc5740Side {
    framing: Framing,
    data: SocketAddr,
}

impl super::ReceiverSide for Rfc5740Side {
    fn join(&self) -> Option<SocketAddr> {
        Some(self.data)
    }

    fn framing(&self) -> Option<crate::framing::Framing> {
        Some(crate::framing::Framing::Rfc5740(self.framing))
    }
}

/// The sender's side of a session with RFC 5740 on the wire: the ANNOUNCE says so.
struct Announcing;
impl super::SenderSide for Announcing {
    fn params(&self) -> Result<Vec<u8>, NetError> {
        Ok(vec![normwire::PARAM_RFC5740])
    }
}

/// The segment size of `normfile.cc` (`NormSetTxFecParams`' segment, 1,400 bytes).
const SEGMENT: usize = 1_400;

fn params() -> norm::Params {
    norm::Params {
        probe: socket_ms("norm", "probe_ms"),
        ..norm::Params::default()
    }
}

impl NetProtocol for Norm {
    /// None, or the flags byte with [`normwire::PARAM_RFC5740`].
    fn check_params(&self, params: &[u8]) -> Result<(), NetError> {
        match params {
            [] | [normwire::PARAM_RFC5740] => Ok(()),
            _ => Err(NetError::Failed(format!(
                "norm parameters {params:02x?}: give none or the RFC 5740 flag"
            ))),
        }
    }

    fn early_group(&self, group: SocketAddr, keyed: bool) -> Option<SocketAddr> {
        crate::framing::data_group(group, keyed)
    }

    fn framing(&self, s: &SenderSettings) -> Option<crate::framing::Framing> {
        s.norm_rfc5740
            .then_some(crate::framing::Framing::Rfc5740(Framing {
                session: s.session,
                sender: s.node,
            }))
    }

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
        if !s.norm_rfc5740 {
            return Started::plain(norm::Sender::new(c));
        }
        Ok(Started {
            agent: Box::new(norm::Sender::new(c)),
            side: Box::new(Announcing),
        })
    }

    /// Built from the running ANNOUNCE, whose parameters say whether RFC 5740 is on the wire.
    fn receiver(&self, a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        use rmcast_proto::deploy::FromParams;
        if !a.running {
            return Ok(None);
        }
        let at = (NodeId(me.node), NodeId(me.sender));
        let mut c = norm::ReceiverConfig::from_params(&params(), at);
        c.session = me.session;
        let agent = norm::Receiver::new(c, me.rng());
        if !normwire::announced(a.params) {
            return Received::plain(agent);
        }
        let framing = Framing {
            session: me.session,
            sender: me.sender,
        };
        let data = crate::framing::data_group(me.group, false).ok_or_else(|| {
            NetError::Failed("the sender announced RFC 5740 on the port after 65535".into())
        })?;
        Ok(Some(Received {
            agent: Box::new(agent),
            side: Box::new(Rfc5740Side { framing, data }),
        }))
    }
}
