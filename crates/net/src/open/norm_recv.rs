//! The open-mode NORM receiver: a [`norm::Receiver`] on plain RFC 5740 bytes, receiving one
//! object from NRL's libnorm or any NORM sender (see [`super`]). libnorm's Reed–Solomon
//! repairs are decoded by [`LibnormRx`] before the agent sees them.

use super::{open_socket, timed_out, wait_readable};
use crate::clock::Clock;
use crate::socket::SocketOpts;
use crate::NetError;
use rmcast_proto::norm::rfc5740::rx::LibnormRx;
use rmcast_proto::norm::rfc5740::Translator;
use rmcast_proto::norm::{self, ReceiverConfig};
use rmcast_proto::rng::AgentRng;
use rmcast_proto::{Agent, NodeId, Time};
use rmcast_wire::rfc5740::{Body, Message};
use serde::Serialize;
use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

/// The session id between the shim and the agent (never on the wire).
const SESSION: u32 = 0x5740;

/// What an open-mode NORM receiver cannot know.
pub const UNKNOWN_RECV: [&str; 3] = [
    "how many receivers there are (NORM has no JOIN: a sender knows only its acking nodes)",
    "whether the other receivers completed (their ACKs go to the sender alone)",
    "whether the data is the file sent (no digest: NORM carries none; NORM_INFO is not read)",
];

/// A random NORM node id (neither 0 nor `NORM_NODE_ANY`).
pub fn random_node_id() -> u32 {
    rand::random::<u32>().clamp(1, u32::MAX - 1)
}

/// An open-mode NORM receiver's settings.
#[derive(Debug, Clone)]
pub struct NormRecv {
    /// Group, interface, buffers.
    pub sock: SocketOpts,
    /// This receiver's NORM node id (libnorm's sender waits for the ACKs of the acking
    /// nodes it was given: give one of them).
    pub node_id: u32,
    /// End after this long without a message from the sender (once complete, or not).
    pub idle_exit: Duration,
    /// Give up if no sender starts within this long (`None`: wait forever).
    pub wait: Option<Duration>,
}

/// How an open-mode NORM receive ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NormEnding {
    /// The whole object was delivered (then the sender fell silent).
    Complete,
    /// The sender fell silent before the object was whole.
    Idle,
}

/// What an open-mode NORM receiver knows at the end.
#[derive(Debug, Clone, Serialize)]
pub struct NormRecvReport {
    /// Always "open".
    pub mode: &'static str,
    /// The sender's NORM node id.
    pub sender: u32,
    /// The sender's instance id.
    pub instance: u16,
    /// The object's size from EXT_FTI (0: none seen).
    pub object_size: u64,
    /// How it ended.
    pub ending: NormEnding,
    /// Bytes written.
    pub bytes: u64,
    /// Segments delivered in order.
    pub segments: u64,
    /// Parity segments received, and source segments rebuilt from them (RS8).
    pub parity_received: u64,
    /// Source segments rebuilt from parity.
    pub recovered: u64,
    /// NACKs and ACKs sent.
    pub feedback_sent: u64,
    /// Datagrams on the port that were not NORM, another sender's, or another object's.
    pub foreign: u64,
    /// Seconds from the first message of the sender to the end.
    pub seconds: f64,
    /// What open mode cannot know.
    pub unknown: [&'static str; 3],
}

/// A session once the sender's first message came.
struct Session {
    shim: LibnormRx,
    agent: norm::Receiver,
    sender: u32,
    /// Where unicast feedback goes: the address the sender's messages come from.
    from: SocketAddr,
    first: Time,
    last: Time,
}

struct State {
    sock: UdpSocket,
    group: SocketAddr,
    node_id: u32,
    s: Option<Session>,
    foreign: u64,
    bytes: u64,
    segments: u64,
}

impl State {
    fn start(&mut self, m: &Message<'_>, from: SocketAddr, now: Time) {
        let mut c = ReceiverConfig::new(NodeId(self.node_id), NodeId(m.source_id));
        c.session = SESSION;
        let tr = Translator::new(0, SESSION, 0.5, 1_000.0, 16);
        self.s = Some(Session {
            shim: LibnormRx::new(tr),
            agent: norm::Receiver::new(c, AgentRng::from_seed(rand::random())),
            sender: m.source_id,
            from,
            first: now,
            last: now,
        });
    }

    fn read(&mut self, now: Time) -> Result<(), NetError> {
        let mut buf = [0u8; 65536];
        let (n, from) = match self.sock.recv_from(&mut buf) {
            Ok(x) => x,
            Err(e) if timed_out(&e) => return Ok(()),
            Err(e) => return Err(NetError::io("receive", e)),
        };
        let Ok(m) = Message::decode(buf.get(..n).unwrap_or_default()) else {
            self.foreign += 1;
            return Ok(());
        };
        let sender_msg = matches!(
            m.body,
            Body::Data { .. } | Body::Info { .. } | Body::Cmd { .. }
        );
        if self.s.is_none() && sender_msg {
            self.start(&m, from, now);
        }
        let Some(s) = self.s.as_mut() else {
            return Ok(());
        };
        if sender_msg {
            if m.source_id != s.sender {
                self.foreign += 1;
                return Ok(());
            }
            s.last = now;
            s.from = from;
        }
        for dg in s.shim.incoming(&m) {
            s.agent.handle_packet(now, NodeId(m.source_id), &dg);
        }
        Ok(())
    }

    /// Run the agent's timers, send what it queued, write what it delivered.
    fn service(&mut self, now: Time, out: &mut dyn Write) -> Result<(), NetError> {
        let Some(s) = self.s.as_mut() else {
            return Ok(());
        };
        let shim = &mut s.shim;
        let ends = (self.group, s.from);
        let wire = |dg: &[u8]| shim.outgoing(dg);
        let d = super::service(&mut s.agent, now, &self.sock, ends, wire, out)?;
        self.bytes += d.bytes;
        self.segments += d.messages;
        Ok(())
    }
}

/// Receive one NORM object on the group and write it to `out` (see [`super`]).
pub fn recv(r: &NormRecv, out: &mut dyn Write) -> Result<NormRecvReport, NetError> {
    let (sock, _) = open_socket(&r.sock)?;
    let mut st = State {
        sock,
        group: r.sock.group,
        node_id: r.node_id,
        s: None,
        foreign: 0,
        bytes: 0,
        segments: 0,
    };
    let clock = Clock::new();
    let ending = loop {
        let now = clock.now();
        st.service(now, out)?;
        match &st.s {
            None => {
                if r.wait.is_some_and(|w| now.saturating_since(Time::ZERO) > w) {
                    return Err(NetError::Failed(format!(
                        "no NORM sender on {} within the wait",
                        r.sock.group
                    )));
                }
            }
            Some(s) => {
                if now.saturating_since(s.last) > r.idle_exit {
                    break if s.agent.is_complete() {
                        NormEnding::Complete
                    } else {
                        NormEnding::Idle
                    };
                }
            }
        }
        let wake = st.s.as_ref().and_then(|s| s.agent.poll_timeout());
        let wait = wake
            .map_or(Duration::from_millis(20), |t| clock.until(t))
            .clamp(Duration::from_micros(50), Duration::from_millis(20));
        wait_readable(&st.sock, wait);
        st.read(clock.now())?;
    };
    out.flush()
        .map_err(|e| NetError::io("write the output", e))?;
    let Some(s) = st.s else {
        return Err(NetError::Failed("no session".into()));
    };
    Ok(NormRecvReport {
        mode: "open",
        sender: s.sender,
        instance: s.shim.tr.instance_id,
        object_size: s.shim.fti().map_or(0, |f| f.object_size),
        ending,
        bytes: st.bytes,
        segments: st.segments,
        parity_received: s.shim.parity_received,
        recovered: s.shim.recovered,
        feedback_sent: s.agent.stats().control_sent,
        foreign: st.foreign + s.shim.other_objects,
        seconds: clock.now().saturating_since(s.first).as_secs_f64(),
        unknown: UNKNOWN_RECV,
    })
}
