//! `pgm` in the pcap as it goes on the wire (issue 62): RFC 3208 packets in UDP, as OpenPGM
//! encapsulates them and as `docs/pgm-rfc3208.md`'s default mode lays out the ports.
//!
//! * Every `pgm` message with an RFC 3208 packet (SPM, ODATA, RDATA, NAK, NCF, their lists,
//!   FEC parity, block NAKs and NCFs) is written as that packet, translated by
//!   [`rmcast_proto::pgm::rfc3208::Translator`], one per session (one source each): TSI
//!   [`tsi_of`]`(session, source)`, data-destination port 7500 (OpenPGM's default), NLAs
//!   the source's and the group's addresses as [`super::node_ip`] and [`super::group_ip`]
//!   give them, sequence number 0 the agent's 0.
//! * A multicast one goes from the sender's own port to the group's port + 1,
//!   [`super::STANDARD_PORT`], as the default socket mode sends it; a unicast one (a NAK to
//!   the source) goes *from* that port (the sender's socket joined to the group) to the
//!   addressee's own port. Either way one end is that port, so
//!   `tshark -d udp.port==7002,pgm` reads every one.
//! * TFMCC's CCS and CCFB have no RFC 3208 packet: they stay rmcast datagrams, a multicast
//!   one to the session layer's port, the group's port ([`super::UDP_PORT`]).
//! * FEC: `k` is the one the session's PARITY packets carry (SPMs then carry
//!   OPT_PARITY_PRM, from the first); which parity indices a source sends unasked is not
//!   in its packets, so every parity packet is written as RDATA.
//!
//! The pcap is an output only: nothing here reaches the run.

use super::{node_port, STANDARD_PORT, UDP_PORT};
use crate::sim::PacketRecord;
use rmcast_proto::pgm::rfc3208::{tsi_of, Outgoing, Translator};
use rmcast_proto::{Dest, GroupId, NodeId};
use rmcast_wire::pgm::Message as Pgm;
use rmcast_wire::rfc3208::udp::DEFAULT_DATA_DESTINATION_PORT;
use rmcast_wire::{Message, Packet};
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

/// What one session's packets tell of it before any is translated.
#[derive(Default)]
struct Seen {
    source: Option<NodeId>,
    group: Option<GroupId>,
    k: u16,
}

/// A translator per `pgm` session of a run.
pub(super) struct Sessions {
    map: BTreeMap<u32, Translator>,
}

/// A record's UDP ports and payload in the capture.
pub(super) struct Udp {
    pub sport: u16,
    pub dport: u16,
    /// `None`: the record's own bytes.
    pub payload: Option<Vec<u8>>,
}

fn ip(a: [u8; 4]) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(a))
}

impl Sessions {
    /// The translators of the `pgm` sessions among `packets`: each session's source (the
    /// node that originates its SPM, ODATA, parity or CCS), group and FEC block size.
    pub fn new(packets: &[PacketRecord]) -> Self {
        let mut seen: BTreeMap<u32, Seen> = BTreeMap::new();
        for r in packets {
            let Ok(p) = Packet::decode(&r.payload) else {
                continue;
            };
            let Message::Pgm(m) = p.message else {
                continue;
            };
            let s = seen.entry(p.header.session).or_default();
            if let Dest::Group(g) = r.dest {
                s.group.get_or_insert(g);
            }
            let from_source = matches!(
                m,
                Pgm::Spm { .. } | Pgm::Odata { .. } | Pgm::Parity { .. } | Pgm::Status { .. }
            );
            if from_source && p.header.source == r.src.0 {
                s.source.get_or_insert(r.src);
            }
            if let (Pgm::Parity { k, .. }, 0) = (m, s.k) {
                s.k = k;
            }
        }
        let map = seen
            .into_iter()
            .filter_map(|(session, s)| {
                let source = s.source?;
                let group = s.group.unwrap_or(GroupId(0));
                let mut t = Translator::new(
                    tsi_of(session, source),
                    DEFAULT_DATA_DESTINATION_PORT,
                    0,
                    ip(super::node_ip(source)),
                    ip(super::group_ip(group)),
                );
                t.session = session;
                t.set_fec(s.k, 0);
                Some((session, t))
            })
            .collect();
        Sessions { map }
    }

    /// The UDP datagram of a `pgm` record (`None`: not one, written as it is).
    pub fn frame(&mut self, r: &PacketRecord) -> Option<Udp> {
        let p = Packet::decode(&r.payload).ok()?;
        let Message::Pgm(_) = p.message else {
            return None;
        };
        let t = self.map.get_mut(&p.header.session)?;
        let own = node_port(r.src);
        Some(match (t.outgoing(&r.payload), r.dest) {
            (Some(Outgoing::Pgm { payload, .. }), Dest::Group(_)) => Udp {
                sport: own,
                dport: STANDARD_PORT,
                payload: Some(payload),
            },
            (Some(Outgoing::Pgm { payload, .. }), Dest::Node(n)) => Udp {
                sport: STANDARD_PORT,
                dport: node_port(n),
                payload: Some(payload),
            },
            (_, Dest::Group(_)) => Udp {
                sport: own,
                dport: UDP_PORT,
                payload: None,
            },
            (_, Dest::Node(n)) => Udp {
                sport: own,
                dport: node_port(n),
                payload: None,
            },
        })
    }
}
