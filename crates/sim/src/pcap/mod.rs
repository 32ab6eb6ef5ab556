//! A pcap (nanosecond timestamps, Ethernet link type) of the datagrams agents originated in
//! a run, with synthesized Ethernet, IPv4 and UDP headers so Wireshark and tshark open it.
//!
//! Addresses and ports are laid out as `rmcast send`/`recv` lay them out on a real network,
//! so a capture from the simulator reads like one from sockets: every endpoint sends
//! everything from one unicast socket on an ephemeral port ([`node_port`]), multicasts go to
//! the group's port ([`UDP_PORT`], as in `--group 239.1.2.3:7001`) and unicasts to the
//! addressee's own port. Node `n` is `10.a.b.c` with `a.b.c` = n + 1 in base 256 and MAC
//! `02:00:0a:a:b:c`; group `g` is `239.1.x.y` (x.y = g) with the usual multicast MAC. One
//! record per originated datagram, at its origination time (not one per hop).
//!
//! `pgm` packets are written as RFC 3208 packets in UDP, as OpenPGM and the default socket
//! mode send them, and `norm` messages as RFC 5740 messages, as libnorm sends them: on the
//! group's port + 1 ([`STANDARD_PORT`]), as the default socket mode lays them out, with
//! rmcast's own datagrams (TFMCC's CCS and CCFB) on the group's port.

mod norm;
mod pgm;

use crate::sim::PacketRecord;
use rmcast_proto::{Dest, GroupId, NodeId};
use std::io::{self, Write};

/// UDP port of the group: the destination port of every multicast datagram of rmcast's own.
pub const UDP_PORT: u16 = 7001;

/// The port of `pgm`'s RFC 3208 and `norm`'s RFC 5740 packets: the group's port + 1, where
/// the default socket mode sends them (its session layer stays on the group's port).
pub const STANDARD_PORT: u16 = UDP_PORT + 1;

/// The first port of Linux's default ephemeral range (`ip_local_port_range` 32768-60999),
/// where the socket driver's unicast sockets get theirs.
const EPHEMERAL_FIRST: u16 = 32_768;
/// How many ports that range holds.
const EPHEMERAL_PORTS: u32 = 28_232;

/// UDP port of node `n`'s unicast socket: the source port of everything it sends and the
/// destination port of what is unicast to it.
pub fn node_port(n: NodeId) -> u16 {
    EPHEMERAL_FIRST + (n.0 % EPHEMERAL_PORTS) as u16
}

/// IPv4 address of a node.
pub fn node_ip(n: NodeId) -> [u8; 4] {
    let v = n.0.wrapping_add(1);
    [10, (v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// IPv4 address of a group.
pub fn group_ip(g: GroupId) -> [u8; 4] {
    [239, 1, (g.0 >> 8) as u8, g.0 as u8]
}

fn node_mac(n: NodeId) -> [u8; 6] {
    let ip = node_ip(n);
    [0x02, 0x00, ip[0], ip[1], ip[2], ip[3]]
}

fn checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in h.chunks(2) {
        let w = u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]);
        sum += u32::from(w);
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Write `packets` as a pcap file.
pub fn write<W: Write>(mut w: W, packets: &[PacketRecord]) -> io::Result<()> {
    // Global header: nanosecond magic, v2.4, zone 0, sigfigs 0, snaplen, LINKTYPE_ETHERNET.
    w.write_all(&0xa1b2_3c4du32.to_le_bytes())?;
    w.write_all(&2u16.to_le_bytes())?;
    w.write_all(&4u16.to_le_bytes())?;
    w.write_all(&0i32.to_le_bytes())?;
    w.write_all(&0u32.to_le_bytes())?;
    w.write_all(&262_144u32.to_le_bytes())?;
    w.write_all(&1u32.to_le_bytes())?;
    let mut frame = Vec::with_capacity(2048);
    let mut sessions = pgm::Sessions::new(packets);
    let mut norm_sessions = norm::Sessions::default();
    for (i, p) in packets.iter().enumerate() {
        let (dst_ip, dst_mac, dst_port) = match p.dest {
            Dest::Node(n) => (node_ip(n), node_mac(n), node_port(n)),
            Dest::Group(g) => {
                let ip = group_ip(g);
                (ip, [0x01, 0x00, 0x5e, ip[1] & 0x7f, ip[2], ip[3]], UDP_PORT)
            }
        };
        let mut ports = (node_port(p.src), dst_port);
        let translated = sessions
            .frame(p)
            .or_else(|| norm::frame(&mut norm_sessions, p, ports));
        let payload: &[u8] = match &translated {
            Some(u) => {
                ports = (u.sport, u.dport);
                u.payload.as_deref().unwrap_or(&p.payload)
            }
            None => &p.payload,
        };
        let len = payload.len().min(65_535 - 28);
        let src_ip = node_ip(p.src);
        frame.clear();
        frame.extend_from_slice(&dst_mac);
        frame.extend_from_slice(&node_mac(p.src));
        frame.extend_from_slice(&0x0800u16.to_be_bytes());
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&((20 + 8 + len) as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&(i as u16).to_be_bytes());
        ip[8] = 64;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&src_ip);
        ip[16..20].copy_from_slice(&dst_ip);
        let c = checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        frame.extend_from_slice(&ip);
        frame.extend_from_slice(&ports.0.to_be_bytes());
        frame.extend_from_slice(&ports.1.to_be_bytes());
        frame.extend_from_slice(&((8 + len) as u16).to_be_bytes());
        frame.extend_from_slice(&0u16.to_be_bytes()); // no UDP checksum (allowed on IPv4)
        frame.extend_from_slice(payload.get(..len).unwrap_or(payload));
        let ns = p.time.as_nanos();
        w.write_all(&((ns / 1_000_000_000) as u32).to_le_bytes())?;
        w.write_all(&((ns % 1_000_000_000) as u32).to_le_bytes())?;
        w.write_all(&(frame.len() as u32).to_le_bytes())?;
        w.write_all(&(frame.len() as u32).to_le_bytes())?;
        w.write_all(&frame)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcast_proto::{Bytes, Time};

    /// The capture of one datagram from `src` to `dest` at `time`.
    fn capture(time: Time, src: NodeId, dest: Dest, payload: &'static [u8]) -> Vec<u8> {
        let p = PacketRecord {
            id: 0,
            time,
            src,
            dest,
            class: None,
            payload: Bytes::from_static(payload),
        };
        let mut v = Vec::new();
        write(&mut v, &[p]).unwrap();
        v
    }

    /// The UDP header's source and destination ports in a capture of one datagram.
    fn ports(v: &[u8]) -> (u16, u16) {
        let udp = &v[40 + 34..40 + 42];
        (
            u16::from_be_bytes([udp[0], udp[1]]),
            u16::from_be_bytes([udp[2], udp[3]]),
        )
    }

    #[test]
    fn layout_and_checksum() {
        let v = capture(
            Time::from_nanos(1_500_000_123),
            NodeId(0),
            Dest::Group(GroupId(1)),
            b"hello",
        );
        assert_eq!(v.len(), 24 + 16 + 14 + 20 + 8 + 5);
        assert_eq!(&v[24..28], &1u32.to_le_bytes());
        assert_eq!(&v[28..32], &500_000_123u32.to_le_bytes());
        let ip = &v[40 + 14..40 + 34];
        assert_eq!(&ip[12..16], &[10, 0, 0, 1]);
        assert_eq!(&ip[16..20], &[239, 1, 0, 1]);
        assert_eq!(checksum(ip), 0, "a header with its checksum sums to zero");
        assert_eq!(&v[40..43], &[0x01, 0x00, 0x5e]);
        assert_eq!(node_ip(NodeId(255)), [10, 0, 1, 0]);
        // From node 0's own port to the group's.
        assert_eq!(ports(&v), (node_port(NodeId(0)), UDP_PORT));
    }

    #[test]
    fn a_unicast_goes_to_the_addressees_own_port() {
        let v = capture(Time::ZERO, NodeId(3), Dest::Node(NodeId(0)), b"ack");
        assert_eq!(ports(&v), (node_port(NodeId(3)), node_port(NodeId(0))));
        assert_ne!(node_port(NodeId(3)), node_port(NodeId(0)));
        assert!((32_768..=60_999).contains(&node_port(NodeId(u32::MAX))));
    }
}
