//! `srm` — Scalable Reliable Multicast after Floyd, Jacobson, Liu, McCanne and Zhang
//! (SIGCOMM '95), as seed 003 §5.9 ran it (the ns-2 model, `Agent/SRM` and
//! `Agent/SRM/Adaptive`).
//!
//! Every member (the data's source included) is one [`Member`]:
//!
//! * **Gap detection.** A member that sees data `s` (original or repair) or a SESSION message
//!   announcing `next_seq > s` while missing an earlier packet detects that loss.
//! * **Request timer.** On detecting loss of `s` a member waits uniform
//!   `[C1·d, (C1+C2)·d] × b` (`d`: its one-way distance to the data's source; `b`: back-off,
//!   1 at first) and then multicasts a REQUEST. After a request is sent or heard it backs off:
//!   `b` doubles (×3 with adaptive timers, as ns-2's `SRM/request/Adaptive`), at most
//!   [`Config::backoff_limit`] times, and the timer is set again; it then ignores further
//!   requests for `s` until half of the new interval has passed (the *ignore-backoff* window).
//!   At most [`REQUESTS_PER_ROUND`] requests go out, and as many new losses are detected, per
//!   round (the first request interval, `(C1 + C2)·d`); a request timer that fires beyond it
//!   waits for the next rounds, oldest first, and so do the losses not yet detected (a
//!   defence against a forged SESSION's `next_seq`, not part of SRM). Losses are tracked only
//!   inside the receive window, where their data can still be accepted.
//! * **Repair timer.** A member holding `s` that hears a request from `A` waits uniform
//!   `[D1·d_A, (D1+D2)·d_A]` and multicasts a REPAIR, unless it hears a repair for `s` first.
//! * **Suppression and hold-down.** A repair arriving cancels any pending request or repair
//!   timer for `s`; the member then ignores requests for `s` for `3·d` (distance to the source
//!   for a requester, to the requester for a repairer), as ns-2 does.
//! * **Adaptive timers** ([`Config::adaptive`]): ns-2's variant of the SIGCOMM '95 algorithm:
//!   before each new request timer, `ave_dup_req` (EWMA, α = 0.25, of duplicate requests per
//!   loss) and `ave_req_delay` (EWMA of detection-to-first-timer-end in units of 2·d) drive
//!   C1/C2 (closest requester: C2 −= 0.1; `ave_dup ≥ 1`: C1 += 0.1, C2 += 0.5;
//!   `ave_dup < 0.9`: C2 −= 0.1 if `ave_delay > 1`, C1 −= 0.05 if `ave_dup < 0.25`;
//!   otherwise C1 += 0.05); a round-1 request sender lowers C1 by 0.1. D1/D2 the same way for
//!   repairs, starting at log10 G until a repair timer has ended; a repairer's duplicates are
//!   the first-round repairs it hears from its repair timer's start to the end of its
//!   hold-down, its own included (ns-2 loops a member's multicast back to it at once, so a
//!   member that repairs counts its own repair and measures its timer's delay then), and
//!   after sending one it is the closest repairer unless a later repair comes from a member
//!   more than 1.5 times as far from the requester. Bounds C1 ∈ [0.5, 2], C2 ∈ [1, G],
//!   D1 ∈ [0.5, log10 G], D2 ∈ [1, G] (G = [`Config::group_size`]).
//! * **Distances** ([`DistanceSource`]): from SESSION messages (timestamp echo, as SRM
//!   specifies) or supplied from the topology: a table per member
//!   (`DistanceSource::Configured`) or a shared [`DistanceOracle`] asked on demand
//!   (`DistanceSource::Oracle`, for groups too large for tables). Until a distance is known,
//!   [`Config::default_distance`] is used.
//!   With [`Config::follow_falling_distance`] (the socket driver's choice) a request timer
//!   follows a falling distance to the source: drawn with a longer one, it is brought
//!   forward to what the new one gives, never pushed back (a distance measured on sockets
//!   through a queue or a descheduled host is now and then 100 times too long, and at the
//!   back-off limit the timer is 128·d away; not in ns-2, whose distances do not jump, nor
//!   by default).
//!
//! Set-up: [`deploy`] lays the roles out on a [`Layout`](crate::deploy::Layout) (the driver's
//! topology as plain data) with typed [`Params`], whose defaults are the spec's.
//!
//! Counters: `Stats::control_sent` counts REQUESTs only (SESSION messages are in
//! `packets_sent`), `Stats::repairs_sent` REPAIRs, `Stats::duplicates` data received again.
//!
//! Choices where the seed and paper are silent (or where ns-2 differs): the member hearing its
//! own request/repair (ns-2 loops multicast back to the sender) is modelled directly — a
//! member that sends a request backs off, one that sends a repair enters hold-down. As in
//! ns-2, the duplicate averages are folded in twice per loss (`recompute` and then
//! `mark-period`), and the counts start at −1. A SESSION message carries at most
//! [`MAX_ENTRIES`] members. The source emits [`Event::Completed`] [`Config::linger`] after
//! [`SenderAgent::close`](crate::SenderAgent::close) and then stops its session messages: SRM has
//! no acknowledgments, so the source cannot know when receivers finish.

mod deploy;
pub mod spec;
#[cfg(test)]
mod tests;

pub use deploy::{deploy, Deployment, Distances, Params, Srm};

use crate::agent::hold;
use crate::budget::RequestBudget;
pub use crate::budget::REQUESTS_PER_ROUND;
pub use crate::deploy::DistanceOracle;
use crate::retx::RetransmitBuffer;
use crate::rng::AgentRng;
use crate::sendq::{DataFormat, Originals, SourceTimer};
use crate::timer::TimerSet;
use crate::window::SeqWindow;
use crate::{Agent, Event, NodeId, Outbox, SendError, Time};
use bytes::Bytes;
use core::time::Duration;
use rmcast_wire::{srm as wire, Message, FLAG_RETRANSMISSION, HEADER_LEN, MAX_DATAGRAM};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Largest application message one DATA packet carries.
pub const MAX_MESSAGE: usize = MAX_DATAGRAM - HEADER_LEN - 25;

/// Original data: DATA packets of at most [`MAX_MESSAGE`] bytes.
const DATA: DataFormat = DataFormat {
    max_message: MAX_MESSAGE,
    data: |seq, payload| Message::Srm(wire::Message::Data { seq, payload }),
};

/// Most members one SESSION message reports.
pub const MAX_ENTRIES: usize = 3_000;

/// Where a member's distances to other members come from.
#[derive(Debug, Clone)]
pub enum DistanceSource {
    /// Estimated from SESSION messages' timestamp echoes (SRM's own mechanism).
    SessionMessages,
    /// One-way distances supplied from the topology (e.g. by a simulator from its shortest
    /// paths); SESSION messages, if enabled, are then used only for loss detection.
    Configured(BTreeMap<NodeId, Duration>),
    /// One-way distances from the topology asked for when needed, from an oracle shared by
    /// every member (a stand-in for session-message estimates at scale; unreachable nodes
    /// get [`Config::default_distance`]).
    Oracle(Arc<dyn DistanceOracle>),
}

impl PartialEq for DistanceSource {
    /// Oracles are equal when they are the same oracle.
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::SessionMessages, Self::SessionMessages) => true,
            (Self::Configured(a), Self::Configured(b)) => a == b,
            (Self::Oracle(a), Self::Oracle(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

crate::config::group_config! {
    /// Configuration of one SRM member.
    pub struct Config {
        /// The node whose data stream the session carries.
        pub source: NodeId = source,
        /// Request timer lower bound, in distances: uniform in [C1·d, (C1+C2)·d].
        pub c1: f64 = p.c1,
        /// Request timer width, in distances.
        pub c2: f64 = p.c2,
        /// Repair timer lower bound, in distances to the requester: uniform in
        /// [D1·d, (D1+D2)·d].
        pub d1: f64 = p.d1,
        /// Repair timer width, in distances.
        pub d2: f64 = p.d2,
        /// How many times the request back-off multiplier grows (ns-2 `requestBackoffLimit_`,
        /// 5).
        pub backoff_limit: u32 = p.backoff_limit,
        /// ns-2's adaptive timers (`Agent/SRM/Adaptive`).
        pub adaptive: bool = p.adaptive,
        /// Group size G (bounds of the adaptive parameters).
        pub group_size: usize = group_size.max(1),
        /// Where distances to other members come from (from session messages unless the
        /// deployment takes them from the topology).
        pub distances: DistanceSource = DistanceSource::SessionMessages,
        /// Distance assumed before one is known.
        pub default_distance: Duration = p.default_distance,
        /// Period of SESSION messages (`None`: none; ns-2 `sessionDelay_` is 1 s).
        pub session_interval: Option<Duration> = p.session_interval,
        /// Each session interval is drawn uniform in [(1 − j)·i, (1 + j)·i] (ns-2: j = 0.1).
        pub session_jitter: f64 = p.session_jitter,
        /// Receive window (packets beyond `base + window` are dropped).
        pub window: usize = crate::config::RECEIVE_WINDOW,
        /// Source: how long after [`SenderAgent::close`](crate::SenderAgent::close) it reports
        /// [`Event::Completed`].
        pub linger: Duration = p.linger,
        /// Bring armed request timers forward when the distance to the source falls
        /// (`Member::follow_source_distance`). Off in the seed's model (ns-2's distances
        /// do not jump); on for sockets, where one sample is now and then 100 times too long.
        pub follow_falling_distance: bool = false,
    }
    /// ns-2's defaults: C1 = C2 = 2, D1 = D2 = 1, back-off limit 5, session messages every
    /// second ± 10 %, distances from session messages.
    pub fn new(source: NodeId, group_size: usize) from p: Params;
}

/// A member's timers; its own: the request budget's next round (first at equal deadlines, so
/// the requests it deferred go before later timers), and the request or repair timer of a
/// packet.
type Key = SourceTimer<Own>;

/// A member's own timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Own {
    Round,
    Seq(u64),
}

#[derive(Debug, Clone)]
enum State {
    /// Missing; request timer armed (at `armed`, drawn with `dist`, the distance to the
    /// source then; see [`Member::follow_source_distance`]).
    Request {
        round: u8,
        backoff: f64,
        backoff_ctr: u32,
        start: Time,
        ignore_until: Time,
        sent_round1: bool,
        armed: Time,
        dist: Duration,
    },
    /// Holding the data; repair timer armed for `requester`.
    Repair { requester: NodeId, start: Time },
    /// Recovered: requests are ignored until the timer fires.
    HoldDown,
    /// A repairer's hold-down (a repair for `requester` was sent, `sent`, or heard): requests
    /// are ignored until the timer fires, and with adaptive timers every first-round repair
    /// heard meanwhile is a duplicate (ns-2's repair object stays pending until its
    /// hold-down ends).
    Repaired { requester: NodeId, sent: bool },
}

/// Adaptive-timer statistics (ns-2 `stats_`); negative means "not yet".
#[derive(Debug, Clone)]
struct Adapt {
    /// Requests: `dup_req`, `ave_dup_req`, `ave_req_delay`, `closest_requestor`.
    req: AdaptSide,
    /// Repairs: `dup_rep`, `ave_dup_rep`, `ave_rep_delay`, `closest_repairor`.
    rep: AdaptSide,
}

/// The adaptive-timer state of one kind of message (requests or repairs), which moves that
/// kind's pair of timer parameters (`C1`, `C2` or `D1`, `D2`) by the same rule.
#[derive(Debug, Clone)]
struct AdaptSide {
    /// Duplicates heard since the last loss (ns-2 starts it at −1).
    dup: f64,
    /// EWMA of duplicates per round; negative before the first.
    ave_dup: f64,
    /// EWMA of the delay, in units of 2·d; negative before the first.
    ave_delay: f64,
    /// A closer member's message was heard first this round.
    closest: bool,
}

impl AdaptSide {
    const START: AdaptSide = AdaptSide {
        dup: -1.0,
        ave_dup: -1.0,
        ave_delay: -1.0,
        closest: false,
    };

    /// Fold this round's duplicates into their average and move the parameter pair
    /// `(p1, p2)`: the closest member's `p2` down; too many duplicates, both up; few, `p2`
    /// down if the delay is long and `p1` down if duplicates are rare; in between, `p1` up.
    fn adjust(&mut self, p1: &mut f64, p2: &mut f64) {
        self.fold_dup();
        if self.closest {
            *p2 -= 0.1;
            self.closest = false;
        } else if self.ave_dup >= AVE_DUPS {
            *p1 += 0.1;
            *p2 += 0.5;
        } else if self.ave_dup < AVE_DUPS - EPS {
            if self.ave_delay > AVE_DELAY {
                *p2 -= 0.1;
            }
            if self.ave_dup < 0.25 {
                *p1 -= 0.05;
            }
        } else {
            *p1 += 0.05;
        }
    }

    /// ns-2's `compute-ave`: fold the duplicates counted so far into their average.
    fn fold_dup(&mut self) {
        self.ave_dup = ewma(self.ave_dup, self.dup);
    }

    /// ns-2's `mark-period`, after each recompute: fold the count in (a second time when
    /// the recompute adjusted) and start counting again.
    fn mark_period(&mut self) {
        self.fold_dup();
        self.dup = 0.0;
    }

    /// The delay of a first-round timer that ended at `now` (started at `start`), in units
    /// of `2·d`, folded into its average.
    fn note_delay(&mut self, now: Time, start: Time, d: f64) {
        let st = now.saturating_since(start).as_secs_f64() / (2.0 * d).max(1e-12);
        self.ave_delay = ewma(self.ave_delay, st);
    }
}

const ALPHA: f64 = 0.25;
const AVE_DUPS: f64 = 1.0;
const AVE_DELAY: f64 = 1.0;
const EPS: f64 = 0.10;

fn ewma(ave: f64, cur: f64) -> f64 {
    if ave < 0.0 {
        cur
    } else {
        (1.0 - ALPHA) * ave + ALPHA * cur
    }
}

/// Counters specific to SRM (requests and repairs per drop are the seed's metric).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SrmStats {
    /// Requests this member sent.
    pub requests_sent: u64,
    /// Repairs this member sent.
    pub repairs_sent: u64,
    /// Other members' requests heard.
    pub requests_heard: u64,
    /// Other members' repairs heard.
    pub repairs_heard: u64,
    /// Request timers reset by a request heard (back-offs).
    pub backoffs: u64,
    /// Requests or repairs suppressed before being sent.
    pub suppressed: u64,
}

/// One SRM member (the source is a member with data to send).
pub struct Member {
    cfg: Config,
    rng: AgentRng,
    c1: f64,
    c2: f64,
    d1: f64,
    d2: f64,
    adapt: Adapt,
    window: SeqWindow,
    store: RetransmitBuffer,
    /// Number of source packets known to exist (highest seen + 1).
    known: u64,
    sent: Originals,
    /// Per packet: missing (a request whose round the budget deferred has no timer until its
    /// round comes), holding it for a repair, or held down.
    states: BTreeMap<u64, State>,
    timers: TimerSet<Key>,
    budget: RequestBudget,
    /// Distances learnt from session messages.
    learnt: BTreeMap<NodeId, Duration>,
    /// Last SESSION heard per member: (their ts, when we heard it).
    heard: BTreeMap<NodeId, (u64, Time)>,
    out: Outbox,
    srm: SrmStats,
}

impl Member {
    /// A member built from `cfg`, drawing its random delays from `rng`.
    pub fn new(cfg: Config, rng: AgentRng) -> Self {
        Member {
            c1: cfg.c1,
            c2: cfg.c2,
            d1: cfg.d1,
            d2: cfg.d2,
            adapt: Adapt {
                req: AdaptSide::START,
                rep: AdaptSide::START,
            },
            window: SeqWindow::new(cfg.window),
            store: RetransmitBuffer::new(usize::MAX),
            known: 0,
            timers: Originals::timers(cfg.session_interval),
            sent: Originals::new(cfg.node, cfg.group, cfg.session, DATA),
            states: BTreeMap::new(),
            budget: RequestBudget::default(),
            learnt: BTreeMap::new(),
            heard: BTreeMap::new(),
            out: Outbox::new(),
            srm: SrmStats::default(),
            rng,
            cfg,
        }
    }

    /// SRM-specific counters.
    pub fn srm_stats(&self) -> &SrmStats {
        &self.srm
    }

    /// Current timer parameters (C1, C2, D1, D2); they move only with adaptive timers.
    pub fn params(&self) -> (f64, f64, f64, f64) {
        (self.c1, self.c2, self.d1, self.d2)
    }

    fn is_source(&self) -> bool {
        self.cfg.node == self.cfg.source
    }

    /// One-way distance to `node` as this member knows it.
    pub fn distance(&self, node: NodeId) -> Duration {
        match &self.cfg.distances {
            DistanceSource::Configured(m) => m.get(&node).copied(),
            DistanceSource::Oracle(o) => o.distance(self.cfg.node, node),
            DistanceSource::SessionMessages => self.learnt.get(&node).copied(),
        }
        .unwrap_or(self.cfg.default_distance)
    }

    fn d_secs(&self, node: NodeId) -> f64 {
        self.distance(node).as_secs_f64()
    }

    fn push(&mut self, msg: wire::Message<'_>, flags: u8) {
        self.sent.push(&mut self.out, &Message::Srm(msg), flags);
    }

    fn group_size(&self) -> f64 {
        self.cfg.group_size.max(1) as f64
    }

    fn bound_c(&mut self) {
        let g = self.group_size();
        self.c1 = clamp_ns2(self.c1, 0.5, 2.0);
        self.c2 = clamp_ns2(self.c2, 1.0, g);
    }

    fn bound_d(&mut self) {
        let g = self.group_size();
        self.d1 = clamp_ns2(self.d1, 0.5, g.log10());
        self.d2 = clamp_ns2(self.d2, 1.0, g);
    }

    fn recompute_request_params(&mut self) {
        if !self.cfg.adaptive {
            return;
        }
        if self.adapt.req.ave_delay >= 0.0 {
            self.adapt.req.adjust(&mut self.c1, &mut self.c2);
        }
        self.bound_c();
        self.adapt.req.mark_period();
    }

    fn recompute_repair_params(&mut self) {
        if !self.cfg.adaptive {
            return;
        }
        if self.adapt.rep.ave_delay < 0.0 {
            // No repair timer has ended yet: start from log10 G.
            let lg = self.group_size().log10();
            self.d1 = lg;
            self.d2 = lg;
        } else {
            self.adapt.rep.adjust(&mut self.d1, &mut self.d2);
        }
        self.bound_d();
        self.adapt.rep.mark_period();
    }

    /// The request interval for the current back-off: `(C1 + C2·U)·d_S·b`.
    /// A request timer's wait, never zero: requests repeat until the data arrives, so a
    /// zero wait (a distance measured as 0, on a LAN under load) would re-fire the timer at
    /// the same instant forever.
    fn request_delay(&mut self, backoff: f64) -> Duration {
        let u = self.rng.unit();
        let d = self.d_secs(self.cfg.source);
        secs((self.c1 + self.c2 * u) * d * backoff).max(Duration::from_nanos(1))
    }

    /// Start recovery of `seq` if it is missing (gap detected); whether it was.
    fn detect(&mut self, now: Time, seq: u64) -> bool {
        if self.window.contains(seq) || self.states.contains_key(&seq) || self.is_source() {
            return false;
        }
        self.out.event(Event::LossDetected { seq });
        self.recompute_request_params();
        let delay = self.request_delay(1.0);
        self.states.insert(
            seq,
            State::Request {
                round: 1,
                backoff: 1.0,
                backoff_ctr: 0,
                start: now,
                ignore_until: Time::ZERO,
                sent_round1: false,
                armed: now,
                dist: self.distance(self.cfg.source),
            },
        );
        self.timers.set(Key::Own(Own::Seq(seq)), now + delay);
        true
    }

    /// Packets below `next` exist: detect those missing, inside the receive window and at
    /// most the budget's new losses per round ([`RequestBudget::learn`]).
    fn learn_known(&mut self, now: Time, next: u64) {
        self.budget.learn(&self.window, &mut self.known, next);
        self.detect_known(now);
    }

    /// Examine the known sequence numbers for loss while the round's budget allows.
    fn detect_known(&mut self, now: Time) {
        let len = self.round();
        while let Some(s) = self.budget.next_unseen(now, len, self.window.base()) {
            if self.detect(now, s) {
                self.budget.detected();
            }
        }
        self.budget.arm(&mut self.timers, Key::Own(Own::Round));
    }

    /// Back the request timer for `seq` off (after sending or hearing a request).
    fn backoff(&mut self, now: Time, seq: u64) {
        let factor = if self.cfg.adaptive { 3.0 } else { 2.0 };
        let limit = self.cfg.backoff_limit;
        let Some(State::Request {
            round,
            backoff,
            backoff_ctr,
            start,
            ..
        }) = self.states.get(&seq).cloned()
        else {
            return;
        };
        if round == 1 && self.cfg.adaptive {
            let d = self.d_secs(self.cfg.source);
            self.adapt.req.note_delay(now, start, d);
        }
        let (b, ctr) = if backoff_ctr < limit {
            (backoff * factor, backoff_ctr + 1)
        } else {
            (backoff, backoff_ctr)
        };
        let delay = self.request_delay(b);
        let d = self.distance(self.cfg.source);
        if let Some(State::Request {
            round: r,
            backoff: bo,
            backoff_ctr: bc,
            ignore_until,
            armed,
            dist,
            ..
        }) = self.states.get_mut(&seq)
        {
            *r = r.saturating_add(1);
            *bo = b;
            *bc = ctr;
            *ignore_until = now + delay / 2;
            *armed = now;
            *dist = d;
        }
        self.timers.set(Key::Own(Own::Seq(seq)), now + delay);
    }

    fn hold_down(&mut self, now: Time, seq: u64, d: Duration) {
        self.hold(now, seq, State::HoldDown, d);
    }

    /// Enter the hold-down `state` for `seq` for `3·d`.
    fn hold(&mut self, now: Time, seq: u64, state: State, d: Duration) {
        self.states.insert(seq, state);
        self.timers.set(Key::Own(Own::Seq(seq)), now + d * 3);
    }

    /// A repair timer for `requester` (started at `start`) ended at `now`, by this member's
    /// repair (`sent`) or another's: with adaptive timers a first-round repair (`first_round`)
    /// is a duplicate and the timer's delay is measured; then the repairer's hold-down, `3·d`
    /// of its distance to the requester.
    fn end_repair_timer(
        &mut self,
        now: Time,
        seq: u64,
        (requester, start): (NodeId, Time),
        sent: bool,
        first_round: bool,
    ) {
        if self.cfg.adaptive && first_round {
            self.adapt.rep.dup += 1.0;
            let d = self.d_secs(requester);
            self.adapt.rep.note_delay(now, start, d);
        }
        let d = self.distance(requester);
        self.hold(now, seq, State::Repaired { requester, sent }, d);
    }

    fn on_request(&mut self, now: Time, from: NodeId, round: u8, seq: u64, dist_ns: u64) {
        self.srm.requests_heard += 1;
        if !self.window.contains(seq) && !self.is_source() {
            if seq >= self.known {
                self.learn_known(now, seq.saturating_add(1));
            }
            let Some(State::Request {
                round: my_round,
                ignore_until,
                sent_round1,
                ..
            }) = self.states.get(&seq).cloned()
            else {
                return;
            };
            if round == 1 && self.cfg.adaptive {
                if my_round == 2 && now <= ignore_until {
                    self.adapt.req.dup += 1.0;
                }
                if sent_round1 {
                    let mine = self.d_secs(self.cfg.source);
                    self.adapt.req.closest = (dist_ns as f64 / 1e9) > 1.5 * mine;
                }
            }
            if now < ignore_until {
                return;
            }
            self.srm.backoffs += 1;
            self.backoff(now, seq);
            return;
        }
        // We hold the data: schedule a repair unless something is pending for it.
        if self.states.contains_key(&seq) || self.store.get(seq).is_none() {
            return;
        }
        self.recompute_repair_params();
        let u = self.rng.unit();
        let delay = secs((self.d1 + self.d2 * u) * self.d_secs(from));
        self.states.insert(
            seq,
            State::Repair {
                requester: from,
                start: now,
            },
        );
        self.timers.set(Key::Own(Own::Seq(seq)), now + delay);
    }

    /// Data for `seq` arrived (original or repair).
    fn on_data(
        &mut self,
        now: Time,
        seq: u64,
        payload: &[u8],
        repair: Option<(u8, u64)>,
        shared: Option<&Bytes>,
    ) {
        if repair.is_some() {
            self.srm.repairs_heard += 1;
        }
        match self.states.get(&seq).cloned() {
            Some(State::Request { round, start, .. }) => {
                if round == 1 && self.cfg.adaptive {
                    let d = self.d_secs(self.cfg.source);
                    self.adapt.req.note_delay(now, start, d);
                }
                self.hold_down(now, seq, self.distance(self.cfg.source));
            }
            Some(State::Repair {
                requester, start, ..
            }) => {
                // Suppressed: another member's repair came first.
                self.srm.suppressed += 1;
                let first_round = matches!(repair, Some((1, _)));
                self.end_repair_timer(now, seq, (requester, start), false, first_round);
            }
            Some(State::Repaired { requester, sent }) => {
                // Another repair during the hold-down: a duplicate, and, after sending one,
                // whether this member was the closer repairer (ns-2's `closest-repairor?`).
                if let (true, Some((1, dist))) = (self.cfg.adaptive, repair) {
                    self.adapt.rep.dup += 1.0;
                    if sent {
                        let d = self.d_secs(requester);
                        self.adapt.rep.closest = (dist as f64 / 1e9) > 1.5 * d;
                    }
                }
            }
            Some(State::HoldDown) | None => {}
        }
        if self.is_source() {
            return;
        }
        if self.out.arrived(&mut self.window, seq) {
            self.store.insert(seq, hold(shared, payload), now);
            self.learn_known(now, seq + 1);
            let store = &self.store;
            self.out
                .deliver_in_order(&mut self.window, |s| store.get(s).map(|e| e.data.clone()));
        }
    }

    fn on_session(
        &mut self,
        now: Time,
        from: NodeId,
        ts: u64,
        next_seq: u64,
        entries: wire::SessionEntries<'_>,
    ) {
        self.heard.insert(from, (ts, now));
        if matches!(self.cfg.distances, DistanceSource::SessionMessages) {
            if let Some(e) = entries.iter().find(|e| e.node == self.cfg.node.0) {
                let rtt = now
                    .as_nanos()
                    .saturating_sub(e.echo_ts)
                    .saturating_sub(u64::from(e.delay_us) * 1_000);
                let d = Duration::from_nanos(rtt / 2);
                self.learnt.insert(from, d);
                if from == self.cfg.source && self.cfg.follow_falling_distance {
                    self.follow_source_distance(now, d);
                }
            }
        }
        if !self.is_source() {
            self.learn_known(now, next_seq);
        }
    }

    /// The distance to the source is now `d`: every request timer drawn with a longer one
    /// is brought forward to the deadline `d` gives (its wait scaled by the ratio of the
    /// distances, from when it was armed; at once if that is past), never pushed back.
    ///
    /// On sockets a distance sample is a round trip through two hosts' queues and
    /// schedulers: mostly well under a millisecond on a LAN, but now and then tens or
    /// hundreds of milliseconds (a sender's pacing queue, a receiver descheduled on a loaded
    /// machine). A request timer is up to `(C1 + C2)·d·2^5` = 128·d away at the back-off
    /// limit, so one such sample made a member wait seconds for a packet it lacked after
    /// the estimate had fallen back: the srm socket test saw a receiver stall on one packet
    /// past the sender's `--final-wait` while repairs flowed (and timers of 4–9 s in
    /// passing runs under load). Brought forward, a stale deadline lasts only until the
    /// next session message from the source.
    fn follow_source_distance(&mut self, now: Time, d: Duration) {
        for (&seq, st) in self.states.iter_mut() {
            let State::Request {
                armed,
                dist,
                ignore_until,
                ..
            } = st
            else {
                continue;
            };
            if *dist <= d {
                continue;
            }
            let key = Key::Own(Own::Seq(seq));
            // A request the budget deferred has no timer: it goes with a later round.
            let Some(at) = self.timers.deadline(key) else {
                continue;
            };
            let wait = at
                .saturating_since(*armed)
                .mul_f64(d.as_secs_f64() / dist.as_secs_f64());
            *dist = d;
            *ignore_until = (*ignore_until).min(*armed + wait / 2);
            self.timers.set(key, (*armed + wait).max(now).min(at));
        }
    }

    fn send_session(&mut self, now: Time) {
        let mut raw = Vec::new();
        wire::SessionEntries::encode(
            self.heard
                .iter()
                .take(MAX_ENTRIES)
                .map(|(n, &(ts, at))| wire::SessionEntry {
                    node: n.0,
                    echo_ts: ts,
                    delay_us: u32::try_from(now.saturating_since(at).as_micros())
                        .unwrap_or(u32::MAX),
                }),
            &mut raw,
        );
        let Some(entries) = wire::SessionEntries::from_raw(&raw) else {
            return;
        };
        let next_seq = if self.is_source() {
            self.sent.next()
        } else {
            self.known
        };
        // Not counted in `control_sent`, which counts requests only (the seed's
        // requests-per-drop metric, readable from `Stats` by any driver).
        self.push(
            wire::Message::Session {
                ts: now.as_nanos(),
                next_seq,
                entries,
            },
            0,
        );
    }

    /// The wait before this member's next session message: the interval, jittered.
    fn next_session_interval(&mut self) -> Option<Duration> {
        let i = self.cfg.session_interval?;
        let j = self.cfg.session_jitter;
        if j <= 0.0 {
            return Some(i);
        }
        Some(i.mul_f64(1.0 - j + 2.0 * j * self.rng.unit()))
    }

    /// A round of the request budget: the first request interval, `(C1 + C2)·d`.
    fn round(&self) -> Duration {
        secs((self.c1 + self.c2) * self.d_secs(self.cfg.source))
    }

    /// The budget's next round: the requests it deferred, oldest first, for packets still
    /// missing with no timer (a request or repair heard meanwhile re-arms or clears it); then
    /// the next sequence numbers known to exist.
    fn next_round(&mut self, now: Time) {
        let len = self.round();
        while let Some(seq) = self.budget.next_waiting(now, len) {
            let missing = matches!(self.states.get(&seq), Some(State::Request { .. }));
            if missing && !self.timers.is_armed(Key::Own(Own::Seq(seq))) {
                self.fire(now, Own::Seq(seq));
            }
        }
        self.detect_known(now);
    }

    fn fire(&mut self, now: Time, own: Own) {
        let seq = match own {
            Own::Round => return self.next_round(now),
            Own::Seq(seq) => seq,
        };
        match self.states.get(&seq).cloned() {
            Some(State::Request { round, .. }) => {
                let admitted = self.budget.admit(now, self.round(), seq);
                // Re-armed either way: a measured distance may have cut the round short.
                self.budget.arm(&mut self.timers, Key::Own(Own::Round));
                if !admitted {
                    return;
                }
                self.out.stats.timeouts += 1;
                self.srm.requests_sent += 1;
                self.out.stats.control_sent += 1;
                if round == 1 && self.cfg.adaptive {
                    self.c1 -= 0.1;
                    self.adapt.req.closest = true;
                    self.bound_c();
                }
                if round == 1 {
                    if let Some(State::Request { sent_round1, .. }) = self.states.get_mut(&seq) {
                        *sent_round1 = true;
                    }
                }
                let dist_ns = self.distance(self.cfg.source).as_nanos() as u64;
                self.push(
                    wire::Message::Request {
                        sender: self.cfg.source.0,
                        round,
                        seq,
                        dist_ns,
                    },
                    0,
                );
                self.backoff(now, seq);
            }
            Some(State::Repair {
                requester, start, ..
            }) => {
                let Some(data) = self.store.mark_resent(seq, now) else {
                    self.states.remove(&seq);
                    return;
                };
                self.srm.repairs_sent += 1;
                self.out.stats.repairs_sent += 1;
                if self.cfg.adaptive {
                    self.d1 -= 0.1;
                    self.adapt.rep.closest = true;
                    self.bound_d();
                }
                let dist_ns = self.distance(requester).as_nanos() as u64;
                self.push(
                    wire::Message::Repair {
                        sender: self.cfg.source.0,
                        requester: requester.0,
                        round: 1,
                        seq,
                        dist_ns,
                        payload: &data,
                    },
                    FLAG_RETRANSMISSION,
                );
                // ns-2 hands the member its own repair at once (multicast loops back).
                self.end_repair_timer(now, seq, (requester, start), true, true);
            }
            Some(State::HoldDown) | Some(State::Repaired { .. }) => {
                self.states.remove(&seq);
            }
            None => {}
        }
    }
}

/// ns-2's `check-bounds`: below the minimum → minimum, else above the maximum → maximum.
fn clamp_ns2(v: f64, min: f64, max: f64) -> f64 {
    if v < min {
        min
    } else if v > max {
        max
    } else {
        v
    }
}

fn secs(s: f64) -> Duration {
    if s.is_finite() && s > 0.0 {
        Duration::from_secs_f64(s.min(1e9))
    } else {
        Duration::ZERO
    }
}

impl Member {
    /// `shared`: the datagram as shared bytes, when the driver has it (see [`hold`]).
    fn on_message(
        &mut self,
        now: Time,
        from: NodeId,
        m: wire::Message<'_>,
        shared: Option<&Bytes>,
    ) {
        if from == self.cfg.node {
            self.out.ignore();
            return;
        }
        match m {
            wire::Message::Data { seq, payload } => self.on_data(now, seq, payload, None, shared),
            wire::Message::Repair {
                sender,
                round,
                seq,
                dist_ns,
                payload,
                ..
            } if sender == self.cfg.source.0 => {
                self.on_data(now, seq, payload, Some((round, dist_ns)), shared)
            }
            wire::Message::Request {
                sender,
                round,
                seq,
                dist_ns,
            } if sender == self.cfg.source.0 => self.on_request(now, from, round, seq, dist_ns),
            wire::Message::Session {
                ts,
                next_seq,
                entries,
            } => self.on_session(now, from, ts, next_seq, entries),
            _ => self.out.ignore(),
        }
    }
}

impl Agent for Member {
    crate::outbox::agent_io!(out, on_message with from and bytes);
    crate::sendq::source_timers!(sent, timers, announce: send_session every next_session_interval(), own: fire);
    fn as_sender(&mut self) -> Option<&mut dyn crate::SenderAgent> {
        Some(self)
    }
}

impl crate::SenderAgent for Member {
    fn send(&mut self, now: Time, data: Bytes) -> Result<(), SendError> {
        if !self.is_source() {
            return Err(SendError::NotASender);
        }
        self.sent.send(now, data, &mut self.out, &mut self.store)
    }

    fn can_send(&self) -> bool {
        self.is_source() && !self.sent.is_closed()
    }

    fn close(&mut self, now: Time) {
        if self.is_source() {
            self.sent.close(&mut self.timers, now, self.cfg.linger);
        }
    }
}
