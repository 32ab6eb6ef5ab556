//! `rmcast recv`: join a group, find a session, drive a receiver agent, write verified files.
//!
//! A receive runs the same steps as a send, from the other side, in `session`: find a
//! session (an ANNOUNCE on the group) and JOIN it until admitted, then the transfer (feed the
//! agent, route its feedback, REPORT, deliver into the `sink`), then the goodbye (END names
//! this receiver's outcome). What differs between protocols comes from
//! [`crate::agents::NetProtocol`] and the [`crate::agents::ReceiverSide`] it builds.

mod announce;
mod joined;
mod session;
mod sink;
mod writer;

use crate::endpoint::DriverStats;
use crate::loss::LossConfig;
use crate::secure::Keys;
use crate::socket::SocketOpts;
use crate::NetError;
use serde::Serialize;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Where received data goes.
#[derive(Debug, Clone)]
pub enum Output {
    /// Files into this directory; `force` allows overwriting.
    Dir {
        /// The directory.
        path: PathBuf,
        /// Overwrite files that exist.
        force: bool,
    },
    /// Everything to standard output.
    Stdout,
}

/// Receiver settings.
#[derive(Debug, Clone)]
pub struct RecvConfig {
    /// The group and its socket options.
    pub sock: SocketOpts,
    /// Where received data goes.
    pub output: Output,
    /// This receiver's node id (`None`: a random one).
    pub node_id: Option<u32>,
    /// The session key (`--key-file`): authenticate, and decrypt if the sender encrypts.
    pub keys: Option<Keys>,
    /// Loss injected for experiments.
    pub loss: LossConfig,
    /// Give up if no session is found within this time (`None`: wait forever).
    pub wait: Option<Duration>,
    /// Give up if the sender is silent this long during a session.
    pub sender_timeout: Duration,
    /// Only join this session id.
    pub session: Option<u32>,
    /// With a key: refuse an ANNOUNCE sealed further than this from our clock (a replay of
    /// a dead session's ANNOUNCE); [`crate::secure::FRESHNESS`] by default.
    pub freshness: Duration,
    /// How often a REPORT tells the sender the progress.
    pub report_every: Duration,
    /// Local region for protocols with local repair (`dsp`); `None` = region 0.
    pub region: Option<u16>,
}

impl RecvConfig {
    /// Defaults for receiving on `group` into `output`.
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
            freshness: crate::secure::FRESHNESS,
            report_every: Duration::from_millis(250),
            region: None,
        }
    }
}

/// Progress callbacks.
pub trait RecvObserver {
    /// A session was found and joined.
    fn session(&mut self, _session: u32, _sender: SocketAddr) {}
    /// A file (or stream: `size` `None`) begins.
    fn file(&mut self, _name: &str, _size: Option<u64>) {}
    /// Bytes of the current file received so far.
    fn progress(&mut self, _bytes_in_file: u64) {}
    /// A file ended: verified (`ok`) or not, and why.
    fn file_done(&mut self, _name: &str, _ok: bool, _why: Option<&str>) {}
}

/// An observer that ignores everything.
pub struct NoObserver;
impl RecvObserver for NoObserver {}

/// One received file.
#[derive(Debug, Clone, Serialize)]
pub struct FileResult {
    /// Its name.
    pub name: String,
    /// Bytes received.
    pub bytes: u64,
    /// Whether it arrived whole and verified.
    pub ok: bool,
    /// Where it was written (`None`: standard output, or not kept).
    pub path: Option<String>,
    /// Why it failed.
    pub reason: Option<String>,
    /// A late joiner's stream (`xtp`, `rmcast send --late-join`): only the bytes from its
    /// join point on, kept as `<name>.partial` and not verified against the sender's digest.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// For a partial stream: the offset in the sender's stream of its first byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starts_at: Option<u64>,
    /// Restart mode: the file was sent from this byte on; the bytes before were this
    /// receiver's partial copy from an earlier session (see [`crate::resume`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed_from: Option<u64>,
}

/// The receiver's summary.
#[derive(Debug, Clone, Serialize)]
pub struct RecvReport {
    /// This receiver's node id.
    pub node: u32,
    /// The session it joined.
    pub session: Option<u32>,
    /// The sender's address.
    pub sender: Option<String>,
    /// The files received.
    pub files: Vec<FileResult>,
    /// Application bytes received.
    pub bytes: u64,
    /// Duration of the transfer, seconds.
    pub seconds: f64,
    /// When it held the whole stream (its last delivery), microseconds since the Unix
    /// epoch; `None` if it never did.
    pub done_unix_us: Option<u64>,
    /// Application bytes per second over the transfer, in Mbit/s.
    pub goodput_mbit_s: f64,
    /// Retransmitted data packets received.
    pub repairs_received: u64,
    /// `dsp`: of those, the ones re-multicast locally by the region's designated receiver.
    pub local_repairs_received: u64,
    /// `dsp`: blocks this receiver re-multicast on its region's local group (designated).
    pub local_repairs_sent: u64,
    /// Repairs this receiver sent, whatever the protocol (`srm` and `lms`: a member's
    /// repairs to others; `dsp`: as `local_repairs_sent`; 0 where only the sender repairs).
    pub repairs_sent: u64,
    /// `dsp`: region, role (`designated` or `member`) and local group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// `dsp`: its role, `designated` or `member`.
    pub role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// `dsp`: its region's local group.
    pub local_group: Option<String>,
    /// Data packets received more than once.
    pub duplicates: u64,
    /// Feedback packets the agent sent.
    pub acks_sent: u64,
    /// `completed`, `partial` (a late joiner that received the stream from its join point
    /// to the end), `evicted`, `failed`, `sender-silent`, `not-admitted`, `no-session`,
    /// `interrupted`.
    pub outcome: &'static str,
    /// Admitted while the stream ran (`rmcast send --late-join`).
    pub joined_late: bool,
    /// Times it followed its session to another address after the one it had fell silent
    /// (its relay died and a standby relay took over: `rmcast relay --standby`).
    pub moves: u32,
    /// Why it did not complete.
    pub reason: Option<String>,
    /// What the driver counted.
    pub driver: DriverStats,
    /// Whether every file arrived whole and verified.
    pub success: bool,
}

impl RecvReport {
    /// The exit status `rmcast recv` ends with: [`crate::sender::EXIT_INTERRUPTED`] after a
    /// signal, 0 when everything arrived and verified, else 1.
    pub fn exit_code(&self) -> u8 {
        if self.outcome == "interrupted" {
            crate::sender::EXIT_INTERRUPTED
        } else if self.success {
            0
        } else {
            1
        }
    }
}

/// Declares each failure reason a receiver reports to the sender once: its code (a constant
/// in [`reason`], documented by its text) and its text ([`reason_text`]).
macro_rules! reasons {
    ($($name:ident = $code:literal: $text:literal,)*) => {
        /// Failure reasons a receiver reports to the sender (a REPORT's reason code).
        pub mod reason {
            $(#[doc = $text] pub const $name: u8 = $code;)*
        }

        /// Text for a reason code (an unknown code is unspecified).
        pub fn reason_text(r: u8) -> &'static str {
            match r {
                $(reason::$name => $text,)*
                _ => "unspecified",
            }
        }
    };
}

reasons! {
    NONE = 0: "unspecified",
    DIGEST = 1: "digest mismatch",
    REFUSED_NAME = 2: "file name refused or target exists",
    WRITE = 3: "could not write the file",
    MALFORMED = 4: "malformed application data",
}

/// A receiver whose datagrams come from the caller instead of its sockets: the fuzz target
/// `receiver` (`crates/net/fuzz`) drives the receive path with it — authentication, the
/// header, the session layer's checks, the agent's `handle_packet`, then one turn of the
/// event loop (timers, feedback, deliveries, REPORT, the local group's join). Its sockets are
/// opened as [`receive`] opens them but never read. Its time is the caller's: a receive's
/// `seconds` run to the last datagram's time. [`Fuzzing::reset`] ends a receive and starts
/// the next on the same sockets and writer thread, so one process opens one receiver per
/// configuration. Not part of the API.
#[doc(hidden)]
pub struct Fuzzing {
    r: session::Receiving,
    /// The time of the last datagram.
    now: rmcast_proto::Time,
}

#[doc(hidden)]
impl Fuzzing {
    pub fn open(cfg: RecvConfig) -> Result<Self, NetError> {
        session::Receiving::open(cfg).map(|r| Fuzzing {
            r,
            now: rmcast_proto::Time::ZERO,
        })
    }

    /// The datagram `buf` (opened in place) arrives from `from` at `at` after the start,
    /// followed by one turn of the event loop at that time.
    pub fn datagram(
        &mut self,
        at: Duration,
        from: SocketAddr,
        buf: &mut [u8],
    ) -> Result<(), NetError> {
        let now = rmcast_proto::Time::ZERO + at;
        self.now = now;
        self.r.datagram(now, buf, from, &mut NoObserver)?;
        self.r.turn(now, &mut NoObserver);
        self.r.join_local()
    }

    /// Whether the receive has ended.
    pub fn ended(&self) -> bool {
        self.r.ended()
    }

    /// A live session of `proto`, sender `sender` of session `session` on `group` with the
    /// receivers `joined` admitted: the sender's agent as the protocol starts it
    /// ([`crate::agents::NetProtocol::start`], window 64, 1,472-byte datagrams) and the
    /// running ANNOUNCE its side builds ([`crate::agents::SenderSide::params`]), announcing
    /// the security mode of `keys`.
    pub fn session(
        proto: &crate::agents::Protocol,
        session: u32,
        sender: u32,
        group: SocketAddr,
        joined: &[crate::agents::Joiner],
        keys: Option<&Keys>,
    ) -> Result<(Box<dyn rmcast_proto::Agent>, Vec<u8>), NetError> {
        use rmcast_wire::session::{encode_members, Message, Phase};
        let cfg = crate::sender::SendConfig {
            window: 64,
            ..crate::sender::SendConfig::new(group)
        };
        let settings = crate::agents::SenderSettings::new(
            &cfg,
            1472,
            sender,
            session,
            Duration::from_millis(20),
        );
        let start = crate::agents::Start {
            joined,
            group,
            stream: "",
        };
        let started = proto.start(&settings, &start)?;
        let params = started.side.params()?;
        let members = encode_members(&start.ids());
        let announce = crate::endpoint::session_packet(
            session,
            sender,
            Message::Announce {
                protocol: proto.family() as u8,
                phase: Phase::Running,
                security: Keys::announced_security(keys),
                ack_delay_us: 0,
                window: proto.announced_window(cfg.window),
                ack_timeout_us: 5_000,
                members: &members,
                params: &params,
            },
        )
        .map_err(|e| NetError::setup(format!("the ANNOUNCE does not encode: {e}")))?;
        Ok((started.agent, announce))
    }

    /// The receive's summary (as [`receive`] returns it, at the last datagram's time), and
    /// the receiver back to what [`Fuzzing::open`] gives: no session, nothing counted, an
    /// empty sink, the local group's socket closed, the sockets' queues empty, time zero.
    pub fn reset(&mut self) -> RecvReport {
        let now = std::mem::replace(&mut self.now, rmcast_proto::Time::ZERO);
        self.r.reset(now)
    }
}

/// Run a receiver until its session ends.
pub fn receive(cfg: RecvConfig, obs: &mut dyn RecvObserver) -> Result<RecvReport, NetError> {
    let mut r = session::Receiving::open(cfg)?;
    r.run(obs)?;
    Ok(r.report())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests;
