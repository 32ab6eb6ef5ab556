//! The open-mode NORM sender: a [`norm::Sender`] sending one file as plain RFC 5740 to NRL's
//! libnorm receivers or any NORM receiver (see [`super`]). The object is a FILE with
//! libnorm's EXT_FTI and RFC 5052's block partition; repairs are libnorm's RS8 parity
//! ([`LibnormTx`]) or the sources asked.

use super::{fill, gap, open_socket, timed_out, wait_readable};
use crate::clock::Clock;
use crate::socket::SocketOpts;
use crate::NetError;
use bytes::Bytes;
use rmcast_proto::deploy::FromParams;
use rmcast_proto::norm::rfc5740::tx::LibnormTx;
use rmcast_proto::norm::rfc5740::Translator;
use rmcast_proto::norm::{self, SenderConfig};
use rmcast_proto::{Event, GroupId, NodeId, SenderAgent, Time};
use rmcast_wire::rfc5740::{obj_flag, Body, Message};
use serde::Serialize;
use std::io::Read;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

/// IPv4 (20), UDP (8), NORM_DATA's header with fec_id 5's payload id (20) and EXT_FTI (16):
/// what one NORM_DATA adds to its segment on the wire.
pub const DATA_OVERHEAD: usize = 64;

/// The session id between the agent and the shim (never on the wire).
const SESSION: u32 = 0x5740;

/// libnorm's (and normfile's) block length and parity count.
const MAX_BLOCK: u8 = 64;
const PARITY: u8 = 16;

/// What an open-mode NORM sender cannot know.
pub const UNKNOWN_SEND: [&str; 3] = [
    "how many receivers there are (NORM has no JOIN; only the acking nodes named answer)",
    "whether a receiver that is not an acking node completed (it sends no ACK)",
    "whether the data a receiver wrote is the file sent (no digest: NORM carries none)",
];

/// An open-mode NORM sender's settings.
#[derive(Debug, Clone)]
pub struct NormSend {
    /// Group, interface, TTL, loopback, buffers.
    pub sock: SocketOpts,
    /// Pacing rate of new data, bit/s on the wire (0: unpaced); under NORM-CC, its cap.
    pub rate_bps: u64,
    /// NORM-CC (RFC 5740 §5.5.2, `--rate auto`): the rate follows the receivers' feedback
    /// (libnorm's receivers answer the CC probes).
    pub cc: bool,
    /// Bytes per segment (libnorm's 1,400 by default).
    pub segment: u16,
    /// This sender's NORM node id.
    pub node_id: u32,
    /// The receivers whose watermark ACK ends the transfer (none: the FLUSH rounds run out).
    pub acking_nodes: Vec<u32>,
}

/// What an open-mode NORM sender knows at the end.
#[derive(Debug, Clone, Serialize)]
pub struct NormSendReport {
    /// Always "open".
    pub mode: &'static str,
    /// This sender's node id and instance id.
    pub node_id: u32,
    /// The instance id.
    pub instance: u16,
    /// The object's size.
    pub bytes: u64,
    /// Source segments.
    pub segments: u64,
    /// NACKs received.
    pub nacks_received: u64,
    /// libnorm RS8 parity segments sent.
    pub parity_sent: u64,
    /// Source segments sent again.
    pub sources_resent: u64,
    /// The acking nodes named, and whether all acknowledged the watermark.
    pub acking_nodes: Vec<u32>,
    /// Every acking node acknowledged (false without acking nodes).
    pub acknowledged: bool,
    /// Datagrams on the port that were not NORM feedback to this sender.
    pub foreign: u64,
    /// Seconds from the first segment to the end.
    pub seconds: f64,
    /// Seconds the new data took.
    pub data_seconds: f64,
    /// Under NORM-CC: the rate at the end, the current limiting receiver and whether slow
    /// start is still on; `None` at a fixed rate.
    pub cc: Option<CcReport>,
    /// What open mode cannot know.
    pub unknown: [&'static str; 3],
}

/// NORM-CC at the end of an open-mode send.
#[derive(Debug, Clone, Serialize)]
pub struct CcReport {
    /// The NORM-CC rate at the end, bit/s of datagrams.
    pub rate_bps: u64,
    /// The current limiting receiver's node id, if one answered.
    pub clr: Option<u32>,
    /// Still in slow start (no receiver reported a loss).
    pub slow_start: bool,
}

/// The agent: a NORM sender, paced by NORM-CC or not.
enum Role {
    Fixed(Box<norm::Sender>),
    Cc(Box<norm::CcSender>),
}

impl Role {
    fn get(&mut self) -> &mut dyn SenderAgent {
        match self {
            Role::Fixed(a) => a.as_mut(),
            Role::Cc(a) => a.as_mut(),
        }
    }

    fn sender(&self) -> &norm::Sender {
        match self {
            Role::Fixed(a) => a,
            Role::Cc(a) => a.sender(),
        }
    }

    fn cc_report(&self) -> Option<CcReport> {
        let Role::Cc(a) = self else { return None };
        let cc = a.cc();
        Some(CcReport {
            rate_bps: cc.rate().saturating_mul(8),
            clr: cc.clr(),
            slow_start: cc.slow_start(),
        })
    }
}

struct Io {
    sock: UdpSocket,
    group: SocketAddr,
    tx: LibnormTx,
    node_id: u32,
    foreign: u64,
}

impl Io {
    fn flush(&mut self, agent: &mut dyn SenderAgent) -> Result<(), NetError> {
        while let Some(t) = agent.poll_transmit() {
            let Some(bytes) = self.tx.outgoing(&t.payload) else {
                continue;
            };
            self.sock
                .send_to(&bytes, self.group)
                .map_err(|e| NetError::io("send to the group", e))?;
        }
        Ok(())
    }

    fn read(&mut self, agent: &mut dyn SenderAgent, now: Time) -> Result<(), NetError> {
        let mut buf = [0u8; 65536];
        let n = match self.sock.recv_from(&mut buf) {
            Ok((n, _)) => n,
            Err(e) if timed_out(&e) => return Ok(()),
            Err(e) => return Err(NetError::io("receive", e)),
        };
        let Ok(m) = Message::decode(buf.get(..n).unwrap_or_default()) else {
            self.foreign += 1;
            return Ok(());
        };
        let to_us = match m.body {
            Body::Nack { server_id, .. } | Body::Ack { server_id, .. } => server_id == self.node_id,
            _ => m.source_id == self.node_id,
        };
        if !to_us {
            self.foreign += 1;
            return Ok(());
        }
        if m.source_id == self.node_id {
            // Our own messages looped back.
            return Ok(());
        }
        tracing::debug!(?now, from = m.source_id, body = ?m.body, "norm open send: feedback");
        if let Some(dg) = self.tx.incoming(&m) {
            agent.handle_packet(now, NodeId(m.source_id), &dg);
        }
        if let Some(dg) = self.tx.tr.nack_feedback(&m) {
            agent.handle_packet(now, NodeId(m.source_id), &dg);
        }
        Ok(())
    }
}

fn sender_config(s: &NormSend, k: u16) -> SenderConfig {
    let p = norm::Params {
        probe: crate::agents::socket_ms("norm", "probe_ms"),
        ..norm::Params::default()
    };
    let mut c = SenderConfig::from_params(&p, (NodeId(s.node_id), GroupId(0)));
    c.session = SESSION;
    c.fec.k = k;
    c.fec.parity_max = u16::from(PARITY);
    // Without acking nodes, one that never answers: the FLUSH rounds run their course.
    c.receivers = if s.acking_nodes.is_empty() {
        vec![NodeId(0)]
    } else {
        s.acking_nodes.iter().copied().map(NodeId).collect()
    };
    c
}

/// Send `size` bytes of `input` as one NORM FILE object (see [`super`]).
pub fn send(s: &NormSend, size: u64, input: &mut dyn Read) -> Result<NormSendReport, NetError> {
    if s.segment == 0 || usize::from(s.segment) > norm::MAX_MESSAGE {
        return Err(NetError::setup(format!(
            "a segment of {} bytes does not fit one NORM_DATA",
            s.segment
        )));
    }
    let instance = rand::random::<u16>();
    let mut tr = Translator::new(instance, SESSION, 0.5, 1_000.0, PARITY);
    tr.object_flags = obj_flag::FILE;
    let mut tx = LibnormTx::new(tr, size, s.segment, MAX_BLOCK, PARITY)
        .ok_or_else(|| NetError::setup("NORM sends no empty object: the file is empty"))?;
    tx.probe_rate = (!s.cc && s.rate_bps > 0).then_some(s.rate_bps / 8);
    let inner = norm::Sender::new(sender_config(s, tx.agent_k()));
    let mut agent = if s.cc {
        let cfg = crate::agents::norm_cc_config(s.rate_bps);
        Role::Cc(Box::new(norm::CcSender::new(inner, cfg)))
    } else {
        Role::Fixed(Box::new(inner))
    };
    let (sock, _) = open_socket(&s.sock)?;
    let mut io = Io {
        sock,
        group: s.sock.group,
        tx,
        node_id: s.node_id,
        foreign: 0,
    };
    let clock = Clock::new();
    let segments = size.div_ceil(u64::from(s.segment));
    // At a fixed rate the loop paces new data; under NORM-CC the agent does (`can_send`).
    let step = if s.cc {
        Duration::ZERO
    } else {
        gap(usize::from(s.segment) + DATA_OVERHEAD, s.rate_bps)
    };
    let (mut next, mut sent, mut data_end) = (Time::ZERO, 0u64, Time::ZERO);
    let mut chunk = vec![0u8; usize::from(s.segment)];
    let mut acknowledged = !s.acking_nodes.is_empty();
    loop {
        let now = clock.now();
        let agent = agent.get();
        // Timers first: under NORM-CC the pacer's credit is the agent's as of its last call.
        if agent.poll_timeout().is_some_and(|t| t <= now) {
            agent.handle_timeout(now);
        }
        while sent < segments && now >= next && agent.can_send() {
            let want = (size - sent * u64::from(s.segment)).min(u64::from(s.segment)) as usize;
            let buf = chunk.get_mut(..want).unwrap_or_default();
            let n = fill(input, buf).map_err(|e| NetError::io("read the input", e))?;
            if n < want {
                return Err(NetError::Failed(format!(
                    "the input ended at {} of {size} bytes",
                    sent * u64::from(s.segment) + n as u64
                )));
            }
            let refused = |e| NetError::Failed(format!("the norm sender refused data: {e:?}"));
            agent
                .send(now, Bytes::copy_from_slice(buf))
                .map_err(refused)?;
            if io.tx.filler_after(sent) {
                agent.send(now, Bytes::from_static(b"-")).map_err(refused)?;
            }
            sent += 1;
            if sent == segments {
                data_end = now;
                agent.close(now);
            }
            next = if now.saturating_since(next) > step {
                now
            } else {
                next
            } + step;
            io.flush(agent)?;
        }
        io.flush(agent)?;
        let mut done = false;
        while let Some(ev) = agent.poll_event() {
            match ev {
                Event::Completed => done = true,
                Event::MessageDone { failed: true, .. } => acknowledged = false,
                _ => {}
            }
        }
        if done {
            break;
        }
        let mut wake = agent.poll_timeout().unwrap_or(Time::MAX);
        if sent < segments {
            // At a fixed rate the next segment's time; under NORM-CC at once if the pacer
            // allows one now, else `poll_timeout` holds the pacer's time.
            if !s.cc {
                wake = wake.min(next);
            } else if agent.can_send() {
                wake = Time::ZERO;
            }
        }
        let wait = clock
            .until(wake)
            .clamp(Duration::from_micros(50), Duration::from_millis(20));
        wait_readable(&io.sock, wait);
        io.read(agent, clock.now())?;
    }
    Ok(NormSendReport {
        mode: "open",
        node_id: s.node_id,
        instance,
        bytes: size,
        segments,
        nacks_received: agent.sender().nacks_received,
        parity_sent: io.tx.parity_sent,
        sources_resent: io.tx.sources_resent,
        acking_nodes: s.acking_nodes.clone(),
        acknowledged,
        foreign: io.foreign,
        seconds: clock.now().as_secs_f64(),
        data_seconds: data_end.as_secs_f64(),
        cc: agent.cc_report(),
        unknown: UNKNOWN_SEND,
    })
}
