//! Open mode (`rmcast send|recv --protocol pgm|norm --open`, issue 62): plain RFC 3208 PGM over
//! UDP as OpenPGM encapsulates it, to and from any PGM host, without rmcast's session layer
//! (no ANNOUNCE, JOIN, REPORT or END).
//!
//! The agents are the same sans-IO `pgm` state machines the simulator and the default
//! socket mode run ([`rmcast_proto::pgm::Source`], [`rmcast_proto::pgm::Receiver`]); only
//! their datagrams are translated at the socket boundary
//! ([`rmcast_proto::pgm::rfc3208`]). One UDP port
//! carries the session both ways, as OpenPGM's examples and ZeroMQ's `epgm://` set it: the
//! group's port. Downstream packets (SPM, ODATA, RDATA, NCF) go to the group, upstream ones
//! (NAK, SPMR) unicast to the source's address (its SPM's path NLA) at the same port.
//!
//! * The sender ([`send`](mod@send)) paces new data at a fixed rate (no TFMCC: RFC 3208 has
//!   no packet for it), one APDU per ODATA (no OPT_FRAGMENT), keeps the newest `txw` packets
//!   for repair, answers NAKs for the transfer plus a linger and an SPMR with an SPM at once
//!   (at most one per 100 ms), then sends SPMs with OPT_FIN and stops. It cannot know who
//!   received what.
//! * The receiver ([`recv`](mod@recv)) takes the TSI from the first SPM, ODATA or RDATA it
//!   sees on the data-destination port, sends SPMR when data comes before any SPM, NAKs
//!   losses, and writes the TSDUs in sequence order, byte-exact. An OpenPGM receiver sees APDUs and
//!   nothing marks a file's end, so the receiver stops when an SPM with OPT_FIN has come
//!   and everything up to its lead is delivered, or after `idle_exit` of silence from the
//!   source (a FIN lost, or a sender that sends none). No length header: it would reach an
//!   OpenPGM receiver as data.
//!
//! IPv4 only (the NLAs are read and written for IPv6 too, but the socket here is IPv4).
//!
//! `--protocol norm --open` ([`norm_recv`], [`norm_send`]) is plain RFC 5740 NORM as NRL's
//! libnorm speaks it, on the same kind of socket (the group's port both ways; NACKs to the
//! group, watermark ACKs unicast to the sender): one FILE object, received from the first
//! NORM sender heard or sent to the acking nodes named, libnorm's Reed–Solomon repairs
//! translated by the shims of [`rmcast_proto::norm::rfc5740`] (`docs/norm-rfc5740.md`).

pub mod norm_recv;
pub mod norm_send;
pub mod recv;
pub mod send;

pub use recv::{recv, OpenRecv, OpenRecvReport};
pub use send::{send, OpenSend, OpenSendReport};

pub(crate) use crate::socket::wait_readable;
use crate::socket::{buffers, iface_of, join_v4, SocketOpts};
use crate::NetError;
use socket2::{Domain, Protocol, Socket, Type};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::time::Duration;

/// OpenPGM's default PGM data-destination port.
pub use rmcast_wire::rfc3208::udp::DEFAULT_DATA_DESTINATION_PORT;

/// What open mode cannot know, said in every summary: plain PGM has no session layer.
pub const UNKNOWN: [&str; 4] = [
    "how many receivers there are (PGM receivers are anonymous; no JOIN)",
    "whether any receiver completed (no acknowledgment, no END, no REPORT)",
    "what each receiver delivered (no per-receiver accounting)",
    "whether the data is the file sent (no digest: OpenPGM carries none)",
];

/// The socket of an open-mode endpoint: bound to the group's port on every address (NAKs
/// arrive unicast at it, data multicast), joined to the group, multicast interface, TTL
/// and loopback set; blocking reads with a timeout. Also returns the local address the
/// group is reached from (the source's NLA).
pub fn open_socket(o: &SocketOpts) -> Result<(UdpSocket, Ipv4Addr), NetError> {
    let IpAddr::V4(group) = o.group.ip() else {
        return Err(NetError::setup(
            "--open speaks IPv4 only here: give an IPv4 group",
        ));
    };
    let iface = iface_of(o)?;
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))
        .map_err(|e| NetError::setup(format!("cannot create a UDP socket: {e}")))?;
    let e = |op: &str, err| crate::error::classify(op, o.group, err);
    s.set_reuse_address(true)
        .map_err(|x| e("set SO_REUSEADDR", x))?;
    buffers(&s, o);
    let bind = SocketAddr::from(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, o.group.port()));
    s.bind(&bind.into())
        .map_err(|x| crate::error::classify("bind", bind, x))?;
    join_v4(&s, &group, iface).map_err(|x| e("join", x))?;
    s.set_multicast_ttl_v4(o.ttl).map_err(|x| e("set TTL", x))?;
    s.set_multicast_loop_v4(o.loopback)
        .map_err(|x| e("set loopback", x))?;
    if let Some(a) = iface.and_then(|i| i.v4) {
        s.set_multicast_if_v4(&a)
            .map_err(|x| e("choose interface", x))?;
    }
    let local = match iface.and_then(|i| i.v4) {
        Some(a) => a,
        None => route_source(o.group)?,
    };
    s.set_nonblocking(true)
        .map_err(|x| NetError::io("set non-blocking", x))?;
    Ok((s.into(), local))
}

/// The address the routing table sends to `group` from (a connected UDP socket's local
/// address; nothing is sent).
fn route_source(group: SocketAddr) -> Result<Ipv4Addr, NetError> {
    let probe = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))
        .map_err(|x| NetError::io("bind a probe socket", x))?;
    probe
        .connect(group)
        .map_err(|x| NetError::io("find the route to the group", x))?;
    match probe.local_addr() {
        Ok(SocketAddr::V4(a)) if !a.ip().is_unspecified() => Ok(*a.ip()),
        _ => Err(NetError::setup(
            "cannot tell this host's address toward the group: give --interface",
        )),
    }
}

/// A random GSI and TSI source port (1024 and up), as a source without a host-name GSI
/// takes them.
pub fn random_tsi() -> ([u8; 6], u16) {
    let gsi = rand::random::<[u8; 6]>();
    (gsi, rand::random::<u16>().max(1024))
}

/// The time one datagram of `wire_len` bytes (headers included) takes at `rate_bps` (zero:
/// unpaced).
fn gap(wire_len: usize, rate_bps: u64) -> Duration {
    if rate_bps == 0 {
        return Duration::ZERO;
    }
    let bits = wire_len as u64 * 8;
    Duration::from_nanos(bits.saturating_mul(1_000_000_000) / rate_bps)
}

/// Read `buf.len()` bytes or up to the end of `r`; how many were read.
fn fill(r: &mut dyn std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        let Some(rest) = buf.get_mut(n..) else { break };
        match r.read(rest) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Whether a read error is a read timeout (nothing arrived).
fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// What [`service`] delivered: messages and bytes.
#[derive(Debug, Default, Clone, Copy)]
struct Delivered {
    messages: u64,
    bytes: u64,
}

/// An open-mode receiver's turn: run `agent`'s due timers, send what it queued as `wire`
/// turns it into the standard's bytes (`None`: nothing to send) — a unicast to `unicast`,
/// the rest to `group`; a send error is not fatal, the agent repeats a lost request — and
/// write what it delivered to `out`.
fn service(
    agent: &mut dyn rmcast_proto::Agent,
    now: rmcast_proto::Time,
    sock: &UdpSocket,
    (group, unicast): (SocketAddr, SocketAddr),
    mut wire: impl FnMut(&[u8]) -> Option<Vec<u8>>,
    out: &mut dyn std::io::Write,
) -> Result<Delivered, NetError> {
    use rmcast_proto::{Dest, Event};
    if agent.poll_timeout().is_some_and(|t| t <= now) {
        agent.handle_timeout(now);
    }
    while let Some(t) = agent.poll_transmit() {
        let Some(bytes) = wire(&t.payload) else {
            continue;
        };
        let to = match t.dest {
            Dest::Node(_) => unicast,
            Dest::Group(_) => group,
        };
        let _ = sock.send_to(&bytes, to);
    }
    let mut d = Delivered::default();
    while let Some(ev) = agent.poll_event() {
        if let Event::Delivered { data, .. } = ev {
            out.write_all(&data)
                .map_err(|e| NetError::io("write the output", e))?;
            d.bytes += data.len() as u64;
            d.messages += 1;
        }
    }
    Ok(d)
}
