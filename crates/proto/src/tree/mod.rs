//! Seed 001 (Paul, Sabnani & Kristol): reliable multicast with tree-based ACK consolidation
//! and local re-multicast — the Designated Status Protocol (`dsp`), the Consolidated Status
//! Protocol (`csp`) and the Combined Protocol (`cp`), wire family 4 ([`rmcast_wire::tree`]).
//!
//! All three share one machinery, written once here:
//!
//! * **Block-based selective repeat.** One block is one DATA datagram (`seq` numbers blocks).
//!   The [`Source`] keeps every *outstanding* block (multicast at least once, not yet
//!   acknowledged by every reporter) and never holds more than `L` of them.
//! * **Periodic exchange of complete state.** Every reporter sends a status (`LW_r`, the LOB
//!   bitmap of `L` bits aligned at `LW_r`, `buffer_available`) at regular intervals (the paper
//!   simulates "once every 4 to 6 ms": each interval is drawn uniformly from
//!   `[status_min, status_max]`). Status packets are never acknowledged; a lost one is
//!   superseded by the next.
//! * **Loss detection at the source, on status arrival.** When a status from reporter `i`
//!   arrives and shows an outstanding block not received although it was (re)multicast at
//!   least `r_f × RTD_i` ago, the source re-multicasts it globally (seed 001 §3.1 point 2:
//!   "S globally multicasts a block again if there exists an E_i1 which has not received the
//!   block within the expected time … a multiple of the round-trip delay"). Deciding when a
//!   status arrives (rather than on a bare timer) means the status was generated after the
//!   block should have reached the reporter whenever `r_f > 1`, so stale status never causes a
//!   re-multicast.
//! * **Flow control.** A reporter's reassembly buffer holds `R` blocks (default `L`) in the
//!   sequence range `[rel, rel + R)`, where `rel` is the first block it has not released;
//!   `buffer_available = R − (LW_r − rel)`, the number of blocks from `LW_r` on it can still
//!   take. The source sends new block `s` only while `s < LW_r,i + buffer_available_i` for
//!   every reporter `i` (before the first status: `LW_r = 0`, `buffer_available = R`) and
//!   fewer than `L` blocks are outstanding. An endpoint that keeps a retransmission buffer
//!   (DSP's `E_i1`, every CP endpoint) releases an in-order block into it only when it has
//!   room (`C` blocks, default `L`); until then the block stays in the reassembly buffer and
//!   `buffer_available` shrinks (seed 001 §3.1 point 4). A block arriving beyond an endpoint's
//!   reassembly range is dropped (counted in the [`Gauge::Overflow`] gauge) and recovered like a
//!   loss.
//! * **Pacing.** The source sends at most one block per `ipt` (its negotiated peak rate,
//!   [`crate::pacing::Pacer`]), re-multicasts before new blocks.
//!
//! The three protocols differ in who reports to the source and who repairs:
//!
//! * `dsp`: each region's designated endpoint `E_i1` reports to S (its *own* status); no
//!   consolidation; local repair: `E_i1` re-multicasts on its local group what its members'
//!   statuses (to `E_i1`) lack.
//! * `csp`: the local exchange `L_i` ([`Exchange`], a router agent) reports to S; consolidation
//!   `LW_r` = min, LOB = AND, buffer = min; no local repair: the source repairs everything.
//! * `cp`: the local exchange `L_i` reports to S; consolidation `LW_r` = max, LOB = OR, buffer =
//!   min; local repair: `L_i` orders an endpoint that has the block to re-multicast it locally
//!   (ASSIGN).
//!
//! **Choices where the paper is silent** (also listed in the study's setup):
//! * DSP's `E_i1` re-multicasts block `s` locally when a member's status shows it missing and
//!   at least `r_f × local_rtd` has passed since `E_i1` received or last re-multicast it.
//! * CP's exchange sends each endpoint an ASSIGN after each consolidation when it has blocks
//!   for it: the blocks it must re-multicast now (each block to the first endpoint, in
//!   configuration order, whose status shows it). A block is not assigned again before
//!   `reassign_after` (default `status_max + r_f × local_rtd`, the time by which a status
//!   reflects the repair); "until told to stop" is thus "while the exchange keeps assigning
//!   it". ASSIGN's `base` is the region's pessimistic `LW_r` (the minimum): endpoints free
//!   retransmission-buffer blocks below it (an ASSIGN with no bits is sent when `base` moved by
//!   `L/8` blocks or more).
//! * An endpoint delivers blocks in order (one [`Event::Delivered`] per block).
//! * **Custody given up, on request** (sockets, where a designated receiver hosted on a relay
//!   can die and a standby relay replace it; off in the simulator, whose runs are unchanged).
//!   The designated endpoint ([`Endpoint::end_to_end`]) reports to the source an `LW_r` no
//!   higher than its members' lowest, what it holds above as received, and a
//!   `buffer_available` that ends where its own would; the source
//!   ([`SourceConfig::release_at_lw`]) releases a block only below that `LW_r`, re-multicasts
//!   none the LOB shows, and re-multicasts one a newer status no longer shows. Before its
//!   first status the designated endpoint waits until each member has reported (bounded) and
//!   takes the source's blocks from the lowest `LW_r` heard: 0 at the start of a session,
//!   where its members are for a fresh one replacing a dead one mid-transfer.

use crate::outbox::envelope;
use crate::pacing::Pacer;
use crate::rng::AgentRng;
use crate::sendq::SendQueue;
use crate::window::{Insert, SeqWindow};
use crate::{
    Agent, Dest, Event, Gauge, GroupId, IfaceId, NodeId, Outbox, RouteDecision, RouterAgent,
    RouterTransmit, SendError, Time,
};
use bytes::Bytes;
use core::time::Duration;
use rmcast_wire::{tree as wire, Message, Packet, FLAG_RETRANSMISSION, HEADER_LEN, MAX_DATAGRAM};
use std::collections::{BTreeMap, VecDeque};

mod deploy;
mod endpoint;
mod exchange;
mod hosted;
#[cfg(test)]
mod reelect_tests;
mod source;
pub mod spec;
mod status;
#[cfg(test)]
mod takeover_tests;
#[cfg(test)]
mod tests;

pub use deploy::{deploy, Deployment, Region, Settings};
pub use endpoint::{Endpoint, EndpointConfig, Role};
pub use exchange::{Exchange, ExchangeConfig};
pub use hosted::HostedDesignated;
pub use source::{Reporter, Source, SourceConfig};
pub use status::{consolidate, BlockStatus, Merge};

/// Largest block one DATA packet carries.
pub const MAX_BLOCK: usize = MAX_DATAGRAM - HEADER_LEN - 12;

/// Which of the three protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Designated status protocol.
    Dsp,
    /// Consolidated status protocol.
    Csp,
    /// Combined protocol.
    Cp,
}

impl Variant {
    /// Its name on the command line and in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Dsp => "dsp",
            Variant::Csp => "csp",
            Variant::Cp => "cp",
        }
    }
    /// The variant called `s`.
    pub fn parse(s: &str) -> Option<Variant> {
        match s {
            "dsp" => Some(Variant::Dsp),
            "csp" => Some(Variant::Csp),
            "cp" => Some(Variant::Cp),
            _ => None,
        }
    }
}

fn secs_mul(d: Duration, f: f64) -> Duration {
    Duration::from_secs_f64((d.as_secs_f64() * f).max(0.0))
}

/// `k` of Table 1: the status interval in units of `T_IN = max(RTD/kou, ipt)`.
pub fn k_field(interval: Duration, rtd: Duration, kou: u32, ipt: Duration) -> u16 {
    let t_in = (rtd / kou.max(1)).max(ipt);
    if t_in.is_zero() {
        return 1;
    }
    let k = (interval.as_secs_f64() / t_in.as_secs_f64()).round();
    k.clamp(1.0, f64::from(u16::MAX)) as u16
}

/// Buffer occupancy an agent keeps about itself and reports through [`Agent::gauge`] (the
/// study reads it): the number of blocks held over time, the retransmission buffer's peak
/// and the blocks dropped for overflow.
#[derive(Debug, Clone, Default)]
struct Occupancy {
    level: u64,
    peak: u64,
    since: u64,
    area: u128,
    overflow: u64,
    retx_peak: u64,
}

impl Occupancy {
    fn set(&mut self, now: Time, level: usize) {
        let t = now.as_nanos();
        let dt = t.saturating_sub(self.since);
        self.area += u128::from(self.level) * u128::from(dt);
        self.since = t.max(self.since);
        self.level = level as u64;
        self.peak = self.peak.max(level as u64);
    }
    fn set_retx(&mut self, level: usize) {
        self.retx_peak = self.retx_peak.max(level as u64);
    }
    fn overflowed(&mut self) {
        self.overflow += 1;
    }
    /// Time-average of the blocks held from 0 to `until`.
    fn mean(&self, until: Time) -> f64 {
        let t = until.as_nanos();
        let area = self.area + u128::from(self.level) * u128::from(t.saturating_sub(self.since));
        if t == 0 {
            0.0
        } else {
            area as f64 / t as f64
        }
    }
    fn gauge(&self, g: Gauge) -> Option<f64> {
        Some(match g {
            Gauge::Held => self.level as f64,
            Gauge::HeldPeak => self.peak as f64,
            Gauge::HeldMean { until } => self.mean(until),
            Gauge::RetxPeak => self.retx_peak as f64,
            Gauge::Overflow => self.overflow as f64,
            Gauge::Rate => return None,
        })
    }
}
