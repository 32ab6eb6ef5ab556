//! What `rmcast relay` reports: per session served, and for the whole run.

use serde::Serialize;
use std::net::SocketAddr;

/// What a relay did, per session it served.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SessionReport {
    /// The session id.
    pub session: u32,
    /// The sender's node id.
    pub sender: u32,
    /// The sender's address as the relay saw it (a relay's, when relays stack).
    pub upstream: Option<SocketAddr>,
    /// The protocol's name (`None`: no running ANNOUNCE was heard).
    pub protocol: Option<&'static str>,
    /// Whether the protocol's router agent ran (`false`: every packet was forwarded).
    pub agent: bool,
    /// Receivers (or relays) served downstream.
    pub receivers: usize,
    /// How the session ended: `end` (the sender's END), `silent` (nothing for `idle`),
    /// `interrupted`, `running`, or `refused` (a protocol a relay cannot carry: nothing of
    /// the session was forwarded).
    pub ended: &'static str,
    /// Datagrams from upstream multicast or forwarded down (each counted once).
    pub down_forwarded: u64,
    /// Datagrams from upstream the agent sent down only some interfaces.
    pub down_subcast: u64,
    /// Datagrams from upstream the agent swallowed (PGM: RDATA nobody here asked for).
    pub down_consumed: u64,
    /// Datagrams from receivers forwarded upstream.
    pub up_forwarded: u64,
    /// Datagrams from receivers the agent swallowed (PGM: NAKs for a repair already asked).
    pub up_consumed: u64,
    /// Datagrams the agent originated (PGM: NCFs).
    pub originated: u64,
    /// Of those, repairs (the agent's own counter: a prmp relay's repairs to its children, a
    /// dsp designated relay's local re-multicasts).
    pub repairs_originated: u64,
    /// Most protocol state entries the agent held at once (PGM: packets with repair state).
    pub peak_state: usize,
    /// Times the agent moved a role off a receiver that went silent (LMS: its replier link).
    pub role_moves: u64,
    /// The local group carried between the downstream interfaces (cp), if any.
    pub local_group: Option<SocketAddr>,
    /// Datagrams of the local group carried (each counted once, however many interfaces).
    pub local_carried: u64,
    /// `--standby`: datagrams from upstream held while the active relay served the region.
    pub standby_held: u64,
    /// `--standby`: seconds from the session's start here to the takeover (`None`: it never
    /// took over, or it is no standby).
    pub took_over_after_s: Option<f64>,
}

/// What `rmcast relay` reports when it ends.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RelayReport {
    /// The sessions served, oldest first.
    pub sessions: Vec<SessionReport>,
    /// Datagrams refused: not rmcast, another session, from an address that is not the
    /// session's sender or one of its receivers.
    pub rejected: u64,
    /// Sealed (keyed) datagrams refused by a relay without a key (`--key-file`).
    pub rejected_sealed: u64,
    /// With a key: datagrams that did not open with it (another key, `--encrypt` on one side
    /// only, not sealed, tampered with, or a replay).
    pub rejected_auth: u64,
    /// With a key: ANNOUNCEs that opened but were sealed more than
    /// [`crate::secure::FRESHNESS`] from this host's clock (a dead session's ANNOUNCE
    /// replayed, or clocks apart): not served, as a receiver would not join.
    pub rejected_stale: u64,
    /// Receivers refused beyond `max_receivers`.
    pub rejected_receivers: u64,
    /// Datagrams a full socket buffer (or another send error) dropped, as a router's full
    /// queue drops them.
    pub send_dropped: u64,
    /// Whether a signal ended it.
    pub interrupted: bool,
}
