//! `rmcast send`: gather receivers, then drive a sender agent over a UDP socket.
//!
//! A send runs in three steps, each its own file: `gather` (announce the session, admit
//! JOINs until the expected receivers are in), `transfer` (the event loop: feed the agent,
//! fire its timers, pace its datagrams, read feedback and reports, evict the silent) and
//! `goodbye` (outcomes, END, the summary). What differs between protocols comes from
//! [`crate::agents::NetProtocol`] and the [`crate::agents::SenderSide`] it starts; no step
//! names a protocol.

mod gather;
mod goodbye;
mod repair;
mod schedule;
mod source;
mod transfer;

use crate::agents::{self, DspOpts, PrmpOpts, Protocol, SenderSettings};
use crate::clock::Clock;
use crate::endpoint::{nonzero_random, session_packet, DriverStats, Wire, RECV_BUF};
use crate::interrupt::Interrupt;
use crate::loss::LossConfig;
use crate::secure::Keys;
use crate::socket::{self, check_group, unicast_socket, RecvBatch, SocketOpts};
use crate::NetError;
use mio::{Events, Interest, Poll, Token, Waker};
use rmcast_wire::session::{self, Phase};
use rmcast_wire::{Header, MAX_DATAGRAM};
use serde::Serialize;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

const SOCK: Token = Token(0);
const WAKE: Token = Token(1);
const GROUP: Token = Token(2);
const DATA: Token = Token(3);

/// Default of [`SendConfig::max_receivers`] (`--max-receivers`): the running ANNOUNCE lists
/// every member (4 bytes each; `dsp` 30), so 1,000 members keep it within one datagram of
/// 65,507 bytes for every protocol.
pub const MAX_RECEIVERS: usize = 1000;

/// `len` reproducible pseudo-random bytes (xorshift64 from `seed`): the test data that
/// benchmarks, studies and tests send, written once so that every one of them sends the same
/// bytes for the same seed.
pub fn pseudo_random(len: u64, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

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
    /// These files, in order.
    Files(Vec<PathBuf>),
    /// Standard input, announced under this name.
    Stdin(String),
}

/// Sender settings.
#[derive(Debug, Clone)]
pub struct SendConfig {
    /// The group and its socket options.
    pub sock: SocketOpts,
    /// The protocol's command-line name (`--protocol`).
    pub protocol: String,
    /// Who to wait for before starting.
    pub expect: Expect,
    /// Give up if the expected receivers have not joined within this time.
    pub join_wait: Duration,
    /// Most receivers a session admits (`--discover` and `--late-join` stop admitting
    /// there; `--receivers`/`--receiver-list` may not ask for more).
    pub max_receivers: usize,
    /// Evict a receiver silent for this long.
    pub evict_after: Duration,
    /// Evict a receiver still at work that delivered less than this many bits per second
    /// over the last period of `evict_after` (0: never; a live receiver is served however
    /// slow it is).
    pub min_rate_bps: u64,
    /// Pace repairs to the group by the intake of the slowest receiver that loses them
    /// (protocols that repair on NAKs: pgm, srm, lms; see `sender::repair`; not with `tfmcc`,
    /// which paces the whole session by the slowest receiver). Off: repairs leave at
    /// `rate_bps` like new data.
    pub repair_pacing: bool,
    /// Retransmission timeout handed to the agent.
    pub rto: Duration,
    /// Largest datagram on the wire, header and trailer included; `None`: one frame's UDP
    /// payload on the group's link ([`crate::socket::Link::default_payload`]).
    pub datagram_size: Option<usize>,
    /// Accept a `datagram_size` larger than one frame of the link carries: the IP layer
    /// fragments each datagram, and one lost fragment loses all of it.
    pub allow_fragmentation: bool,
    /// New data (the source's messages) enters the agent at most one per this interval, on a
    /// fixed schedule from the first (`--data-interval-us`; `sender::schedule`); repairs and
    /// control are not charged to it. `None`: new data is paced by `rate_bps` alone.
    pub data_interval: Option<Duration>,
    /// Pacing rate in bits per second; 0 = unlimited. With `tfmcc`, the most congestion
    /// control may reach.
    pub rate_bps: u64,
    /// Congestion control (TFMCC, `--rate auto`): the rate follows the slowest receiver's
    /// TCP-friendly rate (protocols with [`crate::agents::NetProtocol::congestion_control`]).
    pub tfmcc: bool,
    /// The session key (`--key-file`): authenticate, and encrypt with `encrypt`.
    pub keys: Option<Keys>,
    /// Loss injected for experiments.
    pub loss: LossConfig,
    /// This sender's node id (`None`: a random one).
    pub node_id: Option<u32>,
    /// The session id (`None`: a random one).
    pub session: Option<u32>,
    /// After the agent completes, how long to wait for receivers' final reports, counted
    /// from the completion and from the last progress of any receiver still at work.
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
    /// receiver: a second JOIN while gathering is counted and ignored.
    pub unicast: bool,
    /// `xtp` streams: admit receivers that join while the transfer runs. They receive from
    /// their join point on, without back-fill (the xtp sender's `accept_joins`).
    pub late_join: bool,
    /// `prmp`: epoch, response rate, IPG, MTR, silent polls.
    pub prmp: PrmpOpts,
    /// `pgm`: transmit window, packets.
    pub pgm_txw: u64,
    /// `pgm`: FEC repair, source packets per block (0: off).
    pub pgm_fec_k: u16,
    /// `pgm`: FEC, parity packets sent unasked after each block (0: none).
    pub pgm_fec_proactive: u16,
    /// `pgm`: its packets on the wire as RFC 3208 ([`crate::pgmwire`]; unkeyed sessions),
    /// not in rmcast's header (`--rmcast-header` turns it off, for `rmcast relay`); `norm`'s
    /// as RFC 5740 likewise ([`crate::normwire`]).
    pub pgm_rfc3208: bool,
    /// `dsp`: assumed RTD, `r_f`, status interval, local RTD.
    pub dsp: DspOpts,
}

impl SendConfig {
    /// Defaults for sending to `group`.
    pub fn new(group: SocketAddr) -> Self {
        SendConfig {
            sock: SocketOpts::new(group),
            protocol: crate::agents::DEFAULT_PROTOCOL.into(),
            expect: Expect::Discover(Duration::from_secs(3)),
            join_wait: Duration::from_secs(60),
            max_receivers: MAX_RECEIVERS,
            evict_after: Duration::from_secs(5),
            min_rate_bps: 0,
            repair_pacing: true,
            rto: Duration::from_millis(20),
            datagram_size: None,
            allow_fragmentation: false,
            data_interval: None,
            rate_bps: 1_000_000_000,
            tfmcc: false,
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
            pgm_txw: rmcast_proto::pgm::spec::SOCKET_TXW,
            pgm_fec_k: 0,
            pgm_fec_proactive: 0,
            pgm_rfc3208: true,
            dsp: DspOpts::default(),
        }
    }
}

/// Progress callbacks (the command line draws bars with them).
pub trait SendObserver {
    /// The session is announced on `group` under this id (before any receiver joins): the id
    /// `rmcast recv --session` takes.
    fn announcing(&mut self, _session: u32, _group: SocketAddr) {}
    /// A receiver joined.
    fn joined(&mut self, _node: u32, _addr: SocketAddr) {}
    /// The transfer started with these members (`total` bytes; `None`: a stream).
    fn started(&mut self, _members: &[u32], _total: Option<u64>) {}
    /// A receiver reported `bytes` delivered.
    fn progress(&mut self, _node: u32, _bytes: u64) {}
    /// Bytes acknowledged by every receiver so far.
    fn acked(&mut self, _bytes: u64) {}
    /// A receiver was evicted, and why.
    fn evicted(&mut self, _node: u32, _why: &str) {}
    /// The transfer is over.
    fn finished(&mut self) {}
}

/// An observer that ignores everything.
pub struct NoObserver;
impl SendObserver for NoObserver {}

/// One file as announced.
#[derive(Debug, Clone, Serialize)]
pub struct FileInfo {
    /// Its name.
    pub name: String,
    /// Its length, bytes.
    pub size: u64,
    /// Its BLAKE3 digest, hex.
    pub blake3: String,
    /// Restart mode: sent from this byte on, as every receiver held the bytes before from
    /// an earlier session (0: sent whole).
    #[serde(skip_serializing_if = "is_zero")]
    pub resumed_from: u64,
}

/// One receiver in the sender's summary.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiverSummary {
    /// Its node id.
    pub node: u32,
    /// The address it joined from.
    pub addr: String,
    /// `completed`, `unverified` (it reported completion, but nothing else showed it was a
    /// receiver at work: see [`Admission`]), `evicted`, `failed` or `unconfirmed`.
    pub outcome: &'static str,
    /// How the sender admitted it: `key` (its JOIN was authenticated with the session key),
    /// `receiver-list` (its node id is in `--receiver-list`) or `join` (an unauthenticated
    /// JOIN, which any host on the LAN can send).
    pub admitted: &'static str,
    /// The sender saw it carry the session's traffic: protocol packets (NAKs, ACKs, status)
    /// or progress reports that moved. A receiver admitted by `join` counts as completed only
    /// with this.
    pub traffic: bool,
    /// Why it did not complete.
    pub reason: Option<String>,
    /// Seconds from the transfer's start (or its late admission) to its final report
    /// (`None`: it sent none).
    pub seconds: Option<f64>,
    /// Its own rate: the bytes it reported delivered over `seconds`, Mbit/s.
    pub mbit_s: Option<f64>,
    /// Application bytes the receiver reported delivered.
    pub bytes: u64,
    /// Messages it reported delivered.
    pub messages: u64,
    /// Retransmitted data packets the receiver received (for `saw`, retransmissions are
    /// triggered by its missing ACK: this is what it asked for, implicitly).
    pub repairs_received: u64,
    /// Data packets it received more than once.
    pub duplicates: u64,
    /// Packets the receiver refused (authentication, malformed, strangers).
    pub rejected: u64,
    /// `dsp`: the receiver's region and role (`designated` or `member`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// `dsp`: its role (`designated` or `member`).
    pub role: Option<&'static str>,
    /// Admitted while the stream ran (`--late-join`): it holds the stream from its join
    /// point on, not the whole of it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub joined_late: bool,
    /// Times it restarted mid-session (a new process under its node id on its host) and was
    /// taken back at its new address (`pgm`).
    #[serde(skip_serializing_if = "is_zero")]
    pub restarts: u32,
    /// Times it moved to another address after a silence (its relay died and it followed
    /// the session to a standby relay: `rmcast relay --standby`).
    #[serde(skip_serializing_if = "is_zero")]
    pub moves: u32,
}

fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

/// The sender's final summary.
#[derive(Debug, Clone, Serialize)]
pub struct SendReport {
    /// The session id.
    pub session: u32,
    /// This sender's node id.
    pub node: u32,
    /// The protocol's name.
    pub protocol: String,
    /// The group it sent to.
    pub group: String,
    /// The files sent.
    pub files: Vec<FileInfo>,
    /// Application bytes sent.
    pub bytes: u64,
    /// Duration of the transfer phase, seconds.
    pub seconds: f64,
    /// When the transfer phase began (its first data), microseconds since the Unix epoch.
    pub started_unix_us: u64,
    /// Application bytes per second over the transfer phase, in Mbit/s.
    pub goodput_mbit_s: f64,
    /// The retransmission timeout handed to the agent, ms: `--rto-ms`, stretched to twice
    /// the time `--rate` needs to let a window of datagrams out.
    pub rto_ms: f64,
    /// Every receiver's outcome.
    pub receivers: Vec<ReceiverSummary>,
    /// What the agent counted.
    pub agent: AgentCounters,
    /// What the driver counted.
    pub driver: DriverStats,
    /// Protocol datagrams the driver addressed to the group (`xtp --unicast` sends none
    /// there).
    pub protocol_to_group: u64,
    /// Protocol datagrams the driver addressed to single receivers.
    pub protocol_unicast: u64,
    /// Whether every receiver completed.
    pub all_completed: bool,
    /// A signal ended the session before the transfer did.
    pub interrupted: bool,
    /// Roles handed from one receiver to another while running (`dsp`: a region's
    /// designated receiver evicted and another elected).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub role_changes: Vec<String>,
}

/// Exit status of `rmcast send` and `rmcast recv` when a signal ended them (as a shell
/// reports SIGINT: 128 + 2).
pub const EXIT_INTERRUPTED: u8 = 130;

impl SendReport {
    /// The exit status `rmcast send` ends with: [`EXIT_INTERRUPTED`] after a signal, 0 when
    /// every receiver completed (and each is one the user expects: see [`Admission`]), else 1.
    pub fn exit_code(&self) -> u8 {
        if self.interrupted {
            EXIT_INTERRUPTED
        } else if self.all_completed {
            0
        } else {
            1
        }
    }
}

/// How the sender admitted a receiver: what makes it one the user expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Its JOIN was authenticated with the session key (`--key-file`).
    Key,
    /// Its node id is one `--receiver-list` names.
    Listed,
    /// An unauthenticated JOIN, which any host on the LAN can send from its own address: its
    /// completion counts only if the sender saw it carry the session's traffic (protocol
    /// packets, or progress reports that moved), not a JOIN and a "complete" alone.
    Join,
}

impl Admission {
    /// Its name in the summary.
    pub fn name(self) -> &'static str {
        match self {
            Admission::Key => "key",
            Admission::Listed => "receiver-list",
            Admission::Join => "join",
        }
    }
}

/// The agent's counters that matter in a summary.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AgentCounters {
    /// Original data packets sent.
    pub data_sent: u64,
    /// Retransmitted data packets sent.
    pub repairs_sent: u64,
    /// Retransmission timeouts that fired.
    pub timeouts: u64,
    /// Messages every receiver acknowledged.
    pub messages_completed: u64,
    /// Messages the agent gave up on.
    pub messages_failed: u64,
}

/// xtp splits a write over packets itself: its datagram carries a 32-byte header.
fn xtp_maxdata(cfg: &SendConfig, dgram: usize) -> usize {
    dgram.saturating_sub(rmcast_wire::xtp::XTP_HEADER_LEN + cfg.keys.as_ref().map_or(0, |_| 24))
}

impl SenderSettings {
    /// What the agent builder needs from the configuration `cfg`, for datagrams of `dgram`
    /// bytes, sender `node` of `session` and a retransmission timeout of `rto`.
    pub fn new(cfg: &SendConfig, dgram: usize, node: u32, session: u32, rto: Duration) -> Self {
        SenderSettings {
            node,
            session,
            window: cfg.window,
            rto,
            xtp_thesis: cfg.xtp_thesis,
            xtp_maxdata: xtp_maxdata(cfg, dgram).max(1),
            xtp_write_size: cfg.write_size,
            xtp_unicast: cfg.unicast,
            xtp_accept_joins: cfg.late_join,
            rate_bps: cfg.rate_bps,
            datagram_size: dgram,
            prmp: cfg.prmp.clone(),
            dsp: cfg.dsp.clone(),
            pgm_txw: cfg.pgm_txw,
            pgm_fec_k: cfg.pgm_fec_k,
            pgm_fec_proactive: cfg.pgm_fec_proactive,
            pgm_rfc3208: cfg.pgm_rfc3208 && cfg.keys.is_none(),
            norm_rfc5740: cfg.pgm_rfc3208 && cfg.keys.is_none(),
            sealing: cfg.keys.as_ref().map_or(0, |_| crate::secure::TRAILER_LEN),
            tfmcc: cfg.tfmcc,
        }
    }

    /// The bucket of the sender's pacing at `--rate`: 2 ms of sending, at least two
    /// datagrams. The driver's pacer has it, and an agent that paces itself (`dsp`, `csp`,
    /// `cp`) must have it too: with no bucket it releases one datagram per wake-up, and a
    /// wake-up is a millisecond (`poll` rounds up), not the microseconds a datagram takes.
    pub fn pacing_burst(&self) -> u64 {
        pacing_burst(self.rate_bps, self.datagram_size)
    }

    /// The lateness a sender that spaces its own packets (`prmp`, `ff`) may make up at a
    /// wake-up (`PACING_STEP`; `rmcast_proto::pacing::GapPacer`): without it each wake-up
    /// sends one packet, and the wake-ups, not `--ipg-us`, set the pace.
    pub fn ipg_slack(&self) -> Duration {
        PACING_STEP
    }

    /// The gap between two transmissions of a sender that spaces its own packets (`prmp`,
    /// `ff`): `--ipg-us`, else the time one datagram takes at `--rate` (10 µs unpaced). Zero
    /// only when `--ipg-us 0` was given.
    pub fn ipg(&self) -> Duration {
        self.prmp.ipg.unwrap_or_else(|| match self.rate_bps {
            0 => Duration::from_micros(10),
            r => Duration::from_nanos(
                (self.datagram_size as u64 * 8).saturating_mul(1_000_000_000) / r.max(1),
            )
            .max(Duration::from_micros(1)),
        })
    }
}

/// How much sending the driver's pacing lets out at once after a pause: its wake-ups are
/// about a millisecond apart (`poll` rounds up), so twice that.
pub(crate) const PACING_STEP: Duration = Duration::from_millis(2);

/// The pacing bucket for `rate_bps` and datagrams of `dgram` bytes (see
/// [`SenderSettings::pacing_burst`]): [`PACING_STEP`] at the rate, at least two datagrams.
pub(crate) fn pacing_burst(rate_bps: u64, dgram: usize) -> u64 {
    let step = PACING_STEP.as_nanos() as u64;
    ((rate_bps / 8).saturating_mul(step) / 1_000_000_000).max(2 * dgram as u64)
}

/// The protocols that can run in a mode, for an error message.
fn able(can: impl Fn(&Protocol) -> bool) -> String {
    let names: Vec<String> = agents::PROTOCOLS
        .iter()
        .filter(|p| can(p))
        .map(|p| format!("--protocol {}", p.name()))
        .collect();
    names.join(" or ")
}

/// Refuse `--unicast` and `--late-join` where they make no sense.
fn check_modes(cfg: &SendConfig, proto: &Protocol, source: &Source) -> Result<(), NetError> {
    if cfg.tfmcc && !proto.congestion_control() {
        return Err(NetError::setup(format!(
            "--rate auto (congestion control) runs only with {}: give {} a fixed --rate",
            able(|p| p.congestion_control()),
            cfg.protocol
        )));
    }
    if cfg.unicast {
        if !proto.unicast() {
            return Err(NetError::setup(format!(
                "--unicast runs only with {} ({} always multicasts)",
                able(|p| p.unicast()),
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
        if !proto.late_join() {
            return Err(NetError::setup(format!(
                "--late-join runs only with {} ({} fixes its receivers at the start)",
                able(|p| p.late_join()),
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

/// What [`check`] found: the protocol, the datagram size, the application bytes per message
/// the protocol chooses (if it does).
struct Checked {
    proto: &'static Protocol,
    dgram: usize,
    message_size: Option<usize>,
}

/// Check the configuration before touching the network.
fn check(cfg: &SendConfig, source: &Source) -> Result<Checked, NetError> {
    check_group(cfg.sock.group)?;
    let proto = agents::protocol(&cfg.protocol)?;
    let link = socket::group_link(&cfg.sock).unwrap_or_else(|| {
        tracing::debug!("the group's link was not found: assuming 1500-byte Ethernet");
        socket::Link::assumed()
    });
    let dgram = socket::datagram_size(
        &link,
        cfg.sock.group.is_ipv6(),
        cfg.datagram_size,
        cfg.allow_fragmentation,
    )?;
    tracing::debug!(link = %link.name, mtu = link.mtu, dgram, "datagram size");
    let sealing = cfg.keys.as_ref().map_or(0, |_| 24);
    let overhead = proto.data_overhead(1) + sealing;
    let max_dgram = if cfg.sock.group.is_ipv6() {
        MAX_DATAGRAM.min(65_527 - 40)
    } else {
        MAX_DATAGRAM
    };
    if dgram <= overhead + 16 || dgram > max_dgram {
        return Err(NetError::setup(format!(
            "--datagram-size {dgram} is out of range: choose between {} and {max_dgram}",
            overhead + 17
        )));
    }
    if cfg.window == 0 {
        return Err(NetError::setup("--window 0: give at least 1"));
    }
    let ack_delay_ms = cfg.ack_delay.as_secs_f64() * 1e3;
    if ack_delay_ms > rmcast_proto::saw::spec::ACK_DELAY_LIMIT_MS {
        return Err(NetError::setup(format!(
            "--ack-delay-ms {ack_delay_ms} is above {}: receivers refuse such an ANNOUNCE",
            rmcast_proto::saw::spec::ACK_DELAY_LIMIT_MS
        )));
    }
    let asked = match &cfg.expect {
        Expect::Count(n) => *n,
        Expect::List(l) => l.len(),
        Expect::Discover(_) => 0,
    };
    if cfg.max_receivers == 0 || asked > cfg.max_receivers {
        return Err(NetError::setup(format!(
            "{asked} receivers expected with --max-receivers {}: raise --max-receivers (at \
             least 1, and at least as many as expected)",
            cfg.max_receivers
        )));
    }
    check_modes(cfg, proto, source)?;
    let probe = SenderSettings::new(cfg, dgram, 1, 1, cfg.rto);
    proto.check(&probe)?;
    Ok(Checked {
        proto,
        dgram,
        message_size: proto.message_size(&probe)?,
    })
}

/// Run a whole send: gather receivers, transfer, collect final reports, say goodbye.
pub fn send(
    cfg: SendConfig,
    source: Source,
    obs: &mut dyn SendObserver,
) -> Result<SendReport, NetError> {
    let Checked {
        proto,
        dgram,
        message_size,
    } = check(&cfg, &source)?;
    // Read and digest the files before touching the network.
    let files = source::read_files(&source)?;
    let mut ep = Endpoint::open(cfg, proto, dgram)?;
    obs.announcing(ep.session, ep.group);
    let members = gather::gather(&mut ep, obs)?;
    let mut t = transfer::Transfer::start(ep, members, source, files, message_size, obs)?;
    t.run(obs)?;
    obs.finished();
    Ok(t.goodbye())
}

/// The sender's socket, clock and session identity, shared by its steps.
struct Endpoint {
    cfg: SendConfig,
    proto: &'static Protocol,
    /// The datagram size in use (`--datagram-size` or the link's).
    dgram: usize,
    sock: mio::net::UdpSocket,
    /// The group, for a protocol whose source hears it ([`agents::NetProtocol::hears_group`]).
    gsock: Option<mio::net::UdpSocket>,
    /// The data port, where feedback comes in the standard's packets ([`crate::framing`]).
    dsock: Option<mio::net::UdpSocket>,
    /// The socket [`Endpoint::next`] is reading: 0 `sock`, 1 `gsock`, 2 `dsock`.
    reading: u8,
    poll: Poll,
    events: Events,
    waker: Arc<Waker>,
    clock: Clock,
    node: u32,
    session: u32,
    group: SocketAddr,
    wire: Wire,
    buf: Vec<u8>,
    /// Feedback is read in batches (`recvmmsg`).
    batch: RecvBatch,
    security: u8,
    ack_delay_us: u32,
    ack_timeout_us: u32,
    /// The retransmission timeout handed to the agent.
    rto: Duration,
    /// SIGINT/SIGTERM while the sender runs end the session early (END to the receivers).
    interrupt: Interrupt,
    /// Refusals sent in the current [`REFUSALS_EVERY`] (when it began, how many).
    refusals: (rmcast_proto::Time, u32),
}

/// At most [`REFUSALS`] refusals ([`Endpoint::refuse`]) go out in each of these: a flood of
/// JOINs under made-up ids gets no flood of answers (a refused receiver JOINs again every
/// 200 ms and is answered then).
const REFUSALS_EVERY: Duration = Duration::from_millis(100);
const REFUSALS: u32 = 20;

impl Endpoint {
    fn open(cfg: SendConfig, proto: &'static Protocol, dgram: usize) -> Result<Self, NetError> {
        let std_sock = unicast_socket(&cfg.sock)?;
        crate::socket::coalesce_reads(&std_sock);
        let mut sock = mio::net::UdpSocket::from_std(std_sock);
        let poll = Poll::new().map_err(|e| NetError::io("create poll", e))?;
        poll.registry()
            .register(&mut sock, SOCK, Interest::READABLE | Interest::WRITABLE)
            .map_err(|e| NetError::io("register socket", e))?;
        let waker = Arc::new(
            Waker::new(poll.registry(), WAKE).map_err(|e| NetError::io("create waker", e))?,
        );
        let gsock = if proto.hears_group() {
            let g = socket::group_socket(&cfg.sock)?;
            socket::coalesce_reads(&g);
            let mut g = mio::net::UdpSocket::from_std(g);
            poll.registry()
                .register(&mut g, GROUP, Interest::READABLE)
                .map_err(|e| NetError::io("register group socket", e))?;
            Some(g)
        } else {
            None
        };
        let security = Keys::announced_security(cfg.keys.as_ref());
        // bap receivers ACK a full window at once, or on their ACK-delay timer when the window
        // does not fill (a loss, the end of the data): a quarter of the sender's timeout.
        // A retransmission timeout shorter than the time the pacer needs to let the datagrams
        // in flight out would fire before they left: stretch it to twice that time.
        let in_flight = proto.in_flight(cfg.window);
        let rto = match cfg.rate_bps / 8 {
            0 => cfg.rto,
            rate => cfg.rto.max(Duration::from_nanos(
                (2 * in_flight * dgram as u64).saturating_mul(1_000_000_000) / rate,
            )),
        };
        Ok(Endpoint {
            proto,
            dgram,
            sock,
            gsock,
            dsock: None,
            reading: 0,
            poll,
            events: Events::with_capacity(64),
            waker,
            clock: Clock::new(),
            node: cfg.node_id.unwrap_or_else(nonzero_random),
            session: cfg.session.unwrap_or_else(nonzero_random),
            group: cfg.sock.group,
            wire: {
                // Its own counters in its replay window: its packets bounced back at it by a
                // peer are replays, not news (see `Sealer::remember_sealed`).
                let mut w = Wire::new(cfg.keys.clone(), cfg.loss.clone());
                w.remember_sealed();
                w
            },
            buf: vec![0u8; RECV_BUF],
            batch: RecvBatch::new(),
            security,
            ack_delay_us: u32::try_from(cfg.ack_delay.as_micros()).unwrap_or(u32::MAX),
            ack_timeout_us: u32::try_from(
                rmcast_proto::bap::spec::bap_ack_timeout(rto).as_micros(),
            )
            .unwrap_or(u32::MAX),
            rto,
            interrupt: Interrupt::install(),
            refusals: (rmcast_proto::Time::ZERO, 0),
            cfg,
        })
    }

    /// An ANNOUNCE of this session; an error, never an empty datagram, when the wire format
    /// cannot carry it.
    fn announce(&self, phase: Phase, members: &[u32], params: &[u8]) -> Result<Vec<u8>, NetError> {
        let raw = session::encode_members(members);
        session_packet(
            self.session,
            self.node,
            session::Message::Announce {
                protocol: self.proto.family() as u8,
                phase,
                security: self.security,
                ack_delay_us: self.ack_delay_us,
                window: self.proto.announced_window(self.cfg.window),
                ack_timeout_us: self.ack_timeout_us,
                members: &raw,
                params,
            },
        )
        .map_err(|e| {
            NetError::Failed(format!(
                "cannot announce the session to {} receivers: {e}",
                members.len()
            ))
        })
    }

    /// How a receiver admitted now is admitted: by the key, by `--receiver-list`, or by an
    /// unauthenticated JOIN.
    fn admission(&self) -> Admission {
        match (&self.cfg.keys, &self.cfg.expect) {
            (Some(_), _) => Admission::Key,
            (None, Expect::List(_)) => Admission::Listed,
            (None, _) => Admission::Join,
        }
    }

    /// Tell `node` at `to`, which asked to JOIN and is not admitted, so: an END that names it
    /// alone, addressed to it. Re-sent from another address it ends nobody (receivers act on
    /// their own sender's packets only, and a member ignores an END that does not name it);
    /// the only receiver it ends is the refused one, with `not-admitted`, instead of the
    /// receiver waiting on a session that will never take it. At most [`REFUSALS`] go out
    /// per [`REFUSALS_EVERY`].
    fn refuse(&mut self, node: u32, to: SocketAddr) {
        let now = self.clock.now();
        if now.saturating_since(self.refusals.0) >= REFUSALS_EVERY {
            self.refusals = (now, 0);
        }
        if self.refusals.1 >= REFUSALS {
            return;
        }
        self.refusals.1 += 1;
        let outcomes = session::encode_outcomes(&[(node, session::Outcome::Failed)]);
        if let Ok(end) = session_packet(
            self.session,
            self.node,
            session::Message::End {
                outcomes: &outcomes,
            },
        ) {
            let _ = self.wire.send(&self.sock, to, &end, false);
        }
    }

    /// Sleep in `poll` for at most `wait`; a signal that cuts it short is no error (the
    /// loop sees the interrupt flag: SIGTERM mid-poll ended the sender with 1, not 130).
    fn wait(&mut self, wait: Duration) -> Result<(), NetError> {
        match self.poll.poll(&mut self.events, Some(wait)) {
            Err(e) if e.kind() != std::io::ErrorKind::Interrupted => Err(NetError::io("poll", e)),
            _ => Ok(()),
        }
    }

    /// The next datagram that opens (header, length of the plain datagram in `buf`, sender);
    /// `None` once the sockets have none left. The group socket, if any, is read after the
    /// unicast one, pgm's data port last (its RFC 3208 packets translated); the sender's own
    /// multicasts looped back to it are skipped.
    fn next(&mut self) -> Option<(Header, usize, SocketAddr)> {
        loop {
            let sock = match self.reading {
                0 => Some(&self.sock),
                1 => self.gsock.as_ref(),
                _ => self.dsock.as_ref(),
            };
            let Some((d, from)) = sock.and_then(|s| self.batch.next(s)) else {
                if self.reading < 2 {
                    self.reading += 1;
                    continue;
                }
                self.reading = 0;
                if let Some(d) = self.batch.take_drops() {
                    self.wire.stats.kernel_drops = self.wire.stats.kernel_drops.max(d.into());
                }
                self.wire.stats.recv_batches = self.batch.calls;
                self.wire.stats.recv_coalesced = self.batch.coalesced;
                return None;
            };
            // Our own multicasts, looped back: skipped before they are copied and opened.
            if self.reading == 1 && self.wire.claimed_source(d) == Some(self.node) {
                continue;
            }
            let framed;
            let d = if self.reading == 2 {
                let Some(f) = self.wire.framed_incoming(from, d) else {
                    continue;
                };
                framed = f;
                &framed[..]
            } else {
                d
            };
            // Feedback is small: copied where the loop's handlers look for it.
            let Some(dst) = self.buf.get_mut(..d.len()) else {
                continue;
            };
            dst.copy_from_slice(d);
            if let Some((h, len)) = self.wire.open(dst) {
                return Some((h, len, from));
            }
        }
    }

    /// Carry the agent's packets as a standard's ([`crate::framing`]): translate at the wire
    /// and read feedback on the data port, from `members` (node, address).
    fn frame(
        &mut self,
        f: crate::framing::Framing,
        members: &[(u32, SocketAddr)],
    ) -> Result<(), NetError> {
        let sock = crate::framing::data_socket(&f, &self.cfg.sock)?;
        let mut sock = mio::net::UdpSocket::from_std(sock);
        self.poll
            .registry()
            .register(&mut sock, DATA, Interest::READABLE)
            .map_err(|e| NetError::io("register data socket", e))?;
        let me = crate::pgmwire::local_toward(self.group);
        let mut w =
            crate::framing::Framed::new(f, self.group, me, self.node, false).ok_or_else(|| {
                NetError::setup("the data port is the group's port + 1: give a lower port")
            })?;
        for (node, addr) in members {
            w.peer(*addr, *node);
        }
        self.wire.framed = Some(w);
        self.dsock = Some(sock);
        Ok(())
    }

    /// The plain datagram of `len` bytes that [`Endpoint::next`] left in `buf`.
    fn plain(&self, len: usize) -> &[u8] {
        self.buf.get(..len).unwrap_or_default()
    }
}
