//! The `xtp` sender: group set-up, transmission, status handling, WTIMER and CTIMEOUT.

use super::*;

/// The sender's view of one receiver (XTP's auxiliary context).
#[derive(Debug, Clone, Default)]
struct Aux {
    rseq: u64,
    alloc: u64,
    spans: Vec<(u64, u64)>,
}

/// One status request: its sync number, when it left, and whether an answer to it is an RTT
/// sample (it rode a packet's first transmission, Karn's rule, and WTIMER has not repeated
/// it since).
#[derive(Debug, Clone, Copy)]
struct Ask {
    sync: u16,
    sent_at: Time,
    fresh: bool,
}

/// The requests of a round kept for matching answers; older ones' answers are ignored.
const ROUND_ASKS: usize = 64;

/// A status round: a status request and the synchronizing handshake's requests that repeat
/// it when WTIMER expires. A receiver has answered the round when it has answered any of
/// them (each answer carries its whole state: `rseq`, allocation and spans), so an answer
/// is not lost to the next retry, which every receiver would otherwise have to answer anew.
#[derive(Debug, Clone, Default)]
struct PendingSreq {
    /// The round's requests, oldest first (at most [`ROUND_ASKS`]).
    asks: VecDeque<Ask>,
    answered: BTreeSet<NodeId>,
}

impl PendingSreq {
    /// The request of this round `echo` answers, if it is `from`'s first answer to the round.
    fn answer(&mut self, from: NodeId, echo: u16) -> Option<Ask> {
        if echo == 0 {
            return None;
        }
        let ask = *self.asks.iter().find(|a| a.sync == echo)?;
        self.answered.insert(from).then_some(ask)
    }
}

#[derive(Debug, Clone)]
struct Write {
    index: u64,
    first_seq: u64,
    last_seq: u64,
    sent_at: Time,
    transmissions: u32,
}

#[derive(Debug, Clone)]
struct CurWrite {
    index: u64,
    data: Bytes,
    off: usize,
    started: Time,
    first_seq: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    Wtimer,
    Ctimeout,
    Pace,
    Start,
}

/// Counters specific to `xtp` (beyond [`Stats`](crate::Stats)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct XtpCounters {
    /// WTIMER expiries.
    pub wtimer_expiries: u64,
    /// Synchronizing handshakes started.
    pub handshakes: u64,
    /// FASTNAKs received.
    pub fastnaks_received: u64,
    /// SREQs sent.
    pub sreqs_sent: u64,
    /// The largest WTIMER value armed, nanoseconds.
    pub max_wtimer_ns: u64,
    /// Whether CTIMEOUT aborted the connection.
    pub aborted: bool,
}

/// The `xtp` sender.
#[derive(Debug)]
pub struct Sender {
    cfg: SenderConfig,
    out: Outbox,
    xtp: XtpCounters,
    queue: SendQueue,
    /// Packets not yet held by every receiver: payload, with options in `opts`.
    buf: RetransmitBuffer,
    opts: BTreeMap<u64, u16>,
    aux: BTreeMap<NodeId, Aux>,
    resend: BTreeSet<u64>,
    next_seq: u64,
    /// The write being segmented.
    cur: Option<CurWrite>,
    /// A write taken from the queue that did not fit the packet being coalesced.
    held: Option<Bytes>,
    writes: VecDeque<Write>,
    next_write: u64,
    sync: u16,
    pending: Option<PendingSreq>,
    backoff: u32,
    in_sync: bool,
    started: bool,
    established: bool,
    aborted: bool,
    completed: bool,
    since_sreq: u32,
    rtt: RttEstimator,
    pacer: Pacer,
    timers: TimerSet<Timer>,
}

impl Sender {
    /// A sender built from `cfg`.
    pub fn new(cfg: SenderConfig) -> Self {
        let aux = cfg.receivers.iter().map(|&r| (r, Aux::default())).collect();
        let maxdata = cfg.maxdata.clamp(1, usize::from(u16::MAX));
        let rate = cfg.rate;
        let mut timers = TimerSet::new();
        timers.set(Timer::Start, Time::ZERO);
        Sender {
            queue: SendQueue::new(cfg.queue_limit, MAX_WRITE),
            cfg: SenderConfig { maxdata, ..cfg },
            out: Outbox::new(),
            xtp: XtpCounters::default(),
            buf: RetransmitBuffer::new(usize::MAX),
            opts: BTreeMap::new(),
            aux,
            resend: BTreeSet::new(),
            next_seq: 0,
            cur: None,
            held: None,
            writes: VecDeque::new(),
            next_write: 0,
            sync: 0,
            pending: None,
            backoff: 0,
            in_sync: false,
            started: false,
            established: false,
            aborted: false,
            completed: false,
            since_sreq: 0,
            rtt: RttEstimator::new(RttConfig {
                initial_rto: Duration::from_millis(100),
                min_rto: Duration::from_micros(1),
                max_rto: Duration::from_secs(3600),
                granularity: Duration::from_micros(1),
            }),
            pacer: Pacer::new(rate, (2 * (maxdata + 64)) as u64),
            timers,
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &SenderConfig {
        &self.cfg
    }
    /// Counters specific to `xtp`.
    pub fn counters(&self) -> &XtpCounters {
        &self.xtp
    }
    /// The association was aborted by CTIMEOUT.
    pub fn aborted(&self) -> bool {
        self.aborted
    }
    /// The current back-off count `k`.
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
    /// Whether the synchronizing handshake is under way.
    pub fn in_handshake(&self) -> bool {
        self.in_sync
    }
    /// The WTIMER value the next SREQ would arm.
    pub fn wtimer_value(&self) -> Duration {
        let base = match self.rtt.srtt() {
            None => self.cfg.wtimer.initial,
            Some(s) => (s * 2).max(self.cfg.wtimer.min),
        };
        self.cfg.wtimer.value(base, self.backoff)
    }

    fn env(&self, retrans: bool) -> Envelope {
        crate::outbox::envelope(
            self.cfg.session,
            self.cfg.node,
            crate::outbox::data_flags(retrans),
        )
    }

    fn dest(&self) -> Dest {
        if self.cfg.multicast {
            Dest::Group(self.cfg.group)
        } else {
            Dest::Node(self.cfg.receivers.first().copied().unwrap_or_default())
        }
    }

    fn next_sync(&mut self) -> u16 {
        self.sync = self.sync.wrapping_add(1).max(1);
        self.sync
    }

    /// A status request `sync` sent at `now` starts a new round and arms WTIMER.
    fn arm_sreq(&mut self, now: Time, sync: u16, fresh: bool) {
        self.pending = Some(PendingSreq::default());
        self.ask_again(now, sync, fresh);
    }

    /// A status request `sync` sent at `now` joins the pending round (a new one if none is
    /// pending) and arms WTIMER.
    fn ask_again(&mut self, now: Time, sync: u16, fresh: bool) {
        let p = self.pending.get_or_insert_with(PendingSreq::default);
        // An answer to a request WTIMER gave up on is no RTT sample: it came after WTIMER.
        p.asks.iter_mut().for_each(|a| a.fresh = false);
        if p.asks.len() == ROUND_ASKS {
            p.asks.pop_front();
        }
        p.asks.push_back(Ask {
            sync,
            sent_at: now,
            fresh,
        });
        let w = self.wtimer_value();
        self.xtp.max_wtimer_ns = self.xtp.max_wtimer_ns.max(w.as_nanos() as u64);
        self.timers.set(Timer::Wtimer, now + w);
        self.xtp.sreqs_sent += 1;
        self.since_sreq = 0;
    }

    fn min_rseq(&self) -> u64 {
        self.aux
            .values()
            .map(|a| a.rseq)
            .min()
            .unwrap_or(self.next_seq)
            .min(self.next_seq)
    }

    fn start(&mut self, now: Time) {
        if self.started {
            return;
        }
        self.started = true;
        self.timers.cancel(Timer::Start);
        let sreq = self.cfg.error_control && self.cfg.first_sreq && !self.aux.is_empty();
        let sync = if sreq { self.next_sync() } else { 0 };
        let mut options = self.cfg.base_options();
        if sreq {
            options |= opt::SREQ;
        }
        let msg = Message::Xtp(wire::Message::First {
            seq: self.next_seq,
            sync,
            options,
            spec: TrafficSpec {
                service: self.cfg.service(),
                retx: self.cfg.retx,
                maxdata: self.cfg.maxdata as u16,
                rate: u32::try_from(self.cfg.rate).unwrap_or(u32::MAX),
                window: self.cfg.window,
            },
        });
        let dest = self.dest();
        let env = self.env(false);
        self.out.transmit(dest, env, &msg);
        self.out.stats.control_sent += 1;
        if sreq {
            self.arm_sreq(now, sync, true);
        } else {
            self.established = true;
        }
    }

    fn window_allows(&self, seq: u64) -> bool {
        if !self.cfg.error_control {
            return true;
        }
        if seq >= self.min_rseq() + u64::from(self.cfg.window.max(1)) {
            return false;
        }
        if self.cfg.flow_control {
            // A receiver that never reported has alloc 0: the window alone governs it.
            let alloc = self.aux.values().map(|a| a.alloc).filter(|&a| a > 0).min();
            if alloc.is_some_and(|a| seq >= a) {
                return false;
            }
        }
        true
    }

    fn blocked_on_ack(&self) -> bool {
        self.cfg.block_on_ack && self.cfg.error_control && !self.writes.is_empty()
    }

    /// Whether a new packet could be built right now (data waiting and the window open).
    fn new_data_ready(&self) -> bool {
        let waiting = self.cur.is_some()
            || self.held.is_some()
            || (!self.queue.is_empty() && !self.blocked_on_ack());
        waiting && self.window_allows(self.next_seq)
    }

    fn take_write_index(&mut self) -> u64 {
        let i = self.next_write;
        self.next_write += 1;
        i
    }

    fn pop_write(&mut self) -> Option<Bytes> {
        self.held.take().or_else(|| self.queue.pop_front())
    }

    /// The next new packet's payload and options, or `None` if there is nothing to send.
    fn next_payload(&mut self, now: Time) -> Option<(Bytes, u16)> {
        if self.cur.is_none() {
            if self.blocked_on_ack() {
                return None;
            }
            let data = self.pop_write()?;
            if self.cfg.coalesce && data.len() + 2 <= self.cfg.maxdata {
                let seq = self.next_seq;
                let mut p = Vec::with_capacity(self.cfg.maxdata);
                let mut first = Some(data);
                loop {
                    let d = match first.take() {
                        Some(d) => d,
                        None => {
                            if self.cfg.block_on_ack && self.cfg.error_control {
                                break;
                            }
                            match self.pop_write() {
                                Some(d) => d,
                                None => break,
                            }
                        }
                    };
                    if p.len() + d.len() + 2 > self.cfg.maxdata
                        || wire::push_record(&mut p, &d).is_none()
                    {
                        self.held = Some(d);
                        break;
                    }
                    let index = self.take_write_index();
                    self.writes.push_back(Write {
                        index,
                        first_seq: seq,
                        last_seq: seq,
                        sent_at: now,
                        transmissions: 1,
                    });
                }
                return Some((Bytes::from(p), opt::RECS | opt::EOM));
            }
            let index = self.take_write_index();
            self.cur = Some(CurWrite {
                index,
                data,
                off: 0,
                started: now,
                first_seq: self.next_seq,
            });
        }
        let mut c = self.cur.take()?;
        let end = (c.off + self.cfg.maxdata).min(c.data.len());
        let piece = c.data.slice(c.off..end);
        if end >= c.data.len() {
            self.writes.push_back(Write {
                index: c.index,
                first_seq: c.first_seq,
                last_seq: self.next_seq,
                sent_at: c.started,
                transmissions: 1,
            });
            Some((piece, opt::EOM))
        } else {
            c.off = end;
            self.cur = Some(c);
            Some((piece, 0))
        }
    }

    fn send_data(&mut self, seq: u64, options: u16, sync: u16, payload: &[u8], retrans: bool) {
        let msg = Message::Xtp(wire::Message::Data {
            seq,
            sync,
            options,
            payload,
        });
        let dest = self.dest();
        let env = self.env(retrans);
        if self.out.transmit(dest, env, &msg) {
            if retrans {
                self.out.stats.repairs_sent += 1;
            } else {
                self.out.stats.data_sent += 1;
            }
        }
    }

    fn send_new(&mut self, now: Time, payload: Bytes, options: u16) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let mut o = self.cfg.base_options() | options;
        if self.cfg.error_control {
            self.since_sreq += 1;
            let mut sreq = options & opt::EOM != 0 && self.cfg.block_on_ack;
            if let Some(n) = self.cfg.sreq_every {
                sreq |= self.since_sreq >= n.max(1);
            }
            // The last packet that can go now asks for status, or the sender could wait
            // forever for a report nobody was asked to send.
            sreq |= !self.new_data_ready();
            if sreq {
                o |= opt::SREQ;
            }
        }
        let sync = if o & opt::SREQ != 0 {
            self.next_sync()
        } else {
            0
        };
        self.send_data(seq, o, sync, &payload, false);
        self.pacer
            .on_send(now, payload.len() + wire::XTP_HEADER_LEN);
        if self.cfg.error_control {
            self.buf.insert(seq, payload, now);
            self.opts.insert(seq, o);
            if o & opt::SREQ != 0 {
                self.arm_sreq(now, sync, true);
            }
        } else {
            // Unreliable: a write is finished when its last packet leaves.
            while self.writes.front().is_some_and(|w| w.last_seq <= seq) {
                if let Some(w) = self.writes.pop_front() {
                    self.finish(w, now, false);
                }
            }
        }
    }

    fn retransmit(&mut self, now: Time, seq: u64) {
        let Some(data) = self.buf.mark_resent(seq, now) else {
            return;
        };
        let sends = self.buf.get(seq).map_or(1, |e| e.sends);
        let mut o = self
            .opts
            .get(&seq)
            .copied()
            .unwrap_or(self.cfg.base_options());
        if self.resend.is_empty() && !self.new_data_ready() {
            o |= opt::SREQ;
        }
        let sync = if o & opt::SREQ != 0 {
            self.next_sync()
        } else {
            0
        };
        self.send_data(seq, o, sync, &data, true);
        self.pacer.on_send(now, data.len() + wire::XTP_HEADER_LEN);
        for w in self.writes.iter_mut() {
            if w.first_seq <= seq && seq <= w.last_seq {
                w.transmissions = w.transmissions.max(sends);
            }
        }
        if o & opt::SREQ != 0 {
            self.arm_sreq(now, sync, false);
        }
    }

    fn pump(&mut self, now: Time) {
        self.start(now);
        if self.aborted || !self.established || self.in_sync {
            self.check_completed();
            return;
        }
        loop {
            let work = !self.resend.is_empty() || self.new_data_ready();
            if !work {
                break;
            }
            if self.cfg.rate > 0 {
                let at = self
                    .pacer
                    .ready_at(now, self.cfg.maxdata + wire::XTP_HEADER_LEN);
                if at > now {
                    self.timers.set(Timer::Pace, at);
                    break;
                }
            }
            if let Some(seq) = self.resend.pop_first() {
                if seq >= self.min_rseq() {
                    self.retransmit(now, seq);
                }
                continue;
            }
            let Some((payload, options)) = self.next_payload(now) else {
                break;
            };
            self.send_new(now, payload, options);
        }
        self.check_completed();
    }

    fn finish(&mut self, w: Write, now: Time, failed: bool) {
        self.out
            .message_done(w.index, w.sent_at, now, w.transmissions, failed);
    }

    fn complete_writes(&mut self, now: Time) {
        if !self.cfg.error_control {
            return;
        }
        let m = self.min_rseq();
        while self.writes.front().is_some_and(|w| w.last_seq < m) {
            if let Some(w) = self.writes.pop_front() {
                self.finish(w, now, false);
            }
        }
        self.buf.remove_below(m);
        self.opts = self.opts.split_off(&m);
        self.resend = self.resend.split_off(&m);
    }

    fn check_completed(&mut self) {
        if self.completed || !self.queue.is_closed() {
            return;
        }
        let idle = self.queue.is_empty()
            && self.cur.is_none()
            && self.held.is_none()
            && self.writes.is_empty();
        if idle || self.aborted {
            self.completed = true;
            self.timers.clear();
            self.pending = None;
            self.out.event(Event::Completed);
        }
    }

    /// Queue retransmissions for what `from`'s status says is missing: packets below
    /// `upto` (all sent so far if `None`) that it does not hold and that were last sent no
    /// later than `cutoff`.
    fn plan_repairs(&mut self, from: NodeId, cutoff: Time, upto: Option<u64>) {
        let Some(a) = self.aux.get(&from) else {
            return;
        };
        let (rseq, spans) = (a.rseq, a.spans.clone());
        let end = upto.unwrap_or(self.next_seq).min(self.next_seq);
        if rseq >= end {
            return;
        }
        let sent_before =
            |buf: &RetransmitBuffer, s: u64| buf.get(s).is_some_and(|e| e.last_sent <= cutoff);
        match self.cfg.retx {
            Retx::GoBackN => {
                // Go back to the first packet in error and resend it and all that follow.
                if sent_before(&self.buf, rseq) {
                    self.resend.extend(rseq..self.next_seq);
                }
            }
            Retx::Selective => {
                let mut held = spans.iter().peekable();
                for s in rseq..end {
                    while held.peek().is_some_and(|&&(_, r)| r <= s) {
                        held.next();
                    }
                    let is_held = held.peek().is_some_and(|&&(l, r)| l <= s && s < r);
                    if !is_held && sent_before(&self.buf, s) {
                        self.resend.insert(s);
                    }
                }
            }
        }
    }

    fn on_status(&mut self, now: Time, from: NodeId, st: &Status<'_>, fastnak: bool) {
        if !self.cfg.error_control {
            self.out.stats.ignored += 1;
            return;
        }
        if !self.aux.contains_key(&from) {
            // A joiner is waited for only from a point the sender can still repair: below
            // the lowest `rseq` of the others the packets are released, and a joiner that
            // lacks one would hold the window for every receiver forever.
            if self.cfg.accept_joins && self.cfg.multicast && st.rseq >= self.min_rseq() {
                self.aux.insert(
                    from,
                    Aux {
                        rseq: st.rseq.min(self.next_seq),
                        ..Aux::default()
                    },
                );
            } else {
                self.out.stats.ignored += 1;
                return;
            }
        }
        let next = self.next_seq;
        if let Some(a) = self.aux.get_mut(&from) {
            if st.rseq >= a.rseq {
                a.rseq = st.rseq.min(next);
                a.alloc = st.alloc;
                a.spans = st.spans.iter().map(|s| (s.left, s.right)).collect();
            } else {
                self.out.stats.duplicates += 1;
            }
        }
        if fastnak {
            self.xtp.fastnaks_received += 1;
            let srtt = self.rtt.srtt().unwrap_or(Duration::ZERO);
            let cutoff = Time::from_nanos(now.as_nanos().saturating_sub(srtt.as_nanos() as u64));
            // A gap lies below the highest packet the receiver holds.
            let top = self
                .aux
                .get(&from)
                .and_then(|a| a.spans.last().map(|s| s.1));
            self.plan_repairs(from, cutoff, Some(top.unwrap_or(0)));
        } else if let Some(ask) = self.pending.as_mut().and_then(|p| p.answer(from, st.echo)) {
            if ask.fresh {
                self.rtt.sample(now.saturating_since(ask.sent_at));
            }
            self.plan_repairs(from, ask.sent_at, None);
        }
        self.check_handshake();
        self.complete_writes(now);
    }

    /// Finish the pending status round if every receiver has answered one of its requests.
    fn check_handshake(&mut self) {
        let done = self
            .pending
            .as_ref()
            .is_some_and(|p| self.aux.keys().all(|r| p.answered.contains(r)));
        if done {
            self.pending = None;
            self.backoff = 0;
            self.timers.cancel(Timer::Wtimer);
            self.established = true;
            if self.in_sync {
                self.in_sync = false;
                self.timers.cancel(Timer::Ctimeout);
            }
        }
    }

    fn on_wtimer(&mut self, now: Time) {
        self.xtp.wtimer_expiries += 1;
        self.out.stats.timeouts += 1;
        self.backoff = self.backoff.saturating_add(1).min(64);
        if !self.in_sync {
            self.in_sync = true;
            self.xtp.handshakes += 1;
            self.timers.set(Timer::Ctimeout, now + self.cfg.ctimeout);
        }
        let sync = self.next_sync();
        let msg = Message::Xtp(wire::Message::Cntl(Status {
            rseq: self.next_seq,
            echo: sync,
            options: self.cfg.base_options() | opt::SREQ,
            alloc: self.next_seq,
            spans: Spans::EMPTY,
        }));
        let dest = self.dest();
        let env = self.env(false);
        if self.out.transmit(dest, env, &msg) {
            self.out.stats.control_sent += 1;
        }
        // The handshake repeats the round's request: answers already in still count.
        self.ask_again(now, sync, false);
    }

    fn abort(&mut self, now: Time) {
        self.aborted = true;
        self.xtp.aborted = true;
        self.in_sync = false;
        self.pending = None;
        self.timers.clear();
        while let Some(w) = self.writes.pop_front() {
            self.finish(w, now, true);
        }
        if let Some(c) = self.cur.take() {
            let w = Write {
                index: c.index,
                first_seq: c.first_seq,
                last_seq: self.next_seq,
                sent_at: c.started,
                transmissions: 1,
            };
            self.finish(w, now, true);
        }
        while self.pop_write().is_some() {
            let index = self.take_write_index();
            let w = Write {
                index,
                first_seq: self.next_seq,
                last_seq: self.next_seq,
                sent_at: now,
                transmissions: 0,
            };
            self.finish(w, now, true);
        }
        self.resend.clear();
        self.buf.remove_below(u64::MAX);
        self.opts.clear();
        self.check_completed();
    }
}

impl Agent for Sender {
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]) {
        let Some(m) = self.out.accept(packet, self.cfg.session) else {
            return;
        };
        if self.completed {
            self.out.ignore();
            return;
        }
        match &m {
            wire::Message::Cntl(st) if !self.aborted => self.on_status(now, from, st, false),
            wire::Message::Fastnak(st) if !self.aborted => self.on_status(now, from, st, true),
            _ => self.out.ignore(),
        }
        self.pump(now);
    }

    fn handle_timeout(&mut self, now: Time) {
        self.start(now);
        while let Some(t) = self.timers.pop_expired(now) {
            match t {
                Timer::Wtimer => self.on_wtimer(now),
                Timer::Ctimeout => self.abort(now),
                Timer::Pace | Timer::Start => {}
            }
        }
        self.pump(now);
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }
    crate::outbox_field!(out);
    fn as_sender(&mut self) -> Option<&mut dyn crate::SenderAgent> {
        Some(self)
    }
}

impl crate::SenderAgent for Sender {
    fn send(&mut self, now: Time, data: Bytes) -> Result<(), SendError> {
        if self.aborted {
            return Err(SendError::Closed);
        }
        if self.cfg.block_on_ack
            && self.cfg.error_control
            && (!self.writes.is_empty() || self.cur.is_some() || !self.queue.is_empty())
            && !self.queue.is_closed()
        {
            if data.len() > MAX_WRITE {
                return Err(SendError::TooLarge {
                    len: data.len(),
                    max: MAX_WRITE,
                });
            }
            return Err(SendError::Full(data));
        }
        self.queue.offer(data)?;
        self.pump(now);
        Ok(())
    }

    fn can_send(&self) -> bool {
        if self.aborted || !self.queue.can_accept() {
            return false;
        }
        if self.cfg.block_on_ack && self.cfg.error_control {
            return self.writes.is_empty() && self.cur.is_none() && self.queue.is_empty();
        }
        true
    }

    fn close(&mut self, now: Time) {
        self.queue.close();
        self.pump(now);
    }

    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        if self.aux.remove(&node).is_none() {
            return false;
        }
        self.cfg.receivers.retain(|&r| r != node);
        self.check_handshake();
        self.complete_writes(now);
        self.pump(now);
        true
    }
}
