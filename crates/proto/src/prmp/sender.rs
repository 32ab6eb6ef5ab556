//! The PRMP parent (§2): polling plans, NACK collection with MTR repair, removal of silent
//! children.

use super::child::{Cat, Child, SeqInfo};
use super::*;
use crate::roster::Roster;

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
pub(super) enum Key {
    Tx,
    Poll(u64),
    /// A resuming parent's next POLL asking its children where they are ([`resume`]).
    Resync,
}

/// A snapshot of the sender's protocol state, for tests and traces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderView {
    /// Highest sequence number sent (`HS`), once one is.
    pub hs: Option<u64>,
    /// The parent's left edge `LE_p`: everything below it is held by every active child.
    pub le_p: u64,
    /// The window in use (S, or the initial window of PF-IW).
    pub effective_window: u64,
    /// Children not removed.
    pub active: usize,
    /// Children with a planned poll.
    pub planned: usize,
    /// Polls sent and not yet answered or timed out.
    pub pending_polls: usize,
}

/// The PRMP parent.
#[derive(Debug)]
pub struct Sender {
    pub(super) cfg: SenderConfig,
    mtr_ppm: u64,
    index: Roster,
    pub(super) children: Vec<Child>,
    n_active: u64,
    /// Multiset of `LE_p,i` over active children.
    pub(super) les: BTreeMap<u64, u32>,
    planner: Planner,
    queue: SendQueue,
    pub(super) next_seq: u64,
    pub(super) outstanding: BTreeMap<u64, SeqInfo>,
    buffer: RetransmitBuffer,
    /// `RTxT[i, seq]`, keyed (seq, child).
    rtxt: BTreeMap<(u64, usize), Time>,
    jobs: BTreeMap<u64, Job>,
    polls: BTreeMap<u64, PollRec>,
    next_poll_id: u64,
    pub(super) timers: TimerSet<Key>,
    /// The inter-packet gap since the last transmission.
    tx: crate::pacing::GapPacer,
    /// The time stamped on the last transmission (see [`Sender::stamp`]).
    last_stamp: Option<Time>,
    removed: Vec<NodeId>,
    /// A resuming parent's children heard so far (slot → `LE_i`, `HR_i`), while it asks
    /// where they are before sending anything ([`Sender::resume_children`]).
    pub(super) resync: Option<BTreeMap<usize, (u64, Option<u64>)>>,
    /// Some child resumed ahead of the parent's first sequence number, or knowing of packets
    /// past its left edge: a new packet may be acknowledged or missed by it already.
    pub(super) ahead: bool,
    pub(super) out: Outbox,
}

impl Sender {
    /// A sender built from `cfg`; an error if `cfg` is out of range.
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
        let index = Roster::new(&nodes);
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
            tx: crate::pacing::GapPacer::new(cfg.ipg, cfg.ipg_slack),
            last_stamp: None,
            removed: Vec::new(),
            resync: None,
            ahead: false,
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

    /// A snapshot of the protocol state (for tests and traces).
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
        crate::outbox::envelope(
            self.cfg.session,
            self.cfg.node,
            crate::outbox::data_flags(retransmission),
        )
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
            let copy = match (poll_of(&msg), own) {
                (Some((_, _, cld)), Some(own)) if cld.contains(n.0) => with_cld(&msg, own),
                (Some(_), _) => match msg {
                    // The data still goes to a child the poll does not name.
                    wire::Message::DataPoll { seq, payload, .. } => {
                        wire::Message::Data { seq, payload }
                    }
                    _ => continue,
                },
                (None, _) => msg.clone(),
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
        self.buffer.count_sent(seq, now, retx, &mut self.out.stats);
        if let Some(info) = self.outstanding.get_mut(&seq) {
            info.transmissions += 1;
        }
        if !cld.is_empty() {
            self.register_poll(now, hs, &cld);
        }
        self.tx.on_send(now);
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
        self.tx.on_send(now);
    }

    /// The time of a transmission at `now`: `now`, or 1 ns after the previous transmission's
    /// if that was stamped `now` or later. Each transmission's time (a poll's `TS`, a
    /// retransmission's `RTxT`) thus orders it against every other, which §2.5.1's obsolete-nack
    /// rule ("RESP.TS earlier than the retransmission") relies on. Transmissions are one IPG
    /// apart, but a sender that woke late catches up on up to `ipg_slack` of lateness at one
    /// `now` (sockets): a poll on the first packet of such a burst, answered before the
    /// burst's later retransmissions arrived, then bore the same time as those and its nacks
    /// were taken as new — one needless unicast repair per such nack (on loopback, a third
    /// of all repairs).
    fn stamp(&mut self, now: Time) -> Time {
        let at = match self.last_stamp {
            Some(last) if now <= last => last + Duration::from_nanos(1),
            _ => now,
        };
        self.last_stamp = Some(at);
        at
    }

    /// The transmitter (§3 TXM): retransmissions, then new data, then explicit polls, one
    /// IPG apart; otherwise arm the timer for the next opportunity.
    pub(super) fn pump(&mut self, now: Time) {
        self.timers.cancel(Key::Tx);
        if self.resync.is_some() {
            // Nothing goes out before the resumed children said where they are.
            return;
        }
        loop {
            let allowed = self.tx.allowed();
            let have_job = !self.jobs.is_empty();
            let have_data = !self.queue.is_empty() && self.effective_window() > 0;
            if have_job || have_data {
                if now < allowed {
                    self.timers.set(Key::Tx, allowed);
                    return;
                }
                if have_job {
                    let at = self.stamp(now);
                    self.run_job(at);
                } else if let Some(data) = self.queue.pop_front() {
                    let now = self.stamp(now);
                    let seq = self.buffer.keep_new(&mut self.next_seq, data, now);
                    let mut info = SeqInfo {
                        status: Status::NoNack,
                        acked: 0,
                        nacked: 0,
                        repolled: 0,
                        sent_at: now,
                        transmissions: 0,
                        mcast_at: None,
                    };
                    if self.ahead {
                        // Resumed children may know of this packet already.
                        for c in self.children.iter().filter(|c| c.active) {
                            adjust(&mut info, c.cat(seq), 1);
                        }
                    }
                    self.outstanding.insert(seq, info);
                    self.send_data(now, seq, None, false);
                    if self.n_active == 0 {
                        self.settle(now);
                    }
                }
                continue;
            }
            // No data can go: explicit POLL at NPT = min est + IPG.
            let Some(min_est) = self.planner.next_est().or_else(|| self.plan_blockers(now)) else {
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
            let at = self.stamp(now);
            self.send_poll(at, due.into_iter().map(|(i, _)| i).collect());
        }
    }

    /// §3 GM: with the window closed and data waiting, poll the children that hold it
    /// closed. Trigger (b) plans such a poll when a response shows a window *full* of
    /// unconsumed packets; a child that answered before its window filled, or whose every
    /// packet was acknowledged so that the idle parent dropped its polls (choice 8), would
    /// otherwise never be asked again, and the transfer would wait for ever. Only when no
    /// poll is planned or pending. Returns the earliest planned time.
    ///
    /// With [`SenderConfig::release_at_le`], packets acknowledged by all but not yet below
    /// every left edge wait too: the children whose left edge holds them are polled.
    fn plan_blockers(&mut self, now: Time) -> Option<Time> {
        if !self.polls.is_empty() {
            return None;
        }
        let closed = !self.queue.is_empty() && self.effective_window() == 0;
        let held = self.cfg.release_at_le && !self.outstanding.is_empty();
        if !closed && !held {
            return None;
        }
        let s = self.cfg.window;
        let next = self.next_seq;
        let blockers: Vec<usize> = (0..self.children.len())
            .filter(|&i| {
                self.children.get(i).is_some_and(|c| {
                    c.active && (c.le().saturating_add(s) <= next || (held && c.le() < next))
                })
            })
            .collect();
        for i in blockers {
            let rtt = self.rtt_of(i);
            self.planner.plan(i, now, rtt);
        }
        self.planner.next_est()
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
        let below = match self.cfg.release_at_le {
            true => self.le_p(),
            false => u64::MAX,
        };
        let settled = |seq: u64, s: &SeqInfo| s.acked >= n && seq < below;
        for (seq, info) in self.buffer.settle_where(&mut self.outstanding, settled) {
            self.jobs.remove(&seq);
            let keys: Vec<(u64, usize)> = self
                .rtxt
                .range((seq, 0)..=(seq, usize::MAX))
                .map(|(&k, _)| k)
                .collect();
            for k in keys {
                self.rtxt.remove(&k);
            }
            self.out
                .message_done(seq, info.sent_at, now, info.transmissions, false);
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
        if self.queue.complete(self.outstanding.is_empty()) {
            self.out.event(Event::Completed);
        }
    }

    // ---- responses and timeouts ----

    fn on_resp(&mut self, now: Time, from: NodeId, r: RespFields<'_>) {
        let Some(i) = self.index.slot(from) else {
            self.out.stats.ignored += 1;
            return;
        };
        let Some((c_le, c_hr)) = self
            .children
            .get(i)
            .filter(|c| c.active)
            .map(|c| (c.le(), c.hr))
        else {
            self.out.stats.ignored += 1;
            return;
        };
        let hr = (r.hr != wire::NO_HR).then_some(r.hr);
        if self.resync.is_some() {
            return self.resync_resp(now, i, r.le, hr);
        }
        let hs = self.hs();
        // A child that resumed ahead of this parent ([`Sender::resume_children`]) may hold
        // more than the parent sent; otherwise its window is never past the parent's.
        let known = |h: u64| c_hr.is_some_and(|k| h <= k);
        let bogus = match (hr, hs) {
            (Some(h), Some(s)) => h > s && !known(h),
            (Some(h), None) => !known(h),
            _ => false,
        } || r.le > self.next_seq.max(c_le)
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
        let forgets = self.cfg.release_at_le;
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
                    } else if forgets {
                        // A relay replaced mid-transfer no longer holds what the dead one
                        // did: the parent, which kept it, sends it again.
                        c.w.forget(seq);
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

    fn on_message(&mut self, now: Time, from: NodeId, m: wire::Message<'_>) {
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

    fn on_timer(&mut self, now: Time, key: Key) {
        match key {
            Key::Tx => self.pump(now),
            Key::Poll(id) => self.on_poll_timeout(now, id),
            Key::Resync => self.resync_poll(now),
        }
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
    crate::outbox::agent_io!(out, on_message, timers => on_timer);
    fn as_sender(&mut self) -> Option<&mut dyn crate::SenderAgent> {
        Some(self)
    }
}

impl crate::SenderAgent for Sender {
    crate::sendq::send_queue_field!(queue, take: pump, after_close: |s, _| s.maybe_complete());

    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        let Some(i) = self.index.slot(node) else {
            return false;
        };
        let removed = self.remove_child(now, i, false);
        if removed {
            self.resync_check(now);
            self.pump(now);
        }
        removed
    }
}
