//! `norm`'s default socket mode on the wire as RFC 5740 (issue 62), the way [`crate::pgmwire`]
//! carries `pgm` as RFC 3208: the agents' own datagrams are translated at the socket boundary
//! ([`crate::endpoint::Wire`], through [`crate::framing`]) by the pure [`Translator`] that
//! `rmcast sim --pcap` uses, so every datagram on the session's *data port* (the group's
//! port + 1, [`crate::pgmwire::data_port`]) is an RFC 5740 message a NORM dissector reads.
//!
//! * rmcast's session layer (ANNOUNCE, JOIN, REPORT, END) stays on the group's port and the
//!   endpoints' unicast sockets, in rmcast's header.
//! * Everything `norm`'s agents multicast goes to the group at the data port: the sender's
//!   NORM_DATA and NORM_CMD, and the receivers' NORM_NACK and NORM_ACK (norm's receivers
//!   multicast their feedback, as libnorm's do). The sender reads the data port's group on a
//!   socket of its own; receivers read it on the further group they join at the first
//!   ANNOUNCE. A message the agent addresses to one endpoint goes unchanged, as the agent
//!   wrote it.
//! * NORM names its endpoints: `source_id` is the agent's node id, so no address book is
//!   needed; the sender's `instance_id` is the session id's low 16 bits ([`instance_of`]), and
//!   only messages of the session's sender and instance are read back.
//! * Keyed sessions are not translated (the seal covers the whole datagram), nor
//!   `--rmcast-header` ones.
//! * The parity is the agent's ([`rmcast_proto::fec`]), not libnorm's: the default mode talks
//!   to rmcast receivers (open mode's shims talk to libnorm).

use rmcast_proto::norm::rfc5740::Translator;
use rmcast_proto::norm::spec;
use rmcast_wire::rfc5740::{Body, Message};
use std::net::SocketAddr;

/// Bit of the running ANNOUNCE's norm flags byte (its parameters' first byte): the packets go
/// as RFC 5740 on the data port.
pub const PARAM_RFC5740: u8 = 0x02;

/// The `instance_id` of the sender of `session`: the session id's low 16 bits.
pub fn instance_of(session: u32) -> u16 {
    session as u16
}

/// What both sides of a session with RFC 5740 on the wire agree on, from the ANNOUNCE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framing {
    /// The rmcast session id.
    pub session: u32,
    /// The sender's node id.
    pub sender: u32,
}

/// One endpoint's translation at its sockets.
#[derive(Debug)]
pub struct NormWire {
    tr: Translator,
    /// The session's group (where the agents' multicasts are addressed).
    group: SocketAddr,
    /// The group at the data port (where every translated message goes).
    data_group: SocketAddr,
    /// The sender's node id.
    sender: u32,
    /// This endpoint's node id (its own messages looped back are not read).
    me: u32,
}

impl NormWire {
    /// The translation of `f` on `group` at the endpoint of node `me`. `None` when the group's
    /// port has no next port.
    pub fn new(f: Framing, group: SocketAddr, me: u32) -> Option<Self> {
        let port = crate::pgmwire::data_port(group)?;
        let tr = Translator::new(
            instance_of(f.session),
            f.session,
            spec::GRTT_INITIAL_MS / 1_000.0,
            spec::GSIZE as f64,
            u8::try_from(spec::PARITY_MAX).unwrap_or(u8::MAX),
        );
        Some(NormWire {
            tr,
            group,
            data_group: SocketAddr::new(group.ip(), port),
            sender: f.sender,
            me,
        })
    }

    /// The group at the data port.
    pub fn data_group(&self) -> SocketAddr {
        self.data_group
    }

    /// Messages the translator could not translate, either way.
    pub fn untranslatable(&self) -> u64 {
        self.tr.untranslatable
    }

    /// The agent's datagram `d` to `to` as it goes on the wire: a norm message to the group
    /// as RFC 5740 to the data port, anything else unchanged (`None`: a norm message the
    /// translator cannot encode; nothing goes, counted).
    pub fn outgoing(&mut self, to: SocketAddr, d: &[u8]) -> Option<(SocketAddr, Vec<u8>)> {
        if to != self.group || !is_norm(d) {
            return Some((to, d.to_vec()));
        }
        Some((self.data_group, self.tr.outgoing(d)?))
    }

    /// Whether `d`, read on the data port, is this endpoint's own message looped back (not
    /// read, not counted: a node does not hear its own multicast).
    pub fn echo(&self, d: &[u8]) -> bool {
        d.get(4..8)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .is_some_and(|b| u32::from_be_bytes(b) == self.me)
    }

    /// The agent's datagram for a datagram read on the data port (`None`: not an RFC 5740
    /// message of this session's sender and instance, or one the agent has no message for).
    pub fn incoming(&mut self, d: &[u8]) -> Option<Vec<u8>> {
        let m = Message::decode(d).ok()?;
        let instance = instance_of(self.tr.session);
        let ours = match &m.body {
            Body::Info { sender, .. } | Body::Data { sender, .. } | Body::Cmd { sender, .. } => {
                m.source_id == self.sender && sender.instance_id == instance
            }
            Body::Nack {
                server_id,
                instance_id,
                ..
            }
            | Body::Ack {
                server_id,
                instance_id,
                ..
            } => *server_id == self.sender && *instance_id == instance,
            Body::Report(_) => false,
        };
        if !ours {
            return None;
        }
        self.tr.incoming(&m)
    }
}

/// Whether `d` is a `norm` agent's message in rmcast's header (the session layer's are not).
fn is_norm(d: &[u8]) -> bool {
    matches!(
        rmcast_wire::Packet::decode(d),
        Ok(rmcast_wire::Packet {
            message: rmcast_wire::Message::Norm(_),
            ..
        })
    )
}

/// Whether the running ANNOUNCE's norm parameters `params` say RFC 5740 on the wire.
pub fn announced(params: &[u8]) -> bool {
    params.first().is_some_and(|f| f & PARAM_RFC5740 != 0)
}

#[cfg(test)]
#[path = "normwire_tests.rs"]
mod tests;
