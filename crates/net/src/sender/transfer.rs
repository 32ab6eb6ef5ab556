//! Step 2: the transfer's event loop. Each turn: feed the agent from the source while it can
//! take more, fire its timer, drain its events, evict the silent, re-announce what changed,
//! drain its datagrams through the pacer in batches, sleep until the next deadline, read
//! feedback and reports. Protocol differences come from the [`SenderSide`] the protocol
//! started with.

use super::gather::Member;
use super::repair::Repairs;
use super::schedule::Schedule;
use super::source::{spawn_producer, Chunk, SourceFile};
use super::{Endpoint, SendObserver, Source, SOCK};
use crate::agents::{SenderSettings, SenderSide, Start, Started};
use crate::NetError;
use bytes::Bytes;
use rmcast_proto::pacing::Pacer;
use rmcast_proto::{Agent, Dest, Event, NodeId, SendError, Time, Transmit};
use rmcast_wire::session::{self, Phase, ReportState};
use rmcast_wire::{Family, Header, Message, Packet};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::mpsc::{Receiver as Chan, TryRecvError};
use std::time::Duration;

/// A running transfer: the endpoint, the members, the agent and everything the loop keeps
/// between turns.
/// Unsent datagrams the sender holds at most: a window's worth of repairs (pgm's 65,536-packet
/// transmit window) fits; beyond it, what an agent queues is dropped and counted
/// (`DriverStats::dropped_backlog`). Without a bound, an agent answering a NAK flood faster
/// than the pacer sends would grow the queue until memory ran out (a member flooding NAKs
/// at a 40-Mbit/s sender with no hold-off reached 21 GB in half an hour).
const MAX_PENDING: usize = 65_536;

pub(super) struct Transfer {
    pub(super) ep: Endpoint,
    pub(super) members: Vec<Member>,
    ids: Vec<u32>,
    pub(super) agent: Box<dyn Agent>,
    pub(super) side: Box<dyn SenderSide>,
    /// Helpers inside the network the side named, at the address each last spoke from (a
    /// prmp relay's unicast repairs go there).
    helpers: HashMap<u32, SocketAddr>,
    /// The running ANNOUNCE as it stands.
    running: Vec<u8>,
    producer: Chan<Chunk>,
    /// Messages taken from the producer, not yet handed to the agent.
    ready: VecDeque<(Bytes, u64)>,
    pub(super) files: Vec<super::FileInfo>,
    pub(super) total: Option<u64>,
    pacer: Pacer,
    /// When new data may enter the agent (`--data-interval-us`).
    schedule: Schedule,
    pending: VecDeque<Transmit>,
    /// Repairs to the group, paced apart ([`Repairs`]).
    repairs: Repairs,
    /// Application bytes of each message handed to the agent, by sequence number.
    seq_bytes: HashMap<u64, u64>,
    next_seq: u64,
    source_done: bool,
    /// When the source was exhausted (the agent closed).
    closed_at: Option<Time>,
    /// Application bytes the receivers acknowledged (for a protocol without acknowledgments:
    /// handed to the agent; its receivers' reports say what arrived).
    pub(super) acked: u64,
    pub(super) completed_at: Option<Time>,
    next_announce: Time,
    blocked: bool,
    pub(super) failed_msgs: u64,
    pub(super) start: Time,
    pub(super) transfer_end: Time,
    /// The running ANNOUNCE's parameters changed (an eviction).
    changed: bool,
    pub(super) to_group: u64,
    pub(super) to_nodes: u64,
    /// When congestion control's rate is logged next.
    next_rate_log: Time,
}

impl Transfer {
    /// Build the agent for the joined `members`, announce the running session and start the
    /// producer.
    pub(super) fn start(
        ep: Endpoint,
        members: Vec<Member>,
        source: Source,
        mut files: Vec<SourceFile>,
        message_size: Option<usize>,
        obs: &mut dyn SendObserver,
    ) -> Result<Self, NetError> {
        super::source::resume_points(&mut files, &members);
        let ids: Vec<u32> = members.iter().map(|m| m.node).collect();
        let joined: Vec<_> = members.iter().map(|m| (m.node, m.region, m.addr)).collect();
        let stream = match &source {
            Source::Stdin(n) => n.as_str(),
            Source::Files(_) => "",
        };
        let start = Start {
            joined: &joined,
            group: ep.group,
            stream,
        };
        let s = SenderSettings::new(&ep.cfg, ep.dgram, ep.node, ep.session, ep.rto);
        let Started { agent, side } = ep.proto.start(&s, &start)?;
        let mut ep = ep;
        if let Some(f) = ep.proto.framing(&s) {
            let peers: Vec<(u32, SocketAddr)> = members.iter().map(|m| (m.node, m.addr)).collect();
            ep.frame(f, &peers)?;
        }
        let sealing = ep.cfg.keys.as_ref().map_or(0, |_| 24);
        let chunk = match message_size {
            Some(c) => c,
            None => ep
                .dgram
                .checked_sub(ep.proto.data_overhead(ids.len()) + sealing)
                .filter(|c| *c > 16)
                .ok_or_else(|| {
                    NetError::setup(format!(
                        "--datagram-size {} leaves no room for data with {} receivers: raise it",
                        ep.dgram,
                        ids.len()
                    ))
                })?,
        };
        let running = ep.announce(Phase::Running, &ids, &side.params()?)?;
        if running.len() > ep.dgram {
            tracing::warn!(
                bytes = running.len(),
                datagram_size = ep.dgram,
                "the running ANNOUNCE (its member list) is larger than a datagram: it is \
                 fragmented, and lost whenever one of its frames is"
            );
        }
        let infos: Vec<super::FileInfo> = files.iter().map(|f| f.1.clone()).collect();
        let total: Option<u64> = match &source {
            Source::Files(_) => Some(infos.iter().map(|i| i.size - i.resumed_from).sum()),
            Source::Stdin(_) => None,
        };
        obs.started(&ids, total);
        let producer = spawn_producer(source, files, chunk, ep.waker.clone());
        let rate_bytes = ep.cfg.rate_bps / 8;
        let burst = super::pacing_burst(ep.cfg.rate_bps, ep.dgram);
        // Repairs paced apart: protocols whose sender answers NAKs with repairs to the group.
        // Under congestion control (`--rate auto`) the whole session already follows the
        // slowest receiver, and a pace of their own only fought it.
        let paced = ep.cfg.repair_pacing && !ep.cfg.tfmcc && !ep.proto.acknowledged();
        let repairs = Repairs::new(paced, ep.dgram, ep.proto.repairs_in_order());
        let schedule = Schedule::new(ep.cfg.data_interval);
        let start = ep.clock.now();
        Ok(Transfer {
            ep,
            members,
            ids,
            agent,
            side,
            helpers: HashMap::new(),
            running,
            producer,
            ready: VecDeque::new(),
            files: infos,
            total,
            pacer: Pacer::new(rate_bytes, burst),
            schedule,
            pending: VecDeque::new(),
            repairs,
            seq_bytes: HashMap::new(),
            next_seq: 0,
            source_done: false,
            closed_at: None,
            acked: 0,
            completed_at: None,
            next_announce: Time::ZERO,
            blocked: false,
            failed_msgs: 0,
            start,
            transfer_end: start,
            changed: false,
            to_group: 0,
            to_nodes: 0,
            next_rate_log: start,
        })
    }

    /// Run the loop until the agent completed and every receiver reported (or
    /// `--final-wait` ran out).
    pub(super) fn run(&mut self, obs: &mut dyn SendObserver) -> Result<(), NetError> {
        loop {
            let now = self.ep.clock.now();
            self.feed(now)?;
            if self.agent.poll_timeout().is_some_and(|t| t <= now) {
                self.agent.handle_timeout(now);
            }
            self.events(now, obs);
            self.evict(now, obs);
            if std::mem::take(&mut self.changed) {
                self.reannounce(now)?;
            }
            // Late joiners are admitted only while the source lasts.
            if (self.source_done || self.completed_at.is_some()) && self.side.close_joins() {
                self.reannounce(now)?;
            }
            self.events(now, obs);
            // Announce the running session (late packets, lost announces).
            if now >= self.next_announce {
                let _ = self
                    .ep
                    .wire
                    .send(&self.ep.sock, self.ep.group, &self.running, false);
                self.next_announce = now + Duration::from_millis(250);
            }
            self.log_rate(now);
            if let Some(why) = self.side.stalled(now) {
                return Err(NetError::Failed(why));
            }
            let wake_at = self.transmit(now)?;
            if self.done(now) {
                return Ok(());
            }
            if self.ep.interrupt.raised() {
                self.transfer_end = now;
                return Ok(());
            }
            self.sleep(now, wake_at)?;
            while let Some((h, len, from)) = self.ep.next() {
                // The clock after the datagram left the socket, not before the loop: one
                // that arrived meanwhile would be stamped before it arrived (see the
                // receiver's `Receiving::read`).
                let now = self.ep.clock.now();
                match self.member_at(h.source, from) {
                    Some(i) => self.member_packet(now, i, h, len, obs),
                    None => self.stranger(now, h, len, from, obs)?,
                }
            }
        }
    }

    /// Congestion control's rate (`--rate auto`), at `-v` every 100 ms.
    fn log_rate(&mut self, now: Time) {
        if now < self.next_rate_log {
            return;
        }
        self.next_rate_log = now + Duration::from_millis(100);
        if let Some(rate) = self.agent.gauge(rmcast_proto::Gauge::Rate) {
            tracing::info!(
                t_s = now.saturating_since(self.start).as_secs_f64(),
                rate_mbps = rate * 8.0 / 1e6,
                "congestion control"
            );
        }
    }

    /// Rebuild the running ANNOUNCE and send it at once.
    fn reannounce(&mut self, now: Time) -> Result<(), NetError> {
        self.running = self
            .ep
            .announce(Phase::Running, &self.ids, &self.side.params()?)?;
        self.next_announce = now;
        Ok(())
    }

    /// Hand the agent new messages, only while the pacer could send one now and at most one
    /// send batch per turn, so the agent's timers start when its datagrams actually leave and
    /// what it answers to feedback (a NAK's NCF and RDATA, a retransmission) waits behind at
    /// most one batch of new data. Fed without that bound, a protocol with a large window
    /// (pgm's 65,536-packet transmit window) took everything the producer had read ahead in
    /// one turn, and its repairs queued behind it: a NAK was answered 21 ms later (median;
    /// 90 ms at the 90th percentile) on an idle 3-receiver bridge.
    fn feed(&mut self, now: Time) -> Result<(), NetError> {
        let mut fed = 0usize;
        while !self.source_done
            && fed < crate::socket::MAX_BATCH
            && self.agent.as_sender().is_some_and(|s| s.can_send())
            && self.pending.is_empty()
            && self.pacer.ready_at(now, self.ep.dgram) <= now
            && self.schedule.allows(now)
        {
            if self.ready.is_empty() {
                match self.producer.try_recv() {
                    Ok(Chunk::Msgs(v)) => self.ready.extend(v),
                    Ok(Chunk::Err(e)) => {
                        return Err(NetError::Failed(format!("{e}; the transfer was aborted")))
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        self.source_done = true;
                        self.closed_at = Some(now);
                        if let Some(s) = self.agent.as_sender() {
                            s.close(now);
                        }
                        break;
                    }
                }
            }
            let Some((m, data_bytes)) = self.ready.pop_front() else {
                continue;
            };
            fed += 1;
            self.schedule.offered(now);
            let sent = match self.agent.as_sender() {
                Some(s) => s.send(now, m),
                None => Err(SendError::NotASender),
            };
            match sent {
                Ok(()) if !self.ep.proto.acknowledged() => self.acked += data_bytes,
                Ok(()) => {
                    self.seq_bytes.insert(self.next_seq, data_bytes);
                    self.next_seq += 1;
                }
                Err(e) => return Err(NetError::Failed(format!("the agent refused data: {e}"))),
            }
        }
        Ok(())
    }

    /// Drain the agent's events: acknowledged messages, completion.
    fn events(&mut self, now: Time, obs: &mut dyn SendObserver) {
        while let Some(ev) = self.agent.poll_event() {
            match ev {
                Event::MessageDone { seq, failed, .. } => {
                    if failed {
                        self.failed_msgs += 1;
                    }
                    self.acked += self.seq_bytes.remove(&seq).unwrap_or(0);
                    obs.acked(self.acked);
                }
                Event::Completed => {
                    if self.completed_at.is_none() {
                        self.completed_at = Some(now);
                        self.transfer_end = now;
                    }
                }
                Event::Delivered { .. } | Event::LossDetected { .. } => {}
            }
        }
    }

    /// Evict the receivers silent for `--evict-after`, and with `--min-rate` those that
    /// delivered less than it over the last period of `--evict-after`.
    fn evict(&mut self, now: Time, obs: &mut dyn SendObserver) {
        let evict_after = self.ep.cfg.evict_after;
        let min_rate = self.ep.cfg.min_rate_bps;
        for m in self.members.iter_mut() {
            if !m.live() {
                continue;
            }
            let silent = now.saturating_since(m.last_heard);
            let why = if silent >= evict_after {
                Some(format!(
                    "silent for {:.1}s (--evict-after {:.1}s)",
                    silent.as_secs_f64(),
                    evict_after.as_secs_f64()
                ))
            } else {
                min_rate_check(m, now, evict_after, min_rate)
            };
            if let Some(why) = why {
                tracing::warn!(node = m.node, "evicting receiver: {why}");
                obs.evicted(m.node, &why);
                self.changed |= self.side.evicted(now, &mut *self.agent, m.node);
                if let Some(s) = self.agent.as_sender() {
                    s.remove_receiver(now, NodeId(m.node));
                }
                self.repairs.forget(now, m.node);
                m.evicted = Some(why);
            }
        }
    }

    /// Where a transmit goes (`None`: to a node that is no member).
    fn destination(&self, dest: Dest) -> Option<SocketAddr> {
        match dest {
            Dest::Group(_) => Some(self.ep.group),
            Dest::Node(n) => self
                .members
                .iter()
                .find(|m| m.node == n.0)
                .map(|m| m.addr)
                .or_else(|| self.helpers.get(&n.0).copied()),
        }
    }

    /// Send what the agent queued, paced: everything the pacer lets out now goes in batches
    /// (one sendmmsg each on Linux), and the pacer is charged only for the datagrams the
    /// socket took (or loss dropped). Repairs to the group wait in their own queue and leave
    /// first, at their own pace as well ([`Repairs`]). Returns when the pacers let the next
    /// one out.
    fn transmit(&mut self, now: Time) -> Result<Option<Time>, NetError> {
        self.take_transmits(now, 0);
        // Repairs first, as far as their pace lets (they answer requests already made), then
        // everything else.
        let repairs_at = self.flush(now, true)?;
        let pending_at = self.flush(now, false)?;
        Ok(match (repairs_at, pending_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        })
    }

    /// Queue what the agent has to send: repairs to the group as answers to `asker` (the
    /// member whose packet the agent just handled; 0: none), everything else as pending.
    fn take_transmits(&mut self, now: Time, asker: u32) {
        while let Some(t) = self.agent.poll_transmit() {
            let repair = self.repairs.takes(&t);
            let full = if repair {
                self.repairs.len() >= MAX_PENDING
            } else {
                self.pending.len() >= MAX_PENDING
            };
            if full {
                self.ep.wire.stats.dropped_backlog += 1;
            } else if repair {
                self.repairs.push(now, asker, t);
            } else {
                self.pending.push_back(t);
            }
        }
    }

    /// Send from the pending queue, or (`repairs`) the repair queue, as far as the pacers
    /// let: when the next may leave, if one has to wait.
    fn flush(&mut self, now: Time, repairs: bool) -> Result<Option<Time>, NetError> {
        let mut wake_at: Option<Time> = None;
        loop {
            let queued = if repairs {
                self.repairs.len()
            } else {
                self.pending.len()
            };
            if self.blocked || queued == 0 {
                break;
            }
            let mut trial = self.pacer.clone();
            let mut trial_repairs = self.repairs.pacer().clone();
            // (destination or None for a departed node, bytes charged to the pacer)
            let mut plan: Vec<(Option<SocketAddr>, usize)> = Vec::new();
            let mut batched = 0usize;
            let queue: Box<dyn Iterator<Item = &Transmit>> = if repairs {
                Box::new(self.repairs.head(crate::socket::MAX_BATCH).into_iter())
            } else {
                Box::new(self.pending.iter())
            };
            for t in queue {
                if batched == crate::socket::MAX_BATCH {
                    break;
                }
                let len = t.payload.len() + self.ep.wire.overhead();
                let to = self.destination(t.dest);
                if to.is_some() {
                    let mut at = trial.ready_at(now, len);
                    if repairs {
                        at = at.max(trial_repairs.ready_at(now, len));
                    }
                    if at > now {
                        wake_at = Some(at);
                        break;
                    }
                    trial.on_send(now, len);
                    trial_repairs.on_send(now, len);
                    batched += 1;
                }
                plan.push((to, len));
            }
            self.send_batch(now, &plan, repairs)?;
            if wake_at.is_some() || batched < crate::socket::MAX_BATCH {
                break;
            }
        }
        Ok(wake_at)
    }

    /// Send the leading transmits of the pending queue, or (`repairs`) of the repair queue,
    /// as `plan` says; drop what was consumed.
    fn send_batch(
        &mut self,
        now: Time,
        plan: &[(Option<SocketAddr>, usize)],
        repairs: bool,
    ) -> Result<(), NetError> {
        let queue: Box<dyn Iterator<Item = &Transmit>> = if repairs {
            Box::new(self.repairs.head(plan.len()).into_iter())
        } else {
            Box::new(self.pending.iter())
        };
        let items: Vec<(SocketAddr, &[u8])> = plan
            .iter()
            .zip(queue)
            .filter_map(|((to, _), t)| to.map(|to| (to, &t.payload[..])))
            .collect();
        let (consumed, full) = match self.ep.wire.send_batch(&self.ep.sock, &items) {
            Ok(x) => x,
            Err(e) => {
                let to = items.first().map_or(self.ep.group, |(to, _)| *to);
                return Err(crate::error::classify("send to", to, e));
            }
        };
        let mut done = 0usize;
        for (to, len) in plan {
            if to.is_some() {
                if done == consumed {
                    break;
                }
                done += 1;
                self.pacer.on_send(now, *len);
                if *to == Some(self.ep.group) {
                    self.to_group += 1;
                    self.repairs.sent_to_group(*len);
                } else {
                    self.to_nodes += 1;
                }
            }
            if repairs {
                self.repairs.pop_front(now, to.map(|_| *len));
            } else {
                self.pending.pop_front();
            }
        }
        self.blocked = full;
        Ok(())
    }

    /// Whether every receiver sent its final report or was evicted.
    fn all_final(&self) -> bool {
        self.members.iter().all(|m| !m.live())
    }

    /// Whether the transfer is over: the agent completed, nothing is queued, and every
    /// receiver sent its final report or was evicted (or `--final-wait` ran out after the
    /// completion and after the last progress any receiver still at work reported: a live
    /// receiver behind a slow link is served as long as it moves). A protocol without
    /// positive acknowledgments ([`crate::agents::NetProtocol::acknowledged`] false) counts
    /// from the last data and completes when the transfer is over; its agent answered until
    /// then.
    fn done(&mut self, now: Time) -> bool {
        let since = match (self.completed_at, self.closed_at) {
            (Some(t), _) => t,
            (None, Some(t)) if !self.ep.proto.acknowledged() => t,
            _ => return false,
        };
        if !self.pending.is_empty() || !self.repairs.is_empty() {
            return false;
        }
        let out = self.all_final() || {
            let since = self
                .members
                .iter()
                .filter(|m| m.live())
                .map(|m| m.progressed_at)
                .fold(since, Time::max);
            now.saturating_since(since) >= self.ep.cfg.final_wait
        };
        if out && self.completed_at.is_none() {
            self.completed_at = Some(now);
            self.transfer_end = now;
        }
        out
    }

    /// Sleep until something happens: the agent's deadline, the pacer's, the announce timer;
    /// the producer wakes the loop when it has more.
    fn sleep(&mut self, now: Time, wake_at: Option<Time>) -> Result<(), NetError> {
        let mut deadline = self.next_announce.min(now + Duration::from_millis(100));
        if let Some(t) = self.agent.poll_timeout() {
            deadline = deadline.min(t);
        }
        if let Some(t) = wake_at {
            deadline = deadline.min(t);
        }
        if !self.source_done
            && self.agent.as_sender().is_some_and(|s| s.can_send())
            && self.pending.is_empty()
        {
            let ready = self.pacer.ready_at(now, self.ep.dgram);
            deadline = deadline.min(ready.max(self.schedule.next_at()));
        }
        let mut wait = self.ep.clock.until(deadline);
        if self.blocked {
            wait = wait.min(Duration::from_millis(1));
        }
        self.ep.wait(wait)?;
        for ev in self.ep.events.iter() {
            if ev.token() == SOCK && ev.is_writable() {
                self.blocked = false;
            }
        }
        // Edge-triggered writability may have been missed; retry after the short wait.
        self.blocked = false;
        Ok(())
    }

    /// The member that sent a datagram as `node` from `from` (members are known by the
    /// address they joined from); `None`: a stranger, maybe a late joiner.
    fn member_at(&self, node: u32, from: SocketAddr) -> Option<usize> {
        self.members
            .iter()
            .position(|m| m.node == node && m.addr == from)
    }

    /// A datagram from member `i`: a protocol packet goes to the agent, its session packets
    /// update its record.
    fn member_packet(
        &mut self,
        now: Time,
        i: usize,
        h: Header,
        len: usize,
        obs: &mut dyn SendObserver,
    ) {
        let Some(m) = self.members.get_mut(i) else {
            return;
        };
        if m.evicted.is_some() {
            return;
        }
        if h.family == Family::Session {
            // A session packet counts as a sign of life only once it decodes.
            self.session_message(now, i, len, obs);
            return;
        }
        m.last_heard = now;
        m.traffic = true;
        if self.ep.wire.drop_rx() {
            return;
        }
        self.agent
            .handle_packet(now, NodeId(h.source), self.ep.plain(len));
        self.take_transmits(now, h.source);
    }

    /// A member's session packet: a REPORT, or a JOIN repeated (answered with the running
    /// ANNOUNCE).
    fn session_message(&mut self, now: Time, i: usize, len: usize, obs: &mut dyn SendObserver) {
        let Some(m) = self.members.get_mut(i) else {
            return;
        };
        let from = m.addr;
        match Packet::decode(self.ep.plain(len)) {
            Ok(Packet {
                message:
                    Message::Session(session::Message::Report {
                        state,
                        reason,
                        bytes,
                        messages,
                        repairs,
                        duplicates,
                        rejected,
                    }),
                header,
            }) if header.session == self.ep.session => {
                m.last_heard = now;
                m.report(now, bytes, messages, repairs);
                self.repairs.report(now, m.node, repairs);
                m.bytes = bytes;
                m.messages = messages;
                m.repairs = repairs;
                m.duplicates = duplicates;
                m.rejected = rejected;
                if state != ReportState::Receiving && m.final_state.is_none() {
                    m.final_state = Some((state, reason));
                    m.finished_at = Some(now);
                    self.repairs.forget(now, m.node);
                }
                obs.progress(m.node, bytes);
                // What every receiver still in the session delivered, for a protocol that
                // releases its repair store on it.
                let live = self.members.iter().filter(|m| {
                    m.evicted.is_none()
                        && !matches!(m.final_state, Some((s, _)) if s != ReportState::Complete)
                });
                if let Some(low) = live.map(|m| m.messages).min() {
                    if let Some(s) = self.agent.as_sender() {
                        s.delivered_by_all(now, low);
                    }
                }
            }
            Ok(Packet {
                message: Message::Session(session::Message::Join { .. }),
                ..
            }) => {
                m.last_heard = now;
                let _ = self.ep.wire.send(&self.ep.sock, from, &self.running, false);
            }
            // What it held when the transfer started decided where the files began.
            Ok(Packet {
                message: Message::Session(session::Message::Have { .. }),
                ..
            }) => m.last_heard = now,
            _ => self.ep.wire.stats.rejected_malformed += 1,
        }
    }

    /// A packet from no member at its address. A JOIN under a node id that is no member's
    /// admits a late joiner (if the protocol admits joiners now; it gets the running
    /// ANNOUNCE) or gets the refusal bound to it ([`Endpoint::refuse`]). Nothing else gets an
    /// answer: the sender seals nothing fresh on a stranger's request that could be re-sent as
    /// the sender's (a running ANNOUNCE sealed for a stranger and multicast from its port took
    /// over keyed receivers).
    fn stranger(
        &mut self,
        now: Time,
        h: Header,
        len: usize,
        from: SocketAddr,
        obs: &mut dyn SendObserver,
    ) -> Result<(), NetError> {
        if h.family != Family::Session
            && h.session == self.ep.session
            && self.side.helper(now, h.source)
        {
            // A helper inside the network the sender named (a csp/cp local exchange, a prmp
            // relay), speaking from a relay's address.
            self.helpers.insert(h.source, from);
            if !self.ep.wire.drop_rx() {
                self.agent
                    .handle_packet(now, NodeId(h.source), self.ep.plain(len));
            }
            return Ok(());
        }
        if self.restarted(now, h, len, from)? {
            return Ok(());
        }
        // A member's node id from another address changes nothing: members are known by the
        // address they joined from.
        let joins = h.family == Family::Session
            && h.session == self.ep.session
            && h.source != self.ep.node
            && h.source != 0
            && !self.members.iter().any(|m| m.node == h.source)
            && matches!(
                Packet::decode(self.ep.plain(len)),
                Ok(Packet {
                    message: Message::Session(session::Message::Join { .. }),
                    ..
                })
            );
        self.ep.wire.stranger();
        if !joins {
            return Ok(());
        }
        if !self.side.admits_joiners() || self.members.len() >= self.ep.cfg.max_receivers {
            self.ep.refuse(h.source, from);
            return Ok(());
        }
        // Admit it; the agent adds it when its first status arrives and waits for it from
        // there (no back-fill).
        tracing::info!(node = h.source, %from, "late joiner admitted");
        obs.joined(h.source, from);
        let admitted = self.ep.admission();
        self.members
            .push(Member::new(h.source, from, now, None, true, admitted));
        if let Some(w) = self.ep.wire.framed.as_mut() {
            w.peer(from, h.source);
        }
        self.ids.push(h.source);
        self.reannounce(now)?;
        let _ = self.ep.wire.send(&self.ep.sock, from, &self.running, false);
        Ok(())
    }
}

impl Transfer {
    /// A JOIN under a live member's node id from another address. From the member's IP
    /// address and another port the member restarted (a new process, a new socket)
    /// mid-session: where the protocol takes it back
    /// ([`crate::agents::NetProtocol::resumes`]) its address moves there, its progress is
    /// counted afresh, and it gets the running ANNOUNCE; its new agent asks for everything
    /// from the first packet. From anywhere, when the member has been silent for
    /// [`MOVE_AFTER`], a JOIN or a REPORT says it moved: the relay it was behind died and it
    /// followed the session to a standby relay (`rmcast relay --standby`), whose proxy now speaks
    /// for it; its address moves there and it keeps its progress (its agent goes on). Elsewhere it
    /// changes nothing (members are known by the address they joined from). Returns whether it was
    /// such a JOIN.
    fn restarted(
        &mut self,
        now: Time,
        h: Header,
        len: usize,
        from: SocketAddr,
    ) -> Result<bool, NetError> {
        if h.family != Family::Session || h.session != self.ep.session {
            return Ok(false);
        }
        let resumes = self.ep.proto.resumes();
        if let Some(m) = self.members.iter().find(|m| m.node == h.source) {
            tracing::info!(
                node = m.node,
                old = %m.addr,
                new = %from,
                live = m.live(),
                heard_ms = now.saturating_since(m.last_heard).as_millis() as u64,
                "a member's node id from another address"
            );
        }
        let Some((m, restart)) = self
            .members
            .iter_mut()
            .filter(|m| m.node == h.source)
            .find_map(|m| taken_back(m, now, from, resumes).map(|r| (m, r)))
        else {
            return Ok(false);
        };
        // A move is taken from a REPORT too: the receiver JOINs for a second after it
        // followed, and REPORTs every 250 ms from then on (its JOINs can all be lost while its
        // host resolves the standby's link address on a lossy link: seen once in 12 runs).
        let taken = match Packet::decode(self.ep.plain(len)) {
            Ok(Packet {
                message: Message::Session(session::Message::Join { .. }),
                ..
            }) => true,
            Ok(Packet {
                message: Message::Session(session::Message::Report { .. }),
                ..
            }) => !restart,
            _ => false,
        };
        if !taken {
            return Ok(false);
        }
        if restart {
            tracing::info!(node = m.node, old = %m.addr, new = %from, "member restarted: taken back at its new address");
            m.restarts += 1;
            m.progressed_at = now;
            m.reported = None;
        } else {
            tracing::warn!(
                node = format_args!("{:08x}", m.node),
                old = %m.addr,
                new = %from,
                "member silent for {:.1}s speaks from another address (its relay died, a \
                 standby took over): taken back there",
                now.saturating_since(m.last_heard).as_secs_f64()
            );
            m.moves += 1;
        }
        m.addr = from;
        m.last_heard = now;
        if let Some(w) = self.ep.wire.framed.as_mut() {
            w.peer(from, m.node);
        }
        let _ = self.ep.wire.send(&self.ep.sock, from, &self.running, false);
        Ok(true)
    }
}

/// Whether a JOIN under `m`'s node id from `from` at `now` takes `m` back there: `Some(true)`
/// as a restart (a protocol that `resumes`, the member's IP address, another port),
/// `Some(false)` as a move (anywhere, after [`MOVE_AFTER`] of silence), `None` not at all
/// (`m` is gone, or it is at `from` already, or it spoke too recently).
fn taken_back(m: &Member, now: Time, from: SocketAddr, resumes: bool) -> Option<bool> {
    if !m.live() || m.addr == from {
        return None;
    }
    if resumes && m.addr.ip() == from.ip() {
        return Some(true);
    }
    (now.saturating_since(m.last_heard) >= MOVE_AFTER).then_some(false)
}

/// A member silent this long whose JOIN comes from another address is taken back there
/// ([`Transfer::restarted`]): below the receivers' own delay before they follow their
/// session to another address (one second without a datagram), so a receiver that followed
/// is never refused for having spoken too recently.
const MOVE_AFTER: Duration = Duration::from_millis(750);

/// `--min-rate` (bits per second, 0: off): why `m` is evicted, when what it delivered over
/// the period of `period` that just ended is below the rate. A new period starts then.
fn min_rate_check(m: &mut Member, now: Time, period: Duration, min_rate: u64) -> Option<String> {
    let (since, bytes) = m.rate_mark;
    let elapsed = now.saturating_since(since);
    if min_rate == 0 || elapsed < period {
        return None;
    }
    m.rate_mark = (now, m.bytes);
    let rate = m.bytes.saturating_sub(bytes) as f64 * 8.0 / elapsed.as_secs_f64();
    (rate < min_rate as f64).then(|| {
        format!(
            "delivered {:.2} Mbit/s over the last {:.1}s, below --min-rate {:.2} Mbit/s",
            rate / 1e6,
            elapsed.as_secs_f64(),
            min_rate as f64 / 1e6
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sender::Admission;

    fn member() -> Member {
        let addr: SocketAddr = "10.0.0.2:5000".parse().unwrap();
        Member::new(7, addr, Time::ZERO, None, false, Admission::Key)
    }

    /// A member's JOIN from another address takes it back there as a restart (same IP, a
    /// protocol that resumes) at once, as a move (a standby relay's proxy) only once it has
    /// been silent for MOVE_AFTER, and never from where it is or once it is gone.
    #[test]
    fn a_member_is_taken_back_elsewhere_only_restarted_or_after_a_silence() {
        let mut m = member();
        let at = |ms: u64| Time::ZERO + Duration::from_millis(ms);
        m.last_heard = at(1000);
        let port: SocketAddr = "10.0.0.2:5001".parse().unwrap();
        let standby: SocketAddr = "10.0.0.253:40000".parse().unwrap();
        assert_eq!(taken_back(&m, at(1000), port, true), Some(true));
        assert_eq!(taken_back(&m, at(1000), port, false), None);
        assert_eq!(taken_back(&m, at(1000), m.addr, true), None);
        assert_eq!(taken_back(&m, at(1749), standby, true), None, "too soon");
        assert_eq!(taken_back(&m, at(1750), standby, false), Some(false));
        assert_eq!(taken_back(&m, at(1750), port, false), Some(false));
        m.evicted = Some("silent".into());
        assert_eq!(taken_back(&m, at(9000), standby, false), None, "evicted");
    }

    #[test]
    fn progress_is_more_delivered_or_more_repairs_received() {
        let mut m = member();
        let at = |s: u64| Time::ZERO + Duration::from_secs(s);
        m.report(at(1), 0, 0, 0);
        assert_eq!(
            m.progressed_at,
            Time::ZERO,
            "a first report of nothing is no progress"
        );
        m.report(at(2), 1000, 1, 0);
        assert_eq!(m.progressed_at, at(2));
        // Waiting on an early gap: nothing new delivered, but repairs arrive.
        m.report(at(3), 1000, 1, 40);
        assert_eq!(m.progressed_at, at(3));
        m.report(at(4), 1000, 1, 40);
        assert_eq!(m.progressed_at, at(3), "a report that did not move");
    }

    #[test]
    fn min_rate_evicts_only_below_the_rate_once_a_period_has_passed() {
        let period = Duration::from_secs(5);
        let at = |s: u64| Time::ZERO + Duration::from_secs(s);
        let mut m = member();
        m.bytes = 1_000_000;
        assert_eq!(
            min_rate_check(&mut m, at(4), period, 8_000_000),
            None,
            "too early"
        );
        assert_eq!(min_rate_check(&mut m, at(5), period, 0), None, "off");
        // 1 MB in 5 s is 1.6 Mbit/s.
        assert_eq!(min_rate_check(&mut m, at(5), period, 1_000_000), None);
        m.bytes += 1_000_000;
        let why = min_rate_check(&mut m, at(10), period, 2_000_000).expect("below 2 Mbit/s");
        assert!(
            why.contains("1.60 Mbit/s") && why.contains("--min-rate 2.00"),
            "{why}"
        );
    }
}
