//! `prmp` — polling-based reliable multicast, "PF" (seed 004: Barcellos & Ezhilchelvan, §2–§3).
//!
//! One parent (the [`Sender`]) reliably transmits a stream of data packets to `NC` children
//! ([`Receiver`]). Children answer only when polled; the parent plans its polls so that at
//! most `RQ = ⌊RR·ε⌋` responses are expected in any epoch of length `ε`, which keeps the
//! response arrival rate at or below the configured response rate `RR` and so avoids
//! implosion.
//!
//! ## What is implemented, with the paper's names
//!
//! * **Windows (§2.1).** Each child keeps `W_i` (a [`SeqWindow`] of size `S`): `LE_i` is the
//!   earliest packet that is unconsumed or not yet received, `HR_i` the highest received.
//!   The parent keeps a copy `W_p,i` per child (`LE_p,i`, `HR_p,i`, bitmap) and `HS`. A RESP
//!   updates `LE_p,i ← max`, `HR_p,i ← max`, then ORs the bitmap in.
//! * **Flow control (§2.2).** `EW_p = min_i (LE_p,i + S) − (HS + 1)`; new data is sent only
//!   while `EW_p > 0` (closed-window blocking). Any two transmissions of the parent are at
//!   least `IPG` apart.
//! * **Packets.** DATA, POLL, DATAPOLL and RESP with `POLL.TS`, `POLL.CLD`, `POLL.SEQ = HS`
//!   (see `rmcast_wire::prmp`).
//! * **Polling (§2.3, [`plan`]).** Epochs, `RQ`, `ARC`, the `PPT` with
//!   `est_i = max(clock, n·ε − RTT_i)`, and the three planning triggers: (a) just before a data
//!   packet (first transmission or retransmission) goes to a child not in the PPT; (b) a
//!   response shows the child's buffer full of unconsumed packets; (c) an absent response
//!   (repoll). Before each data packet the due children (`est_i <= clock`) are piggybacked
//!   (DATAPOLL); when no data can go, an explicit POLL is sent at the next polling time
//!   `NPT = min est_i + IPG` (and at least one IPG after the previous transmission) to every
//!   child with `est_i <= NPT`.
//! * **RTT (§2.1, §2.4).** Every RESP gives a sample `arrival − RESP.TS`, smoothed per child by
//!   the shared [`RttEstimator`] (its SRTT is `RTT_i`). A poll's timeout is
//!   `TO.EXP = POLL.TS + max_{i ∈ POLL.CLD} RTO_i` with `RTO_i = 2 × RTT_i` (§4: "twice the
//!   largest estimated RTT"), floored at [`SenderConfig::min_rto`].
//! * **Absent responses (§2.4, §3 MPT).** A child still in `TO.CLD` when the timeout fires is
//!   absent: its MPT count grows, and it is repolled with priority (free quota first, else
//!   quota stolen from a child not in REPOLL, epoch by epoch). A RESP removes its sender from
//!   every TO with `TO.TS <= RESP.TS`, and updates the MPT count as §3 says (equal timestamps:
//!   −1; RESP.TS larger: 0; smaller: 1). After [`SenderConfig::max_silent_polls`] consecutive
//!   absent responses the child is removed from `ALL` (counted in
//!   [`Stats::evicted`](crate::Stats::evicted)); its later packets are ignored, and the window
//!   may open.
//! * **Recovery (§2.5.1).** `status(seq)` goes NO_NACK → COLLECTION (first nack) →
//!   RETRANSMITTED. In COLLECTION the packet is multicast as soon as
//!   `|nacked(seq)| >= MTR × NC`; otherwise it is unicast to each nacker once every child has
//!   acked, nacked or is in `repolled(seq)`. The retransmission table `RTxT[i, seq]` holds
//!   the latest retransmission time to each child; in RETRANSMITTED a nack whose `RESP.TS` is
//!   earlier than that time is obsolete and ignored, a later one gets a unicast. The
//!   recovery step runs for `LE_p <= seq <= RESP.W.HR` on every RESP and for
//!   `LE_p <= seq <= POLL.SEQ` on every poll timeout, as in §3.
//! * **Multicast or unicast (§3, TXM (vi)).** A packet whose destination set has at least
//!   `MTR × NC` children is multicast; a smaller set gets one unicast copy per child.
//! * **Receivers** consume immediately ("hungry") unless
//!   [`ReceiverConfig::consume_rate`] is set, in which case one packet is consumed every
//!   `1/rate` and unconsumed packets hold the window's left edge.
//!
//! ## Choices where the paper is silent (all documented here)
//!
//! 1. **A poll raises `HR_i`.** A child receiving a poll sets `HR_i ← max(HR_i, POLL.SEQ)`
//!    before it answers, so a response nacks every packet up to `HS` it has not received.
//!    Without this, loss of the last packets would never be reported (the parent would treat
//!    them as "in transit" forever). It also guarantees that every answered poll with
//!    `POLL.SEQ >= seq` leaves the child in `acked(seq)` or `nacked(seq)`.
//! 2. **`NC` in the MTR rule is the current size of `ALL`** (removed children no longer count).
//!    The comparison is exact integer arithmetic on MTR in parts per million.
//! 3. **Obsolete nacks.** Besides `RTxT[i, seq]`, the special multicast entry of §3 (latest
//!    multicast retransmission of `seq`) also makes a nack obsolete when `RESP.TS` is earlier
//!    than it. `RTxT` is written when the retransmission actually leaves (not when it is
//!    decided), so a poll sent between decision and transmission is not mistaken for a
//!    fresh one.
//! 4. **Polls ride only on packets that reach the polled child.** A retransmission unicast to
//!    `R_k` carries only the due polls of its own destination set; other due children wait for
//!    the next packet or the NPT POLL.
//! 5. **One IPG per logical transmission.** A packet sent as several unicast copies takes one
//!    IPG slot, not one per copy (every copy is still counted in
//!    [`Stats`](crate::Stats)). Each unicast copy names only its own child in `POLL.CLD`.
//! 6. **Repoll of a child that already has a planned poll** replaces that row (its quota is
//!    released first). Quota is stolen from the latest-planned non-REPOLL child of the epoch.
//! 7. **`RQ`** must be at least 1 (`⌊RR·ε⌋ = 0` would never allow a response): configuration
//!    error. `RTT_i` before the first sample is [`SenderConfig::initial_rtt`].
//! 8. **Idle parent.** When every sent packet is fully acknowledged, planned polls and pending
//!    timeouts are dropped (polls then serve acknowledgment only); the next data packet
//!    plans anew. But a window closed with data waiting always has a poll in progress: when
//!    none is planned or pending, the children holding the window closed are polled (§3 GM's
//!    rule, which names only windows reported *full* of unconsumed packets; a child that
//!    answered before its window filled, or whose packets were all acknowledged but not yet
//!    consumed, was otherwise never asked again and the transfer waited for ever).
//! 9. **`Event::MessageDone`** is emitted when a packet becomes fully acknowledged (possibly
//!    out of sequence order); `Event::LossDetected` when its first nack arrives.
//! 10. **Retransmissions go first** (§3: TXQ in ascending `seq` order), then new data, then
//!     explicit polls.
//! 11. A RESP announcing packets beyond `HS`, or a window edge beyond `HS + 1`, is ignored
//!     (counted in [`Stats::ignored`](crate::Stats::ignored)).

mod child;
mod deploy;
pub mod plan;
mod receiver;
mod resume;
mod sender;
pub mod spec;
#[cfg(test)]
mod takeover_tests;
pub mod tree;

pub use deploy::{deploy, Deployment, Params, Prmp};

pub use receiver::{Receiver, ReceiverConfig};
pub use sender::{Sender, SenderView};

use crate::retx::RetransmitBuffer;
use crate::rtt::{RttConfig, RttEstimator};
use crate::sendq::SendQueue;
use crate::timer::TimerSet;
use crate::window::SeqWindow;
use crate::{Agent, Dest, Event, NodeId, Outbox, Time};
use bytes::Bytes;
use core::time::Duration;
use plan::Planner;
use rmcast_wire::{prmp as wire, Envelope, Message, HEADER_LEN, MAX_DATAGRAM};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Largest application message one DATA packet carries (a DATAPOLL naming children needs
/// room for their ids too; the sender leaves it out of a poll rather than exceed a datagram).
pub const MAX_MESSAGE: usize = MAX_DATAGRAM - HEADER_LEN - 8;

/// Most children one POLL names (what fits in one datagram).
pub const MAX_POLL_CLD: usize = (MAX_DATAGRAM - HEADER_LEN - 18) / 4;

/// Largest window `S` (the windows are bitmaps of `S` bits per child).
pub const MAX_WINDOW: u64 = 1 << 24;

/// The poll a POLL or DATAPOLL carries: `(POLL.TS, POLL.SEQ, POLL.CLD)`.
fn poll_of<'a>(m: &wire::Message<'a>) -> Option<(u64, u64, wire::ChildList<'a>)> {
    match *m {
        wire::Message::Poll { ts, seq, cld } => Some((ts, seq, cld)),
        wire::Message::DataPoll {
            ts, poll_seq, cld, ..
        } => Some((ts, poll_seq, cld)),
        _ => None,
    }
}

/// `m` (a POLL or DATAPOLL) with `POLL.CLD` replaced by `cld`; any other message unchanged.
fn with_cld<'a>(m: &wire::Message<'a>, cld: wire::ChildList<'a>) -> wire::Message<'a> {
    match *m {
        wire::Message::Poll { ts, seq, .. } => wire::Message::Poll { ts, seq, cld },
        wire::Message::DataPoll {
            seq,
            ts,
            poll_seq,
            payload,
            ..
        } => wire::Message::DataPoll {
            seq,
            ts,
            poll_seq,
            cld,
            payload,
        },
        ref other => other.clone(),
    }
}

/// Bad parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("window size S must be between 1 and {MAX_WINDOW}")]
    /// The window is 0 or above [`MAX_WINDOW`].
    Window,
    #[error("epoch length must be positive and a multiple of the IPG (ε = k·IPG, k >= 1)")]
    /// The epoch is not a positive multiple of the IPG.
    Epoch,
    #[error("response quota RQ = ⌊RR·ε⌋ is {0}; it must be at least 1")]
    /// The response quota (carried) is below 1.
    Quota(u64),
    #[error("multicast threshold ratio must be a number in [0, 1], got {0}")]
    /// The multicast threshold ratio (carried, as written) is outside [0, 1].
    Mtr(String),
    #[error("max_silent_polls must be at least 1")]
    /// `max_silent_polls` is 0.
    SilentPolls,
}

/// The two PRMP variants of §4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// PF: window `S` (64 in the paper).
    Pf,
    /// PF-IW: "infinite" window, `S` = the number of packets to transmit.
    PfIw,
}

impl Variant {
    /// The window size for a transfer of `packets` packets (`s` for PF).
    pub fn window(self, s: u64, packets: u64) -> u64 {
        match self {
            Variant::Pf => s,
            Variant::PfIw => packets.max(1),
        }
    }
}

crate::config::sender_config! {
    /// Parent parameters. [`SenderConfig::new`] gives the values of §4.
    pub struct SenderConfig {
        /// Window and buffer size `S`, in packets.
        pub window: u64 = spec::WINDOW,
        /// Inter-packet gap: minimum interval between two transmissions.
        pub ipg: Duration = crate::spec::ms(spec::IPG_MS),
        /// Lateness a transmission may make up ([`crate::pacing::GapPacer`]): 0 spaces every
        /// transmission `ipg` after the last, as the seed and the simulator do; a driver whose
        /// sleeps are coarser than `ipg` gives a few milliseconds, so a late wake-up sends
        /// the gaps it missed.
        pub ipg_slack: Duration = Duration::ZERO,
        /// Epoch length ε (a multiple of `ipg`).
        pub epoch: Duration = crate::spec::ms(spec::EPOCH_MS),
        /// Response rate `RR`, responses per second.
        pub response_rate: u64 = spec::RESPONSE_RATE,
        /// Multicast threshold ratio MTR in `[0, 1]`.
        pub mtr: f64 = spec::MTR,
        /// Consecutive absent responses after which a child is removed.
        pub max_silent_polls: u32 = spec::MAX_SILENT_POLLS,
        /// `RTT_i` before the first response from `R_i`.
        pub initial_rtt: Duration = crate::spec::ms(spec::INITIAL_RTT_MS),
        /// Lower bound of `RTO_i`.
        pub min_rto: Duration = Duration::from_millis(1),
        /// Keep every packet until every child's left edge passed it, however many children
        /// acknowledged it selectively: the parent of relays that give custody up
        /// ([`tree::Relay::end_to_end`]), which acknowledge what they hold but move their
        /// left edge only when their own children hold it. Off: §2's release on
        /// acknowledgement by all.
        pub release_at_le: bool = false,
    }
    /// §4's settings: `S = 64`, `IPG = 1 ms`, `ε = 10 ms`, `RR = ITR = 1500/s`, `MTR = 20 %`;
    /// and rmcast's choices where §4 gives none: 10 silent polls, initial RTT 100 ms,
    /// minimum RTO 1 ms.
    pub fn new();
}

impl SenderConfig {
    /// `RQ = ⌊RR·ε⌋`.
    pub fn response_quota(&self) -> u64 {
        let prod = u128::from(self.response_rate) * self.epoch.as_nanos();
        u64::try_from(prod / 1_000_000_000).unwrap_or(u64::MAX)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if self.window == 0 || self.window > MAX_WINDOW {
            return Err(ConfigError::Window);
        }
        let (e, g) = (self.epoch.as_nanos(), self.ipg.as_nanos());
        if e == 0 || (g > 0 && (e < g || e % g != 0)) {
            return Err(ConfigError::Epoch);
        }
        let rq = self.response_quota();
        if rq == 0 {
            return Err(ConfigError::Quota(rq));
        }
        if !(self.mtr.is_finite() && (0.0..=1.0).contains(&self.mtr)) {
            return Err(ConfigError::Mtr(format!("{}", self.mtr)));
        }
        if self.max_silent_polls == 0 {
            return Err(ConfigError::SilentPolls);
        }
        Ok(())
    }
}

/// Recovery status of a packet (§2.5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// No NACK for it has arrived.
    NoNack,
    /// NACKs are being collected before the repair.
    Collection,
    /// Repaired; NACKs for the old copy are obsolete.
    Retransmitted,
}

/// What the recovery step decides for one packet in COLLECTION (§2.5.1). Pure, for tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Keep collecting nacks.
    Wait,
    /// `|nacked| >= MTR × NC`: multicast.
    Multicast,
    /// Everyone acked, nacked or is repolled: unicast to each nacker.
    Unicast,
}

/// The COLLECTION rule with MTR in parts per million: multicast iff
/// `nacked · 10⁶ >= mtr_ppm · nc`; else unicast iff `acked + nacked + repolled = nc`.
pub fn collection_decision(
    nacked: u64,
    acked: u64,
    repolled: u64,
    nc: u64,
    mtr_ppm: u64,
) -> Decision {
    if nacked > 0 && u128::from(nacked) * 1_000_000 >= u128::from(mtr_ppm) * u128::from(nc) {
        Decision::Multicast
    } else if acked + nacked + repolled >= nc {
        Decision::Unicast
    } else {
        Decision::Wait
    }
}

#[cfg(test)]
pub(crate) mod tests;
