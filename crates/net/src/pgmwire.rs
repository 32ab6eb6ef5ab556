//! `pgm`'s default socket mode on the wire as RFC 3208 (issue 62): the agents' own datagrams
//! are translated at the socket boundary ([`crate::endpoint::Wire`]) by the same pure
//! [`Translator`] open mode and `rmcast sim --pcap` use, so every datagram on the session's
//! PGM *data-destination port* is an RFC 3208 packet a PGM dissector reads.
//!
//! * The data-destination port is the group's port + 1 ([`data_port`]). rmcast's session
//!   layer (ANNOUNCE, JOIN, REPORT, END, and TFMCC's CCS and CCFB, which RFC 3208 has no
//!   packet for) stays where it is, on the group's port and the endpoints' unicast sockets,
//!   in rmcast's header: receivers find a session there before they know its protocol, and
//!   the per-receiver accounting stays.
//! * Downstream packets (SPM, ODATA, RDATA, NCF, parity) go from the sender's socket to the
//!   group at the data port; receivers read them on a group socket there. Upstream ones
//!   (NAK) go from a receiver's unicast socket to the sender's address at the data port,
//!   where the sender reads them on a socket of its own; it knows the receiver by the
//!   address it joined from.
//! * The TSI is [`tsi_of`] the session and the sender's node id, the first sequence number
//!   the session id ([`base_of`]): both sides compute them from the ANNOUNCE.
//! * Keyed sessions are not translated: the seal covers the whole datagram, so they are not
//!   PGM on the wire. Neither are sessions through `rmcast relay` (the sender's
//!   `--rmcast-header`): a relay's network element reads the agents' own messages.

use crate::socket::SocketOpts;
use crate::NetError;
use rmcast_proto::pgm::rfc3208::{tsi_of, Outgoing, Translator};
use rmcast_proto::NodeId;
use rmcast_wire::rfc3208;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The PGM data-destination port of a session on `group`: the group's port + 1 (`None` for
/// port 65,535).
pub fn data_port(group: SocketAddr) -> Option<u16> {
    group.port().checked_add(1)
}

/// The RFC 3208 sequence number of the agent's first packet in `session`.
pub fn base_of(session: u32) -> u32 {
    session
}

/// What both sides of a session with RFC 3208 on the wire agree on, from the ANNOUNCE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framing {
    /// The rmcast session id.
    pub session: u32,
    /// The sender's node id.
    pub sender: u32,
    /// FEC: source packets per block (0: off) and parity sent unasked.
    pub fec: (u16, u16),
}

/// One endpoint's translation at its sockets.
#[derive(Debug)]
pub struct PgmWire {
    tr: Translator,
    /// The session's group (where the agents' multicasts are addressed).
    group: SocketAddr,
    /// The group at the data-destination port (where downstream packets go).
    data_group: SocketAddr,
    /// The sender's session address (where a receiver's agent addresses the sender).
    sender: SocketAddr,
    /// The sender at the data-destination port (where upstream packets go).
    upstream: SocketAddr,
    /// The sender's side: members' nodes by the address they send from.
    peers: HashMap<SocketAddr, u32>,
    /// The receiver's side: every downstream packet is the sender's.
    from_sender: bool,
    /// The sender's node id.
    sender_node: u32,
}

impl PgmWire {
    /// The translation of `f` on `group`; `sender` is the sender's unicast address (on the
    /// sender: its own, for the SPM's path NLA), `from_sender` whether this endpoint is a
    /// receiver (everything it reads is the sender's). `None` when the group's port has no
    /// next port.
    pub fn new(
        f: Framing,
        group: SocketAddr,
        sender: SocketAddr,
        from_sender: bool,
    ) -> Option<Self> {
        let port = data_port(group)?;
        let tsi = tsi_of(f.session, NodeId(f.sender));
        let mut tr = Translator::new(tsi, port, base_of(f.session), sender.ip(), group.ip());
        tr.session = f.session;
        tr.set_fec(f.fec.0, f.fec.1);
        Some(PgmWire {
            tr,
            group,
            data_group: SocketAddr::new(group.ip(), port),
            sender,
            upstream: SocketAddr::new(sender.ip(), port),
            peers: HashMap::new(),
            from_sender,
            sender_node: f.sender,
        })
    }

    /// The member `node` sends from `addr` (the sender's side).
    pub fn peer(&mut self, addr: SocketAddr, node: u32) {
        self.peers.insert(addr, node);
    }

    /// The group at the data-destination port.
    pub fn data_group(&self) -> SocketAddr {
        self.data_group
    }

    /// Packets the translator could not translate, either way.
    pub fn untranslatable(&self) -> u64 {
        self.tr.untranslatable
    }

    /// The agent's datagram `d` to `to` as it goes on the wire: an RFC 3208 packet to the
    /// data port when it is one the standard has (downstream to the group, upstream to the
    /// sender), otherwise unchanged (`None`: nothing goes, counted by the translator).
    pub fn outgoing(&mut self, to: SocketAddr, d: &[u8]) -> Option<(SocketAddr, Vec<u8>)> {
        match self.tr.outgoing(d)? {
            Outgoing::Pgm { payload, upstream } => {
                let at = match upstream {
                    true if to == self.sender => self.upstream,
                    false if to == self.group => self.data_group,
                    // Addressed elsewhere: no PGM counterpart, the agent's own bytes go.
                    _ => return Some((to, d.to_vec())),
                };
                Some((at, payload))
            }
            Outgoing::Session => Some((to, d.to_vec())),
        }
    }

    /// The agent's datagram for a datagram read on the data port from `from` (`None`: not
    /// an RFC 3208 packet of this session, or from nobody known).
    pub fn incoming(&mut self, from: SocketAddr, d: &[u8]) -> Option<Vec<u8>> {
        let p = rfc3208::Packet::decode(d).ok()?;
        if !self.tr.ours(&p) {
            return None;
        }
        let node = if self.from_sender {
            if p.body.upstream() {
                return None;
            }
            self.sender_node
        } else {
            if !p.body.upstream() {
                return None;
            }
            *self.peers.get(&from)?
        };
        self.tr.incoming(&p, NodeId(node))
    }
}

/// The sender's socket on the data port: bound to it on every address (receivers' NAKs
/// arrive unicast), address reuse on (receivers on this host bind the group at the same
/// port), no group's multicast (`IP_MULTICAST_ALL` off: its own downstream packets and other
/// sessions' stay out).
pub fn data_socket(o: &SocketOpts) -> Result<std::net::UdpSocket, NetError> {
    let port = data_port(o.group).ok_or_else(|| {
        NetError::setup("pgm's data port is the group's port + 1: give a lower port")
    })?;
    let v6 = o.group.is_ipv6();
    let s = crate::socket::new_socket(v6)?;
    s.set_reuse_address(true)
        .map_err(|x| crate::error::classify("set SO_REUSEADDR", o.group, x))?;
    let bind: SocketAddr = if v6 {
        SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), port)
    } else {
        let _ = s.set_multicast_all_v4(false);
        SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port)
    };
    if v6 {
        let _ = s.set_only_v6(true);
        let _ = s.set_multicast_all_v6(false);
    }
    crate::socket::buffers(&s, o);
    s.bind(&bind.into())
        .map_err(|x| crate::error::classify("bind", bind, x))?;
    s.set_nonblocking(true)
        .map_err(|x| NetError::io("set non-blocking", x))?;
    Ok(s.into())
}

/// The address this host sends to `group` from (the SPM's path NLA); unspecified when the
/// routing table cannot tell (nothing is sent).
pub fn local_toward(group: SocketAddr) -> SocketAddr {
    let any: SocketAddr = match group {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    std::net::UdpSocket::bind(any)
        .and_then(|p| p.connect(group).and_then(|()| p.local_addr()))
        .unwrap_or(any)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcast_wire::pgm::Message as Pgm;
    use rmcast_wire::rfc3208::Body;
    use rmcast_wire::{Envelope, Message, Packet};

    const SESSION: u32 = 0x7e57_0001;
    const SENDER: u32 = 42;
    const RECEIVER: u32 = 1001;

    fn group() -> SocketAddr {
        "239.1.2.3:5000".parse().unwrap()
    }
    fn sender_addr() -> SocketAddr {
        "10.0.0.1:40000".parse().unwrap()
    }
    fn receiver_addr() -> SocketAddr {
        "10.0.0.2:41000".parse().unwrap()
    }

    fn framing(k: u16) -> Framing {
        Framing {
            session: SESSION,
            sender: SENDER,
            fec: (k, 0),
        }
    }

    /// The sender's and a receiver's translation.
    fn pair(k: u16) -> (PgmWire, PgmWire) {
        let mut s = PgmWire::new(framing(k), group(), sender_addr(), false).unwrap();
        s.peer(receiver_addr(), RECEIVER);
        let r = PgmWire::new(framing(k), group(), sender_addr(), true).unwrap();
        (s, r)
    }

    fn agent(source: u32, m: Pgm<'_>) -> Vec<u8> {
        let env = Envelope {
            session: SESSION,
            source,
            flags: 0,
        };
        Packet::to_vec(env, &Message::Pgm(m)).unwrap()
    }

    #[test]
    fn odata_goes_to_the_data_port_as_rfc3208_and_comes_back_the_agent_s() {
        let (mut s, mut r) = pair(0);
        let d = agent(
            SENDER,
            Pgm::Odata {
                seq: 7,
                payload: b"seven",
            },
        );
        let (to, wire) = s.outgoing(group(), &d).unwrap();
        assert_eq!(to, "239.1.2.3:5001".parse().unwrap());
        let p = rfc3208::Packet::decode(&wire).unwrap();
        assert_eq!(p.tsi(), tsi_of(SESSION, NodeId(SENDER)));
        assert_eq!(p.dport, 5001);
        let Body::Odata(data) = p.body else {
            panic!("{p:?}")
        };
        assert_eq!(data.sqn, base_of(SESSION).wrapping_add(7));
        assert_eq!(data.payload, b"seven");
        let back = r.incoming(sender_addr(), &wire).unwrap();
        assert_eq!(Packet::decode(&back).unwrap(), Packet::decode(&d).unwrap());
        // A receiver takes no upstream packet, the sender no downstream one.
        assert!(s.incoming(receiver_addr(), &wire).is_none());
    }

    #[test]
    fn a_nak_goes_to_the_sender_s_data_port_and_names_the_member_it_came_from() {
        let (mut s, mut r) = pair(0);
        let d = agent(RECEIVER, Pgm::Nak { seq: 3 });
        let (to, wire) = r.outgoing(sender_addr(), &d).unwrap();
        assert_eq!(to, "10.0.0.1:5001".parse().unwrap());
        assert!(matches!(
            rfc3208::Packet::decode(&wire).unwrap().body,
            Body::Nak(_)
        ));
        let back = s.incoming(receiver_addr(), &wire).unwrap();
        assert_eq!(Packet::decode(&back).unwrap(), Packet::decode(&d).unwrap());
        // From an address no member joined from: nobody's.
        assert!(s
            .incoming("10.0.0.9:41000".parse().unwrap(), &wire)
            .is_none());
        assert!(r.incoming(sender_addr(), &wire).is_none());
    }

    #[test]
    fn what_rfc3208_has_no_packet_for_goes_unchanged_and_so_do_strangers_bytes_not() {
        let (mut s, mut r) = pair(0);
        let ccs = agent(
            SENDER,
            Pgm::Status {
                round: 1,
                rate: 1,
                suppress: 0,
                clr: RECEIVER,
                r_max_us: 1,
                echo_node: RECEIVER,
                echo_ts_us: 1,
                echo_delay_us: 1,
                flags: 0,
            },
        );
        assert_eq!(s.outgoing(group(), &ccs), Some((group(), ccs.clone())));
        // The agent's own bytes read on the data port are no RFC 3208 packet.
        assert!(r.incoming(sender_addr(), &ccs).is_none());
        // Another session's TSI.
        let mut other = PgmWire::new(
            Framing {
                session: SESSION + 1,
                ..framing(0)
            },
            group(),
            sender_addr(),
            false,
        )
        .unwrap();
        let d = agent(
            SENDER,
            Pgm::Odata {
                seq: 1,
                payload: b"x",
            },
        );
        let (_, wire) = other.outgoing(group(), &d).unwrap();
        assert!(r.incoming(sender_addr(), &wire).is_none());
    }

    #[test]
    fn the_largest_parity_packet_fits_the_datagram_pgm_sizes_messages_for() {
        let mut st = crate::agents::tests::settings();
        st.pgm_fec_k = 16;
        st.datagram_size = 1472;
        assert!(st.pgm_rfc3208);
        let m = crate::agents::protocol("pgm")
            .unwrap()
            .message_size(&st)
            .unwrap()
            .unwrap();
        let symbol = vec![0xa5; crate::frame::DATA_OVERHEAD + m + rmcast_proto::fec::LEN_PREFIX];
        let (mut s, _) = pair(16);
        // Index k and up: a second parity group, OPT_PARITY_GRP.
        for index in [0, 15, 16, 200] {
            let d = agent(
                SENDER,
                Pgm::Parity {
                    block: 3,
                    index,
                    k: 16,
                    payload: &symbol,
                },
            );
            let (_, wire) = s.outgoing(group(), &d).unwrap();
            assert!(wire.len() <= st.datagram_size, "{index}: {}", wire.len());
            if index >= 16 {
                assert_eq!(wire.len(), st.datagram_size, "{index}");
            }
        }
    }
}
