//! Repairs at the pace of those who ask (issue 59).
//!
//! New data leaves at `--rate`, so a receiver behind a slower link (a 50 Mbit/s port on a
//! gigabit LAN) misses most of it and asks for it again. Sent at `--rate` too, its repairs
//! arrive in bursts its link cannot take: most are lost again in front of the slow port, the
//! repair queue empties, and the receiver waits a NAK timeout for each loss while its link
//! stands idle. Measured on the uneven bridge, it took 31-35 Mbit/s of its 50.
//!
//! The sender therefore queues the repairs it sends to the group (datagrams flagged
//! [`rmcast_wire::FLAG_RETRANSMISSION`]) apart from everything else, sends them first, and
//! paces them on their own:
//!
//! * Each receiver's session REPORT counts the repairs it received. Between two of its
//!   reports (at least [`MIN_INTERVAL`] apart) the sender knows how many repairs it sent and
//!   how many that receiver took in. One that took in less than [`LOSING`] of them is
//!   *losing* repairs: its link is the limit.
//! * The queue in front of the slow link drops without regard to kind, so the share of the
//!   repairs it let through is the share of everything sent to the group: that share of the
//!   group's bytes per second is its intake (new data may be most of it).
//! * Repairs leave at [`GAIN`] times the smallest intake of the receivers losing them, which
//!   keeps the slow link's queue full without burying it; with no receiver losing repairs
//!   they leave at `--rate`. A lower pace is believed only from an interval in which the
//!   queue never ran dry (else the requests, not the link, set what went out). A receiver
//!   that sets the pace and takes in all it lets through gets [`PROBE`] times its intake
//!   next. The pace never falls below [`MIN_PACE`].
//! * Each asker's repairs (the member whose NAK the agent was answering) are served in turn:
//!   a fast receiver's few do not wait behind a slow one's thousands. A repair already
//!   queued is not queued twice; one sent before and asked for again was lost and goes to
//!   the front; while paced, one asked for again within [`HOLDOFF`] of leaving is dropped
//!   (it is most likely still in the queue in front of the slow link).
//!
//! New data is not held back: the fast receivers finish first and the slow one catches up
//! by repair (the policy `--rate auto` replaces with everyone at the slowest's pace).
//! Measured in docs/performance.md, "An uneven LAN".

use bytes::Bytes;
use rmcast_proto::pacing::Pacer;
use rmcast_proto::{Time, Transmit};
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};
use std::time::Duration;

/// A repair's identity in the set of those sent (its bytes, hashed).
fn digest(payload: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    payload.hash(&mut h);
    h.finish()
}

/// Repairs leave at this multiple of the slowest losing receiver's intake.
pub(super) const GAIN: f64 = 1.3;
/// A receiver that took in less than this share of the repairs sent between two of its
/// reports is losing them. Below 1/[`GAIN`], so that paced at GAIN times its intake it still
/// counts as losing; low enough that random loss on a fast link (10 % in the frame-loss
/// tests) is not taken for a slow link.
pub(super) const LOSING: f64 = 0.8;
/// A receiver that sets the pace and took in what it let through gets this multiple of it
/// next (the link may carry more).
pub(super) const PROBE: f64 = 1.5;
/// While repairs are paced, one asked for again sooner than this after it left is not sent
/// again: it is most likely still in the queue in front of the slow link (a 50 ms queue on
/// the uneven bridge). Unpaced, a repair asked for again is sent at once.
pub(super) const HOLDOFF: Duration = Duration::from_millis(100);
/// How many sent repairs are remembered before those older than [`RESENT_FOR`] are
/// forgotten.
const RESENT_KEPT: usize = 1 << 17;
const RESENT_FOR: Duration = Duration::from_secs(10);
/// The shortest interval between two reports that measures an intake.
const MIN_INTERVAL: Duration = Duration::from_millis(450);
/// The fewest repairs sent between two reports that measure a share: fewer say more about
/// when the report left than about the link.
const MIN_SAMPLE: u64 = 32;
/// The slowest pace, bytes per second (1 Mbit/s): a receiver's measure may be wrong, and a
/// pace near zero would stop the repairs it needs to be measured again.
const MIN_PACE: u64 = 125_000;
/// An intake not measured again for this long no longer limits the pace.
const STALE: Duration = Duration::from_secs(1);

/// What the sender knew at a receiver's last report.
#[derive(Debug, Clone, Copy)]
struct Mark {
    at: Time,
    received: u64,
    sent: u64,
    group_bytes: u64,
    repair_bytes: u64,
    /// [`Repairs::dry`] then.
    dry: Duration,
}

/// The queue of repairs to the group and their pacer.
#[derive(Debug)]
pub(super) struct Repairs {
    /// Paced at all (off: repairs go with new data, as before).
    on: bool,
    /// A repair asked for again joins the back of its asker's queue (the receivers judge
    /// loss by the order they asked in), not the front.
    in_order: bool,
    /// The queued repairs by the receiver whose NAK they answer (0: not known), served in
    /// turn: a fast receiver's few repairs do not wait behind a slow one's thousands.
    queues: HashMap<u32, VecDeque<Transmit>>,
    /// The receivers with repairs queued, the one served next first.
    turns: VecDeque<u32>,
    queued: HashSet<Bytes>,
    pacer: Pacer,
    /// The largest datagram: the bucket holds at least two.
    dgram: usize,
    /// Repairs sent so far.
    sent: u64,
    /// Bytes sent to the group so far: new data, repairs and control.
    group_bytes: u64,
    /// When each repair sent so far (by hash) last left: one asked for again was lost, and
    /// goes first.
    resent: HashMap<u64, Time>,
    marks: HashMap<u32, Mark>,
    /// Bytes of repairs sent so far (part of `group_bytes`).
    repair_bytes: u64,
    /// The losing receivers' intakes, bytes per second, and when each was measured.
    intake: HashMap<u32, (Time, f64)>,
    /// What became of the repairs offered so far (for the trace).
    offered: Offered,
    /// Since when the queue has been empty (`None`: it holds repairs).
    empty_since: Option<Time>,
    /// How long the queue has been empty before `empty_since`, in all (for the trace).
    dry_before: Duration,
}

/// What became of the repairs offered to the queue ([`Repairs::push`]).
#[derive(Debug, Default, Clone, Copy)]
struct Offered {
    queued: u64,
    held_off: u64,
    queued_already: u64,
}

impl Repairs {
    /// Repairs paced (`on`), datagrams of at most `dgram` bytes; `in_order`: one asked for
    /// again is queued last, not first.
    pub fn new(on: bool, dgram: usize, in_order: bool) -> Self {
        Repairs {
            on,
            in_order,
            queues: HashMap::new(),
            turns: VecDeque::new(),
            queued: HashSet::new(),
            pacer: Pacer::new(0, 0),
            dgram,
            sent: 0,
            group_bytes: 0,
            resent: HashMap::new(),
            marks: HashMap::new(),
            repair_bytes: 0,
            intake: HashMap::new(),
            offered: Offered::default(),
            empty_since: Some(Time::ZERO),
            dry_before: Duration::ZERO,
        }
    }

    /// How long the queue has been empty in all, up to `now`.
    fn dry(&self, now: Time) -> Duration {
        self.dry_before
            + self
                .empty_since
                .map_or(Duration::ZERO, |t| now.saturating_since(t))
    }

    /// Whether `t` is a repair this queue paces: a retransmission to the group.
    pub fn takes(&self, t: &Transmit) -> bool {
        self.on
            && matches!(t.dest, rmcast_proto::Dest::Group(_))
            && rmcast_wire::Header::parse(&t.payload)
                .is_ok_and(|h| h.flags & rmcast_wire::FLAG_RETRANSMISSION != 0)
    }

    /// Queue `t`, which answers `asker` (0: not known); false when a copy of it is queued
    /// already (then it is dropped). A repair sent before and asked for again was lost on
    /// the way: it goes to the front of its asker's queue, so the losses are made good while
    /// the rest drains instead of after it. While paced, one asked for again within
    /// [`HOLDOFF`] of leaving is most likely still on its way (in the queue in front of the
    /// slow link): dropped too.
    pub fn push(&mut self, now: Time, asker: u32, t: Transmit) -> bool {
        let last = self.resent.get(&digest(&t.payload)).copied();
        // Only behind a slow link (the pace is set) does a repair spend long on its way.
        let paced = self.pacer.rate() > 0;
        if paced && last.is_some_and(|at| now.saturating_since(at) < HOLDOFF) {
            self.offered.held_off += 1;
            return false;
        }
        if !self.queued.insert(t.payload.clone()) {
            self.offered.queued_already += 1;
            return false;
        }
        self.offered.queued += 1;
        if let Some(t) = self.empty_since.take() {
            self.dry_before += now.saturating_since(t);
        }
        let q = self.queues.entry(asker).or_default();
        if q.is_empty() {
            self.turns.push_back(asker);
        }
        if last.is_some() && !self.in_order {
            q.push_front(t);
        } else {
            q.push_back(t);
        }
        true
    }

    /// `len` bytes left for the group (anything: data, repairs, control).
    pub fn sent_to_group(&mut self, len: usize) {
        self.group_bytes += len as u64;
    }

    pub fn len(&self) -> usize {
        self.queued.len()
    }

    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    /// The next `max` repairs in the order [`Repairs::pop_front`] takes them: one of each
    /// asker's in turn.
    pub fn head(&self, max: usize) -> Vec<&Transmit> {
        let mut taken: HashMap<u32, usize> = HashMap::new();
        let mut turns = self.turns.clone();
        let mut out = Vec::new();
        while out.len() < max {
            let Some(asker) = turns.pop_front() else {
                break;
            };
            let i = taken.entry(asker).or_insert(0);
            let Some(q) = self.queues.get(&asker) else {
                continue;
            };
            if let Some(t) = q.get(*i) {
                out.push(t);
                *i += 1;
                if *i < q.len() {
                    turns.push_back(asker);
                }
            }
        }
        out
    }

    pub fn pacer(&self) -> &Pacer {
        &self.pacer
    }

    /// The head left at `now` (`sent`: it reached the socket, `len` bytes charged).
    pub fn pop_front(&mut self, now: Time, sent: Option<usize>) {
        let Some(asker) = self.turns.pop_front() else {
            return;
        };
        let Some(q) = self.queues.get_mut(&asker) else {
            return;
        };
        let Some(t) = q.pop_front() else {
            return;
        };
        if q.is_empty() {
            self.queues.remove(&asker);
        } else {
            self.turns.push_back(asker);
        }
        self.queued.remove(&t.payload);
        if self.turns.is_empty() {
            self.empty_since = Some(now);
        }
        if let Some(len) = sent {
            self.pacer.on_send(now, len);
            self.sent += 1;
            self.repair_bytes += len as u64;
            if self.on {
                self.resent.insert(digest(&t.payload), now);
                if self.resent.len() > RESENT_KEPT {
                    // A stream runs for ever: forget repairs long gone.
                    self.resent
                        .retain(|_, at| now.saturating_since(*at) < RESENT_FOR);
                }
            }
        }
    }

    /// The pace, bytes per second (0: `--rate` alone).
    #[cfg(test)]
    pub fn rate(&self) -> u64 {
        self.pacer.rate()
    }

    /// Receiver `node` reported at `now` that it received `received` repairs in all.
    pub fn report(&mut self, now: Time, node: u32, received: u64) {
        if !self.on {
            return;
        }
        let dry = self.dry(now);
        let mark = Mark {
            at: now,
            received,
            sent: self.sent,
            group_bytes: self.group_bytes,
            repair_bytes: self.repair_bytes,
            dry,
        };
        let Some(prev) = self.marks.insert(node, mark) else {
            return;
        };
        let dt = now.saturating_since(prev.at);
        let sent = self.sent - prev.sent;
        let took = received.saturating_sub(prev.received);
        if dt < MIN_INTERVAL || sent < MIN_SAMPLE || took == 0 {
            // Measure over a longer interval (too few sent, or nothing arrived yet: a report
            // sent before the repairs reached it says nothing of its link).
            self.marks.insert(node, prev);
            self.retarget(now);
            return;
        }
        // The share of the repairs it took in is the share of everything sent to the group
        // that its link let through (the queue in front of it drops without regard to
        // kind): times what went to the group, its intake. While new data still flows, most
        // of that is data.
        let share = took as f64 / sent as f64;
        let rate = share.min(1.0) * (self.group_bytes - prev.group_bytes) as f64 / dt.as_secs_f64();
        tracing::debug!(
            node,
            took,
            sent,
            queued = self.queued.len(),
            dry_ms = dry.saturating_sub(prev.dry).as_millis() as u64,
            offered = ?self.offered,
            intake_mbit_s = rate * 8e-6,
            "repair intake"
        );
        if share < LOSING {
            // It lost repairs: its link is the limit. The queue in front of it dropped without
            // regard to kind, so it took `share` of what left for the group while repairs
            // left at the pace: `share` times the pace plus the rest's rate (new data during
            // the first pass, control) is what its link carries (a little more: it also
            // drained while the repair queue was empty). Unlike the group's average over the
            // interval, this does not depend on how much was asked for, so it is believed
            // with or without a backlog; and it counts the new data that shared the link, so
            // an interval of the first pass does not cut the pace repairs get once new data
            // ends. It at most halves the pace per interval.
            let pace = self.pacer.rate() as f64;
            let est = if pace > 0.0 {
                let rest = (self.group_bytes - prev.group_bytes)
                    .saturating_sub(self.repair_bytes - prev.repair_bytes);
                (share * (pace + rest as f64 / dt.as_secs_f64())).max(pace / (2.0 * GAIN))
            } else {
                rate
            };
            self.intake.insert(node, (now, est));
        } else if let Some(e) = self.intake.get_mut(&node) {
            // It took what the pace let through: probe upwards. Never downwards: an interval
            // the queue ran dry in measured the requests, not the link (a probe from one
            // such interval once cut the pace from 63 to 30 Mbit/s for a receiver behind a
            // 50 Mbit/s port, and it took 2 s to climb back).
            *e = (now, e.1.max(PROBE / GAIN * rate));
        }
        self.retarget(now);
    }

    /// `node` finished or left: it no longer sets the pace.
    pub fn forget(&mut self, now: Time, node: u32) {
        self.marks.remove(&node);
        if self.intake.remove(&node).is_some() {
            self.retarget(now);
        }
    }

    /// [`GAIN`] times the smallest fresh intake, or unpaced.
    fn retarget(&mut self, now: Time) {
        self.intake
            .retain(|_, (at, _)| now.saturating_since(*at) < STALE);
        let slowest = self
            .intake
            .values()
            .map(|(_, r)| *r)
            .fold(f64::INFINITY, f64::min);
        let rate = if slowest.is_finite() {
            ((GAIN * slowest) as u64).max(MIN_PACE)
        } else {
            0
        };
        if rate != self.pacer.rate() {
            tracing::debug!(rate_mbit_s = rate as f64 * 8e-6, "repair pace");
            // A bucket of the pacing step at this pace, not at --rate's: a burst of 2 ms at a
            // gigabit would fill the slow link's queue at once.
            let burst = super::pacing_burst(rate.saturating_mul(8), self.dgram);
            self.pacer.set_rate(now, rate, burst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcast_proto::{Dest, GroupId};

    fn repair(seq: u8) -> Transmit {
        let data = [seq; 100];
        let payload = rmcast_wire::Packet::to_vec(
            rmcast_wire::Envelope {
                session: 1,
                source: 2,
                flags: rmcast_wire::FLAG_RETRANSMISSION,
            },
            &rmcast_wire::Message::Pgm(rmcast_wire::pgm::Message::Rdata {
                seq: u64::from(seq),
                payload: &data,
            }),
        )
        .unwrap();
        Transmit {
            dest: Dest::Group(GroupId(1)),
            payload: Bytes::from(payload),
        }
    }

    fn ms(n: u64) -> Time {
        Time::ZERO + Duration::from_millis(n)
    }

    /// `n` repairs of 1,000 bytes left for the group.
    fn sent(r: &mut Repairs, n: u64) {
        r.sent += n;
        r.repair_bytes += 1000 * n;
        r.sent_to_group(1000 * n as usize);
    }

    #[test]
    fn a_repair_queued_twice_goes_once() {
        let mut r = Repairs::new(true, 1500, false);
        assert!(r.takes(&repair(1)));
        assert!(r.push(ms(0), 0, repair(1)));
        assert!(!r.push(ms(0), 0, repair(1)));
        assert!(r.push(ms(0), 0, repair(2)));
        assert_eq!(r.len(), 2);
        r.pop_front(ms(0), Some(100));
        assert!(
            r.push(ms(10), 0, repair(1)),
            "unpaced: asked again, sent again"
        );
        r.pop_front(ms(20), Some(100));
        r.pacer.set_rate(ms(20), 100_000, 3000);
        assert!(
            !r.push(ms(50), 0, repair(1)),
            "paced, just sent: still on its way"
        );
        assert!(r.push(ms(150), 0, repair(1)), "asked for again: lost");
        assert_eq!(
            r.head(1).first().map(|t| &t.payload),
            Some(&repair(1).payload),
            "a lost repair goes first"
        );
    }

    #[test]
    fn the_time_the_queue_stood_empty_is_counted() {
        let mut r = Repairs::new(true, 1500, false);
        assert_eq!(r.dry(ms(10)), Duration::from_millis(10));
        assert!(r.push(ms(10), 0, repair(1)));
        assert_eq!(
            r.dry(ms(15)),
            Duration::from_millis(10),
            "not while it holds one"
        );
        r.pop_front(ms(20), Some(100));
        assert_eq!(r.dry(ms(35)), Duration::from_millis(25));
    }

    #[test]
    fn askers_are_served_in_turn() {
        let mut r = Repairs::new(true, 1500, false);
        for seq in 1..=3 {
            assert!(r.push(ms(0), 7, repair(seq)));
        }
        assert!(r.push(ms(0), 9, repair(4)));
        let order = |r: &Repairs| -> Vec<Bytes> {
            r.head(10).into_iter().map(|t| t.payload.clone()).collect()
        };
        let want: Vec<Bytes> = [1, 4, 2, 3].map(|s| repair(s).payload).to_vec();
        assert_eq!(order(&r), want, "the second asker's one repair goes second");
        let mut popped = Vec::new();
        while let Some(t) = r.head(1).first().map(|t| t.payload.clone()) {
            popped.push(t);
            r.pop_front(ms(1), Some(100));
        }
        assert_eq!(popped, want, "taken in the order shown");
        assert!(r.is_empty());
        assert_eq!(r.len(), 0);
    }

    #[test]
    fn the_pace_follows_the_slowest_receiver_that_loses_repairs() {
        let mut r = Repairs::new(true, 1500, false);
        for node in [1, 2] {
            r.report(ms(0), node, 0);
        }
        // 1,000 repairs of 1,000 bytes in 500 ms: node 1 took all, node 2 a quarter.
        sent(&mut r, 1000);
        r.report(ms(500), 1, 1000);
        assert_eq!(r.rate(), 0, "a receiver that takes everything sets no pace");
        r.report(ms(500), 2, 250);
        // A quarter of 1 MB sent to the group in 500 ms is 500 kB/s; paced GAIN times that.
        assert_eq!(r.rate(), (GAIN * 500e3) as u64);
        r.report(ms(700), 2, 300);
        assert_eq!(r.rate(), (GAIN * 500e3) as u64, "too soon to measure again");
        // It took all of the few repairs asked for (the queue ran dry): that says nothing of
        // its link, and the pace stays.
        sent(&mut r, 100);
        r.report(ms(1000), 2, 350);
        assert_eq!(
            r.rate(),
            (GAIN * 500e3) as u64,
            "a probe never lowers the pace"
        );
        // With a backlog throughout it took all the pace let through (325 kB in 500 ms): the
        // pace is PROBE times its intake.
        r.push(ms(1000), 0, repair(9));
        sent(&mut r, 325);
        r.report(ms(1500), 2, 675);
        assert!(
            r.rate().abs_diff((PROBE * 650e3) as u64) <= 1,
            "650 kB/s, probed: {}",
            r.rate()
        );
        r.forget(ms(1600), 2);
        assert_eq!(r.rate(), 0, "it finished: repairs go at --rate again");
    }

    #[test]
    fn a_receiver_losing_repairs_is_measured_against_the_pace() {
        let mut r = Repairs::new(true, 1500, false);
        r.report(ms(0), 2, 0);
        sent(&mut r, 1000);
        r.report(ms(500), 2, 500);
        let pace = r.rate();
        assert_eq!(pace, (GAIN * 1e6) as u64, "unpaced: half of 2 MB/s");
        // The queue ran dry (few repairs were asked for) and it took 70 % of them: of what
        // leaves at the pace its link takes 70 %, whatever the average.
        sent(&mut r, 100);
        r.report(ms(1000), 2, 570);
        let want = GAIN * 0.7 * pace as f64;
        assert!(r.rate().abs_diff(want as u64) <= 1, "{} {want}", r.rate());
        // New data shared the link: it counts beside the pace (the link took 70 % of both).
        let pace = r.rate();
        sent(&mut r, 100);
        r.sent_to_group(500_000);
        r.report(ms(1500), 2, 640);
        let want = GAIN * 0.7 * (pace as f64 + 1e6);
        assert!(r.rate().abs_diff(want as u64) <= 1, "{} {want}", r.rate());
        // One interval's share at most halves the pace.
        let pace = r.rate();
        sent(&mut r, 100);
        r.report(ms(2000), 2, 641);
        assert!(
            r.rate().abs_diff(pace / 2) <= 1,
            "{} {}",
            r.rate(),
            pace / 2
        );
    }

    #[test]
    fn in_order_a_repair_asked_for_again_goes_last() {
        for in_order in [false, true] {
            let mut r = Repairs::new(true, 1500, in_order);
            for seq in [1, 2, 3] {
                assert!(r.push(ms(0), 7, repair(seq)));
            }
            r.pop_front(ms(1), Some(100));
            // 1 left and is asked for again: lost on the way.
            assert!(r.push(ms(200), 7, repair(1)));
            let first = r.head(1)[0].payload.clone();
            let at_front = first == repair(1).payload;
            assert_eq!(at_front, !in_order, "in order: {in_order}");
        }
    }

    #[test]
    fn off_it_paces_nothing() {
        let mut r = Repairs::new(false, 1500, false);
        assert!(!r.takes(&repair(1)));
        r.report(ms(0), 1, 0);
        r.sent = 100;
        r.report(ms(500), 1, 1);
        assert_eq!(r.rate(), 0);
    }
}
