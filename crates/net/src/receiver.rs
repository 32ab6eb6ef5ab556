//! `rmcast recv`: join a group, find a session, drive a receiver agent, write verified files.

use crate::agents::{self, Announced, DspPlace};
use crate::clock::Clock;
use crate::endpoint::{DriverStats, Wire, RECV_BUF};
use crate::frame::Frame;
use crate::loss::LossConfig;
use crate::outdir::{check_target, Incoming};
use crate::secure::Keys;
use crate::socket::{check_group, group_socket, unicast_socket, SocketOpts};
use crate::NetError;
use mio::{Events, Interest, Poll, Token};
use rmcast_proto::{Agent, Dest, Event, GroupId, NodeId, Time};
use rmcast_wire::session::{self, DspParams, DspRole, Outcome, Phase, ReportState};
use rmcast_wire::{Envelope, Family, Header, Message, Packet, PacketClass};
use serde::Serialize;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

const GROUP: Token = Token(0);
const UNI: Token = Token(1);
const LOCAL: Token = Token(2);

/// Where received data goes.
#[derive(Debug, Clone)]
pub enum Output {
    /// Files into this directory; `force` allows overwriting.
    Dir { path: PathBuf, force: bool },
    /// Everything to standard output.
    Stdout,
}

/// Receiver settings.
#[derive(Debug, Clone)]
pub struct RecvConfig {
    pub sock: SocketOpts,
    pub output: Output,
    pub node_id: Option<u32>,
    pub keys: Option<Keys>,
    pub loss: LossConfig,
    /// Give up if no session is found within this time (`None`: wait forever).
    pub wait: Option<Duration>,
    /// Give up if the sender is silent this long during a session.
    pub sender_timeout: Duration,
    /// Only join this session id.
    pub session: Option<u32>,
    pub report_every: Duration,
    /// Local region for protocols with local repair (`dsp`); `None` = region 0.
    pub region: Option<u16>,
}

impl RecvConfig {
    pub fn new(group: SocketAddr, output: Output) -> Self {
        RecvConfig {
            sock: SocketOpts::new(group),
            output,
            node_id: None,
            keys: None,
            loss: LossConfig::default(),
            wait: None,
            sender_timeout: Duration::from_secs(15),
            session: None,
            report_every: Duration::from_millis(250),
            region: None,
        }
    }
}

/// Progress callbacks.
pub trait RecvObserver {
    fn session(&mut self, _session: u32, _sender: SocketAddr) {}
    fn file(&mut self, _name: &str, _size: Option<u64>) {}
    fn progress(&mut self, _bytes_in_file: u64) {}
    fn file_done(&mut self, _name: &str, _ok: bool, _why: Option<&str>) {}
}

pub struct NoObserver;
impl RecvObserver for NoObserver {}

/// One received file.
#[derive(Debug, Clone, Serialize)]
pub struct FileResult {
    pub name: String,
    pub bytes: u64,
    pub ok: bool,
    pub path: Option<String>,
    pub reason: Option<String>,
    /// A late joiner's stream (`xtp`, `rmcast send --late-join`): only the bytes from its
    /// join point on, kept as `<name>.partial` and not verified against the sender's digest.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// For a partial stream: the offset in the sender's stream of its first byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starts_at: Option<u64>,
}

/// The receiver's summary.
#[derive(Debug, Clone, Serialize)]
pub struct RecvReport {
    pub node: u32,
    pub session: Option<u32>,
    pub sender: Option<String>,
    pub files: Vec<FileResult>,
    pub bytes: u64,
    pub seconds: f64,
    pub goodput_mbit_s: f64,
    /// Retransmitted data packets received.
    pub repairs_received: u64,
    /// `dsp`: of those, the ones re-multicast locally by the region's designated receiver.
    pub local_repairs_received: u64,
    /// `dsp`: blocks this receiver re-multicast on its region's local group (designated).
    pub local_repairs_sent: u64,
    /// `dsp`: region, role (`designated` or `member`) and local group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_group: Option<String>,
    pub duplicates: u64,
    pub acks_sent: u64,
    /// `completed`, `partial` (a late joiner that received the stream from its join point
    /// to the end), `evicted`, `failed`, `sender-silent`, `not-admitted`, `no-session`,
    /// `interrupted`.
    pub outcome: &'static str,
    /// Admitted while the stream ran (`rmcast send --late-join`).
    pub joined_late: bool,
    pub reason: Option<String>,
    pub driver: DriverStats,
    pub success: bool,
}

/// Failure reasons a receiver reports to the sender.
pub mod reason {
    pub const NONE: u8 = 0;
    pub const DIGEST: u8 = 1;
    pub const REFUSED_NAME: u8 = 2;
    pub const WRITE: u8 = 3;
    pub const MALFORMED: u8 = 4;
}

/// Text for a reason code.
pub fn reason_text(r: u8) -> &'static str {
    match r {
        reason::DIGEST => "digest mismatch",
        reason::REFUSED_NAME => "file name refused or target exists",
        reason::WRITE => "could not write the file",
        reason::MALFORMED => "malformed application data",
        _ => "unspecified",
    }
}

struct Current {
    name: String,
    size: Option<u64>,
    digest: Option<[u8; 32]>,
    hasher: blake3::Hasher,
    written: u64,
    incoming: Option<Incoming>,
    failed: Option<(u8, String)>,
    /// A late joiner's suffix of the stream (no digest to check).
    partial: bool,
    starts_at: Option<u64>,
}

struct Sink {
    output: Output,
    current: Option<Current>,
    results: Vec<FileResult>,
    finished: bool,
    failure: Option<u8>,
    bytes: u64,
    tag: u64,
    /// A late joiner's stream name until its first data: what it gets is kept as
    /// `<name>.partial`.
    late: Option<String>,
}

impl Sink {
    fn new(output: Output) -> Self {
        Sink {
            output,
            current: None,
            results: Vec::new(),
            finished: false,
            failure: None,
            bytes: 0,
            tag: 0,
            late: None,
        }
    }

    /// A late joiner's first delivery: open `<name>.partial` for the suffix it gets.
    fn begin_partial(&mut self, obs: &mut dyn RecvObserver) {
        if self.current.is_some() || !self.results.is_empty() {
            return;
        }
        let Some(name) = self.late.take() else {
            return;
        };
        self.start(&format!("{name}.partial"), None, None, obs);
        if let Some(c) = self.current.as_mut() {
            c.partial = true;
        }
    }

    fn fail_file(&mut self, code: u8, why: String) {
        if let Some(c) = self.current.as_mut() {
            if c.failed.is_none() {
                c.failed = Some((code, why));
                c.incoming = None;
            }
        }
    }

    fn start(
        &mut self,
        name: &str,
        size: Option<u64>,
        digest: Option<[u8; 32]>,
        obs: &mut dyn RecvObserver,
    ) {
        if self.current.is_some() {
            self.fail_file(
                reason::MALFORMED,
                "a new file began before this one ended".into(),
            );
            self.close(obs);
        }
        obs.file(name, size);
        self.tag += 1;
        let mut c = Current {
            name: name.to_string(),
            size,
            digest,
            hasher: blake3::Hasher::new(),
            written: 0,
            incoming: None,
            failed: None,
            partial: false,
            starts_at: None,
        };
        if let Output::Dir { path, force } = &self.output {
            match check_target(path, name, *force) {
                Err(e) => c.failed = Some((reason::REFUSED_NAME, format!("refused {name:?}: {e}"))),
                Ok(_) => {
                    match Incoming::create(path, name, *force, self.tag ^ rand::random::<u64>()) {
                        Ok(i) => c.incoming = Some(i),
                        Err(e) => {
                            c.failed = Some((
                                reason::WRITE,
                                format!("cannot create a file in {}: {e}", path.display()),
                            ))
                        }
                    }
                }
            }
        }
        self.current = Some(c);
        if size == Some(0) {
            self.close(obs);
        }
    }

    fn data(&mut self, d: &[u8], obs: &mut dyn RecvObserver) {
        self.begin_partial(obs);
        let stdout = matches!(self.output, Output::Stdout);
        let Some(c) = self.current.as_mut() else {
            self.failure = Some(reason::MALFORMED);
            return;
        };
        c.hasher.update(d);
        c.written += d.len() as u64;
        self.bytes += d.len() as u64;
        if c.size.is_some_and(|s| c.written > s) {
            self.fail_file(
                reason::MALFORMED,
                "more data than the announced size".into(),
            );
            return;
        }
        if c.failed.is_none() {
            let r = if stdout {
                std::io::stdout().lock().write_all(d)
            } else if let Some(i) = c.incoming.as_mut() {
                i.write(d)
            } else {
                Ok(())
            };
            if let Err(e) = r {
                let name = c.name.clone();
                self.fail_file(reason::WRITE, format!("write {name}: {e}"));
            }
        }
        if let Some(c) = self.current.as_ref() {
            obs.progress(c.written);
            if c.size == Some(c.written) {
                self.close(obs);
            }
        }
    }

    fn end_stream(&mut self, size: u64, digest: [u8; 32], obs: &mut dyn RecvObserver) {
        self.begin_partial(obs);
        match self.current.as_mut() {
            Some(c) if c.size.is_none() && c.partial => {
                // A suffix: its offset follows from the stream's length; its digest cannot
                // be checked against the whole stream's.
                match size.checked_sub(c.written) {
                    Some(at) => c.starts_at = Some(at),
                    None => {
                        c.failed.get_or_insert((
                            reason::MALFORMED,
                            format!("received {} bytes of a {size}-byte stream", c.written),
                        ));
                    }
                }
                c.size = Some(c.written);
                self.close(obs);
            }
            Some(c) if c.size.is_none() => {
                if c.written != size {
                    c.failed.get_or_insert((
                        reason::MALFORMED,
                        format!(
                            "stream length {} differs from the announced {size}",
                            c.written
                        ),
                    ));
                }
                c.size = Some(size);
                c.digest = Some(digest);
                self.close(obs);
            }
            _ => self.failure = Some(reason::MALFORMED),
        }
    }

    fn close(&mut self, obs: &mut dyn RecvObserver) {
        let Some(mut c) = self.current.take() else {
            return;
        };
        let got = *c.hasher.finalize().as_bytes();
        if c.failed.is_none() && !c.partial && Some(got) != c.digest {
            c.failed = Some((
                reason::DIGEST,
                format!(
                    "{}: BLAKE3 digest mismatch; the partial file was removed",
                    c.name
                ),
            ));
        }
        if matches!(self.output, Output::Stdout) {
            let _ = std::io::stdout().lock().flush();
        }
        let mut path = None;
        if c.failed.is_none() {
            if let Some(i) = c.incoming.take() {
                match i.commit() {
                    Ok(p) => path = Some(p.display().to_string()),
                    Err(e) => c.failed = Some((reason::WRITE, format!("{}: {e}", c.name))),
                }
            }
        }
        let ok = c.failed.is_none();
        let why = match (&c.failed, c.starts_at) {
            (Some((_, w)), _) => Some(w.clone()),
            (None, Some(at)) if c.partial => Some(format!(
                "partial: joined the stream late, holds its bytes from offset {at} on; not verified"
            )),
            _ => None,
        };
        if let Some((code, _)) = &c.failed {
            self.failure.get_or_insert(*code);
        }
        obs.file_done(&c.name, ok, why.as_deref());
        self.results.push(FileResult {
            name: c.name,
            bytes: c.written,
            ok,
            path,
            reason: why,
            partial: c.partial,
            starts_at: c.starts_at,
        });
    }

    fn handle(&mut self, msg: &[u8], obs: &mut dyn RecvObserver) {
        match Frame::decode(msg) {
            Ok(Frame::File { size, digest, name }) => {
                self.start(name, Some(size), Some(digest), obs)
            }
            Ok(Frame::Data(d)) => self.data(d, obs),
            Ok(Frame::Stream { name }) => {
                // A late joiner that caught the stream's start gets all of it.
                self.late = None;
                self.start(name, None, None, obs)
            }
            Ok(Frame::EndOfStream { size, digest }) => self.end_stream(size, digest, obs),
            Ok(Frame::Finish { files }) => {
                if self.current.is_some() {
                    self.fail_file(reason::MALFORMED, "the transfer ended inside a file".into());
                    self.close(obs);
                }
                if files as usize != self.results.len() {
                    self.failure.get_or_insert(reason::MALFORMED);
                }
                self.finished = true;
            }
            Err(_) => self.failure = Some(reason::MALFORMED),
        }
    }

    fn state(&self) -> (ReportState, u8) {
        match (self.finished, self.failure) {
            (_, Some(r)) if self.finished => (ReportState::Failed, r),
            (true, None) => (ReportState::Complete, reason::NONE),
            _ => (ReportState::Receiving, reason::NONE),
        }
    }
}

struct Joined {
    session: u32,
    sender_node: u32,
    sender_addr: SocketAddr,
    admitted: bool,
    /// `None` until the announce says enough to build it (`dsp`: the running announce).
    agent: Option<Box<dyn Agent>>,
    dsp: Option<DspPlace>,
    last_from_sender: Time,
    /// Joining a running `xtp` stream late (the sender offered it); protocol packets are
    /// ignored until the sender admits it.
    late: bool,
}

/// The stream a running `xtp` session admits late joiners to, if it does.
fn late_offer(protocol: u8, params: &[u8]) -> Result<Option<String>, NetError> {
    if Family::from_u8(protocol) != Ok(Family::Xtp) {
        return Ok(None);
    }
    Ok(agents::XtpParams::decode(params)?
        .filter(|p| p.late_join)
        .map(|p| p.stream))
}

impl Joined {
    /// Whether a protocol packet from `h`/`from` belongs to our session: from the sender, or
    /// (`dsp`) from a peer of our region.
    fn accepts(&self, h: &Header, from: SocketAddr) -> bool {
        if h.session != self.session {
            return false;
        }
        if h.source == self.sender_node {
            return from.ip() == self.sender_addr.ip();
        }
        self.dsp.as_ref().is_some_and(|d| {
            d.peers
                .iter()
                .any(|(n, a)| *n == h.source && a.ip() == from.ip())
        })
    }

    /// Build the agent from the sender's announce `m`, if it says enough (and its `dsp`
    /// place); returns the local group to join, if any.
    fn build(
        &mut self,
        m: &session::Message<'_>,
        node: u32,
        group: SocketAddr,
    ) -> Result<Option<SocketAddr>, NetError> {
        let Some(a) = Announced::of(m) else {
            return Ok(None);
        };
        let built = agents::receiver_agent(a, node, self.session, self.sender_node, group)?;
        let Some((agent, place)) = built else {
            return Ok(None);
        };
        self.agent = Some(agent);
        self.dsp = place;
        let Some(d) = self.dsp.as_ref() else {
            return Ok(None);
        };
        tracing::info!(
            region = d.region,
            designated = d.designated_node,
            local_group = %d.local_group,
            "dsp: {} of region {}",
            if d.designated { "designated receiver" } else { "member" },
            d.region
        );
        Ok((!d.designated).then_some(d.local_group))
    }

    /// `dsp`: a designated receiver stops waiting for members the sender evicted.
    fn forget_evicted(&mut self, now: Time, params: &[u8]) {
        let (Some(d), Some(a)) = (self.dsp.as_ref(), self.agent.as_mut()) else {
            return;
        };
        if !d.designated || params.is_empty() {
            return;
        }
        let Ok(p) = DspParams::decode(params) else {
            return;
        };
        for e in p
            .entries
            .iter()
            .filter(|e| e.role == DspRole::Evicted && e.region == d.region)
        {
            a.remove_receiver(now, NodeId(e.node));
        }
    }

    /// Where a transmit of the agent goes.
    fn route(&self, dest: Dest, group: SocketAddr) -> Option<SocketAddr> {
        match dest {
            Dest::Node(n) if n.0 == self.sender_node => Some(self.sender_addr),
            Dest::Node(n) => self
                .dsp
                .as_ref()
                .and_then(|d| d.peers.iter().find(|(p, _)| *p == n.0).map(|(_, a)| *a)),
            Dest::Group(GroupId(0)) => Some(group),
            Dest::Group(_) => self.dsp.as_ref().map(|d| d.local_group),
        }
    }
}

fn session_packet(session: u32, node: u32, m: session::Message<'_>) -> Vec<u8> {
    Packet::to_vec(
        Envelope {
            session,
            source: node,
            flags: 0,
        },
        &Message::Session(m),
    )
    .unwrap_or_default()
}

/// SIGINT/SIGTERM end the receive loop cleanly, so an unfinished file is removed rather than
/// left behind.
mod interrupt {
    use std::sync::atomic::{AtomicBool, Ordering};

    static RAISED: AtomicBool = AtomicBool::new(false);

    extern "C" fn on_signal(_: libc::c_int) {
        RAISED.store(true, Ordering::SeqCst);
    }

    pub fn install() {
        let handler = on_signal as extern "C" fn(libc::c_int);
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            libc::signal(libc::SIGINT, handler as libc::sighandler_t);
            libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
        }
    }

    pub fn raised() -> bool {
        RAISED.load(Ordering::SeqCst)
    }
}

/// Run a receiver until its session ends.
pub fn receive(cfg: RecvConfig, obs: &mut dyn RecvObserver) -> Result<RecvReport, NetError> {
    check_group(cfg.sock.group)?;
    if let Some(r) = cfg.region {
        agents::local_group(cfg.sock.group, r)?;
    }
    let mut gsock = mio::net::UdpSocket::from_std(group_socket(&cfg.sock)?);
    let mut usock = mio::net::UdpSocket::from_std(unicast_socket(&cfg.sock)?);
    // The output directory is created only once the sockets are up, so a setup error leaves
    // nothing behind.
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
    let mut poll = Poll::new().map_err(|e| NetError::io("create poll", e))?;
    poll.registry()
        .register(&mut gsock, GROUP, Interest::READABLE)
        .map_err(|e| NetError::io("register socket", e))?;
    poll.registry()
        .register(&mut usock, UNI, Interest::READABLE)
        .map_err(|e| NetError::io("register socket", e))?;
    let mut events = Events::with_capacity(64);
    let clock = Clock::new();
    let node = cfg.node_id.unwrap_or_else(|| loop {
        let v: u32 = rand::random();
        if v != 0 {
            break v;
        }
    });
    let mut wire = Wire::new(cfg.keys.clone(), cfg.loss.clone());
    let mut sink = Sink::new(cfg.output.clone());
    let mut joined: Option<Joined> = None;
    let mut buf = vec![0u8; RECV_BUF];
    let mut next_report = Time::ZERO;
    let mut next_join = Time::ZERO;
    let mut repairs = 0u64;
    let mut local_repairs = 0u64;
    let mut lsock: Option<mio::net::UdpSocket> = None;
    let mut open_local: Option<SocketAddr> = None;
    let mut first_data: Option<Time> = None;
    let mut done_at: Option<Time> = None;
    let mut warned_sealed = false;
    let mut end: Option<(&'static str, Option<String>)> = None;

    interrupt::install();
    while end.is_none() {
        let now = clock.now();
        if interrupt::raised() {
            end = Some((
                "interrupted",
                Some("interrupted by a signal; the unfinished file was removed".into()),
            ));
            break;
        }
        // Timers.
        if let Some(j) = joined.as_mut() {
            if let Some(a) = j.agent.as_mut() {
                if a.poll_timeout().is_some_and(|t| t <= now) {
                    a.handle_timeout(now);
                }
            }
            if now.saturating_since(j.last_from_sender) >= cfg.sender_timeout {
                end = Some(if sink.finished {
                    (
                        "completed",
                        Some("the sender went silent after the transfer".into()),
                    )
                } else {
                    (
                        "sender-silent",
                        Some(format!(
                        "no packet from the sender for {:.0?}: it stopped or the network failed",
                        cfg.sender_timeout
                    )),
                    )
                });
                break;
            }
        } else if cfg
            .wait
            .is_some_and(|w| now.saturating_since(Time::ZERO) >= w)
        {
            end = Some(("no-session", Some(format!(
                "no session announced on {} within {:.0?}: start `rmcast send` or check --group/--interface",
                cfg.sock.group,
                cfg.wait.unwrap_or_default()
            ))));
            break;
        }
        if wire.looks_sealed && !warned_sealed {
            warned_sealed = true;
            tracing::warn!("packets on the group carry an authentication trailer: pass --key-file (and --encrypt if the sender uses it)");
        }
        // Agent output and events.
        if let Some(j) = joined.as_mut() {
            while let Some(ev) = j.agent.as_mut().and_then(|a| a.poll_event()) {
                if let Event::Delivered { data, .. } = ev {
                    sink.handle(&data, obs);
                    if sink.finished && done_at.is_none() {
                        done_at = Some(now);
                        next_report = Time::ZERO;
                    }
                }
            }
            while let Some(t) = j.agent.as_mut().and_then(|a| a.poll_transmit()) {
                let Some(to) = j.route(t.dest, cfg.sock.group) else {
                    continue;
                };
                // A full socket buffer drops the feedback like a lossy network would.
                let _ = wire.send(&usock, to, &t.payload, true);
            }
            if j.admitted && now >= next_report {
                let (delivered, duplicates) = j
                    .agent
                    .as_ref()
                    .map_or((0, 0), |a| (a.stats().delivered, a.stats().duplicates));
                let (state, why) = sink.state();
                let pkt = session_packet(
                    j.session,
                    node,
                    session::Message::Report {
                        state,
                        reason: why,
                        bytes: sink.bytes,
                        messages: delivered,
                        repairs,
                        duplicates,
                        rejected: wire.stats.rejected(),
                    },
                );
                let _ = wire.send(&usock, j.sender_addr, &pkt, false);
                next_report = now + cfg.report_every;
            }
            if !j.admitted && now >= next_join {
                let pkt = session_packet(
                    j.session,
                    node,
                    session::Message::Join { region: cfg.region },
                );
                let _ = wire.send(&usock, j.sender_addr, &pkt, false);
                next_join = now + Duration::from_millis(200);
            }
        }
        let mut deadline = now + Duration::from_millis(100);
        if let Some(j) = joined.as_ref() {
            if let Some(t) = j.agent.as_ref().and_then(|a| a.poll_timeout()) {
                deadline = deadline.min(t);
            }
            if j.admitted {
                deadline = deadline.min(next_report);
            } else {
                deadline = deadline.min(next_join);
            }
        }
        if let Err(e) = poll.poll(&mut events, Some(clock.until(deadline))) {
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(NetError::io("poll", e));
            }
        }
        let now = clock.now();
        for sock in [Some(&gsock), Some(&usock), lsock.as_ref()]
            .into_iter()
            .flatten()
        {
            loop {
                let (n, from) = match sock.recv_from(&mut buf) {
                    Ok(x) => x,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(_) => break,
                };
                let Some((h, len)) = wire.open(&mut buf[..n]) else {
                    continue;
                };
                let pkt = &buf[..len];
                if h.family == Family::Session {
                    let Ok(p) = Packet::decode(pkt) else {
                        wire.stats.rejected_malformed += 1;
                        continue;
                    };
                    let Message::Session(m) = p.message else {
                        continue;
                    };
                    match (&mut joined, m) {
                        (
                            None,
                            m @ session::Message::Announce {
                                phase,
                                members,
                                protocol,
                                params,
                                ..
                            },
                        ) => {
                            if cfg.session.is_some_and(|s| s != h.session) {
                                wire.stats.rejected_stranger += 1;
                                continue;
                            }
                            let admitted = session::members(members).any(|x| x == node);
                            let offer = if phase == Phase::Running && !admitted {
                                late_offer(protocol, params)?
                            } else {
                                None
                            };
                            if let Some(name) = &offer {
                                tracing::info!(
                                    stream = %name,
                                    "joining a running stream late: from the join point on, \
                                     without back-fill"
                                );
                            } else if phase == Phase::Running && !admitted {
                                end = Some(("not-admitted", Some(format!(
                                    "session {:08x} from {from} started without this receiver: start `rmcast recv` before `rmcast send`, or raise the sender's --receivers",
                                    h.session
                                ))));
                                break;
                            }
                            obs.session(h.session, from);
                            let mut j = Joined {
                                session: h.session,
                                sender_node: h.source,
                                sender_addr: from,
                                admitted,
                                agent: None,
                                dsp: None,
                                last_from_sender: now,
                                late: offer.is_some(),
                            };
                            sink.late = offer;
                            open_local = j.build(&m, node, cfg.sock.group)?;
                            joined = Some(j);
                            next_join = Time::ZERO;
                        }
                        (Some(j), m)
                            if h.session == j.session
                                && h.source == j.sender_node
                                && from.ip() == j.sender_addr.ip() =>
                        {
                            j.last_from_sender = now;
                            match m {
                                session::Message::Announce {
                                    members,
                                    params,
                                    protocol,
                                    ..
                                } => {
                                    let still_open = j.late
                                        && late_offer(protocol, params).ok().flatten().is_some();
                                    if !j.admitted && session::members(members).any(|x| x == node) {
                                        j.admitted = true;
                                        next_report = Time::ZERO;
                                    }
                                    if j.admitted && j.agent.is_none() {
                                        open_local = j.build(&m, node, cfg.sock.group)?;
                                    }
                                    j.forget_evicted(now, params);
                                    if let session::Message::Announce {
                                        phase: Phase::Running,
                                        ..
                                    } = m
                                    {
                                        if !j.admitted && !still_open {
                                            end = Some(("not-admitted", Some(format!(
                                                "session {:08x} started without this receiver: start `rmcast recv` before `rmcast send`",
                                                j.session
                                            ))));
                                        }
                                    }
                                }
                                session::Message::End { outcomes } => {
                                    let mine = session::outcomes(outcomes)
                                        .find(|(n, _)| *n == node)
                                        .map(|(_, o)| o);
                                    end = Some(match mine {
                                        Some(Outcome::Completed) => ("completed", None),
                                        Some(Outcome::Evicted) => ("evicted", Some("the sender evicted this receiver (it was silent too long)".into())),
                                        Some(Outcome::Failed) | None if sink.finished => ("completed", None),
                                        _ => ("failed", Some("the sender ended the session before this receiver had everything".into())),
                                    });
                                }
                                _ => wire.stats.rejected_stranger += 1,
                            }
                        }
                        _ => wire.stats.rejected_stranger += 1,
                    }
                    if end.is_some() {
                        break;
                    }
                    continue;
                }
                // Protocol packets: only from our sender, only once we know the session.
                let Some(j) = joined.as_mut() else {
                    wire.stats.rejected_stranger += 1;
                    continue;
                };
                if !j.accepts(&h, from) {
                    wire.stats.rejected_stranger += 1;
                    continue;
                }
                if h.source == j.sender_node {
                    j.last_from_sender = now;
                }
                // dsp: data before the running announce named our role is recovered later.
                let Some(agent) = j.agent.as_mut() else {
                    continue;
                };
                // A late joiner starts at the first data after the sender admitted it.
                if j.late && !j.admitted {
                    continue;
                }
                if wire.drop_rx() {
                    continue;
                }
                if h.class() == PacketClass::RepairData {
                    repairs += 1;
                    if h.source != j.sender_node {
                        local_repairs += 1;
                    }
                }
                if h.class().is_data() && first_data.is_none() {
                    first_data = Some(now);
                }
                agent.handle_packet(now, NodeId(h.source), pkt);
            }
            if end.is_some() {
                break;
            }
        }
        // dsp member: join the region's local group, where its designated receiver repairs.
        if let Some(local) = open_local.take() {
            let mut o = cfg.sock.clone();
            o.group = local;
            o.source = None;
            let mut s = mio::net::UdpSocket::from_std(group_socket(&o)?);
            poll.registry()
                .register(&mut s, LOCAL, Interest::READABLE)
                .map_err(|e| NetError::io("register socket", e))?;
            tracing::info!(%local, "joined the region's local group");
            lsock = Some(s);
        }
    }
    // Anything unfinished is removed (Incoming's drop), never left looking complete.
    sink.current = None;
    let (outcome, mut reason) = end.unwrap_or(("failed", None));
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
    let end_t = done_at.unwrap_or_else(|| clock.now());
    let seconds = first_data.map_or(0.0, |f| end_t.saturating_since(f).as_secs_f64());
    let stats = joined
        .as_ref()
        .and_then(|j| j.agent.as_ref())
        .map(|a| a.stats().clone())
        .unwrap_or_default();
    let dsp = joined.as_ref().and_then(|j| j.dsp.as_ref());
    Ok(RecvReport {
        node,
        session: joined.as_ref().map(|j| j.session),
        sender: joined.as_ref().map(|j| j.sender_addr.to_string()),
        files: sink.results.clone(),
        bytes: sink.bytes,
        seconds,
        goodput_mbit_s: if seconds > 0.0 {
            sink.bytes as f64 * 8.0 / seconds / 1e6
        } else {
            0.0
        },
        repairs_received: repairs,
        local_repairs_received: local_repairs,
        local_repairs_sent: if dsp.is_some() { stats.repairs_sent } else { 0 },
        region: dsp.map(|d| d.region),
        role: dsp.map(|d| if d.designated { "designated" } else { "member" }),
        local_group: dsp.map(|d| d.local_group.to_string()),
        duplicates: stats.duplicates,
        acks_sent: stats.control_sent,
        outcome,
        reason,
        driver: wire.stats.clone(),
        success: (outcome == "completed" || outcome == "partial") && verified,
        joined_late: joined.as_ref().is_some_and(|j| j.late),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink(dir: &std::path::Path, late: Option<&str>) -> Sink {
        let mut s = Sink::new(Output::Dir {
            path: dir.to_path_buf(),
            force: false,
        });
        s.late = late.map(str::to_string);
        s
    }

    fn feed(s: &mut Sink, frames: &[Frame<'_>]) {
        for f in frames {
            s.handle(&f.encode(), &mut NoObserver);
        }
    }

    #[test]
    fn a_late_joiner_keeps_its_suffix_as_a_partial_file() {
        let dir = tempfile::tempdir().unwrap();
        let whole = b"0123456789abcdef";
        let digest = *blake3::hash(whole).as_bytes();
        let mut s = sink(dir.path(), Some("live"));
        // It joined after the stream header and the first 6 bytes.
        feed(
            &mut s,
            &[
                Frame::Data(&whole[6..10]),
                Frame::Data(&whole[10..]),
                Frame::EndOfStream { size: 16, digest },
                Frame::Finish { files: 1 },
            ],
        );
        assert_eq!(s.state(), (ReportState::Complete, reason::NONE));
        let f = &s.results[0];
        assert!(f.ok && f.partial, "{f:?}");
        assert_eq!((f.name.as_str(), f.starts_at), ("live.partial", Some(6)));
        assert_eq!(
            std::fs::read(dir.path().join("live.partial")).unwrap(),
            &whole[6..]
        );
        assert!(!dir.path().join("live").exists());
    }

    #[test]
    fn a_late_joiner_that_caught_the_start_verifies_the_whole_stream() {
        let dir = tempfile::tempdir().unwrap();
        let whole = b"0123456789";
        let mut s = sink(dir.path(), Some("live"));
        feed(
            &mut s,
            &[
                Frame::Stream { name: "live" },
                Frame::Data(whole),
                Frame::EndOfStream {
                    size: 10,
                    digest: *blake3::hash(whole).as_bytes(),
                },
                Frame::Finish { files: 1 },
            ],
        );
        assert!(s.results[0].ok && !s.results[0].partial);
        assert_eq!(std::fs::read(dir.path().join("live")).unwrap(), whole);
        // Without late join, data before any header is malformed, never a file.
        let mut s = sink(dir.path(), None);
        feed(&mut s, &[Frame::Data(b"xyz")]);
        assert_eq!(s.failure, Some(reason::MALFORMED));
        assert!(s.results.is_empty());
    }
}
