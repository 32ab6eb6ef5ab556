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
//!   absent responses the child is removed from `ALL` (counted in [`Stats::evicted`]); its
//!   later packets are ignored, and the window may open.
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
//!    IPG slot, not one per copy (every copy is still counted in [`Stats`]). Each unicast copy
//!    names only its own child in `POLL.CLD`.
//! 6. **Repoll of a child that already has a planned poll** replaces that row (its quota is
//!    released first). Quota is stolen from the latest-planned non-REPOLL child of the epoch.
//! 7. **`RQ`** must be at least 1 (`⌊RR·ε⌋ = 0` would never allow a response): configuration
//!    error. `RTT_i` before the first sample is [`SenderConfig::initial_rtt`].
//! 8. **Idle parent.** When every sent packet is fully acknowledged, planned polls and pending
//!    timeouts are dropped (polls only serve acknowledgment); the next data packet plans anew.
//! 9. **`Event::MessageDone`** is emitted when a packet becomes fully acknowledged (possibly
//!    out of sequence order); `Event::LossDetected` when its first nack arrives.
//! 10. **Retransmissions go first** (§3: TXQ in ascending `seq` order), then new data, then
//!     explicit polls.
//! 11. A RESP announcing packets beyond `HS`, or a window edge beyond `HS + 1`, is ignored
//!     (counted in [`Stats::ignored`]).

pub mod plan;
pub mod tree;

use crate::retx::RetransmitBuffer;
use crate::rtt::{RttConfig, RttEstimator};
use crate::sendq::SendQueue;
use crate::spec::prmp as spec;
use crate::timer::TimerSet;
use crate::window::{Insert, SeqWindow};
use crate::{Agent, Dest, Event, GroupId, NodeId, Outbox, SendError, Time};
use bytes::Bytes;
use core::time::Duration;
use plan::Planner;
use rmcast_wire::{prmp as wire, Envelope, Message, FLAG_RETRANSMISSION, HEADER_LEN, MAX_DATAGRAM};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Largest application message one DATA packet carries (a DATAPOLL naming children needs
/// room for their ids too; the sender leaves it out of a poll rather than exceed a datagram).
pub const MAX_MESSAGE: usize = MAX_DATAGRAM - HEADER_LEN - 8;

/// Most children one POLL names (what fits in one datagram).
pub const MAX_POLL_CLD: usize = (MAX_DATAGRAM - HEADER_LEN - 18) / 4;

/// Largest window `S` (the windows are bitmaps of `S` bits per child).
pub const MAX_WINDOW: u64 = 1 << 24;

/// Bad parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("window size S must be between 1 and {MAX_WINDOW}")]
    Window,
    #[error("epoch length must be positive and a multiple of the IPG (ε = k·IPG, k >= 1)")]
    Epoch,
    #[error("response quota RQ = ⌊RR·ε⌋ is {0}; it must be at least 1")]
    Quota(u64),
    #[error("multicast threshold ratio must be a number in [0, 1], got {0}")]
    Mtr(String),
    #[error("max_silent_polls must be at least 1")]
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

/// Parent parameters. [`SenderConfig::new`] gives the values of §4.
#[derive(Debug, Clone)]
pub struct SenderConfig {
    pub node: NodeId,
    pub session: u32,
    pub group: GroupId,
    /// The children (`ALL` at the start of transmission).
    pub receivers: Vec<NodeId>,
    /// Window and buffer size `S`, in packets.
    pub window: u64,
    /// Inter-packet gap: minimum interval between two transmissions.
    pub ipg: Duration,
    /// Epoch length ε (a multiple of `ipg`).
    pub epoch: Duration,
    /// Response rate `RR`, responses per second.
    pub response_rate: u64,
    /// Multicast threshold ratio MTR in `[0, 1]`.
    pub mtr: f64,
    /// Consecutive absent responses after which a child is removed.
    pub max_silent_polls: u32,
    /// `RTT_i` before the first response from `R_i`.
    pub initial_rtt: Duration,
    /// Lower bound of `RTO_i`.
    pub min_rto: Duration,
    /// Messages [`Agent::send`] queues before it reports `Full`.
    pub queue_limit: usize,
}

impl SenderConfig {
    /// §4's settings: `S = 64`, `IPG = 1 ms`, `ε = 10 ms`, `RR = ITR = 1500/s`, `MTR = 20 %`;
    /// and rmcast's choices where §4 gives none: 10 silent polls, initial RTT 100 ms,
    /// minimum RTO 1 ms.
    pub fn new(node: NodeId, group: GroupId, receivers: Vec<NodeId>) -> Self {
        SenderConfig {
            node,
            session: 0,
            group,
            receivers,
            window: spec::WINDOW,
            ipg: crate::spec::ms(spec::IPG_MS),
            epoch: crate::spec::ms(spec::EPOCH_MS),
            response_rate: spec::RESPONSE_RATE,
            mtr: spec::MTR,
            max_silent_polls: spec::MAX_SILENT_POLLS,
            initial_rtt: crate::spec::ms(spec::INITIAL_RTT_MS),
            min_rto: Duration::from_millis(1),
            queue_limit: 64,
        }
    }

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
    NoNack,
    Collection,
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

/// A child's standing with respect to one packet, as the parent knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cat {
    Acked,
    Nacked,
    Repolled,
    Unknown,
}

#[derive(Debug)]
struct Child {
    node: NodeId,
    active: bool,
    /// `W_p,i`: base is `LE_p,i`.
    w: SeqWindow,
    /// `HR_p,i`.
    hr: Option<u64>,
    rtt: RttEstimator,
    /// Polls sent to this child still awaiting a response: (poll id, TS, SEQ), in send order.
    pending: VecDeque<(u64, Time, u64)>,
    /// Highest `RESP.SEQ` received.
    answered_seq: Option<u64>,
    /// Highest `POLL.SEQ` among polls found absent.
    absent_seq: Option<u64>,
    /// MPT: consecutive absent responses, and the TS of the last absent poll.
    mpt_count: u32,
    mpt_ts: Time,
}

impl Child {
    fn le(&self) -> u64 {
        self.w.base()
    }

    fn cat(&self, seq: u64) -> Cat {
        if self.w.contains(seq) {
            return Cat::Acked;
        }
        if self.hr.is_some_and(|h| h >= seq) {
            return Cat::Nacked;
        }
        let ok = self
            .pending
            .iter()
            .map(|&(_, _, s)| s)
            .chain(self.answered_seq)
            .max();
        if self.absent_seq.is_some_and(|a| a >= seq) && ok.is_none_or(|o| o < seq) {
            Cat::Repolled
        } else {
            Cat::Unknown
        }
    }

    /// Move `LE_p,i` up to `le` (everything below it is received).
    fn advance_le(&mut self, le: u64) {
        while self.w.base() < le {
            let b = self.w.base();
            self.w.insert(b);
            self.w.pop_in_order();
        }
    }
}

#[derive(Debug)]
struct SeqInfo {
    status: Status,
    acked: u64,
    nacked: u64,
    repolled: u64,
    sent_at: Time,
    transmissions: u32,
    /// Latest multicast retransmission (§3's special RTxT entry).
    mcast_at: Option<Time>,
}

#[derive(Debug)]
struct PollRec {
    ts: Time,
    seq: u64,
    remaining: BTreeSet<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Job {
    Multicast,
    Unicast(BTreeSet<usize>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Tx,
    Poll(u64),
}

/// A snapshot of the sender's protocol state, for tests and traces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderView {
    pub hs: Option<u64>,
    pub le_p: u64,
    pub effective_window: u64,
    pub active: usize,
    pub planned: usize,
    pub pending_polls: usize,
}

/// The PRMP parent.
#[derive(Debug)]
pub struct Sender {
    cfg: SenderConfig,
    mtr_ppm: u64,
    index: Vec<(NodeId, usize)>,
    children: Vec<Child>,
    n_active: u64,
    /// Multiset of `LE_p,i` over active children.
    les: BTreeMap<u64, u32>,
    planner: Planner,
    queue: SendQueue,
    next_seq: u64,
    outstanding: BTreeMap<u64, SeqInfo>,
    buffer: RetransmitBuffer,
    /// `RTxT[i, seq]`, keyed (seq, child).
    rtxt: BTreeMap<(u64, usize), Time>,
    jobs: BTreeMap<u64, Job>,
    polls: BTreeMap<u64, PollRec>,
    next_poll_id: u64,
    timers: TimerSet<Key>,
    last_tx: Option<Time>,
    removed: Vec<NodeId>,
    completed: bool,
    out: Outbox,
}

impl Sender {
    pub fn new(cfg: SenderConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let mut nodes = cfg.receivers.clone();
        nodes.sort_unstable();
        nodes.dedup();
        let cap = usize::try_from(cfg.window).unwrap_or(usize::MAX);
        let children: Vec<Child> = nodes
            .iter()
            .map(|&node| Child {
                node,
                active: true,
                w: SeqWindow::new(cap),
                hr: None,
                rtt: RttEstimator::new(RttConfig::default()),
                pending: VecDeque::new(),
                answered_seq: None,
                absent_seq: None,
                mpt_count: 0,
                mpt_ts: Time::ZERO,
            })
            .collect();
        let index = nodes.iter().enumerate().map(|(i, &n)| (n, i)).collect();
        let rq = u32::try_from(cfg.response_quota()).unwrap_or(u32::MAX);
        let mtr_ppm = (cfg.mtr * 1e6).round() as u64;
        let mut les = BTreeMap::new();
        if !children.is_empty() {
            les.insert(0, children.len() as u32);
        }
        let queue = SendQueue::new(cfg.queue_limit, MAX_MESSAGE);
        Ok(Sender {
            planner: Planner::new(cfg.epoch, rq),
            n_active: children.len() as u64,
            children,
            index,
            les,
            mtr_ppm,
            queue,
            next_seq: 0,
            outstanding: BTreeMap::new(),
            buffer: RetransmitBuffer::new(usize::MAX),
            rtxt: BTreeMap::new(),
            jobs: BTreeMap::new(),
            polls: BTreeMap::new(),
            next_poll_id: 0,
            timers: TimerSet::new(),
            last_tx: None,
            removed: Vec::new(),
            completed: false,
            out: Outbox::new(),
            cfg,
        })
    }

    /// Children the protocol removed for silence, in removal order.
    pub fn removed(&self) -> &[NodeId] {
        &self.removed
    }

    /// The planner (ARC and PPT), for inspection.
    pub fn planner(&self) -> &Planner {
        &self.planner
    }

    /// `HS`, if anything was sent.
    pub fn hs(&self) -> Option<u64> {
        self.next_seq.checked_sub(1)
    }

    /// `LE_p = min LE_p,i` over the children in `ALL` (`HS + 1` when there are none).
    pub fn le_p(&self) -> u64 {
        self.les.keys().next().copied().unwrap_or(self.next_seq)
    }

    /// `EW_p = LE_p + S − (HS + 1)`.
    pub fn effective_window(&self) -> u64 {
        (self.le_p().saturating_add(self.cfg.window)).saturating_sub(self.next_seq)
    }

    /// Recovery status of `seq`, while it is not fully acknowledged.
    pub fn status(&self, seq: u64) -> Option<Status> {
        self.outstanding.get(&seq).map(|s| s.status)
    }

    pub fn view(&self) -> SenderView {
        SenderView {
            hs: self.hs(),
            le_p: self.le_p(),
            effective_window: self.effective_window(),
            active: self.n_active as usize,
            planned: self.planner.len(),
            pending_polls: self.polls.len(),
        }
    }

    fn child_index(&self, node: NodeId) -> Option<usize> {
        self.index
            .binary_search_by_key(&node, |&(n, _)| n)
            .ok()
            .and_then(|i| self.index.get(i))
            .map(|&(_, i)| i)
    }

    fn rtt_of(&self, i: usize) -> Duration {
        self.children
            .get(i)
            .and_then(|c| c.rtt.srtt())
            .unwrap_or(self.cfg.initial_rtt)
    }

    fn rto_of(&self, i: usize) -> Duration {
        (self.rtt_of(i) * 2).max(self.cfg.min_rto)
    }

    /// Whether a destination set of `k` children is multicast (`k >= MTR × NC`).
    fn multicast_for(&self, k: u64) -> bool {
        k > 0 && u128::from(k) * 1_000_000 >= u128::from(self.mtr_ppm) * u128::from(self.n_active)
    }

    // ---- per-child recategorisation ----

    /// Apply `f` to child `i` and keep the per-packet acked/nacked/repolled counts right.
    fn update_child(&mut self, i: usize, f: impl FnOnce(&mut Child)) {
        let Some(c) = self.children.get_mut(i) else {
            return;
        };
        if !c.active {
            f(c);
            return;
        }
        let old_le = c.le();
        let before: Vec<(u64, Cat)> = self.outstanding.keys().map(|&s| (s, c.cat(s))).collect();
        f(c);
        let new_le = c.le();
        for (s, b) in before {
            let a = c.cat(s);
            if a != b {
                if let Some(info) = self.outstanding.get_mut(&s) {
                    adjust(info, b, -1);
                    adjust(info, a, 1);
                }
            }
        }
        if new_le != old_le {
            les_remove(&mut self.les, old_le);
            *self.les.entry(new_le).or_insert(0) += 1;
        }
    }

    // ---- sending ----

    fn envelope(&self, retransmission: bool) -> Envelope {
        Envelope {
            session: self.cfg.session,
            source: self.cfg.node.0,
            flags: if retransmission {
                FLAG_RETRANSMISSION
            } else {
                0
            },
        }
    }

    fn emit(&mut self, dest: Dest, env: Envelope, msg: wire::Message<'_>) {
        self.out.transmit(dest, env, &Message::Prmp(msg));
    }

    /// Send one logical packet to `dests` (all active children when `None`), as a multicast
    /// or as unicast copies.
    fn emit_to(&mut self, dests: Option<&BTreeSet<usize>>, env: Envelope, msg: wire::Message<'_>) {
        let k = dests.map_or(self.n_active, |d| d.len() as u64);
        if dests.is_none() || self.multicast_for(k) {
            self.emit(Dest::Group(self.cfg.group), env, msg);
            return;
        }
        let nodes: Vec<NodeId> = dests
            .into_iter()
            .flatten()
            .filter_map(|&i| self.children.get(i).map(|c| c.node))
            .collect();
        // Each unicast copy names only its own child in POLL.CLD (the others cannot see it).
        for n in nodes {
            let id = n.0.to_be_bytes();
            let own = wire::ChildList::from_raw(&id);
            let copy = match (&msg, own) {
                (wire::Message::Poll { ts, seq, cld }, Some(own)) if cld.contains(n.0) => {
                    wire::Message::Poll {
                        ts: *ts,
                        seq: *seq,
                        cld: own,
                    }
                }
                (wire::Message::Poll { .. }, _) => continue,
                (
                    wire::Message::DataPoll {
                        seq,
                        ts,
                        poll_seq,
                        cld,
                        payload,
                    },
                    Some(own),
                ) if cld.contains(n.0) => wire::Message::DataPoll {
                    seq: *seq,
                    ts: *ts,
                    poll_seq: *poll_seq,
                    cld: own,
                    payload,
                },
                (wire::Message::DataPoll { seq, payload, .. }, _) => {
                    wire::Message::Data { seq: *seq, payload }
                }
                (m, _) => m.clone(),
            };
            self.emit(Dest::Node(n), env, copy);
        }
    }

    /// Register a poll just sent to `cld` and arm its timeout.
    fn register_poll(&mut self, now: Time, hs: u64, cld: &[usize]) {
        let id = self.next_poll_id;
        self.next_poll_id += 1;
        let mut rto = Duration::ZERO;
        for &i in cld {
            rto = rto.max(self.rto_of(i));
            self.update_child(i, |c| c.pending.push_back((id, now, hs)));
        }
        self.polls.insert(
            id,
            PollRec {
                ts: now,
                seq: hs,
                remaining: cld.iter().copied().collect(),
            },
        );
        self.timers.set(Key::Poll(id), now + rto);
    }

    fn cld_bytes(&self, cld: &[usize]) -> Vec<u8> {
        let mut raw = Vec::with_capacity(cld.len() * 4);
        wire::ChildList::encode_ids(
            cld.iter()
                .filter_map(|&i| self.children.get(i).map(|c| c.node.0)),
            &mut raw,
        );
        raw
    }

    /// Transmit data packet `seq` to `dests` (None = all), planning and piggybacking polls.
    fn send_data(&mut self, now: Time, seq: u64, dests: Option<BTreeSet<usize>>, retx: bool) {
        let Some(data) = self.buffer.get(seq).map(|e| e.data.clone()) else {
            return;
        };
        // Trigger (a): plan a poll for every destination child not in the PPT.
        let targets: Vec<usize> = match &dests {
            Some(d) => d.iter().copied().collect(),
            None => (0..self.children.len())
                .filter(|&i| self.children.get(i).is_some_and(|c| c.active))
                .collect(),
        };
        for &i in &targets {
            if !self.planner.is_planned(i) {
                let rtt = self.rtt_of(i);
                self.planner.plan(i, now, rtt);
            }
        }
        let mut rows = match &dests {
            Some(d) => self.planner.take_due_rows(now, |c| d.contains(&c)),
            None => self.planner.take_due_rows(now, |_| true),
        };
        let hs = self.next_seq.saturating_sub(1);
        let room = (MAX_DATAGRAM - HEADER_LEN - 26).saturating_sub(data.len());
        let keep = room.min(wire::MAX_CLD * 4) / 4;
        if rows.len() > keep {
            // Too many children to name in this datagram: the excess stays planned for the
            // next packet or an explicit POLL (only with tens of thousands of due children).
            for (i, p) in rows.split_off(keep) {
                self.planner.restore(i, p);
            }
        }
        let cld: Vec<usize> = rows.into_iter().map(|(i, _)| i).collect();
        let raw = self.cld_bytes(&cld);
        let env = self.envelope(retx);
        let msg = match wire::ChildList::from_raw(&raw).filter(|c| !c.is_empty()) {
            Some(c) => wire::Message::DataPoll {
                seq,
                ts: now.as_nanos(),
                poll_seq: hs,
                cld: c,
                payload: &data,
            },
            None => wire::Message::Data {
                seq,
                payload: &data,
            },
        };
        self.emit_to(dests.as_ref(), env, msg);
        if retx {
            self.out.stats.repairs_sent += 1;
            let _ = self.buffer.mark_resent(seq, now);
        } else {
            self.out.stats.data_sent += 1;
        }
        if let Some(info) = self.outstanding.get_mut(&seq) {
            info.transmissions += 1;
        }
        if !cld.is_empty() {
            self.register_poll(now, hs, &cld);
        }
        self.last_tx = Some(now);
    }

    fn send_poll(&mut self, now: Time, cld: Vec<usize>) {
        let Some(hs) = self.hs() else {
            return;
        };
        let raw = self.cld_bytes(&cld);
        let Some(list) = wire::ChildList::from_raw(&raw).filter(|c| !c.is_empty()) else {
            return;
        };
        let dests: BTreeSet<usize> = cld.iter().copied().collect();
        let msg = wire::Message::Poll {
            ts: now.as_nanos(),
            seq: hs,
            cld: list,
        };
        let before = self.out.stats.packets_sent;
        self.emit_to(Some(&dests), self.envelope(false), msg);
        self.out.stats.control_sent += self.out.stats.packets_sent - before;
        self.register_poll(now, hs, &cld);
        self.last_tx = Some(now);
    }

    /// The transmitter (§3 TXM): retransmissions, then new data, then explicit polls, one
    /// IPG apart; otherwise arm the timer for the next opportunity.
    fn pump(&mut self, now: Time) {
        self.timers.cancel(Key::Tx);
        loop {
            let allowed = self.last_tx.map_or(Time::ZERO, |t| t + self.cfg.ipg);
            let have_job = !self.jobs.is_empty();
            let have_data = !self.queue.is_empty() && self.effective_window() > 0;
            if have_job || have_data {
                if now < allowed {
                    self.timers.set(Key::Tx, allowed);
                    return;
                }
                if have_job {
                    self.run_job(now);
                } else if let Some(data) = self.queue.pop_front() {
                    let seq = self.next_seq;
                    self.next_seq += 1;
                    let _ = self.buffer.insert(seq, data, now);
                    self.outstanding.insert(
                        seq,
                        SeqInfo {
                            status: Status::NoNack,
                            acked: 0,
                            nacked: 0,
                            repolled: 0,
                            sent_at: now,
                            transmissions: 0,
                            mcast_at: None,
                        },
                    );
                    self.send_data(now, seq, None, false);
                    if self.n_active == 0 {
                        self.settle(now);
                    }
                }
                continue;
            }
            // No data can go: explicit POLL at NPT = min est + IPG.
            let Some(min_est) = self.planner.next_est() else {
                return;
            };
            let npt = (min_est + self.cfg.ipg).max(allowed);
            if now < npt {
                self.timers.set(Key::Tx, npt);
                return;
            }
            let mut due = self.planner.take_due_rows(now, |_| true);
            if due.is_empty() {
                return;
            }
            if due.len() > MAX_POLL_CLD {
                // The rest go in the next POLL, one IPG later.
                for (i, p) in due.split_off(MAX_POLL_CLD) {
                    self.planner.restore(i, p);
                }
            }
            self.send_poll(now, due.into_iter().map(|(i, _)| i).collect());
        }
    }

    fn run_job(&mut self, now: Time) {
        let Some((seq, job)) = self.jobs.pop_first() else {
            return;
        };
        if !self.outstanding.contains_key(&seq) {
            return;
        }
        match job {
            Job::Multicast => {
                // Record RTxT for nacked(seq) ∪ repolled(seq), and the special entry.
                let who: Vec<usize> = self
                    .children
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.active && matches!(c.cat(seq), Cat::Nacked | Cat::Repolled))
                    .map(|(i, _)| i)
                    .collect();
                for i in who {
                    self.rtxt.insert((seq, i), now);
                }
                if let Some(info) = self.outstanding.get_mut(&seq) {
                    info.mcast_at = Some(now);
                }
                self.send_data(now, seq, None, true);
            }
            Job::Unicast(set) => {
                let set: BTreeSet<usize> = set
                    .into_iter()
                    .filter(|&i| {
                        self.children
                            .get(i)
                            .is_some_and(|c| c.active && c.cat(seq) != Cat::Acked)
                    })
                    .collect();
                if set.is_empty() {
                    return;
                }
                for &i in &set {
                    self.rtxt.insert((seq, i), now);
                }
                self.send_data(now, seq, Some(set), true);
            }
        }
    }

    fn queue_unicast(&mut self, seq: u64, i: usize) {
        match self
            .jobs
            .entry(seq)
            .or_insert(Job::Unicast(BTreeSet::new()))
        {
            Job::Multicast => {}
            Job::Unicast(set) => {
                set.insert(i);
            }
        }
    }

    // ---- recovery ----

    /// The recovery algorithm of §2.5.1 for `seq`. `resp`: the RESP being processed (child,
    /// RESP.TS, RESP.W.LE, RESP.W.HR), if any.
    fn recover(&mut self, seq: u64, resp: Option<(usize, Time, u64, u64)>) {
        let n = self.n_active;
        let Some(info) = self.outstanding.get_mut(&seq) else {
            return;
        };
        if info.acked >= n {
            return;
        }
        if info.status == Status::NoNack {
            if info.nacked == 0 {
                return;
            }
            info.status = Status::Collection;
            self.out.event(Event::LossDetected { seq });
        }
        match info.status {
            Status::Collection => {
                match collection_decision(info.nacked, info.acked, info.repolled, n, self.mtr_ppm) {
                    Decision::Wait => {}
                    Decision::Multicast => {
                        info.status = Status::Retransmitted;
                        self.jobs.insert(seq, Job::Multicast);
                    }
                    Decision::Unicast => {
                        info.status = Status::Retransmitted;
                        let nackers: Vec<usize> = self
                            .children
                            .iter()
                            .enumerate()
                            .filter(|(_, c)| c.active && c.cat(seq) == Cat::Nacked)
                            .map(|(i, _)| i)
                            .collect();
                        for i in nackers {
                            self.queue_unicast(seq, i);
                        }
                    }
                }
            }
            Status::Retransmitted => {
                let Some((i, ts, le, hr)) = resp else {
                    return;
                };
                let mcast_at = info.mcast_at;
                let nacked_here = le <= seq
                    && seq <= hr
                    && self
                        .children
                        .get(i)
                        .is_some_and(|c| c.active && c.cat(seq) == Cat::Nacked);
                if nacked_here && !self.is_obsolete(i, seq, ts, mcast_at) {
                    self.queue_unicast(seq, i);
                }
            }
            Status::NoNack => {}
        }
    }

    /// A nack from child `i` for `seq` with `RESP.TS = ts` is obsolete if the packet was
    /// retransmitted to `i` (or multicast) after the poll it answers was sent.
    fn is_obsolete(&self, i: usize, seq: u64, ts: Time, mcast_at: Option<Time>) -> bool {
        let last = self.rtxt.get(&(seq, i)).copied().max(mcast_at);
        last.is_some_and(|t| ts < t)
    }

    /// Finish every packet acknowledged by all of `ALL`; drop idle polling state.
    fn settle(&mut self, now: Time) {
        let n = self.n_active;
        let done: Vec<u64> = self
            .outstanding
            .iter()
            .filter(|(_, s)| s.acked >= n)
            .map(|(&k, _)| k)
            .collect();
        for seq in done {
            if let Some(info) = self.outstanding.remove(&seq) {
                self.buffer.remove(seq);
                self.jobs.remove(&seq);
                let keys: Vec<(u64, usize)> = self
                    .rtxt
                    .range((seq, 0)..=(seq, usize::MAX))
                    .map(|(&k, _)| k)
                    .collect();
                for k in keys {
                    self.rtxt.remove(&k);
                }
                self.out.stats.completed += 1;
                self.out.event(Event::MessageDone {
                    seq,
                    sent_at: info.sent_at,
                    done_at: now,
                    transmissions: info.transmissions,
                    failed: false,
                });
            }
        }
        if self.outstanding.is_empty() {
            // Choice 8: nothing left to acknowledge, so no polls are needed.
            self.planner.clear();
            let ids: Vec<u64> = self.polls.keys().copied().collect();
            for id in ids {
                self.drop_poll(id);
            }
        }
        self.planner.prune(now);
        self.maybe_complete();
    }

    fn drop_poll(&mut self, id: u64) {
        self.timers.cancel(Key::Poll(id));
        if let Some(p) = self.polls.remove(&id) {
            for i in p.remaining {
                if let Some(c) = self.children.get_mut(i) {
                    c.pending.retain(|&(pid, _, _)| pid != id);
                }
            }
        }
    }

    fn maybe_complete(&mut self) {
        if self.queue.is_closed()
            && !self.completed
            && self.queue.is_empty()
            && self.outstanding.is_empty()
        {
            self.completed = true;
            self.out.event(Event::Completed);
        }
    }

    // ---- responses and timeouts ----

    fn on_resp(&mut self, now: Time, from: NodeId, r: RespFields<'_>) {
        let Some(i) = self.child_index(from) else {
            self.out.stats.ignored += 1;
            return;
        };
        if !self.children.get(i).is_some_and(|c| c.active) {
            self.out.stats.ignored += 1;
            return;
        }
        let hs = self.hs();
        let hr = (r.hr != wire::NO_HR).then_some(r.hr);
        let bogus = match (hr, hs) {
            (Some(h), Some(s)) => h > s,
            (Some(_), None) => true,
            _ => false,
        } || r.le > self.next_seq
            || r.seq > hs.unwrap_or(0);
        if bogus {
            self.out.stats.ignored += 1;
            return;
        }
        let ts = Time::from_nanos(r.ts);
        if ts <= now {
            if let Some(c) = self.children.get_mut(i) {
                c.rtt.sample(now - ts);
            }
        }
        let mut answered = Vec::new();
        let s = self.cfg.window;
        self.update_child(i, |c| {
            // Remove this child from every TO with TO.TS <= RESP.TS.
            while let Some(&(id, pts, _)) = c.pending.front() {
                if pts > ts {
                    break;
                }
                c.pending.pop_front();
                answered.push(id);
            }
            c.answered_seq = c.answered_seq.max(Some(r.seq));
            // MPT (§3).
            if c.mpt_count > 0 {
                match ts.cmp(&c.mpt_ts) {
                    core::cmp::Ordering::Equal => c.mpt_count -= 1,
                    core::cmp::Ordering::Greater => c.mpt_count = 0,
                    core::cmp::Ordering::Less => c.mpt_count = 1,
                }
            }
            // W_p,i.
            let le = r.le.min(c.le().saturating_add(s));
            c.advance_le(le.max(c.le()));
            c.hr = c.hr.max(hr);
            if let Some(h) = hr {
                let lo = r.le.max(c.le());
                let hi = h.min(c.le().saturating_add(s).saturating_sub(1));
                let mut seq = lo;
                while seq <= hi {
                    let k = (seq - r.le) as usize;
                    let bit = r.bitmap.get(k / 8).is_some_and(|b| b >> (k % 8) & 1 == 1);
                    if bit {
                        let _ = c.w.insert(seq);
                    }
                    seq += 1;
                }
            }
        });
        for id in answered {
            let empty = self.polls.get_mut(&id).is_some_and(|p| {
                p.remaining.remove(&i);
                p.remaining.is_empty()
            });
            if empty {
                self.polls.remove(&id);
                self.timers.cancel(Key::Poll(id));
            }
        }
        // Recovery for LE_p <= seq <= RESP.W.HR.
        if let Some(h) = hr {
            let seqs: Vec<u64> = self.outstanding.range(..=h).map(|(&k, _)| k).collect();
            for seq in seqs {
                self.recover(seq, Some((i, ts, r.le, h)));
            }
        }
        // Trigger (b): buffer full of unconsumed packets.
        if let Some(c) = self.children.get(i) {
            let full = c.le().saturating_add(s) <= self.next_seq
                && (c.le()..c.le().saturating_add(s)).all(|q| c.w.contains(q));
            if full && !self.planner.is_planned(i) {
                let rtt = self.rtt_of(i);
                self.planner.plan(i, now, rtt);
            }
        }
        self.settle(now);
        self.pump(now);
    }

    fn on_poll_timeout(&mut self, now: Time, id: u64) {
        let Some(p) = self.polls.remove(&id) else {
            return;
        };
        self.out.stats.timeouts += 1;
        let mut evict = Vec::new();
        for &i in &p.remaining {
            if !self.children.get(i).is_some_and(|c| c.active) {
                continue;
            }
            let limit = self.cfg.max_silent_polls;
            let mut silent = false;
            self.update_child(i, |c| {
                c.pending.retain(|&(pid, _, _)| pid != id);
                c.absent_seq = c.absent_seq.max(Some(p.seq));
                c.mpt_count += 1;
                c.mpt_ts = p.ts;
                silent = c.mpt_count >= limit;
            });
            if silent {
                evict.push(i);
            } else if !self.outstanding.is_empty() {
                let rtt = self.rtt_of(i);
                let (children, init) = (&self.children, self.cfg.initial_rtt);
                self.planner.plan_repoll(i, now, rtt, |j| {
                    children.get(j).and_then(|c| c.rtt.srtt()).unwrap_or(init)
                });
            }
        }
        for i in evict {
            self.remove_child(now, i, true);
        }
        let seqs: Vec<u64> = self.outstanding.range(..=p.seq).map(|(&k, _)| k).collect();
        for seq in seqs {
            self.recover(seq, None);
        }
        self.settle(now);
        self.pump(now);
    }

    fn remove_child(&mut self, now: Time, i: usize, by_protocol: bool) -> bool {
        if !self.children.get(i).is_some_and(|c| c.active) {
            return false;
        }
        // Subtract this child's standing from every packet's counts, then deactivate.
        let cats: Vec<(u64, Cat)> = match self.children.get(i) {
            Some(c) => self.outstanding.keys().map(|&s| (s, c.cat(s))).collect(),
            None => Vec::new(),
        };
        for (s, cat) in cats {
            if let Some(info) = self.outstanding.get_mut(&s) {
                adjust(info, cat, -1);
            }
        }
        let (le, node, pending) = match self.children.get_mut(i) {
            Some(c) => {
                c.active = false;
                (c.le(), c.node, core::mem::take(&mut c.pending))
            }
            None => return false,
        };
        les_remove(&mut self.les, le);
        self.n_active -= 1;
        self.planner.cancel(i);
        for (id, _, _) in pending {
            if let Some(p) = self.polls.get_mut(&id) {
                p.remaining.remove(&i);
                if p.remaining.is_empty() {
                    self.polls.remove(&id);
                    self.timers.cancel(Key::Poll(id));
                }
            }
        }
        for job in self.jobs.values_mut() {
            if let Job::Unicast(set) = job {
                set.remove(&i);
            }
        }
        if by_protocol {
            self.out.stats.evicted += 1;
            self.removed.push(node);
        }
        // ALL shrank: packets may now be fully acknowledged, collections may now decide.
        let seqs: Vec<u64> = self.outstanding.keys().copied().collect();
        for seq in seqs {
            self.recover(seq, None);
        }
        self.settle(now);
        true
    }
}

struct RespFields<'a> {
    ts: u64,
    seq: u64,
    le: u64,
    hr: u64,
    bitmap: &'a [u8],
}

fn adjust(info: &mut SeqInfo, cat: Cat, d: i64) {
    let f = |x: &mut u64| *x = if d < 0 { x.saturating_sub(1) } else { *x + 1 };
    match cat {
        Cat::Acked => f(&mut info.acked),
        Cat::Nacked => f(&mut info.nacked),
        Cat::Repolled => f(&mut info.repolled),
        Cat::Unknown => {}
    }
}

fn les_remove(les: &mut BTreeMap<u64, u32>, le: u64) {
    if let Some(c) = les.get_mut(&le) {
        *c -= 1;
        if *c == 0 {
            les.remove(&le);
        }
    }
}

impl Agent for Sender {
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]) {
        let Some(m) = self.out.accept(packet, self.cfg.session) else {
            return;
        };
        match m {
            wire::Message::Resp {
                ts,
                seq,
                le,
                hr,
                bitmap,
            } => self.on_resp(
                now,
                from,
                RespFields {
                    ts,
                    seq,
                    le,
                    hr,
                    bitmap,
                },
            ),
            _ => self.out.ignore(),
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        while let Some(key) = self.timers.pop_expired(now) {
            match key {
                Key::Tx => self.pump(now),
                Key::Poll(id) => self.on_poll_timeout(now, id),
            }
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }
    fn outbox(&self) -> &Outbox {
        &self.out
    }
    fn outbox_mut(&mut self) -> &mut Outbox {
        &mut self.out
    }

    fn send(&mut self, now: Time, data: Bytes) -> Result<(), SendError> {
        self.queue.offer(data)?;
        self.pump(now);
        Ok(())
    }

    fn can_send(&self) -> bool {
        self.queue.can_accept()
    }

    fn close(&mut self, _now: Time) {
        self.queue.close();
        self.maybe_complete();
    }

    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        let Some(i) = self.child_index(node) else {
            return false;
        };
        let removed = self.remove_child(now, i, false);
        if removed {
            self.pump(now);
        }
        removed
    }
}

/// Child parameters.
#[derive(Debug, Clone)]
pub struct ReceiverConfig {
    pub node: NodeId,
    pub session: u32,
    /// Buffer and window size `S` (the parent's).
    pub window: u64,
    /// Packets per second the upper layer consumes; `None` = hungry (immediate).
    pub consume_rate: Option<u64>,
}

impl ReceiverConfig {
    pub fn new(node: NodeId, window: u64) -> Self {
        ReceiverConfig {
            node,
            session: 0,
            window,
            consume_rate: None,
        }
    }
}

/// The PRMP child (§3 RXM).
#[derive(Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    /// `W_i`: base = `LE_i`.
    w: SeqWindow,
    hr: Option<u64>,
    held: BTreeMap<u64, Bytes>,
    consume_at: Option<Time>,
    last_consume: Option<Time>,
    out: Outbox,
}

impl Receiver {
    pub fn new(cfg: ReceiverConfig) -> Self {
        let cap = usize::try_from(cfg.window.clamp(1, MAX_WINDOW)).unwrap_or(1);
        Receiver {
            w: SeqWindow::new(cap),
            cfg,
            hr: None,
            held: BTreeMap::new(),
            consume_at: None,
            last_consume: None,
            out: Outbox::new(),
        }
    }

    /// `LE_i`.
    pub fn le(&self) -> u64 {
        self.w.base()
    }

    /// `HR_i`.
    pub fn hr(&self) -> Option<u64> {
        self.hr
    }

    fn on_data(&mut self, seq: u64, payload: &[u8]) {
        match self.w.insert(seq) {
            Insert::New => {
                self.held.insert(seq, Bytes::copy_from_slice(payload));
                self.hr = self.hr.max(Some(seq));
            }
            Insert::Duplicate => self.out.stats.duplicates += 1,
            Insert::TooFar => self.out.stats.ignored += 1,
        }
    }

    fn consume_one(&mut self) -> bool {
        let Some(seq) = self.w.pop_in_order() else {
            return false;
        };
        let data = self.held.remove(&seq).unwrap_or_default();
        self.out.stats.delivered += 1;
        self.out.event(Event::Delivered { seq, data });
        true
    }

    fn consume(&mut self, now: Time) {
        match self.cfg.consume_rate {
            None => while self.consume_one() {},
            Some(rate) => {
                if self.consume_at.is_none() && self.w.contains(self.w.base()) {
                    let period = Duration::from_nanos(1_000_000_000 / rate.max(1));
                    let at = self.last_consume.map_or(now, |t| (t + period).max(now));
                    self.consume_at = Some(at);
                }
            }
        }
    }

    fn respond(&mut self, to: NodeId, ts: u64, poll_seq: u64) {
        let le = self.w.base();
        let hr = self.hr;
        let mut bitmap = Vec::new();
        if let Some(h) = hr.filter(|&h| h >= le) {
            let n = (h - le + 1) as usize;
            bitmap.resize(n.div_ceil(8), 0u8);
            for k in 0..n {
                if self.w.contains(le + k as u64) {
                    if let Some(b) = bitmap.get_mut(k / 8) {
                        *b |= 1 << (k % 8);
                    }
                }
            }
        }
        let msg = wire::Message::Resp {
            ts,
            seq: poll_seq,
            le,
            hr: hr.unwrap_or(wire::NO_HR),
            bitmap: &bitmap,
        };
        let env = Envelope {
            session: self.cfg.session,
            source: self.cfg.node.0,
            flags: 0,
        };
        if self.out.transmit(Dest::Node(to), env, &Message::Prmp(msg)) {
            self.out.stats.control_sent += 1;
        }
    }

    fn on_poll(&mut self, from: NodeId, ts: u64, poll_seq: u64, cld: wire::ChildList<'_>) {
        // A legitimate POLL.SEQ is inside the window: the parent never sends past LE_i + S.
        if poll_seq >= self.w.base().saturating_add(self.cfg.window) {
            self.out.stats.ignored += 1;
            return;
        }
        // Choice 1: a poll raises HR_i to POLL.SEQ.
        self.hr = self.hr.max(Some(poll_seq));
        if cld.contains(self.cfg.node.0) {
            self.respond(from, ts, poll_seq);
        }
    }
}

impl Agent for Receiver {
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]) {
        let Some(m) = self.out.accept(packet, self.cfg.session) else {
            return;
        };
        match m {
            wire::Message::Data { seq, payload } => {
                self.on_data(seq, payload);
                self.consume(now);
            }
            wire::Message::DataPoll {
                seq,
                ts,
                poll_seq,
                cld,
                payload,
            } => {
                self.on_data(seq, payload);
                self.consume(now);
                self.on_poll(from, ts, poll_seq, cld);
            }
            wire::Message::Poll { ts, seq, cld } => {
                self.on_poll(from, ts, seq, cld);
            }
            _ => self.out.ignore(),
        }
    }

    fn handle_timeout(&mut self, now: Time) {
        if self.consume_at.is_some_and(|t| t <= now) {
            self.consume_at = None;
            if self.consume_one() {
                self.last_consume = Some(now);
            }
            self.consume(now);
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.consume_at
    }
    fn outbox(&self) -> &Outbox {
        &self.out
    }
    fn outbox_mut(&mut self) -> &mut Outbox {
        &mut self.out
    }
}

#[cfg(test)]
pub(crate) mod tests;
