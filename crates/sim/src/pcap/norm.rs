//! `norm` in the pcap as RFC 5740 messages in UDP, as libnorm sends them (issue 62),
//! translated by [`rmcast_proto::norm::rfc5740::Translator`], one per session: the agents'
//! node ids as `source_id`, the session id's low 16 bits as the sender's `instance_id`,
//! GRTT from the sender's FLUSH and CC (the spec's initial one before), backoff and group
//! size libnorm's and the spec's, EXT_FTI's parity count the spec's `parity_max` (the pcap
//! does not know a run's parameters). Multicast goes to the group's port + 1
//! ([`super::STANDARD_PORT`], as the default socket mode sends it), unicast to the addressee's
//! own port. A DATA's parity is the agent's ([`rmcast_proto::fec`]),
//! not libnorm's. The pcap is an output only: nothing here reaches the run.

use super::pgm::Udp;
use crate::sim::PacketRecord;
use rmcast_proto::norm::rfc5740::Translator;
use rmcast_proto::norm::spec;
use rmcast_wire::{Message, Packet};
use std::collections::BTreeMap;

/// A translator per `norm` session of a run.
#[derive(Default)]
pub(super) struct Sessions {
    map: BTreeMap<u32, Translator>,
}

impl Sessions {
    /// The RFC 5740 payload of a `norm` record (`None`: not one, or not translatable:
    /// written as it is).
    pub fn payload(&mut self, r: &PacketRecord) -> Option<Vec<u8>> {
        let p = Packet::decode(&r.payload).ok()?;
        let Message::Norm(_) = p.message else {
            return None;
        };
        let session = p.header.session;
        let t = self.map.entry(session).or_insert_with(|| {
            Translator::new(
                session as u16,
                session,
                spec::GRTT_INITIAL_MS / 1_000.0,
                spec::GSIZE as f64,
                spec::PARITY_MAX as u8,
            )
        });
        t.outgoing(&r.payload)
    }
}

/// The UDP datagram of a `norm` record on the run's ports `(sport, dport)`.
pub(super) fn frame(s: &mut Sessions, r: &PacketRecord, ports: (u16, u16)) -> Option<Udp> {
    let payload = s.payload(r)?;
    let dport = match r.dest {
        rmcast_proto::Dest::Group(_) => super::STANDARD_PORT,
        rmcast_proto::Dest::Node(_) => ports.1,
    };
    Some(Udp {
        sport: ports.0,
        dport,
        payload: Some(payload),
    })
}
