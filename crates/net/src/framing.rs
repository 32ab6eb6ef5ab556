//! A standard's packets on the wire in the default socket mode (issue 62): the agents' own
//! datagrams translated at the socket boundary ([`crate::endpoint::Wire`]) to the standard's
//! on the session's data port (the group's port + 1), the session layer left in rmcast's
//! header on the group's port. One mechanism, one translator per standard: `pgm` as RFC 3208
//! ([`crate::pgmwire`]), `norm` as RFC 5740 ([`crate::normwire`]).

use crate::pgmwire::PgmWire;
use crate::socket::SocketOpts;
use crate::{normwire, pgmwire, NetError};
use std::net::SocketAddr;

/// What both sides of a session agree on from the ANNOUNCE: which standard, and its fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `pgm`'s packets as RFC 3208.
    Rfc3208(pgmwire::Framing),
    /// `norm`'s packets as RFC 5740.
    Rfc5740(normwire::Framing),
}

/// One endpoint's translation at its sockets.
#[derive(Debug)]
pub enum Framed {
    /// RFC 3208.
    Rfc3208(PgmWire),
    /// RFC 5740.
    Rfc5740(normwire::NormWire),
}

impl Framed {
    /// The translation of `f` on `group` at the endpoint of node `me`; `sender` is the
    /// sender's unicast address (on the sender: its own, for PGM's SPM), `from_sender` whether
    /// this endpoint is a receiver. `None` when the group's port has no next port.
    pub fn new(
        f: Framing,
        group: SocketAddr,
        sender: SocketAddr,
        me: u32,
        from_sender: bool,
    ) -> Option<Self> {
        match f {
            Framing::Rfc3208(f) => PgmWire::new(f, group, sender, from_sender).map(Framed::Rfc3208),
            Framing::Rfc5740(f) => normwire::NormWire::new(f, group, me).map(Framed::Rfc5740),
        }
    }

    /// The member `node` sends from `addr` (the sender's side; NORM names its nodes itself).
    pub fn peer(&mut self, addr: SocketAddr, node: u32) {
        if let Framed::Rfc3208(w) = self {
            w.peer(addr, node);
        }
    }

    /// The group at the data port.
    pub fn data_group(&self) -> SocketAddr {
        match self {
            Framed::Rfc3208(w) => w.data_group(),
            Framed::Rfc5740(w) => w.data_group(),
        }
    }

    /// Packets the translator could not translate, either way.
    pub fn untranslatable(&self) -> u64 {
        match self {
            Framed::Rfc3208(w) => w.untranslatable(),
            Framed::Rfc5740(w) => w.untranslatable(),
        }
    }

    /// The agent's datagram `d` to `to` as it goes on the wire (`None`: nothing goes).
    pub fn outgoing(&mut self, to: SocketAddr, d: &[u8]) -> Option<(SocketAddr, Vec<u8>)> {
        match self {
            Framed::Rfc3208(w) => w.outgoing(to, d),
            Framed::Rfc5740(w) => w.outgoing(to, d),
        }
    }

    /// Whether `d`, read on the data port, is this endpoint's own multicast looped back.
    pub fn echo(&self, d: &[u8]) -> bool {
        match self {
            // The sender's data socket joins no group; a receiver sends no downstream packet.
            Framed::Rfc3208(_) => false,
            Framed::Rfc5740(w) => w.echo(d),
        }
    }

    /// The agent's datagram for a datagram read on the data port from `from` (`None`: not
    /// one of this session's, or from nobody known).
    pub fn incoming(&mut self, from: SocketAddr, d: &[u8]) -> Option<Vec<u8>> {
        match self {
            Framed::Rfc3208(w) => w.incoming(from, d),
            Framed::Rfc5740(w) => w.incoming(d),
        }
    }
}

/// The group at the data port of a session on `group`, when it has one (an unkeyed session:
/// a keyed one is sealed whole, no standard's packets): where receivers of a protocol that
/// frames its packets join at the first ANNOUNCE.
pub fn data_group(group: SocketAddr, keyed: bool) -> Option<SocketAddr> {
    let port = pgmwire::data_port(group).filter(|_| !keyed)?;
    Some(SocketAddr::new(group.ip(), port))
}

/// The sender's socket on the data port of `f`'s standard: PGM's NAKs come unicast
/// ([`pgmwire::data_socket`]); NORM's receivers multicast theirs, so it joins the group at
/// the data port.
pub fn data_socket(f: &Framing, o: &SocketOpts) -> Result<std::net::UdpSocket, NetError> {
    match f {
        Framing::Rfc3208(_) => pgmwire::data_socket(o),
        Framing::Rfc5740(_) => {
            let port = pgmwire::data_port(o.group).ok_or_else(|| {
                NetError::setup("norm's data port is the group's port + 1: give a lower port")
            })?;
            let mut o = o.clone();
            o.group = SocketAddr::new(o.group.ip(), port);
            let s = crate::socket::group_socket(&o)?;
            crate::socket::coalesce_reads(&s);
            Ok(s)
        }
    }
}
