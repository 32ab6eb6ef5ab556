//! The session a receiver found: its sender, whether it was admitted, the agent built from
//! the ANNOUNCE, and where the agent's datagrams go.

use crate::agents::{self, Announced, Me, Received, ReceiverSide};
use crate::NetError;
use rmcast_proto::{Agent, Dest, GroupId, Time};
use rmcast_wire::session;
use rmcast_wire::Header;
use std::net::SocketAddr;

/// The session this receiver found.
pub(super) struct Joined {
    pub(super) session: u32,
    pub(super) sender_node: u32,
    pub(super) sender_addr: SocketAddr,
    pub(super) admitted: bool,
    /// `None` until the announce says enough to build it (`dsp`: the running announce).
    pub(super) built: Option<Received>,
    pub(super) last_from_sender: Time,
    /// Joining a running stream late (the sender offered it); protocol packets are
    /// ignored until the sender admits it.
    pub(super) late: bool,
    /// With a key: the newest seal counter of a packet from the sender at `sender_addr`.
    pub(super) newest: u64,
}

impl Joined {
    /// With a key, an authenticated ANNOUNCE of our session and sender from another address,
    /// sealed after everything the sender's address sent us, moves the session there
    /// (returns true). A replay cannot be newer than what it copies, so the first ANNOUNCE
    /// seen being a copy another host replayed from its own address (the original missed)
    /// no longer ties the receiver to that host for good; the sender's next packet wins.
    pub(super) fn follow(
        &mut self,
        h: &Header,
        from: SocketAddr,
        counter: u64,
        announce: bool,
    ) -> bool {
        if h.session != self.session || h.source != self.sender_node {
            return false;
        }
        if from == self.sender_addr {
            self.newest = self.newest.max(counter);
            return false;
        }
        if announce && counter > self.newest {
            self.sender_addr = from;
            self.newest = counter;
            return true;
        }
        false
    }
}

impl Joined {
    pub(super) fn agent(&mut self) -> Option<&mut dyn Agent> {
        self.built.as_mut().map(|b| &mut *b.agent as &mut dyn Agent)
    }

    pub(super) fn side(&self) -> Option<&dyn ReceiverSide> {
        self.built.as_ref().map(|b| &*b.side)
    }

    /// Whether a protocol packet from `h`/`from` belongs to our session: from the sender's
    /// address (the sender's, or an `rmcast relay`'s in its place, whose network agent
    /// speaks under its own node id: an LMS turning point's DREQ), or from a peer the
    /// protocol names (`dsp`: a peer of our region).
    pub(super) fn accepts(&self, h: &Header, from: SocketAddr) -> bool {
        if h.session != self.session {
            return false;
        }
        if from == self.sender_addr {
            // The sender sends everything from one socket: its address and port.
            return true;
        }
        if h.source == self.sender_node {
            return false;
        }
        self.side().is_some_and(|d| {
            d.peers()
                .iter()
                .any(|(n, a)| *n == h.source && a.ip() == from.ip())
        })
    }

    /// Build the agent from the sender's announce `m`, if it says enough; returns a further
    /// group to join, if any.
    pub(super) fn build(
        &mut self,
        m: &session::Message<'_>,
        node: u32,
        group: SocketAddr,
    ) -> Result<Option<SocketAddr>, NetError> {
        let Some(a) = Announced::of(m) else {
            return Ok(None);
        };
        let me = Me {
            node,
            session: self.session,
            sender: self.sender_node,
            group,
        };
        let Some(built) = agents::receiver_agent(a, &me)? else {
            return Ok(None);
        };
        let join = built.side.join();
        self.built = Some(built);
        Ok(join)
    }

    /// Where a transmit of the agent goes.
    pub(super) fn route(&self, dest: Dest, group: SocketAddr) -> Option<SocketAddr> {
        match dest {
            Dest::Node(n) if n.0 == self.sender_node => Some(self.sender_addr),
            Dest::Node(n) => match self.side().map(|d| d.peers()) {
                Some(peers) if !peers.is_empty() => {
                    peers.iter().find(|(p, _)| *p == n.0).map(|(_, a)| *a)
                }
                // A protocol without peers names a node in the network (an LMS replier's
                // REPAIR to its turning point): everything goes up through the sender's
                // address, where a relay stands for the network.
                _ => Some(self.sender_addr),
            },
            Dest::Group(GroupId(0)) => Some(group),
            Dest::Group(_) => self.side().and_then(|d| d.local_group()),
        }
    }
}
