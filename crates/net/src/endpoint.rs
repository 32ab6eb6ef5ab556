//! What sender and receiver event loops share: sealing and opening datagrams, loss injection,
//! counters, protocol selection.

use crate::loss::{Direction, Injector, LossConfig};
use crate::secure::{Keys, Reject, Sealer, TRAILER_LEN};
use crate::NetError;
use mio::net::UdpSocket;
use rmcast_wire::{DecodeError, Family, Header};
use serde::Serialize;
use std::io;
use std::net::SocketAddr;

/// Largest datagram we read.
pub const RECV_BUF: usize = 65_536;

/// Counters of what the driver (not the agent) saw.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DriverStats {
    pub datagrams_sent: u64,
    pub bytes_sent: u64,
    pub datagrams_received: u64,
    /// Datagrams refused by authentication or decryption (bad tag, replay, too short).
    pub rejected_auth: u64,
    /// Datagrams that are not rmcast packets (bad header) or not for us.
    pub rejected_malformed: u64,
    /// Well-formed packets from a node or address that is not part of our session.
    pub rejected_stranger: u64,
    /// Packets dropped by injected loss.
    pub dropped_injected: u64,
    /// Times the socket's send buffer was full.
    pub send_blocked: u64,
}

impl DriverStats {
    pub fn rejected(&self) -> u64 {
        self.rejected_auth + self.rejected_malformed + self.rejected_stranger
    }
}

/// Sealing, loss injection and counting around one endpoint's sockets.
#[derive(Debug)]
pub struct Wire {
    sealer: Option<Sealer>,
    loss: Injector,
    scratch: Vec<u8>,
    pub stats: DriverStats,
    /// Set when unsealed packets look like they carry an authentication trailer.
    pub looks_sealed: bool,
}

/// Outcome of sending one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    Sent,
    Dropped,
    WouldBlock,
}

impl Wire {
    pub fn new(keys: Option<Keys>, loss: LossConfig) -> Self {
        Wire {
            sealer: keys.map(|k| Sealer::new(k, rand::random::<u64>())),
            loss: Injector::new(loss),
            scratch: Vec::with_capacity(RECV_BUF),
            stats: DriverStats::default(),
            looks_sealed: false,
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

    /// Injected loss on receive for a protocol packet.
    pub fn drop_rx(&mut self) -> bool {
        let d = self.loss.drop(Direction::Rx);
        if d {
            self.stats.dropped_injected += 1;
        }
        d
    }
}

/// The protocols the real-network driver can run, by command-line name.
pub fn protocol_family(name: &str) -> Result<Family, NetError> {
    match name {
        "saw" => Ok(Family::Saw),
        "bap" => Ok(Family::Bap),
        other => {
            let known: Vec<&str> = rmcast_proto::PROTOCOLS.iter().map(|p| p.name).collect();
            Err(NetError::setup(format!(
                "protocol {other:?} cannot run on the network in this build (available: saw, bap; \
                 implemented in the engine: {}): pass --protocol saw or bap",
                known.join(", ")
            )))
        }
    }
}
