//! The global source `S` of DSP, CSP and CP (seed 001 §3.1).

use super::*;
use crate::SenderAgent;

/// A reporter the source waits for: a DSP designated endpoint or a CSP/CP local exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reporter {
    /// Its EPI (the id field of its STATUS; rmcast uses the node id).
    pub epi: u32,
    /// Round-trip delay between the source and it (`RTD_i`).
    pub rtd: Duration,
    /// Added to `r_f × RTD_i` before a missing block counts as lost: how old the state in
    /// its status may be when it is sent. Zero for a DSP designated endpoint (its own
    /// state); one endpoint status interval for a local exchange, whose consolidated status
    /// merges endpoint statuses received up to one interval earlier.
    pub slack: Duration,
}

/// Source configuration.
#[derive(Debug, Clone)]
pub struct SourceConfig {
    /// This agent's node id (the source of every datagram it sends).
    pub node: NodeId,
    /// The global multicast tree (MVC).
    pub group: GroupId,
    /// Session id: carried in every datagram, and datagrams of another session are ignored.
    pub session: u32,
    /// MVCI of the global multicast tree.
    pub mvci: u32,
    /// Who reports status to the source (designated endpoints or exchanges).
    pub reporters: Vec<Reporter>,
    /// Largest number of outstanding blocks (`L`, the window).
    pub l: u32,
    /// Retransmission timeout factor `r_f`.
    pub r_f: f64,
    /// Peak rate in bits per second (0: unpaced).
    pub rate_bps: u64,
    /// Bytes the pacer may send at once after a pause (0: one block, then the rate). A
    /// driver woken at a coarser step than a block's time at `rate_bps` needs a bucket of
    /// at least one step's sending, or the step, not the rate, sets the pace.
    pub burst_bytes: u64,
    /// `buffer_available` assumed for a reporter before its first status.
    pub initial_buffer: u32,
    /// Messages queued at the source before [`SenderAgent::send`](crate::SenderAgent::send)
    /// refuses.
    pub queue_limit: usize,
    /// Delay between the last acknowledgment and [`Event::Completed`] (lets DSP's designated
    /// endpoints finish their local repairs before a driver stops).
    pub linger: Duration,
    /// Blocks the source keeps after every reporter acknowledged them, newest first, so
    /// that a reporter elected while running ([`Source::replace_reporter`]) can still get
    /// what it lacks (0: none kept; the simulator, where no reporter dies). A DSP member is
    /// at most `R + C` blocks behind the newest block (the designated endpoint frees its
    /// retransmission buffer only below its members' `LW_r`, and the source sends only below
    /// `LW_r + buffer_available`), so `R + C` blocks cover any member that takes over.
    pub history: u32,
    /// A reporter acknowledges a block only below its `LW_r`; a block its LOB shows above
    /// `LW_r` is held (not re-multicast) but kept, and re-multicast when a newer status no
    /// longer shows it. For DSP designated relays that give custody up (sockets,
    /// [`super::HostedDesignated::end_to_end`]): their `LW_r` is their members' lowest, so
    /// the source keeps every block until every member of the region holds it, and a fresh
    /// relay replacing a dead one can get back what its members lack. Off (the seed's
    /// selective acknowledgement, every bit of the LOB) by default and in the simulator.
    pub release_at_lw: bool,
}

impl SourceConfig {
    /// The defaults for the given identity (see `rmcast_proto::spec`); every other field may be
    /// changed before building.
    pub fn new(node: NodeId, group: GroupId, reporters: Vec<Reporter>, l: u32) -> Self {
        SourceConfig {
            node,
            group,
            session: 0,
            mvci: 1,
            reporters,
            l: l.max(1),
            r_f: 1.2,
            rate_bps: 0,
            burst_bytes: 0,
            initial_buffer: l.max(1),
            queue_limit: 64,
            linger: Duration::ZERO,
            history: 0,
            release_at_lw: false,
        }
    }
}

struct SBlock {
    data: Bytes,
    first_sent: Time,
    last_sent: Time,
    sends: u32,
    acked: Vec<bool>,
    unacked: usize,
    queued: bool,
    /// Taken back from the history for a newly elected reporter: its
    /// [`Event::MessageDone`] was already reported.
    reopened: bool,
}

/// A block every reporter had acknowledged, kept for a reporter elected later.
struct Kept {
    data: Bytes,
    first_sent: Time,
    last_sent: Time,
    sends: u32,
}

struct Rep {
    rtd: Duration,
    slack: Duration,
    lw: u64,
    buf: u32,
    /// Removed by the driver
    /// ([`SenderAgent::remove_receiver`](crate::SenderAgent::remove_receiver)): no longer waited
    /// for.
    removed: bool,
}

/// The global source `S` (all three protocols).
pub struct Source {
    cfg: SourceConfig,
    sendq: SendQueue,
    next_seq: u64,
    blocks: BTreeMap<u64, SBlock>,
    reps: Vec<Rep>,
    by_epi: BTreeMap<u32, usize>,
    retx: VecDeque<u64>,
    /// Acknowledged blocks kept for a reporter elected later (at most `cfg.history`).
    history: BTreeMap<u64, Kept>,
    pacer: Pacer,
    block_len: usize,
    wake: Option<Time>,
    done_at: Option<Time>,
    completed: bool,
    out: Outbox,
    occupancy: Occupancy,
    max_outstanding: usize,
}

impl Source {
    /// A source built from `cfg`.
    pub fn new(cfg: SourceConfig) -> Self {
        let reps = cfg
            .reporters
            .iter()
            .map(|r| Rep {
                rtd: r.rtd,
                slack: r.slack,
                lw: 0,
                buf: cfg.initial_buffer,
                removed: false,
            })
            .collect();
        let by_epi = cfg
            .reporters
            .iter()
            .enumerate()
            .map(|(i, r)| (r.epi, i))
            .collect();
        Source {
            sendq: SendQueue::new(cfg.queue_limit, MAX_BLOCK),
            next_seq: 0,
            blocks: BTreeMap::new(),
            reps,
            by_epi,
            retx: VecDeque::new(),
            history: BTreeMap::new(),
            pacer: Pacer::new(cfg.rate_bps / 8, cfg.burst_bytes),
            block_len: 0,
            wake: None,
            done_at: None,
            completed: false,
            out: Outbox::new(),
            occupancy: Occupancy::default(),
            max_outstanding: 0,
            cfg,
        }
    }
    /// Blocks outstanding now.
    pub fn outstanding(&self) -> usize {
        self.blocks.len()
    }
    /// The most blocks ever outstanding at once.
    pub fn max_outstanding(&self) -> usize {
        self.max_outstanding
    }

    fn window_open(&self) -> bool {
        if self.blocks.len() >= self.cfg.l as usize {
            return false;
        }
        self.reps
            .iter()
            .all(|r| r.removed || self.next_seq < r.lw.saturating_add(u64::from(r.buf)))
    }

    fn emit_block(&mut self, seq: u64, data: &Bytes, repair: bool) {
        let flags = if repair { FLAG_RETRANSMISSION } else { 0 };
        let msg = Message::Tree(wire::Message::Data {
            mvci: self.cfg.mvci,
            seq,
            payload: data,
        });
        let env = envelope(self.cfg.session, self.cfg.node, flags);
        self.block_len = 0;
        if self.out.transmit(Dest::Group(self.cfg.group), env, &msg) {
            self.block_len = Packet::encoded_len(&msg);
            if repair {
                self.out.stats.repairs_sent += 1;
            } else {
                self.out.stats.data_sent += 1;
            }
        }
    }

    /// Send what the pacer allows now: re-multicasts first, then new blocks.
    fn pump(&mut self, now: Time) {
        loop {
            let ready = self.pacer.ready_at(now, self.block_len.max(1));
            if ready > now {
                self.wake = Some(ready);
                return;
            }
            self.wake = None;
            if let Some(seq) = self.retx.pop_front() {
                let Some(b) = self.blocks.get_mut(&seq) else {
                    continue;
                };
                b.queued = false;
                b.last_sent = now;
                b.sends += 1;
                let data = b.data.clone();
                self.emit_block(seq, &data, true);
                self.pacer.on_send(now, self.block_len);
                continue;
            }
            if !self.window_open() {
                return;
            }
            let Some(data) = self.sendq.pop_front() else {
                return;
            };
            let seq = self.next_seq;
            self.next_seq += 1;
            self.emit_block(seq, &data, false);
            self.pacer.on_send(now, self.block_len);
            let acked: Vec<bool> = self.reps.iter().map(|r| r.removed).collect();
            let n = acked.iter().filter(|a| !**a).count();
            self.blocks.insert(
                seq,
                SBlock {
                    data,
                    first_sent: now,
                    last_sent: now,
                    sends: 1,
                    acked,
                    unacked: n,
                    queued: false,
                    reopened: false,
                },
            );
            self.max_outstanding = self.max_outstanding.max(self.blocks.len());
            self.occupancy.set(now, self.blocks.len());
            if n == 0 {
                self.finish_block(now, seq);
            }
        }
    }

    fn finish_block(&mut self, now: Time, seq: u64) {
        if let Some(b) = self.blocks.remove(&seq) {
            if !b.reopened {
                self.out
                    .message_done(seq, b.first_sent, now, b.sends, false);
            }
            self.occupancy.set(now, self.blocks.len());
            if self.cfg.history > 0 {
                self.history.insert(
                    seq,
                    Kept {
                        data: b.data,
                        first_sent: b.first_sent,
                        last_sent: b.last_sent,
                        sends: b.sends,
                    },
                );
                while self.history.len() > self.cfg.history as usize {
                    self.history.pop_first();
                }
            }
        }
    }

    fn check_done(&mut self, now: Time) {
        if self.sendq.is_closed()
            && self.sendq.is_empty()
            && self.blocks.is_empty()
            && self.done_at.is_none()
        {
            self.done_at = Some(now + self.cfg.linger);
        }
        if let Some(t) = self.done_at {
            if !self.completed && now >= t {
                self.completed = true;
                self.out.event(Event::Completed);
            }
        }
    }

    /// Elect reporter `new` in place of `old` while running (DSP: the driver evicted a
    /// region's designated endpoint and designated another member of the region). `new`
    /// waits for every outstanding block and for every block still in the history
    /// ([`SourceConfig::history`]), whose first status lacking one re-multicasts it globally
    /// (it was sent longer than `r_f × RTD` ago); its window limits new blocks from its
    /// first status on (before it: `LW_r = 0`, `buffer_available` = the initial buffer).
    /// `old` then stops counting, as with
    /// [`SenderAgent::remove_receiver`](crate::SenderAgent::remove_receiver). The new reporter is
    /// installed before the old one is removed, so the source never runs a moment without a
    /// reporter for the region. Returns `false` (and changes nothing) when `new` already reports;
    /// `old` need not be a reporter any more.
    pub fn replace_reporter(&mut self, now: Time, old: NodeId, new: Reporter) -> bool {
        if old.0 == new.epi {
            return false;
        }
        let present = self
            .by_epi
            .get(&new.epi)
            .is_some_and(|&i| self.reps.get(i).is_some_and(|r| !r.removed));
        if present {
            return false;
        }
        let rep = Rep {
            rtd: new.rtd,
            slack: new.slack,
            lw: 0,
            buf: self.cfg.initial_buffer,
            removed: false,
        };
        let i = match self.by_epi.get(&new.epi).copied() {
            Some(i) => {
                if let Some(r) = self.reps.get_mut(i) {
                    *r = rep;
                }
                i
            }
            None => {
                self.reps.push(rep);
                let i = self.reps.len() - 1;
                self.by_epi.insert(new.epi, i);
                for b in self.blocks.values_mut() {
                    b.acked.push(true);
                }
                i
            }
        };
        for b in self.blocks.values_mut() {
            if let Some(a) = b.acked.get_mut(i) {
                if *a {
                    *a = false;
                    b.unacked += 1;
                }
            }
        }
        let n = self.reps.len();
        for (seq, k) in std::mem::take(&mut self.history) {
            let mut acked = vec![true; n];
            if let Some(a) = acked.get_mut(i) {
                *a = false;
            }
            self.blocks.insert(
                seq,
                SBlock {
                    data: k.data,
                    first_sent: k.first_sent,
                    last_sent: k.last_sent,
                    sends: k.sends,
                    acked,
                    unacked: 1,
                    queued: false,
                    reopened: true,
                },
            );
        }
        self.max_outstanding = self.max_outstanding.max(self.blocks.len());
        self.occupancy.set(now, self.blocks.len());
        if !self.completed {
            self.done_at = None;
        }
        self.remove_receiver(now, old);
        self.pump(now);
        self.check_done(now);
        true
    }

    fn on_status(&mut self, now: Time, st: &wire::Status<'_>) {
        let Some(&i) = self.by_epi.get(&st.id).filter(|&&i| !self.reps[i].removed) else {
            self.out.stats.ignored += 1;
            return;
        };
        let status = BlockStatus::from_wire(st);
        let timeout = secs_mul(self.reps[i].rtd, self.cfg.r_f) + self.reps[i].slack;
        {
            let r = &mut self.reps[i];
            r.lw = status.lw;
            r.buf = status.buf;
        }
        let mut done = Vec::new();
        for (&seq, b) in self.blocks.iter_mut() {
            if b.acked[i] {
                continue;
            }
            let held = status.received(seq, st.l);
            if held && (!self.cfg.release_at_lw || seq < status.lw) {
                b.acked[i] = true;
                b.unacked -= 1;
                if b.unacked == 0 {
                    done.push(seq);
                }
            } else if !held && !b.queued && now >= b.last_sent + timeout {
                b.queued = true;
                self.retx.push_back(seq);
                self.out.event(Event::LossDetected { seq });
            }
        }
        for seq in done {
            self.finish_block(now, seq);
        }
    }
}

impl Agent for Source {
    fn handle_packet(&mut self, now: Time, _from: NodeId, packet: &[u8]) {
        match self.out.accept(packet, self.cfg.session) {
            Some(wire::Message::Status(st)) => self.on_status(now, &st),
            Some(_) => self.out.ignore(),
            None => {}
        }
        self.pump(now);
        self.check_done(now);
    }
    fn handle_timeout(&mut self, now: Time) {
        self.pump(now);
        self.check_done(now);
    }
    fn poll_timeout(&self) -> Option<Time> {
        let linger = if self.completed { None } else { self.done_at };
        Time::earliest(self.wake, linger)
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn core::any::Any> {
        Some(self)
    }
    crate::outbox_field!(out);
    /// [`Gauge::Held`]: blocks outstanding (multicast, not yet acknowledged by every reporter).
    fn gauge(&self, gauge: Gauge) -> Option<f64> {
        self.occupancy.gauge(gauge)
    }
    fn as_sender(&mut self) -> Option<&mut dyn crate::SenderAgent> {
        Some(self)
    }
}

impl crate::SenderAgent for Source {
    fn send(&mut self, now: Time, data: Bytes) -> Result<(), SendError> {
        self.sendq.offer(data)?;
        self.pump(now);
        Ok(())
    }

    fn can_send(&self) -> bool {
        self.sendq.can_accept()
    }

    fn close(&mut self, now: Time) {
        self.sendq.close();
        self.check_done(now);
    }

    /// Stop waiting for reporter `node` (a DSP designated endpoint, or a local exchange):
    /// its outstanding blocks count as acknowledged by it and its window no longer limits
    /// new blocks.
    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        let Some(&i) = self.by_epi.get(&node.0) else {
            return false;
        };
        if self.reps[i].removed {
            return false;
        }
        self.reps[i].removed = true;
        let mut done = Vec::new();
        for (&seq, b) in self.blocks.iter_mut() {
            if !b.acked[i] {
                b.acked[i] = true;
                b.unacked -= 1;
                if b.unacked == 0 {
                    done.push(seq);
                }
            }
        }
        for seq in done {
            self.finish_block(now, seq);
        }
        self.pump(now);
        self.check_done(now);
        true
    }
}
