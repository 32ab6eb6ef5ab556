//! `norm` (RFC 5740, as NRL's libnorm runs it) on sockets: the sender multicasts segments of
//! 1,400 bytes (`bench/norm/normfile.cc`'s segment size) in blocks of 64, receivers multicast
//! their NACKs and probe answers to the group, which the sender reads
//! ([`NetProtocol::hears_group`]), and the sender's acking nodes are the receivers that
//! joined: their watermark ACKs end the transfer ([`NetProtocol::acknowledged`]).
//!
//! Timers on sockets (the spec's socket defaults): GRTT probes every 100 ms, so the GRTT
//! comes down from libnorm's initial 0.5 s within the first second of a LAN transfer.
//!
//! With `--rate auto` the sender runs NORM-CC (RFC 5740 §5.5.2, [`norm::CcSender`]): it paces
//! at the slowest receiver's TCP-friendly rate, never above `--max-rate`. Receivers are always
//! [`norm::CcReceiver`]s: they answer NORM-CC's probes when the sender sends them (as
//! libnorm's receivers do) and are plain receivers otherwise.
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

/// NORM-CC on sockets (the session's sender and the open-mode sender): its defaults, capped
/// at `rate_bps` (0: no cap).
pub(crate) fn cc_config(rate_bps: u64) -> norm::cc::Config {
    norm::cc::Config {
        max_rate: rate_bps / 8,
        ..norm::cc::Config::default()
    }
}

impl NetProtocol for Norm {
    fn congestion_control(&self) -> bool {
        true
    }

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
        let agent: Box<dyn rmcast_proto::Agent> = if s.tfmcc {
            Box::new(norm::CcSender::new(
                norm::Sender::new(c),
                cc_config(s.rate_bps),
            ))
        } else {
            Box::new(norm::Sender::new(c))
        };
        if !s.norm_rfc5740 {
            return Ok(Started {
                agent,
                side: Box::new(super::Plain),
            });
        }
        Ok(Started {
            agent,
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
        let mut rng = me.rng();
        let cc = rmcast_proto::rng::AgentRng::from_seed(rng.range_inclusive(0, u64::MAX));
        let agent = norm::CcReceiver::new(norm::Receiver::new(c, rng), cc_config(0), cc);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_auto_builds_a_norm_cc_sender_capped_at_the_rate_and_a_fixed_rate_a_plain_one() {
        assert_eq!(cc_config(800_000_000).max_rate, 100_000_000);
        assert_eq!(cc_config(0).max_rate, 0);
        let start = Start {
            joined: &[],
            group: "239.1.2.3:5000".parse().unwrap(),
            stream: "",
        };
        let mut s = crate::agents::tests::settings();
        let mut plain = Norm.start(&s, &start).unwrap();
        let any = plain.agent.as_any_mut().unwrap();
        assert!(any.downcast_mut::<norm::Sender>().is_some());
        s.tfmcc = true;
        s.rate_bps = 800_000_000;
        let mut cc = Norm.start(&s, &start).unwrap();
        let any = cc.agent.as_any_mut().unwrap();
        let sender = any
            .downcast_mut::<norm::CcSender>()
            .expect("a NORM-CC sender");
        assert!(sender.cc().slow_start());
        assert!(Norm.congestion_control());
    }
}
