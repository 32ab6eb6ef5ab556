//! What sender and receiver event loops share: sealing and opening datagrams, loss injection,
//! counters, protocol selection.

use crate::loss::{Direction, Injector, LossConfig};
use crate::secure::{Keys, Reject, Sealer, TRAILER_LEN};
use mio::net::UdpSocket;
use rmcast_wire::{session, DecodeError, Envelope, Header, Message, Packet};
use serde::Serialize;
use std::io;
use std::net::SocketAddr;

/// Largest datagram we read.
pub const RECV_BUF: usize = 65_536;

/// Counters of what the driver (not the agent) saw.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DriverStats {
    /// Datagrams handed to the socket.
    pub datagrams_sent: u64,
    /// Bytes of those, sealing included.
    pub bytes_sent: u64,
    /// Datagrams read from the sockets.
    pub datagrams_received: u64,
    /// Datagrams refused by authentication or decryption (bad tag, replay, too short).
    pub rejected_auth: u64,
    /// Datagrams that are not rmcast packets (bad header) or not for us.
    pub rejected_malformed: u64,
    /// Well-formed packets from a node or address that is not part of our session.
    pub rejected_stranger: u64,
    /// Well-formed ANNOUNCEs refused: parameters that do not validate (an unknown protocol,
    /// a window, timing or size outside the protocol spec's range, malformed protocol
    /// parameters), a security mode other than ours, or a session that started without us.
    pub rejected_announce: u64,
    /// Packets dropped by injected loss.
    pub dropped_injected: u64,
    /// Times the socket's send buffer was full.
    pub send_blocked: u64,
    /// Datagrams the agent queued while the sender's queue already held
    /// `MAX_PENDING` (65,536) unsent ones: dropped as a full switch queue drops them (the
    /// protocol repairs what mattered). Only a flood of requests makes an agent outrun its
    /// pacer that far.
    pub dropped_backlog: u64,
    /// Batches of protocol datagrams handed to the socket (one `sendmmsg` each on Linux);
    /// `datagrams_sent` over this is the mean batch size.
    pub send_batches: u64,
    /// Datagrams received larger than one frame of our link carries: the IP layer fragmented
    /// and reassembled them, and one lost frame would have lost each (the sender passed
    /// `--allow-fragmentation`, or its link has a larger MTU than ours).
    pub reassembled: u64,
    /// Datagrams the kernel dropped at our sockets because their receive buffers were full
    /// (`SO_RXQ_OVFL`, Linux; 0 elsewhere).
    pub kernel_drops: u64,
    /// Reads of several datagrams at once (`recvmmsg` on Linux) that returned any;
    /// `datagrams_received` over this is the mean batch.
    pub recv_batches: u64,
    /// Datagrams the kernel handed over coalesced with others of their sender (UDP GRO), split
    /// again on reading.
    pub recv_coalesced: u64,
}

impl DriverStats {
    /// Datagrams refused for any reason (authentication, malformed, strangers, ANNOUNCEs).
    pub fn rejected(&self) -> u64 {
        self.rejected_auth
            + self.rejected_malformed
            + self.rejected_stranger
            + self.rejected_announce
    }
}

/// Sealing, loss injection and counting around one endpoint's sockets.
#[derive(Debug)]
pub struct Wire {
    sealer: Option<Sealer>,
    loss: Injector,
    scratch: Vec<u8>,
    /// One sealing buffer per datagram of a batch.
    batch: Vec<Vec<u8>>,
    /// What it counted.
    pub stats: DriverStats,
    /// Set when unsealed packets look like they carry an authentication trailer.
    pub looks_sealed: bool,
    /// The standard's translation, when the session runs it ([`crate::framing`]: pgm's
    /// RFC 3208, norm's RFC 5740).
    pub framed: Option<crate::framing::Framed>,
}

/// Outcome of sending one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// Handed to the socket.
    Sent,
    /// Dropped by injected loss.
    Dropped,
    /// The socket's send buffer is full: try again when it is writable.
    WouldBlock,
}

impl Wire {
    /// Sealing with `keys` (none: plain datagrams) and loss injected as `loss` says.
    pub fn new(keys: Option<Keys>, loss: LossConfig) -> Self {
        Wire {
            sealer: keys.map(|k| Sealer::new(k, crate::secure::unix_micros())),
            loss: Injector::new(loss),
            scratch: Vec::with_capacity(RECV_BUF),
            batch: Vec::new(),
            stats: DriverStats::default(),
            looks_sealed: false,
            framed: None,
        }
    }

    /// Put the counter of every datagram this endpoint seals into its own replay window
    /// ([`Sealer::remember_sealed`]): copies of its own packets sent back to it are replays.
    pub fn remember_sealed(&mut self) {
        if let Some(s) = self.sealer.as_mut() {
            s.remember_sealed();
        }
    }

    /// Bytes sealing adds to each datagram.
    pub fn overhead(&self) -> usize {
        if self.sealer.is_some() {
            TRAILER_LEN
        } else {
            0
        }
    }

    /// Send one plain datagram; `protocol` packets are subject to injected loss.
    pub fn send(
        &mut self,
        sock: &UdpSocket,
        to: SocketAddr,
        datagram: &[u8],
        protocol: bool,
    ) -> io::Result<Sent> {
        if protocol && self.loss.drop(Direction::Tx) {
            self.stats.dropped_injected += 1;
            return Ok(Sent::Dropped);
        }
        let buf: &[u8] = match self.sealer.as_mut() {
            Some(s) => {
                self.scratch.clear();
                s.seal(datagram, &mut self.scratch);
                &self.scratch
            }
            None => datagram,
        };
        match sock.send_to(buf, to) {
            Ok(_) => {
                self.stats.datagrams_sent += 1;
                self.stats.bytes_sent += buf.len() as u64;
                Ok(Sent::Sent)
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.stats.send_blocked += 1;
                Ok(Sent::WouldBlock)
            }
            Err(e) => Err(e),
        }
    }

    /// Send protocol datagrams `(destination, plain datagram)` in order, several per system
    /// call where the platform allows (see [`crate::socket::send_many`]), each subject to
    /// injected loss. Returns how many leading items were consumed (sent or dropped) and
    /// whether the socket's send buffer filled before the rest could go; the caller keeps the
    /// others for later.
    pub fn send_batch(
        &mut self,
        sock: &UdpSocket,
        items: &[(SocketAddr, &[u8])],
    ) -> io::Result<(usize, bool)> {
        let items = items.get(..crate::socket::MAX_BATCH).unwrap_or(items);
        let Some(pgm) = self.framed.as_mut() else {
            return self.send_items(sock, items, &[]);
        };
        // The standard's bytes: a datagram the translator drops counts as consumed.
        let framed: Vec<Option<(SocketAddr, Vec<u8>)>> =
            items.iter().map(|(to, d)| pgm.outgoing(*to, d)).collect();
        let skip: Vec<bool> = framed.iter().map(Option::is_none).collect();
        let view: Vec<(SocketAddr, &[u8])> = items
            .iter()
            .zip(&framed)
            .map(|((to, d), f)| f.as_ref().map_or((*to, *d), |(a, b)| (*a, &b[..])))
            .collect();
        self.send_items(sock, &view, &skip)
    }

    /// [`Wire::send_batch`] of datagrams as they go on the wire, but for those `skip` marks
    /// (consumed, not sent).
    fn send_items(
        &mut self,
        sock: &UdpSocket,
        items: &[(SocketAddr, &[u8])],
        skip: &[bool],
    ) -> io::Result<(usize, bool)> {
        let lost: Vec<bool> = items
            .iter()
            .map(|_| self.loss.drop(Direction::Tx))
            .collect();
        let dropped: Vec<bool> = lost
            .iter()
            .enumerate()
            .map(|(i, l)| *l || skip.get(i).copied().unwrap_or(false))
            .collect();
        if let Some(s) = self.sealer.as_mut() {
            if self.batch.len() < items.len() {
                self.batch.resize_with(items.len(), Vec::new);
            }
            for ((_, d), out) in items.iter().zip(self.batch.iter_mut()) {
                out.clear();
                s.seal(d, out);
            }
        }
        // (index in `items`, destination, bytes on the wire) of the datagrams not dropped.
        let mut out: Vec<(usize, SocketAddr, &[u8])> = Vec::with_capacity(items.len());
        for (i, ((to, d), dropped)) in items.iter().zip(&dropped).enumerate() {
            if !dropped {
                let buf: &[u8] = match self.sealer {
                    Some(_) => self.batch.get(i).map_or(&[], Vec::as_slice),
                    None => d,
                };
                out.push((i, *to, buf));
            }
        }
        let msgs: Vec<(SocketAddr, &[u8])> = out.iter().map(|(_, to, b)| (*to, *b)).collect();
        if !msgs.is_empty() {
            self.stats.send_batches += 1;
        }
        let sent = match crate::socket::send_many(sock, &msgs) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => 0,
            Err(e) => return Err(e),
        };
        let (consumed, blocked) = match out.get(sent) {
            Some((first_unsent, _, _)) => (*first_unsent, true),
            None => (items.len(), false),
        };
        if blocked {
            self.stats.send_blocked += 1;
        }
        self.stats.datagrams_sent += sent as u64;
        self.stats.bytes_sent += out
            .iter()
            .take(sent)
            .map(|(_, _, b)| b.len() as u64)
            .sum::<u64>();
        self.stats.dropped_injected += lost.iter().take(consumed).filter(|d| **d).count() as u64;
        Ok((consumed, blocked))
    }

    /// The node a received datagram's header names as its source, read without opening it
    /// (the header travels in the clear; a key authenticates it, it does not hide it);
    /// `None` if the header does not parse. Only for skipping datagrams: a forged one is
    /// refused by [`Wire::open`] later, so nothing may trust this.
    pub fn claimed_source(&self, d: &[u8]) -> Option<u32> {
        let plain = match self.sealer {
            Some(_) => d.len().checked_sub(TRAILER_LEN)?,
            None => d.len(),
        };
        Header::parse(d.get(..plain)?).ok().map(|h| h.source)
    }

    /// Open a received datagram in place. Returns the plain datagram's header and length, or
    /// `None` if it was refused (and counted).
    pub fn open(&mut self, buf: &mut [u8]) -> Option<(Header, usize)> {
        self.stats.datagrams_received += 1;
        let n = match self.sealer.as_mut() {
            Some(s) => match s.open(buf) {
                Ok(n) => n,
                Err(Reject::Short | Reject::BadTag | Reject::Replay) => {
                    self.stats.rejected_auth += 1;
                    return None;
                }
            },
            None => buf.len(),
        };
        let plain = buf.get(..n)?;
        match Header::parse(plain) {
            Ok(h) => Some((h, n)),
            Err(DecodeError::LengthMismatch { header, actual })
                if self.sealer.is_none() && actual as u64 == header + TRAILER_LEN as u64 =>
            {
                self.looks_sealed = true;
                self.stats.rejected_auth += 1;
                None
            }
            Err(_) => {
                self.stats.rejected_malformed += 1;
                None
            }
        }
    }

    /// The agent's datagram for one read on the data port ([`crate::framing`]) from `from`;
    /// `None` (counted received and malformed) for one that is no packet of the session in
    /// its standard or comes from nobody known, or when the session runs no translation.
    /// What it returns is then opened with [`Wire::open`], which counts it received. The
    /// endpoint's own multicast looped back is `None` and not counted.
    pub fn framed_incoming(&mut self, from: SocketAddr, d: &[u8]) -> Option<Vec<u8>> {
        if self.framed.as_ref().is_some_and(|f| f.echo(d)) {
            return None;
        }
        let out = self.framed.as_mut().and_then(|p| p.incoming(from, d));
        if out.is_none() {
            self.stats.datagrams_received += 1;
            self.stats.rejected_malformed += 1;
        }
        out
    }

    /// Count the datagram [`Wire::open`] opened last as a stranger's and take back its mark
    /// in the replay window ([`Sealer::unmark_last`]): the same bytes may yet come from an
    /// address that is accepted (a relay's copy of a member's multicast).
    pub fn stranger(&mut self) {
        self.stats.rejected_stranger += 1;
        self.unmark();
    }

    /// [`Wire::stranger`] without counting it.
    pub fn unmark(&mut self) {
        if let Some(s) = self.sealer.as_mut() {
            s.unmark_last();
        }
    }

    /// The counter (sealing time, µs since the Unix epoch) of the datagram [`Wire::open`]
    /// accepted last; `None` without a key.
    pub fn opened_counter(&self) -> Option<u64> {
        self.sealer.as_ref().map(Sealer::last_opened)
    }

    /// Injected loss on receive for a protocol packet.
    pub fn drop_rx(&mut self) -> bool {
        let d = self.loss.drop(Direction::Rx);
        if d {
            self.stats.dropped_injected += 1;
        }
        d
    }
}

pub use crate::agents::protocol_family;

/// A session-layer datagram (wire family 15) from `node` in `session`; an error (never an
/// empty datagram) for one the wire format cannot carry, such as a member list of more than
/// 65,535 receivers.
pub fn session_packet(
    session: u32,
    node: u32,
    m: session::Message<'_>,
) -> Result<Vec<u8>, rmcast_wire::EncodeError> {
    Packet::to_vec(
        Envelope {
            session,
            source: node,
            flags: 0,
        },
        &Message::Session(m),
    )
}

/// A random node or session id (never 0, which names nobody).
pub fn nonzero_random() -> u32 {
    loop {
        let v: u32 = rand::random();
        if v != 0 {
            return v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::LossConfig;
    use crate::socket::{group_socket, unicast_socket, SocketOpts};
    use std::time::{Duration, Instant};

    /// A receiving group socket and a sending socket on the loopback interface.
    fn pair(group: &str) -> (std::net::UdpSocket, UdpSocket, SocketAddr) {
        let group: SocketAddr = group.parse().unwrap();
        let mut o = SocketOpts::new(group);
        o.interface = Some("lo".into());
        let rx = group_socket(&o).unwrap();
        rx.set_nonblocking(false).unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let tx = UdpSocket::from_std(unicast_socket(&o).unwrap());
        (rx, tx, group)
    }

    /// Datagram `i` of a test batch: distinct contents and sizes.
    fn datagram(i: usize) -> Vec<u8> {
        (0..100 + 37 * i).map(|b| (b * 7 + i) as u8).collect()
    }

    /// Send `items` with `send_batch`, retrying what a full send buffer left over.
    fn send_all(wire: &mut Wire, tx: &UdpSocket, items: &[(SocketAddr, &[u8])]) -> usize {
        let (mut at, mut calls) = (0, 0);
        let start = Instant::now();
        while at < items.len() {
            let (n, _blocked) = wire.send_batch(tx, &items[at..]).unwrap();
            at += n;
            calls += 1;
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "send buffer never drained"
            );
        }
        calls
    }

    #[test]
    fn a_session_packet_the_wire_cannot_carry_is_an_error_not_an_empty_datagram() {
        let members = session::encode_members(&vec![7u32; 70_000]);
        let m = session::Message::Announce {
            protocol: 1,
            phase: session::Phase::Gathering,
            security: 0,
            ack_delay_us: 0,
            window: 0,
            ack_timeout_us: 0,
            members: &members,
            params: &[],
        };
        assert!(session_packet(1, 2, m).is_err());
        let ok = session_packet(1, 2, session::Message::Join { region: None }).unwrap();
        assert_eq!(ok.len(), rmcast_wire::HEADER_LEN);
    }

    #[test]
    fn the_claimed_source_is_read_from_plain_and_sealed_datagrams_without_opening_them() {
        let d = session_packet(7, 42, session::Message::Join { region: None }).unwrap();
        let plain = Wire::new(None, LossConfig::default());
        assert_eq!(plain.claimed_source(&d), Some(42));
        let keys = Keys::from_secret(b"a batch test key of some length!", true).unwrap();
        let mut keyed = Wire::new(Some(keys), LossConfig::default());
        let mut sealed = Vec::new();
        keyed.sealer.as_mut().unwrap().seal(&d, &mut sealed);
        assert_eq!(keyed.claimed_source(&sealed), Some(42));
        assert_eq!(keyed.stats.datagrams_received, 0, "nothing was opened");
        // A sealed datagram read as plain, or a torn one: no header, no source.
        assert_eq!(plain.claimed_source(&sealed), None);
        assert_eq!(keyed.claimed_source(&sealed[..10]), None);
    }

    #[test]
    fn a_batch_arrives_intact_and_in_order() {
        let (rx, tx, group) = pair("239.255.78.1:28651");
        let data: Vec<Vec<u8>> = (0..40).map(datagram).collect();
        let items: Vec<(SocketAddr, &[u8])> = data.iter().map(|d| (group, &d[..])).collect();
        let mut wire = Wire::new(None, LossConfig::default());
        let calls = send_all(&mut wire, &tx, &items);
        assert!(calls < data.len(), "one call per datagram: {calls}");
        assert_eq!(wire.stats.send_batches, calls as u64);
        assert_eq!(wire.stats.datagrams_sent, data.len() as u64);
        let bytes: usize = data.iter().map(Vec::len).sum();
        assert_eq!(wire.stats.bytes_sent, bytes as u64);
        let mut buf = vec![0u8; RECV_BUF];
        for d in &data {
            let n = rx.recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], &d[..]);
        }
    }

    #[test]
    fn a_batch_is_sealed_and_loss_injected_per_datagram() {
        let (rx, tx, group) = pair("239.255.78.2:28652");
        let keys = Keys::from_secret(b"a batch test key of some length!", false).unwrap();
        let data: Vec<Vec<u8>> = (0..30).map(datagram).collect();
        let items: Vec<(SocketAddr, &[u8])> = data.iter().map(|d| (group, &d[..])).collect();
        let loss = LossConfig {
            one_in: Some(3),
            direction: crate::loss::Direction::Tx,
            ..LossConfig::default()
        };
        let mut wire = Wire::new(Some(keys.clone()), loss);
        send_all(&mut wire, &tx, &items);
        assert_eq!(wire.stats.dropped_injected, 10);
        assert_eq!(wire.stats.datagrams_sent, 20);
        let mut opener = Wire::new(Some(keys), LossConfig::default());
        let mut buf = vec![0u8; RECV_BUF];
        let mut got = Vec::new();
        for _ in 0..20 {
            let n = rx.recv(&mut buf).unwrap();
            got.push(buf[..n].to_vec());
        }
        // Every datagram that arrived opens to one of the originals, in the original order.
        let mut next = 0;
        for g in &mut got {
            let n = opener.sealer.as_mut().unwrap().open(g).unwrap();
            let pos = data[next..].iter().position(|d| d[..] == g[..n]).unwrap();
            next += pos + 1;
        }
        assert_eq!(opener.stats.rejected_auth, 0);
    }
}
