//! The receiver's event loop. Each turn: fire the agent's timer, give up on a silent sender,
//! deliver the agent's messages into the sink, route its datagrams, REPORT (or JOIN until
//! admitted), sleep until the next deadline, read every ready datagram from the group, the
//! unicast and the local socket. Protocol differences come from the [`ReceiverSide`] the
//! protocol built from the ANNOUNCE.

use super::joined::Joined;
use super::sink::Sink;
use super::writer::Writer;
use super::{reason_text, Output, RecvConfig, RecvObserver, RecvReport};
use crate::agents;
use crate::clock::Clock;
use crate::endpoint::{nonzero_random, session_packet, Wire};
use crate::interrupt::Interrupt;
use crate::socket::{self, check_group, group_socket, unicast_socket, RecvBatch};
use crate::NetError;
use bytes::{Bytes, BytesMut};
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token, Waker};
use rmcast_proto::{Event, NodeId, Time};
use rmcast_wire::session;
use rmcast_wire::{Family, Header, PacketClass};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

const GROUP: Token = Token(0);
const UNI: Token = Token(1);
const LOCAL: Token = Token(2);
/// The writer thread's wake-up (a file verified, the transfer finished).
const WAKE: Token = Token(3);
/// The size of each block of the receiver's datagram arena (`Receiving::arena`): about 170
/// one-frame datagrams. A block is freed once nothing holds a slice of it; small enough that
/// datagrams held for a repair do not pin much more than themselves.
const ARENA: usize = 256 << 10;

/// A turn that read this many datagrams or more found a dense stream.
const DENSE: u64 = 2;
/// How long a receiver of a dense stream lets datagrams gather before it reads again: at
/// least this ...
const COALESCE_MIN: Duration = Duration::from_micros(150);
/// ... at most this (what it adds to a NAK's or ACK's delay) ...
const COALESCE_MAX: Duration = Duration::from_millis(4);
/// ... aiming at this many datagrams a read. Measured on the bridge (10 receivers, 100 MB,
/// pgm): one wake-up per 2.2 datagrams with a fixed 150 us cost each receiver about 1 s of
/// CPU per 100 MB, one per 11 about 0.6 s, and the sender less (it wakes no one while a
/// receiver sleeps). 32 datagrams are about 80 KB of socket buffer, inside Linux's default.
const COALESCE_AIM: u32 = 32;

/// How a receive ended: its outcome and the reason.
type End = (&'static str, Option<String>);

/// The next gathering time of a dense stream, from the last one and a read that found `n`
/// datagrams `elapsed` after the read before it: the time [`COALESCE_AIM`] datagrams take at
/// that rate, moved halfway from the last (so one burst or gap does not swing it), within
/// [`COALESCE_MIN`]..=[`COALESCE_MAX`]. A read that found fewer than [`DENSE`] leaves it.
fn next_coalesce(last: Duration, n: u64, elapsed: Duration) -> Duration {
    if n < DENSE {
        return last;
    }
    let n = u32::try_from(n).unwrap_or(u32::MAX);
    let aim = elapsed.saturating_mul(COALESCE_AIM) / n;
    ((last + aim) / 2).clamp(COALESCE_MIN, COALESCE_MAX)
}

fn late_offer(protocol: u8, params: &[u8]) -> Result<Option<String>, NetError> {
    match agents::announced(protocol) {
        Some(p) => p.late_offer(params),
        None => Ok(None),
    }
}

/// A receiver not yet admitted repeats its JOIN this often.
const JOIN_AGAIN: Duration = Duration::from_millis(200);

/// A receiver hearing the sender's data before the running ANNOUNCE (which admits it and
/// builds its agent) JOINs for it at most this often: a few LAN round trips.
const ASK_AGAIN: Duration = Duration::from_millis(20);

/// A receiver: its sockets, its writer thread, and the state of the session it found.
pub(super) struct Receiving {
    cfg: RecvConfig,
    gsock: UdpSocket,
    usock: UdpSocket,
    poll: Poll,
    events: Events,
    writer: Writer,
    /// The largest datagram one frame of our link carries; larger ones were reassembled.
    max_payload: usize,
    /// SIGINT/SIGTERM while this receiver runs end it cleanly.
    interrupt: Interrupt,
    /// Everything a receive changes besides the sink: what [`State::new`] gives is what a
    /// receiver starts from (and what [`Receiving::reset`] returns it to).
    st: State,
}

/// The per-receive state of a [`Receiving`]: the session it found, its agent, counters and
/// clocks.
struct State {
    /// The further group the protocol asked for (`dsp` member: its region's local group).
    lsock: Option<UdpSocket>,
    clock: Clock,
    node: u32,
    wire: Wire,
    joined: Option<Joined>,
    next_report: Time,
    next_join: Time,
    /// When a JOIN may next ask for the running ANNOUNCE that data before it says we missed.
    next_ask: Time,
    repairs: u64,
    local_repairs: u64,
    open_local: Option<SocketAddr>,
    first_data: Option<Time>,
    /// Where protocol datagrams are copied out of the receive buffers before the agent sees
    /// them, so an agent that keeps data (pgm's receive window, the delivery to the writer)
    /// takes a slice of it instead of a copy of its own: one allocation per [`ARENA`] bytes
    /// rather than one per datagram.
    arena: BytesMut,
    /// The agent's datagrams of one turn, sent in batches (kept for its allocation).
    feedback: Vec<(SocketAddr, Bytes)>,
    done_at: Option<Time>,
    warned_sealed: bool,
    end: Option<End>,
    /// The kernel's drop counter of the group, unicast and local socket.
    drops: [u64; 3],
    /// The last turn read at least [`DENSE`] datagrams: wait `coalesce` before the next.
    dense: bool,
    /// How long a dense stream gathers before the next read (adapted to the arrival rate).
    coalesce: Duration,
    /// When the last read began.
    last_read: Time,
    /// Sessions found running without us, whose senders we asked to join.
    asked: Vec<admission::Asked>,
    /// Sessions given up for not answering, ignored from their address for a while.
    shunned: Vec<admission::Shunned>,
    /// Why the last ANNOUNCE was refused (the end reason if no session is found).
    refused: Option<String>,
    /// The partial copies in the output directory when the session was found (restart
    /// mode): told the sender with every JOIN and REPORT until data arrives.
    held: Vec<rmcast_wire::session::Held>,
}

impl State {
    /// A receive that has not begun: no session, nothing counted, its clock starting now.
    fn new(cfg: &RecvConfig) -> State {
        State {
            lsock: None,
            clock: Clock::new(),
            node: cfg.node_id.unwrap_or_else(nonzero_random),
            wire: Wire::new(cfg.keys.clone(), cfg.loss.clone()),
            joined: None,
            next_report: Time::ZERO,
            next_join: Time::ZERO,
            next_ask: Time::ZERO,
            repairs: 0,
            local_repairs: 0,
            open_local: None,
            first_data: None,
            arena: BytesMut::new(),
            feedback: Vec::new(),
            done_at: None,
            warned_sealed: false,
            dense: false,
            coalesce: COALESCE_MIN,
            last_read: Time::ZERO,
            end: None,
            drops: [0; 3],
            asked: Vec::new(),
            shunned: Vec::new(),
            refused: None,
            held: Vec::new(),
        }
    }
}

impl Receiving {
    /// Open the sockets and the output directory.
    pub(super) fn open(cfg: RecvConfig) -> Result<Self, NetError> {
        check_group(cfg.sock.group)?;
        if let Some(r) = cfg.region {
            agents::local_group(cfg.sock.group, r)?;
        }
        let link = socket::group_link(&cfg.sock).unwrap_or_else(socket::Link::assumed);
        let max_payload = link.max_payload(cfg.sock.group.is_ipv6());
        let mut gsock = UdpSocket::from_std(group_socket(&cfg.sock)?);
        let mut usock = UdpSocket::from_std(unicast_socket(&cfg.sock)?);
        socket::coalesce_reads(&gsock);
        socket::coalesce_reads(&usock);
        // The output directory is created only once the sockets are up, so a setup error
        // leaves nothing behind.
        if let Output::Dir { path, .. } = &cfg.output {
            std::fs::create_dir_all(path).map_err(|e| {
                NetError::setup(format!(
                    "cannot use output directory {}: {e}; pass --dir with a writable directory",
                    path.display()
                ))
            })?;
            let probe = path.join(format!(".rmcast-probe-{:016x}", rand::random::<u64>()));
            std::fs::write(&probe, b"")
                .and_then(|_| std::fs::remove_file(&probe))
                .map_err(|e| {
                    NetError::setup(format!(
                        "output directory {} is not writable: {e}; pass --dir with a writable directory",
                        path.display()
                    ))
                })?;
        }
        let poll = Poll::new().map_err(|e| NetError::io("create poll", e))?;
        for (s, t) in [(&mut gsock, GROUP), (&mut usock, UNI)] {
            poll.registry()
                .register(s, t, Interest::READABLE)
                .map_err(|e| NetError::io("register socket", e))?;
        }
        let waker = Arc::new(
            Waker::new(poll.registry(), WAKE).map_err(|e| NetError::io("create waker", e))?,
        );
        Ok(Receiving {
            gsock,
            usock,
            poll,
            events: Events::with_capacity(64),
            writer: Writer::spawn(cfg.output.clone(), waker),
            max_payload,
            interrupt: Interrupt::install(),
            st: State::new(&cfg),
            cfg,
        })
    }

    /// Run until the session ends (END, a silent sender, no session, a signal).
    pub(super) fn run(&mut self, obs: &mut dyn RecvObserver) -> Result<(), NetError> {
        let mut batch = RecvBatch::new();
        while self.st.end.is_none() {
            let now = self.st.clock.now();
            if let Some(end) = self.timers(now) {
                self.st.end = Some(end);
                break;
            }
            if self.st.wire.looks_sealed && !self.st.warned_sealed {
                self.st.warned_sealed = true;
                tracing::warn!("packets on the group carry an authentication trailer: pass --key-file (and --encrypt if the sender uses it)");
            }
            self.drive(now, obs);
            self.sleep(now)?;
            self.read(&mut batch, obs)?;
            self.join_local()?;
        }
        // What the writer did since the last turn (the last file's verdict) reaches `obs`.
        self.writer.flush();
        self.writer.notes(obs);
        Ok(())
    }

    /// A signal, the agent's timer, a silent sender, no session in time.
    fn timers(&mut self, now: Time) -> Option<End> {
        if self.interrupt.raised() {
            return Some((
                "interrupted",
                Some(
                    "interrupted by a signal; an unfinished file is kept hidden for the next \
                     session to resume (a stream's is removed)"
                        .into(),
                ),
            ));
        }
        if self.unanswered(now) {
            return None;
        }
        let Some(j) = self.st.joined.as_mut() else {
            if self
                .cfg
                .wait
                .is_some_and(|w| now.saturating_since(Time::ZERO) >= w)
            {
                return Some((
                    "no-session",
                    Some(match &self.st.refused {
                        Some(why) => format!(
                            "no session this receiver can join was announced on {} within {:.0?}; \
                             the last ANNOUNCE was refused: {why}",
                            self.cfg.sock.group,
                            self.cfg.wait.unwrap_or_default()
                        ),
                        None => format!(
                            "no session announced on {} within {:.0?}: start `rmcast send` or check --group/--interface",
                            self.cfg.sock.group,
                            self.cfg.wait.unwrap_or_default()
                        ),
                    }),
                ));
            }
            return None;
        };
        if let Some(b) = j.built.as_mut() {
            if b.agent.poll_timeout().is_some_and(|t| t <= now) {
                b.agent.handle_timeout(now);
            }
        }
        if now.saturating_since(j.last_from_sender) < self.cfg.sender_timeout {
            return None;
        }
        Some(if self.writer.flush().finished {
            (
                "completed",
                Some("the sender went silent after the transfer".into()),
            )
        } else {
            (
                "sender-silent",
                Some(format!(
                    "no packet from the sender for {:.0?}: it stopped or the network failed",
                    self.cfg.sender_timeout
                )),
            )
        })
    }

    /// Deliver the agent's messages, send its datagrams, REPORT or JOIN when due.
    fn drive(&mut self, now: Time, obs: &mut dyn RecvObserver) {
        let Some(j) = self.st.joined.as_mut() else {
            return;
        };
        // Feedback first: an ACK or NAK waits for no disk write (writing and committing the
        // last part of a file can take longer than the sender's retransmission timeout).
        let mut out = std::mem::take(&mut self.st.feedback);
        while let Some(t) = j.agent().and_then(|a| a.poll_transmit()) {
            if let Some(to) = j.route(t.dest, self.cfg.sock.group) {
                out.push((to, t.payload));
            }
        }
        // Several datagrams per system call (a NAK or ACK burst); a full socket buffer drops
        // the rest of the feedback like a lossy network would.
        let mut rest = out.as_slice();
        while !rest.is_empty() {
            let items: Vec<(SocketAddr, &[u8])> = rest
                .iter()
                .take(socket::MAX_BATCH)
                .map(|(to, b)| (*to, &b[..]))
                .collect();
            match self.st.wire.send_batch(&self.usock, &items) {
                Ok((consumed, false)) if consumed > 0 => {
                    rest = rest.get(consumed..).unwrap_or_default();
                }
                _ => break,
            }
        }
        out.clear();
        self.st.feedback = out;
        while let Some(ev) = j.agent().and_then(|a| a.poll_event()) {
            if let Event::Delivered { data, .. } = ev {
                self.writer.deliver(now, data);
            }
        }
        self.writer.send_due(now);
        self.writer.notes(obs);
        let sink = self.writer.status();
        if sink.finished && self.st.done_at.is_none() {
            self.st.done_at = Some(now);
            self.st.next_report = Time::ZERO;
        }
        let mut have = None;
        if j.admitted && now >= self.st.next_report {
            let (delivered, duplicates) = j.built.as_ref().map_or((0, 0), |b| {
                (b.agent.stats().delivered, b.agent.stats().duplicates)
            });
            // The first REPORT after the admission says what the receiver held when admitted:
            // nothing (no data reaches the agent before). An unkeyed sender believes a
            // "complete" only from a receiver whose reports moved (or that sent protocol
            // packets): a tiny file may be whole before the first REPORT.
            let admission = !std::mem::replace(&mut j.reported, true);
            if let Some(b) = j.built.as_ref() {
                let st = b.agent.stats();
                tracing::debug!(
                    delivered,
                    repairs = self.st.repairs,
                    control_sent = st.control_sent,
                    duplicates,
                    "report"
                );
            }
            let ((state, why), bytes, delivered) = if admission {
                ((session::ReportState::Receiving, 0), 0, 0)
            } else {
                (sink.state, sink.bytes, delivered)
            };
            let pkt = session_packet(
                j.session,
                self.st.node,
                session::Message::Report {
                    state,
                    reason: why,
                    bytes,
                    messages: delivered,
                    repairs: self.st.repairs,
                    duplicates,
                    rejected: self.st.wire.stats.rejected(),
                },
            );
            // A REPORT and a JOIN always encode (fixed sizes).
            if let Ok(pkt) = pkt {
                let _ = self.st.wire.send(&self.usock, j.sender_addr, &pkt, false);
            }
            if self.st.first_data.is_none() {
                have = Some((j.session, j.sender_addr));
            }
            self.st.next_report = if admission && sink.finished {
                Time::ZERO
            } else {
                now + self.cfg.report_every
            };
        }
        let rejoining = j.rejoin_until.is_some_and(|t| now < t);
        if (!j.admitted || rejoining) && now >= self.st.next_join {
            self.join();
            self.st.next_join = now + JOIN_AGAIN;
        }
        if let Some((session, to)) = have {
            self.have(session, to);
        }
    }

    /// Sleep until the agent's deadline, the next REPORT or JOIN, at most 100 ms.
    fn sleep(&mut self, now: Time) -> Result<(), NetError> {
        let mut deadline = now + Duration::from_millis(100);
        if let Some(t) = self.writer.due_at() {
            deadline = deadline.min(t);
        }
        if let Some(j) = self.st.joined.as_ref() {
            if let Some(t) = j.built.as_ref().and_then(|b| b.agent.poll_timeout()) {
                deadline = deadline.min(t);
            }
            if j.admitted {
                deadline = deadline.min(self.st.next_report);
            } else {
                deadline = deadline.min(self.st.next_join);
            }
        }
        // A dense stream: let a few more datagrams gather before waking (one wake-up and one
        // batch for several instead of one per datagram or two).
        if std::mem::take(&mut self.st.dense) {
            let wait = self.st.coalesce.min(self.st.clock.until(deadline));
            if wait >= COALESCE_MIN {
                std::thread::sleep(wait);
            }
        }
        if let Err(e) = self
            .poll
            .poll(&mut self.events, Some(self.st.clock.until(deadline)))
        {
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(NetError::io("poll", e));
            }
        }
        Ok(())
    }

    /// Read every ready datagram from the group, unicast and local sockets, until the session
    /// ends.
    ///
    /// Each datagram is handled at the clock read after it left the socket, never at the
    /// time the read began: one that arrived while the loop ran (handling the ones before it,
    /// or descheduled on a loaded host) would otherwise be stamped before it arrived. Agents
    /// measure with these times: srm's distance from a SESSION echo, `now − echo − delay`,
    /// came out 0 on a loaded 2-core host, and its request timers (`C1·d`) then fired back to
    /// back (700,000 requests in 15 s from one member of the srm relay test).
    fn read(&mut self, batch: &mut RecvBatch, obs: &mut dyn RecvObserver) -> Result<(), NetError> {
        let began = self.st.clock.now();
        let before = batch.datagrams;
        for k in 0..3 {
            batch.clear();
            loop {
                let sock = match k {
                    0 => &self.gsock,
                    1 => &self.usock,
                    _ if self.hold_local() => break,
                    _ => match self.st.lsock.as_ref() {
                        Some(s) => s,
                        None => break,
                    },
                };
                let Some((buf, from)) = batch.next(sock) else {
                    break;
                };
                let now = self.st.clock.now();
                if k == 2 && self.st.wire.framed.is_some() {
                    if let Some(mut d) = self.st.wire.framed_incoming(from, buf) {
                        self.datagram(now, &mut d, from, obs)?;
                    }
                } else {
                    self.datagram(now, buf, from, obs)?;
                }
                if self.st.end.is_some() {
                    break;
                }
            }
            if let (Some(d), Some(seen)) = (batch.take_drops(), self.st.drops.get_mut(k)) {
                *seen = (*seen).max(u64::from(d));
            }
            if self.st.end.is_some() {
                break;
            }
        }
        self.st.wire.stats.kernel_drops = self.st.drops.iter().sum();
        let n = batch.datagrams - before;
        self.st.dense = n >= DENSE && self.st.joined.as_ref().is_some_and(|j| j.gathers);
        self.st.coalesce = next_coalesce(
            self.st.coalesce,
            n,
            began.saturating_since(self.st.last_read),
        );
        self.st.last_read = began;
        self.st.wire.stats.recv_batches = batch.calls;
        self.st.wire.stats.recv_coalesced = batch.coalesced;
        Ok(())
    }

    /// One datagram as the socket delivered it (`buf` is opened in place): authentication,
    /// the header, then the session layer or the agent.
    pub(super) fn datagram(
        &mut self,
        now: Time,
        buf: &mut [u8],
        from: SocketAddr,
        obs: &mut dyn RecvObserver,
    ) -> Result<(), NetError> {
        let n = buf.len();
        if n > self.max_payload {
            if self.st.wire.stats.reassembled == 0 {
                tracing::warn!(
                    bytes = n,
                    max = self.max_payload,
                    "datagrams larger than one frame of this link arrive: the IP layer \
                     fragments them and one lost frame loses each (the sender's \
                     --datagram-size is above this link's MTU)"
                );
            }
            self.st.wire.stats.reassembled += 1;
        }
        let Some((h, len)) = self.st.wire.open(buf) else {
            return Ok(());
        };
        let Some(pkt) = buf.get(..len) else {
            return Ok(());
        };
        if h.family == Family::Session {
            self.session_packet(now, h, pkt, from, obs)
        } else {
            self.protocol_packet(now, h, pkt, from);
            Ok(())
        }
    }

    /// What one turn of [`Receiving::run`] does besides sleeping and reading, at `now`: the
    /// timers and the agent's output (feedback, deliveries, REPORT or JOIN). For the fuzz
    /// entry point [`super::Fuzzing`], which feeds datagrams itself.
    pub(super) fn turn(&mut self, now: Time, obs: &mut dyn RecvObserver) {
        if self.st.end.is_none() {
            if let Some(end) = self.timers(now) {
                self.st.end = Some(end);
                return;
            }
            self.drive(now, obs);
        }
    }

    /// Whether the receive has ended (END, a silent sender, not admitted).
    pub(super) fn ended(&self) -> bool {
        self.st.end.is_some()
    }

    /// A protocol packet: only from our sender (or a peer the protocol names), only once we
    /// know the session and have an agent.
    fn protocol_packet(&mut self, now: Time, h: Header, pkt: &[u8], from: SocketAddr) {
        let Some(j) = self.st.joined.as_mut() else {
            self.st.wire.stranger();
            return;
        };
        if h.source == self.st.node && h.session == j.session {
            // Our own datagram come back (a cp endpoint's local re-multicast, which the relay
            // hosting its exchange carries down every downstream interface, ours too, from
            // the address we know the sender by; or looped back): a node does not hear its
            // own multicast, and the agent would count it a duplicate. Nobody's attack, and
            // not marked in the replay window.
            self.st.wire.unmark();
            return;
        }
        if !j.accepts(&h, from) {
            self.st.wire.stranger();
            return;
        }
        if h.source == j.sender_node {
            j.last_from_sender = now;
        }
        if j.built.is_none() || !(j.admitted || j.late) {
            // The sender's data before the running ANNOUNCE that admits us and builds the
            // agent (lost or late): held for the agent, and the ANNOUNCE asked for now, not at
            // the next JOIN (a receiver that missed it dropped, then NAKed, about 850
            // packets). Nothing reaches the agent, and no file is written, before the sender
            // admitted us: a replayed session's data are never delivered.
            if h.source == j.sender_node && !j.late {
                if j.hold(h, pkt) && h.class().is_data() && self.st.first_data.is_none() {
                    self.st.first_data = Some(now);
                }
                if now >= self.st.next_ask {
                    self.join();
                    self.st.next_ask = now + ASK_AGAIN;
                }
            }
            return;
        }
        self.agent_packet(now, h, pkt);
    }

    /// Hand the packets held before the agent existed to it, once it does.
    fn release_early(&mut self, now: Time) {
        let j = self
            .st
            .joined
            .as_mut()
            .filter(|j| j.built.is_some() && (j.admitted || j.late));
        for (h, pkt) in j.map(Joined::take_early).unwrap_or_default() {
            self.agent_packet(now, h, &pkt);
        }
    }

    /// A protocol packet of our session, to the agent (there is one).
    fn agent_packet(&mut self, now: Time, h: Header, pkt: &[u8]) {
        let Some(j) = self.st.joined.as_mut() else {
            return;
        };
        let Some(b) = j.built.as_mut() else {
            return;
        };
        // A late joiner starts at the first data after the sender admitted it.
        if j.late && !j.admitted {
            return;
        }
        if self.st.wire.drop_rx() {
            return;
        }
        if h.class() == PacketClass::RepairData {
            self.st.repairs += 1;
            if h.source != j.sender_node {
                self.st.local_repairs += 1;
            }
        }
        if h.class().is_data() && self.st.first_data.is_none() {
            self.st.first_data = Some(now);
        }
        if self.st.arena.capacity() < pkt.len() {
            self.st.arena.reserve(ARENA.max(pkt.len()));
        }
        self.st.arena.extend_from_slice(pkt);
        let shared = self.st.arena.split().freeze();
        b.agent.handle_packet_bytes(now, NodeId(h.source), &shared);
    }

    /// Join the further group the protocol asked for (`dsp` member: the region's local
    /// group, where its designated receiver repairs).
    pub(super) fn join_local(&mut self) -> Result<(), NetError> {
        let Some(local) = self.st.open_local.take() else {
            return Ok(());
        };
        // Joined already (the data port of pgm or norm, at the first ANNOUNCE): what comes on it may now
        // be translated.
        let joined = self.st.lsock.as_ref().and_then(|s| s.local_addr().ok());
        if joined.is_some_and(|a| a.port() == local.port()) {
            self.frame(local);
            return Ok(());
        }
        let mut o = self.cfg.sock.clone();
        o.group = local;
        o.source = None;
        let mut s = UdpSocket::from_std(group_socket(&o)?);
        socket::coalesce_reads(&s);
        self.poll
            .registry()
            .register(&mut s, LOCAL, Interest::READABLE)
            .map_err(|e| NetError::io("register socket", e))?;
        tracing::info!(%local, "joined a further group");
        self.st.lsock = Some(s);
        self.frame(local);
        Ok(())
    }

    /// Whether what waits on the further group's socket must wait on: the data port joined
    /// at the first ANNOUNCE, before the running one said how to read it (the socket's
    /// buffer keeps it until then).
    fn hold_local(&self) -> bool {
        self.st.open_local.is_some()
            || (self.st.wire.framed.is_none()
                && self.st.joined.as_ref().is_some_and(|j| j.built.is_none()))
    }

    /// A standard's packets (pgm's RFC 3208, norm's RFC 5740) come on the further group
    /// `local` once the agent is built: translated as they are read ([`crate::framing`]).
    fn frame(&mut self, local: SocketAddr) {
        let node = self.st.node;
        let framing = self.st.joined.as_ref().and_then(|j| {
            let f = j.side()?.framing()?;
            crate::framing::Framed::new(f, self.cfg.sock.group, j.sender_addr, node, true)
        });
        if let Some(w) = framing {
            tracing::info!(%local, "reading the session's packets in their standard's framing");
            self.st.wire.framed = Some(w);
        }
    }

    /// The receiver's summary. Anything unfinished is removed (`Incoming`'s drop), never left
    /// looking complete.
    pub(super) fn report(self) -> RecvReport {
        let sink = self.writer.finish();
        let now = self.st.clock.now();
        self.st.report(sink, now)
    }

    /// The summary of the receive so far, as [`Receiving::report`] gives it with the clock at
    /// `now`, and the receiver back to what [`Receiving::open`] gives: a fresh [`State`] (no
    /// session, the local group's socket closed, nothing counted, a new clock and wire), an
    /// empty sink on the same writer thread, nothing left in the sockets' queues or error
    /// slots. What it keeps is what `open` sets up before any datagram: the configuration,
    /// the group and unicast sockets, the poll, the writer thread, the output directory.
    /// For the fuzz entry point [`super::Fuzzing`], which opens one receiver per process.
    pub(super) fn reset(&mut self, now: Time) -> RecvReport {
        let sink = self.writer.reset();
        let mut old = std::mem::replace(&mut self.st, State::new(&self.cfg));
        if let Some(mut s) = old.lsock.take() {
            let _ = self.poll.registry().deregister(&mut s);
        }
        // What the session's sends looped back (the agent's multicasts) and any ICMP error.
        for sock in [&self.gsock, &self.usock] {
            let mut b = [0u8; 1];
            loop {
                match sock.recv_from(&mut b) {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    // A datagram (cut to one byte and discarded) or a one-time error (an
                    // ICMP error reported on the socket).
                    _ => {}
                }
            }
        }
        old.report(sink, now)
    }
}

impl State {
    /// The summary, from the sink the writer gave back and the clock at `now`.
    fn report(mut self, mut sink: Sink, now: Time) -> RecvReport {
        sink.current = None;
        let sink = &sink;
        let (outcome, mut reason) = self.end.take().unwrap_or(("failed", None));
        let verified = sink.finished && sink.failure.is_none();
        let outcome = if outcome == "completed" && !verified {
            "failed"
        } else {
            outcome
        };
        // A late joiner that got the stream from its join point to the end.
        let outcome = match sink.results.iter().find(|f| f.partial) {
            Some(f) if outcome == "completed" => {
                reason = Some(format!(
                    "joined the running stream late: holds its bytes from offset {} on ({} bytes, \
                     no back-fill, not verified against the whole stream's digest){}",
                    f.starts_at.unwrap_or(0),
                    f.bytes,
                    f.path
                        .as_ref()
                        .map(|p| format!(", kept as {p}"))
                        .unwrap_or_default()
                ));
                "partial"
            }
            _ => outcome,
        };
        if outcome == "failed" && reason.is_none() {
            reason = Some(match sink.failure {
                Some(r) => reason_text(r).to_string(),
                None => "the transfer did not finish".to_string(),
            });
        }
        let end_t = self.done_at.unwrap_or(now);
        let seconds = self
            .first_data
            .map_or(0.0, |f| end_t.saturating_since(f).as_secs_f64());
        let joined = self.joined.as_ref();
        let built = joined.and_then(|j| j.built.as_ref());
        let stats = built.map(|b| b.agent.stats().clone()).unwrap_or_default();
        let place = built.and_then(|b| b.side.place());
        RecvReport {
            node: self.node,
            session: joined.map(|j| j.session),
            sender: joined.map(|j| j.sender_addr.to_string()),
            files: sink.results.clone(),
            bytes: sink.bytes,
            seconds,
            done_unix_us: self.done_at.map(|t| crate::clock::unix_micros_of(t, now)),
            goodput_mbit_s: if seconds > 0.0 {
                sink.bytes as f64 * 8.0 / seconds / 1e6
            } else {
                0.0
            },
            repairs_received: self.repairs,
            local_repairs_received: self.local_repairs,
            local_repairs_sent: if place.is_some() {
                stats.repairs_sent
            } else {
                0
            },
            repairs_sent: stats.repairs_sent,
            region: place.map(|p| p.0),
            role: place.map(|p| p.1),
            local_group: built
                .and_then(|b| b.side.local_group())
                .map(|g| g.to_string()),
            duplicates: stats.duplicates,
            acks_sent: stats.control_sent,
            outcome,
            reason,
            driver: self.wire.stats.clone(),
            success: (outcome == "completed" || outcome == "partial") && verified,
            joined_late: joined.is_some_and(|j| j.late),
            moves: joined.map_or(0, |j| j.moves),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;

mod admission;
#[cfg(test)]
pub(super) use admission::{FOLLOW_AFTER, UNANSWERED};
