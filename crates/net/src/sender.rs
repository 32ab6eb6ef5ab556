//! `rmcast send`: gather receivers, then drive a sender agent over a UDP socket.

use crate::agents::{self, DspOpts, PrmpOpts, SenderSettings};
use crate::clock::Clock;
use crate::endpoint::{protocol_family, DriverStats, Wire, RECV_BUF};
use crate::frame::{Frame, DATA_OVERHEAD};
use crate::loss::LossConfig;
use crate::secure::Keys;
use crate::socket::{check_group, unicast_socket, SocketOpts};
use crate::NetError;
use bytes::Bytes;
use mio::{Events, Interest, Poll, Token, Waker};
use rmcast_proto::pacing::Pacer;
use rmcast_proto::{Dest, Event, NodeId, Time, Transmit};
use rmcast_wire::session::{self, DspEntry, DspRole, Outcome, Phase, ReportState};
use rmcast_wire::{Envelope, Family, Message, Packet, HEADER_LEN, MAX_DATAGRAM};
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver as Chan, TryRecvError};
use std::sync::Arc;
use std::time::Duration;

const SOCK: Token = Token(0);
const WAKE: Token = Token(1);

/// Who the sender waits for before it starts.
#[derive(Debug, Clone)]
pub enum Expect {
    /// The first N receivers that join.
    Count(usize),
    /// Exactly these node ids.
    List(Vec<u32>),
    /// Whoever joins within this time (at least one).
    Discover(Duration),
}

/// What to send.
#[derive(Debug, Clone)]
pub enum Source {
    Files(Vec<PathBuf>),
    /// Standard input, announced under this name.
    Stdin(String),
}

/// Sender settings.
#[derive(Debug, Clone)]
pub struct SendConfig {
    pub sock: SocketOpts,
    pub protocol: String,
    pub expect: Expect,
    /// Give up if the expected receivers have not joined within this time.
    pub join_wait: Duration,
    /// Evict a receiver silent for this long.
    pub evict_after: Duration,
    /// Retransmission timeout handed to the agent.
    pub rto: Duration,
    /// Largest datagram on the wire, header and trailer included.
    pub datagram_size: usize,
    /// Pacing rate in bits per second; 0 = unlimited.
    pub rate_bps: u64,
    pub keys: Option<Keys>,
    pub loss: LossConfig,
    pub node_id: Option<u32>,
    pub session: Option<u32>,
    /// After the agent completes, how long to wait for receivers' final reports.
    pub final_wait: Duration,
    /// Random ACK delay bound announced to receivers (saw §2.5.1).
    pub ack_delay: Duration,
    /// Window for windowed protocols (`bap`; `xtp`: packets).
    pub window: u16,
    /// `xtp`: bytes per user write (one agent message); `None` = one datagram's worth.
    pub write_size: Option<usize>,
    /// `xtp`: the thesis's settings (block on acknowledgment per write, go-back-N, uncapped
    /// WTIMER back-off) instead of the default selective repeat with capped back-off, an SREQ
    /// every 8 packets and a sliding window of `window` packets.
    pub xtp_thesis: bool,
    /// `xtp`: send data and control by unicast to the one receiver (the session layer's
    /// announce still goes to the group, where receivers find the session). Exactly one
    /// receiver: a second JOIN while gathering is refused.
    pub unicast: bool,
    /// `xtp` streams: admit receivers that join while the transfer runs. They receive from
    /// their join point on, without back-fill (the xtp sender's `accept_joins`).
    pub late_join: bool,
    /// `prmp`: epoch, response rate, IPG, MTR, silent polls.
    pub prmp: PrmpOpts,
    /// `dsp`: assumed RTD, `r_f`, status interval, local RTD.
    pub dsp: DspOpts,
}

impl SendConfig {
    pub fn new(group: SocketAddr) -> Self {
        SendConfig {
            sock: SocketOpts::new(group),
            protocol: "saw".into(),
            expect: Expect::Discover(Duration::from_secs(3)),
            join_wait: Duration::from_secs(60),
            evict_after: Duration::from_secs(5),
            rto: Duration::from_millis(20),
            datagram_size: 60_000,
            rate_bps: 1_000_000_000,
            keys: None,
            loss: LossConfig::default(),
            node_id: None,
            session: None,
            final_wait: Duration::from_secs(5),
            ack_delay: Duration::ZERO,
            window: 16,
            write_size: None,
            xtp_thesis: false,
            unicast: false,
            late_join: false,
            prmp: PrmpOpts::default(),
            dsp: DspOpts::default(),
        }
    }
}

/// Progress callbacks (the command line draws bars with them).
pub trait SendObserver {
    fn joined(&mut self, _node: u32, _addr: SocketAddr) {}
    fn started(&mut self, _members: &[u32], _total: Option<u64>) {}
    /// A receiver reported `bytes` delivered.
    fn progress(&mut self, _node: u32, _bytes: u64) {}
    /// Bytes acknowledged by every receiver so far.
    fn acked(&mut self, _bytes: u64) {}
    fn evicted(&mut self, _node: u32, _why: &str) {}
    fn finished(&mut self) {}
}

/// An observer that ignores everything.
pub struct NoObserver;
impl SendObserver for NoObserver {}

/// One file as announced.
#[derive(Debug, Clone, Serialize)]
pub struct FileInfo {
    pub name: String,
    pub size: u64,
    pub blake3: String,
}

/// One receiver in the sender's summary.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiverSummary {
    pub node: u32,
    pub addr: String,
    /// `completed`, `evicted`, `failed` or `unconfirmed`.
    pub outcome: &'static str,
    pub reason: Option<String>,
    /// Application bytes the receiver reported delivered.
    pub bytes: u64,
    pub messages: u64,
    /// Retransmitted data packets the receiver received (for `saw`, retransmissions are
    /// triggered by its missing ACK: this is what it asked for, implicitly).
    pub repairs_received: u64,
    pub duplicates: u64,
    /// Packets the receiver refused (authentication, malformed, strangers).
    pub rejected: u64,
    /// `dsp`: the receiver's region and role (`designated` or `member`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<&'static str>,
    /// Admitted while the stream ran (`--late-join`): it holds the stream from its join
    /// point on, not the whole of it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub joined_late: bool,
}

/// The sender's final summary.
#[derive(Debug, Clone, Serialize)]
pub struct SendReport {
    pub session: u32,
    pub node: u32,
    pub protocol: String,
    pub group: String,
    pub files: Vec<FileInfo>,
    pub bytes: u64,
    pub seconds: f64,
    /// Application bytes per second over the transfer phase, in Mbit/s.
    pub goodput_mbit_s: f64,
    pub receivers: Vec<ReceiverSummary>,
    pub agent: AgentCounters,
    pub driver: DriverStats,
    /// Protocol datagrams the driver addressed to the group, and to single receivers
    /// (`xtp --unicast` sends none to the group).
    pub protocol_to_group: u64,
    pub protocol_unicast: u64,
    pub all_completed: bool,
}

/// The agent's counters that matter in a summary.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AgentCounters {
    pub data_sent: u64,
    pub repairs_sent: u64,
    pub timeouts: u64,
    pub messages_completed: u64,
    pub messages_failed: u64,
}

#[derive(Debug)]
struct Member {
    node: u32,
    addr: SocketAddr,
    last_heard: Time,
    evicted: Option<String>,
    final_state: Option<(ReportState, u8)>,
    bytes: u64,
    messages: u64,
    repairs: u64,
    duplicates: u64,
    rejected: u64,
    /// Region from its JOIN (`dsp`).
    region: u16,
    /// Admitted during the transfer (`--late-join`).
    late: bool,
}

impl Member {
    fn new(node: u32, addr: SocketAddr, now: Time, region: u16, late: bool) -> Self {
        Member {
            node,
            addr,
            last_heard: now,
            evicted: None,
            final_state: None,
            bytes: 0,
            messages: 0,
            repairs: 0,
            duplicates: 0,
            rejected: 0,
            region,
            late,
        }
    }
}

enum Chunk {
    Msg(Bytes, u64),
    Err(String),
}

/// Compute the BLAKE3 digest and size of a file, refusing unreadable files with a clear line.
fn digest_file(p: &PathBuf) -> Result<(u64, [u8; 32]), NetError> {
    let mut f = std::fs::File::open(p).map_err(|e| {
        NetError::setup(format!(
            "cannot read {}: {e}; check the path and permissions",
            p.display()
        ))
    })?;
    let meta = f
        .metadata()
        .map_err(|e| NetError::setup(format!("cannot stat {}: {e}", p.display())))?;
    if !meta.is_file() {
        return Err(NetError::setup(format!(
            "{} is not a regular file: give files, or `-` for standard input",
            p.display()
        )));
    }
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = f
            .read(&mut buf)
            .map_err(|e| NetError::io(format!("read {}", p.display()), e))?;
        if k == 0 {
            break;
        }
        h.update(&buf[..k]);
        n += k as u64;
    }
    Ok((n, *h.finalize().as_bytes()))
}

fn file_name(p: &std::path::Path) -> Result<String, NetError> {
    p.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .ok_or_else(|| {
            NetError::setup(format!(
                "{} has no usable UTF-8 file name: rename it",
                p.display()
            ))
        })
}

/// Start the thread that frames the source into application messages.
fn spawn_producer(
    source: Source,
    files: Vec<(PathBuf, FileInfo, [u8; 32])>,
    chunk: usize,
    waker: Arc<Waker>,
) -> Chan<Chunk> {
    let (tx, rx) = sync_channel::<Chunk>(256);
    std::thread::spawn(move || {
        let send = |c: Chunk| -> bool {
            let ok = tx.send(c).is_ok();
            let _ = waker.wake();
            ok
        };
        let pump = |r: &mut dyn Read, h: &mut blake3::Hasher| -> Result<u64, String> {
            let mut total = 0u64;
            loop {
                let mut buf = vec![0u8; chunk];
                let mut filled = 0;
                // Fill the chunk unless the source pauses (pipes return short reads).
                while filled < chunk {
                    match r.read(&mut buf[filled..]) {
                        Ok(0) => break,
                        Ok(k) => {
                            filled += k;
                            if filled >= chunk / 2 {
                                break;
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e.to_string()),
                    }
                }
                if filled == 0 {
                    return Ok(total);
                }
                h.update(&buf[..filled]);
                total += filled as u64;
                let m = Frame::Data(&buf[..filled]).encode();
                if !send(Chunk::Msg(m, filled as u64)) {
                    return Err("stopped".into());
                }
            }
        };
        match source {
            Source::Files(_) => {
                let count = files.len() as u32;
                for (path, info, digest) in files {
                    let head = Frame::File {
                        size: info.size,
                        digest,
                        name: &info.name,
                    }
                    .encode();
                    if !send(Chunk::Msg(head, 0)) {
                        return;
                    }
                    let mut f = match std::fs::File::open(&path) {
                        Ok(f) => f,
                        Err(e) => {
                            send(Chunk::Err(format!("open {}: {e}", path.display())));
                            return;
                        }
                    };
                    let mut h = blake3::Hasher::new();
                    match pump(&mut f, &mut h) {
                        Ok(n) if n == info.size && *h.finalize().as_bytes() == digest => {}
                        Ok(_) => {
                            send(Chunk::Err(format!(
                                "{} changed while it was being sent",
                                path.display()
                            )));
                            return;
                        }
                        Err(e) => {
                            send(Chunk::Err(format!("read {}: {e}", path.display())));
                            return;
                        }
                    }
                }
                send(Chunk::Msg(Frame::Finish { files: count }.encode(), 0));
            }
            Source::Stdin(name) => {
                if !send(Chunk::Msg(Frame::Stream { name: &name }.encode(), 0)) {
                    return;
                }
                let mut h = blake3::Hasher::new();
                let stdin = std::io::stdin();
                let mut lock = stdin.lock();
                match pump(&mut lock, &mut h) {
                    Ok(n) => {
                        let eos = Frame::EndOfStream {
                            size: n,
                            digest: *h.finalize().as_bytes(),
                        };
                        if send(Chunk::Msg(eos.encode(), 0)) {
                            send(Chunk::Msg(Frame::Finish { files: 1 }.encode(), 0));
                        }
                    }
                    Err(e) => {
                        send(Chunk::Err(format!("read standard input: {e}")));
                    }
                }
            }
        }
    });
    rx
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

fn nonzero_random() -> u32 {
    loop {
        let v: u32 = rand::random();
        if v != 0 {
            return v;
        }
    }
}

/// xtp splits a write over packets itself: its datagram carries a 32-byte header.
fn xtp_maxdata(cfg: &SendConfig) -> usize {
    cfg.datagram_size
        .saturating_sub(rmcast_wire::xtp::XTP_HEADER_LEN + cfg.keys.as_ref().map_or(0, |_| 24))
}

/// What the agent builder needs from the configuration.
fn settings(cfg: &SendConfig, node: u32, session: u32, rto: Duration) -> SenderSettings {
    SenderSettings {
        node,
        session,
        window: cfg.window,
        rto,
        xtp_thesis: cfg.xtp_thesis,
        xtp_maxdata: xtp_maxdata(cfg).max(1),
        xtp_unicast: cfg.unicast,
        xtp_accept_joins: cfg.late_join,
        rate_bps: cfg.rate_bps,
        datagram_size: cfg.datagram_size,
        prmp: cfg.prmp.clone(),
        dsp: cfg.dsp.clone(),
    }
}

/// Refuse `--unicast` and `--late-join` where they make no sense.
fn check_modes(cfg: &SendConfig, family: Family, source: &Source) -> Result<(), NetError> {
    if cfg.unicast {
        if family != Family::Xtp {
            return Err(NetError::setup(format!(
                "--unicast runs only with --protocol xtp ({} always multicasts)",
                cfg.protocol
            )));
        }
        let many = match &cfg.expect {
            Expect::Count(n) => *n > 1,
            Expect::List(l) => l.len() > 1,
            Expect::Discover(_) => false,
        };
        if many {
            return Err(NetError::setup(
                "--unicast sends to exactly one receiver: use --receivers 1 (or drop --unicast \
                 to multicast to several)",
            ));
        }
        if cfg.late_join {
            return Err(NetError::setup(
                "--late-join and --unicast exclude each other: a unicast session has exactly \
                 one receiver",
            ));
        }
    }
    if cfg.late_join {
        if family != Family::Xtp {
            return Err(NetError::setup(format!(
                "--late-join runs only with --protocol xtp ({} fixes its receivers at the start)",
                cfg.protocol
            )));
        }
        if !matches!(source, Source::Stdin(_)) {
            return Err(NetError::setup(
                "--late-join needs a stream (`-`, standard input): a late joiner of a file \
                 would miss its start",
            ));
        }
    }
    Ok(())
}

/// Run a whole send: gather receivers, transfer, collect final reports, say goodbye.
pub fn send(
    cfg: SendConfig,
    source: Source,
    obs: &mut dyn SendObserver,
) -> Result<SendReport, NetError> {
    check_group(cfg.sock.group)?;
    let family = protocol_family(&cfg.protocol)?;
    let sealing = cfg.keys.as_ref().map_or(0, |_| 24);
    let overhead = agents::data_overhead(family, 1) + sealing;
    let max_dgram = if cfg.sock.group.is_ipv6() {
        MAX_DATAGRAM.min(65_527 - 40)
    } else {
        MAX_DATAGRAM
    };
    if cfg.datagram_size <= overhead + 16 || cfg.datagram_size > max_dgram {
        return Err(NetError::setup(format!(
            "--datagram-size {} is out of range: choose between {} and {max_dgram}",
            cfg.datagram_size,
            overhead + 17
        )));
    }
    if cfg.window == 0 {
        return Err(NetError::setup("--window 0: give at least 1"));
    }
    check_modes(&cfg, family, &source)?;
    match family {
        Family::Prmp => {
            agents::prmp_config(&settings(&cfg, 1, 1, cfg.rto), &[])?;
        }
        Family::Tree => agents::check_dsp(&cfg.dsp)?,
        _ => {}
    }
    // xtp splits a write over packets itself: its datagram carries a 32-byte header.
    let xtp_maxdata = xtp_maxdata(&cfg);
    let mut xtp_chunk = None;
    if family == Family::Xtp {
        xtp_chunk = Some(match cfg.write_size {
            Some(w) if w > DATA_OVERHEAD && w <= rmcast_proto::xtp::MAX_WRITE => w - DATA_OVERHEAD,
            Some(w) => {
                return Err(NetError::setup(format!(
                    "--write-size {w} is out of range: choose between {} and {}",
                    DATA_OVERHEAD + 1,
                    rmcast_proto::xtp::MAX_WRITE
                )))
            }
            None => xtp_maxdata.saturating_sub(DATA_OVERHEAD).max(1),
        });
    }

    // Read and digest the files before touching the network.
    let mut files = Vec::new();
    let mut infos = Vec::new();
    if let Source::Files(paths) = &source {
        if paths.is_empty() {
            return Err(NetError::setup(
                "no files given: name files, or `-` for standard input",
            ));
        }
        for p in paths {
            let (size, digest) = digest_file(p)?;
            let info = FileInfo {
                name: file_name(p)?,
                size,
                blake3: blake3::Hash::from(digest).to_hex().to_string(),
            };
            infos.push(info.clone());
            files.push((p.clone(), info, digest));
        }
    }
    let total: Option<u64> = match &source {
        Source::Files(_) => Some(infos.iter().map(|i| i.size).sum()),
        Source::Stdin(_) => None,
    };

    let std_sock = unicast_socket(&cfg.sock)?;
    let mut sock = mio::net::UdpSocket::from_std(std_sock);
    let mut poll = Poll::new().map_err(|e| NetError::io("create poll", e))?;
    poll.registry()
        .register(&mut sock, SOCK, Interest::READABLE | Interest::WRITABLE)
        .map_err(|e| NetError::io("register socket", e))?;
    let waker =
        Arc::new(Waker::new(poll.registry(), WAKE).map_err(|e| NetError::io("create waker", e))?);
    let mut events = Events::with_capacity(64);
    let clock = Clock::new();
    let node = cfg.node_id.unwrap_or_else(nonzero_random);
    let session_id = cfg.session.unwrap_or_else(nonzero_random);
    let group = cfg.sock.group;
    let mut wire = Wire::new(cfg.keys.clone(), cfg.loss.clone());
    let security = match &cfg.keys {
        None => 0,
        Some(k) if k.encrypt => session::SECURITY_AUTH | session::SECURITY_ENCRYPT,
        Some(_) => session::SECURITY_AUTH,
    };
    let ack_delay_us = u32::try_from(cfg.ack_delay.as_micros()).unwrap_or(u32::MAX);
    // bap receivers ACK a full window at once, or on their ACK-delay timer when the window
    // does not fill (a loss, the end of the data): a quarter of the sender's timeout.
    // A retransmission timeout shorter than the time the pacer needs to let the datagrams in
    // flight out would fire before they left: stretch it to twice that time.
    let in_flight = if family == Family::Bap {
        u64::from(cfg.window.max(1))
    } else {
        1
    };
    let rto = match cfg.rate_bps / 8 {
        0 => cfg.rto,
        rate => cfg.rto.max(Duration::from_nanos(
            (2 * in_flight * cfg.datagram_size as u64).saturating_mul(1_000_000_000) / rate,
        )),
    };
    let ack_timeout_us = u32::try_from((rto / 4).as_micros()).unwrap_or(u32::MAX);
    let announce = |phase: Phase, members: &[u32], params: &[u8]| {
        let raw = session::encode_members(members);
        session_packet(
            session_id,
            node,
            session::Message::Announce {
                protocol: family as u8,
                phase,
                security,
                ack_delay_us,
                window: match family {
                    Family::Bap | Family::Prmp | Family::Tree => cfg.window,
                    _ => 0,
                },
                ack_timeout_us,
                members: &raw,
                params,
            },
        )
    };
    let mut buf = vec![0u8; RECV_BUF];

    // ---- Phase 1: gather receivers.
    let mut members: Vec<Member> = Vec::new();
    let gather_start = clock.now();
    let mut next_announce = Time::ZERO;
    loop {
        let now = clock.now();
        let ids: Vec<u32> = members.iter().map(|m| m.node).collect();
        let enough = match &cfg.expect {
            Expect::Count(n) => members.len() >= *n,
            Expect::List(l) => l.iter().all(|x| ids.contains(x)),
            Expect::Discover(d) => now.saturating_since(gather_start) >= *d && !members.is_empty(),
        };
        if enough {
            break;
        }
        if now.saturating_since(gather_start) >= cfg.join_wait {
            let want = match &cfg.expect {
                Expect::Count(n) => format!("{n}"),
                Expect::List(l) => format!("{}", l.len()),
                Expect::Discover(_) => "at least 1".into(),
            };
            return Err(NetError::Failed(format!(
                "only {} of {want} receivers joined within {:.0?}: start `rmcast recv --group {group}` \
                 on each receiver first, check --interface/--ttl, or raise --join-wait",
                members.len(),
                cfg.join_wait
            )));
        }
        if now >= next_announce {
            let pkt = announce(Phase::Gathering, &ids, &[]);
            match wire.send(&sock, group, &pkt, false) {
                Ok(_) => {}
                Err(e) => return Err(crate::error::classify("send to", group, e)),
            }
            next_announce = now + Duration::from_millis(100);
        }
        let wait = clock.until(next_announce).min(Duration::from_millis(100));
        poll.poll(&mut events, Some(wait))
            .map_err(|e| NetError::io("poll", e))?;
        loop {
            let (n, from) = match sock.recv_from(&mut buf) {
                Ok(x) => x,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => break,
            };
            let Some((h, len)) = wire.open(&mut buf[..n]) else {
                continue;
            };
            if h.family != Family::Session || h.session != session_id {
                wire.stats.rejected_stranger += 1;
                continue;
            }
            if let Ok(Packet {
                message: Message::Session(session::Message::Join { region }),
                ..
            }) = Packet::decode(&buf[..len])
            {
                let region = region.unwrap_or(0);
                let id = h.source;
                let wanted = match &cfg.expect {
                    Expect::List(l) => l.contains(&id),
                    Expect::Count(n) => members.len() < *n,
                    Expect::Discover(_) => true,
                };
                if id == node || id == 0 || !wanted {
                    wire.stats.rejected_stranger += 1;
                    continue;
                }
                if cfg.unicast && members.iter().any(|m| m.node != id) {
                    let first = &members[0];
                    return Err(NetError::setup(format!(
                        "--unicast: a second receiver ({id:08x} from {from}) joined besides \
                         {:08x} from {}; a unicast session has exactly one receiver: stop the \
                         others, or drop --unicast to multicast to all",
                        first.node, first.addr
                    )));
                }
                if let Some(m) = members.iter_mut().find(|m| m.node == id) {
                    m.addr = from;
                    m.region = region;
                    m.last_heard = clock.now();
                } else {
                    obs.joined(id, from);
                    members.push(Member::new(id, from, clock.now(), region, false));
                    next_announce = Time::ZERO;
                }
            }
        }
    }

    // ---- Phase 2: transfer.
    let mut ids: Vec<u32> = members.iter().map(|m| m.node).collect();
    // dsp: elect each region's designated receiver (the lowest node id) and announce every
    // receiver's region, role and address with the start.
    let mut dsp: Vec<DspEntry> = if family == Family::Tree {
        let joined: Vec<(u32, u16, SocketAddr)> =
            members.iter().map(|m| (m.node, m.region, m.addr)).collect();
        agents::elect(&joined)
    } else {
        Vec::new()
    };
    let dsp_announce = |entries: &[DspEntry]| -> Result<Vec<u8>, NetError> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let raw = agents::dsp_params(&cfg.dsp, entries.to_vec())
            .encode()
            .map_err(|e| NetError::Failed(format!("cannot announce the dsp regions: {e}")))?;
        // The running ANNOUNCE carries the member list and every receiver's entry at once.
        if HEADER_LEN + 16 + 4 * entries.len() + raw.len() > MAX_DATAGRAM {
            return Err(NetError::Failed(format!(
                "dsp announces every receiver's region and address in one datagram: {} receivers \
                 do not fit (at most about 2,000)",
                entries.len()
            )));
        }
        Ok(raw)
    };
    for e in dsp.iter().filter(|e| e.role == DspRole::Designated) {
        tracing::info!(
            node = e.node,
            region = e.region,
            local_group = %agents::local_group(group, e.region)?,
            "designated receiver"
        );
    }
    let designated: Vec<u32> = dsp
        .iter()
        .filter(|e| e.role == DspRole::Designated)
        .map(|e| e.node)
        .collect();
    let mut agent = agents::sender_agent(
        family,
        &settings(&cfg, node, session_id, rto),
        &ids,
        &designated,
    )?;
    let chunk = match xtp_chunk {
        Some(c) => c,
        None => cfg
            .datagram_size
            .checked_sub(agents::data_overhead(family, ids.len()) + sealing)
            .filter(|c| *c > 16)
            .ok_or_else(|| {
                NetError::setup(format!(
                    "--datagram-size {} leaves no room for data with {} receivers: raise it",
                    cfg.datagram_size,
                    ids.len()
                ))
            })?,
    };
    // xtp --late-join: the running announce says whether late joiners are admitted (while
    // the source lasts) and names the stream.
    let stream_name = match &source {
        Source::Stdin(n) => n.clone(),
        Source::Files(_) => String::new(),
    };
    let mut late_open = cfg.late_join;
    let running_params = |dsp: &[DspEntry], late_open: bool| -> Result<Vec<u8>, NetError> {
        if cfg.late_join {
            Ok(agents::XtpParams {
                late_join: late_open,
                stream: stream_name.clone(),
            }
            .encode())
        } else {
            dsp_announce(dsp)
        }
    };
    let mut running = announce(Phase::Running, &ids, &running_params(&dsp, late_open)?);
    obs.started(&ids, total);
    let producer = spawn_producer(source, files, chunk, waker.clone());
    let rate_bytes = cfg.rate_bps / 8;
    let burst = (rate_bytes / 500).max(2 * cfg.datagram_size as u64);
    let start = clock.now();
    let mut pacer = Pacer::new(rate_bytes, burst);
    let mut pending: VecDeque<Transmit> = VecDeque::new();
    let mut seq_bytes: HashMap<u64, u64> = HashMap::new();
    let mut next_seq = 0u64;
    let mut source_done = false;
    let mut acked = 0u64;
    let mut completed_at: Option<Time> = None;
    let mut next_announce = Time::ZERO;
    let mut blocked = false;
    let mut failed_msgs = 0u64;
    let mut transfer_end = start;
    let mut dsp_changed = false;
    let (mut to_group, mut to_nodes) = (0u64, 0u64);
    loop {
        let now = clock.now();
        // Feed the agent.
        // Hand the agent a new message only when the pacer could send it now, so the agent's
        // timers start when its datagrams actually leave.
        while !source_done
            && agent.can_send()
            && pending.is_empty()
            && pacer.ready_at(now, cfg.datagram_size) <= now
        {
            match producer.try_recv() {
                Ok(Chunk::Msg(m, data_bytes)) => match agent.send(now, m) {
                    Ok(()) => {
                        seq_bytes.insert(next_seq, data_bytes);
                        next_seq += 1;
                    }
                    Err(e) => return Err(NetError::Failed(format!("the agent refused data: {e}"))),
                },
                Ok(Chunk::Err(e)) => {
                    return Err(NetError::Failed(format!("{e}; the transfer was aborted")))
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    source_done = true;
                    agent.close(now);
                }
            }
        }
        if agent.poll_timeout().is_some_and(|t| t <= now) {
            agent.handle_timeout(now);
        }
        while let Some(ev) = agent.poll_event() {
            match ev {
                Event::MessageDone { seq, failed, .. } => {
                    if failed {
                        failed_msgs += 1;
                    }
                    acked += seq_bytes.remove(&seq).unwrap_or(0);
                    obs.acked(acked);
                }
                Event::Completed => {
                    if completed_at.is_none() {
                        completed_at = Some(now);
                        transfer_end = now;
                    }
                }
                Event::Delivered { .. } | Event::LossDetected { .. } => {}
            }
        }
        // Evict the silent.
        for m in members.iter_mut() {
            if m.evicted.is_none()
                && m.final_state.is_none()
                && now.saturating_since(m.last_heard) >= cfg.evict_after
            {
                let why = format!(
                    "silent for {:.1}s (--evict-after {:.1}s)",
                    now.saturating_since(m.last_heard).as_secs_f64(),
                    cfg.evict_after.as_secs_f64()
                );
                tracing::warn!(node = m.node, "evicting receiver: {why}");
                obs.evicted(m.node, &why);
                agent.remove_receiver(now, NodeId(m.node));
                m.evicted = Some(why);
                // dsp: tell its designated receiver to stop waiting for it.
                if let Some(e) = dsp.iter_mut().find(|e| e.node == m.node) {
                    e.role = DspRole::Evicted;
                    dsp_changed = true;
                }
            }
        }
        if dsp_changed {
            dsp_changed = false;
            running = announce(Phase::Running, &ids, &running_params(&dsp, late_open)?);
            next_announce = now;
        }
        // Late joiners are admitted only while the source lasts.
        if late_open && (source_done || completed_at.is_some()) {
            late_open = false;
            running = announce(Phase::Running, &ids, &running_params(&dsp, late_open)?);
            next_announce = now;
        }
        while let Some(ev) = agent.poll_event() {
            if let Event::MessageDone { seq, failed, .. } = ev {
                if failed {
                    failed_msgs += 1;
                }
                acked += seq_bytes.remove(&seq).unwrap_or(0);
                obs.acked(acked);
            } else if ev == Event::Completed && completed_at.is_none() {
                completed_at = Some(now);
                transfer_end = now;
            }
        }
        // Announce the running session (late packets, lost announces).
        if now >= next_announce {
            let _ = wire.send(&sock, group, &running, false);
            next_announce = now + Duration::from_millis(250);
        }
        // Transmit, paced.
        while let Some(t) = agent.poll_transmit() {
            pending.push_back(t);
        }
        let mut wake_at: Option<Time> = None;
        // Everything the pacer lets out now goes in batches (one sendmmsg each on Linux).
        // The pacer is charged only for the datagrams the socket took (or loss dropped).
        while !blocked && !pending.is_empty() {
            let mut trial = pacer.clone();
            // (destination or None for a departed node, bytes charged to the pacer)
            let mut plan: Vec<(Option<SocketAddr>, usize)> = Vec::new();
            let mut batched = 0usize;
            for t in pending.iter() {
                if batched == crate::socket::MAX_BATCH {
                    break;
                }
                let len = t.payload.len() + wire.overhead();
                let to = match t.dest {
                    Dest::Group(_) => Some(group),
                    Dest::Node(n) => members.iter().find(|m| m.node == n.0).map(|m| m.addr),
                };
                if to.is_some() {
                    let at = trial.ready_at(now, len);
                    if at > now {
                        wake_at = Some(at);
                        break;
                    }
                    trial.on_send(now, len);
                    batched += 1;
                }
                plan.push((to, len));
            }
            let items: Vec<(SocketAddr, &[u8])> = plan
                .iter()
                .zip(pending.iter())
                .filter_map(|((to, _), t)| to.map(|to| (to, &t.payload[..])))
                .collect();
            let (consumed, full) = match wire.send_batch(&sock, &items) {
                Ok(x) => x,
                Err(e) => {
                    let to = items.first().map_or(group, |(to, _)| *to);
                    return Err(crate::error::classify("send to", to, e));
                }
            };
            let mut done = 0usize;
            for (to, len) in &plan {
                if to.is_some() {
                    if done == consumed {
                        break;
                    }
                    done += 1;
                    pacer.on_send(now, *len);
                    if *to == Some(group) {
                        to_group += 1;
                    } else {
                        to_nodes += 1;
                    }
                }
                pending.pop_front();
            }
            blocked = full;
            if wake_at.is_some() || batched < crate::socket::MAX_BATCH {
                break;
            }
        }
        // Done?
        if let Some(done) = completed_at {
            let all_final = members
                .iter()
                .all(|m| m.evicted.is_some() || m.final_state.is_some());
            if pending.is_empty() && (all_final || now.saturating_since(done) >= cfg.final_wait) {
                break;
            }
        }
        // Sleep until something happens.
        let mut deadline = next_announce.min(now + Duration::from_millis(100));
        if let Some(t) = agent.poll_timeout() {
            deadline = deadline.min(t);
        }
        if let Some(t) = wake_at {
            deadline = deadline.min(t);
        }
        if !source_done && agent.can_send() && pending.is_empty() {
            deadline = deadline.min(pacer.ready_at(now, cfg.datagram_size));
        }
        let mut wait = clock.until(deadline);
        if blocked {
            wait = wait.min(Duration::from_millis(1));
        }
        if !source_done && agent.can_send() {
            // The producer wakes us when it has more.
        }
        poll.poll(&mut events, Some(wait))
            .map_err(|e| NetError::io("poll", e))?;
        for ev in events.iter() {
            if ev.token() == SOCK && ev.is_writable() {
                blocked = false;
            }
        }
        if blocked {
            // Edge-triggered writability may have been missed; retry after the short wait.
            blocked = false;
        }
        let now = clock.now();
        loop {
            let (n, from) = match sock.recv_from(&mut buf) {
                Ok(x) => x,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => break,
            };
            let Some((h, len)) = wire.open(&mut buf[..n]) else {
                continue;
            };
            let Some(m) = members
                .iter_mut()
                .find(|m| m.node == h.source && m.addr == from)
            else {
                if h.family == Family::Session && h.session == session_id {
                    // A late joiner or a member that moved: tell it the session is running.
                    if let Some(m) = members.iter_mut().find(|m| m.node == h.source) {
                        m.addr = from;
                    } else if late_open
                        && h.source != node
                        && h.source != 0
                        && matches!(
                            Packet::decode(&buf[..len]),
                            Ok(Packet {
                                message: Message::Session(session::Message::Join { .. }),
                                ..
                            })
                        )
                    {
                        // xtp --late-join: admit it; the agent adds it when its first status
                        // arrives and waits for it from there (no back-fill).
                        tracing::info!(node = h.source, %from, "late joiner admitted");
                        obs.joined(h.source, from);
                        members.push(Member::new(h.source, from, now, 0, true));
                        ids.push(h.source);
                        running = announce(Phase::Running, &ids, &running_params(&dsp, true)?);
                        next_announce = now;
                    }
                    let _ = wire.send(&sock, from, &running, false);
                }
                wire.stats.rejected_stranger += 1;
                continue;
            };
            if m.evicted.is_some() {
                continue;
            }
            m.last_heard = now;
            if h.family == Family::Session {
                match Packet::decode(&buf[..len]) {
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
                    }) if header.session == session_id => {
                        m.bytes = bytes;
                        m.messages = messages;
                        m.repairs = repairs;
                        m.duplicates = duplicates;
                        m.rejected = rejected;
                        if state != ReportState::Receiving {
                            m.final_state = Some((state, reason));
                        }
                        obs.progress(m.node, bytes);
                    }
                    Ok(Packet {
                        message: Message::Session(session::Message::Join { .. }),
                        ..
                    }) => {
                        let _ = wire.send(&sock, from, &running, false);
                    }
                    _ => wire.stats.rejected_malformed += 1,
                }
                continue;
            }
            if wire.drop_rx() {
                continue;
            }
            agent.handle_packet(now, NodeId(h.source), &buf[..len]);
        }
    }
    obs.finished();

    // ---- Phase 3: goodbye.
    let removed_by_agent = agent.stats().evicted;
    let mut summary = Vec::new();
    let mut outcomes = Vec::new();
    for m in &members {
        let (outcome, reason, o) = match (&m.evicted, m.final_state) {
            (Some(why), _) => ("evicted", Some(why.clone()), Outcome::Evicted),
            (None, Some((ReportState::Complete, _))) => ("completed", None, Outcome::Completed),
            (None, Some((_, r))) => (
                "failed",
                Some(format!(
                    "receiver reported failure: {}",
                    crate::receiver::reason_text(r)
                )),
                Outcome::Failed,
            ),
            (None, None) => (
                "unconfirmed",
                Some(if completed_at.is_some() && removed_by_agent > 0 {
                    format!(
                        "sent no final report; the protocol removed {removed_by_agent} receiver(s) \
                         that did not answer (prmp --silent-polls)"
                    )
                } else if completed_at.is_some() {
                    "acknowledged all data but sent no final report".to_string()
                } else {
                    "the transfer did not complete".to_string()
                }),
                Outcome::Failed,
            ),
        };
        outcomes.push((m.node, o));
        summary.push(ReceiverSummary {
            node: m.node,
            addr: m.addr.to_string(),
            outcome,
            reason,
            bytes: m.bytes,
            messages: m.messages,
            repairs_received: m.repairs,
            duplicates: m.duplicates,
            rejected: m.rejected,
            region: (family == Family::Tree).then_some(m.region),
            role: (family == Family::Tree).then_some(if designated.contains(&m.node) {
                "designated"
            } else {
                "member"
            }),
            joined_late: m.late,
        });
    }
    let end = session_packet(
        session_id,
        node,
        session::Message::End {
            outcomes: &session::encode_outcomes(&outcomes),
        },
    );
    for i in 0..3 {
        let _ = wire.send(&sock, group, &end, false);
        for m in &members {
            let _ = wire.send(&sock, m.addr, &end, false);
        }
        if i < 2 {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let seconds = transfer_end.saturating_since(start).as_secs_f64();
    let bytes = total.unwrap_or(acked);
    let st = agent.stats();
    let all_completed = !summary.is_empty() && summary.iter().all(|s| s.outcome == "completed");
    Ok(SendReport {
        session: session_id,
        node,
        protocol: cfg.protocol.clone(),
        group: group.to_string(),
        files: infos,
        bytes,
        seconds,
        goodput_mbit_s: if seconds > 0.0 {
            bytes as f64 * 8.0 / seconds / 1e6
        } else {
            0.0
        },
        receivers: summary,
        agent: AgentCounters {
            data_sent: st.data_sent,
            repairs_sent: st.repairs_sent,
            timeouts: st.timeouts,
            messages_completed: st.completed,
            messages_failed: st.failed.max(failed_msgs),
        },
        driver: wire.stats.clone(),
        protocol_to_group: to_group,
        protocol_unicast: to_nodes,
        all_completed,
    })
}
