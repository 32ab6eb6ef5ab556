//! The open-mode receiver: a [`pgm::Receiver`] on a plain RFC 3208 socket (see [`super`]).

use super::{open_socket, timed_out, wait_readable, UNKNOWN};
use crate::clock::Clock;
use crate::socket::SocketOpts;
use crate::NetError;
use rmcast_proto::pgm::rfc3208::{Outgoing, Translator, RECEIVER_NODE, SOURCE_NODE};
use rmcast_proto::rng::AgentRng;
use rmcast_proto::{pgm, Agent, Time};
use rmcast_wire::rfc3208::{self, options::id, Body, Opt};
use serde::Serialize;
use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

/// SPMRs go at most this often while no SPM has come.
const SPMR_GAP: Duration = Duration::from_millis(250);

/// An open-mode receiver's settings.
#[derive(Debug, Clone)]
pub struct OpenRecv {
    /// Group, interface, buffers.
    pub sock: SocketOpts,
    /// PGM data-destination port to listen for.
    pub dport: u16,
    /// End after this long without a packet of the session.
    pub idle_exit: Duration,
    /// Give up if no session starts within this long (`None`: wait forever).
    pub wait: Option<Duration>,
}

/// How an open-mode receive ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// An SPM with OPT_FIN came and everything up to its lead was delivered.
    Fin,
    /// The source was silent for the idle time.
    Idle,
}

/// What an open-mode receiver knows at the end.
#[derive(Debug, Clone, Serialize)]
pub struct OpenRecvReport {
    /// Always "open".
    pub mode: &'static str,
    /// The TSI received, as OpenPGM prints it.
    pub tsi: String,
    /// How it ended.
    pub ending: Ending,
    /// Bytes written.
    pub bytes: u64,
    /// TSDUs delivered in order.
    pub tsdus: u64,
    /// NAKs (and NAK lists) sent.
    pub naks_sent: u64,
    /// SPMRs sent.
    pub spmrs_sent: u64,
    /// Duplicate data received.
    pub duplicates: u64,
    /// Datagrams on the port of another session or not PGM.
    pub foreign: u64,
    /// Seconds from the first packet of the session to the end.
    pub seconds: f64,
    /// What open mode cannot know. Delivery is in order without holes: a packet the
    /// source no longer holds stops delivery (the ending is then `idle`).
    pub unknown: [&'static str; 4],
}

fn receiver_config() -> pgm::ReceiverConfig {
    use crate::agents::{socket_int, socket_ms, socket_switch};
    let mut c = pgm::ReceiverConfig::new(RECEIVER_NODE, SOURCE_NODE);
    c.session = rmcast_proto::pgm::rfc3208::SESSION;
    c.nak_backoff = socket_ms("pgm", "nak_backoff_ms");
    c.nak_repeat = socket_ms("pgm", "nak_repeat_ms");
    c.nak_rdata = socket_ms("pgm", "nak_rdata_ms");
    c.nak_rto_min = Some(socket_ms("pgm", "nak_rto_min_ms"));
    c.nak_list = socket_int("pgm", "nak_list")
        .and_then(|n| u16::try_from(n).ok())
        .unwrap_or(1);
    c.nak_overtaken = socket_switch("pgm", "nak_overtaken");
    c.fec_k = 0;
    c.fec_proactive = 0;
    c.cc = None;
    c
}

/// A session once its first packet came.
struct Session {
    tr: Translator,
    agent: pgm::Receiver,
    /// Where upstream packets go: the SPM's path NLA (the data's source address until one
    /// comes) at the group's port.
    source: SocketAddr,
    spm_seen: bool,
    last_spmr: Option<Time>,
    /// The agent's next sequence number after an SPM with OPT_FIN.
    fin: Option<u64>,
    first: Time,
    last: Time,
}

struct State {
    sock: UdpSocket,
    group: SocketAddr,
    dport: u16,
    s: Option<Session>,
    foreign: u64,
    spmrs: u64,
    bytes: u64,
    tsdus: u64,
}

impl State {
    /// Open the session `p` starts (its first SPM, ODATA or RDATA).
    fn start(&mut self, p: &rfc3208::Packet<'_>, from: SocketAddr, now: Time) -> bool {
        let base = match p.body {
            Body::Spm { trail, .. } => trail,
            Body::Odata(d) | Body::Rdata(d) => d.trail,
            _ => return false,
        };
        let nla = match p.body {
            Body::Spm { path, .. } => path,
            _ => from.ip(),
        };
        let tr = Translator::new(p.tsi(), self.dport, base, nla, self.group.ip());
        let seed = rand::random::<u64>();
        self.s = Some(Session {
            tr,
            agent: pgm::Receiver::new(receiver_config(), AgentRng::from_seed(seed)),
            source: SocketAddr::new(nla, self.group.port()),
            spm_seen: false,
            last_spmr: None,
            fin: None,
            first: now,
            last: now,
        });
        true
    }

    fn read(&mut self, now: Time) -> Result<(), NetError> {
        let mut buf = [0u8; 65536];
        let (n, from) = match self.sock.recv_from(&mut buf) {
            Ok(x) => x,
            Err(e) if timed_out(&e) => return Ok(()),
            Err(e) => return Err(NetError::io("receive", e)),
        };
        let Ok(p) = rfc3208::Packet::decode(buf.get(..n).unwrap_or_default()) else {
            self.foreign += 1;
            return Ok(());
        };
        if p.body.upstream() {
            // Other receivers' NAKs and SPMRs to the group.
            return Ok(());
        }
        if self.s.is_none() && (p.dport != self.dport || !self.start(&p, from, now)) {
            self.foreign += 1;
            return Ok(());
        }
        let Some(s) = self.s.as_mut() else {
            return Ok(());
        };
        if !s.tr.ours(&p) {
            self.foreign += 1;
            return Ok(());
        }
        s.last = now;
        if let Body::Spm { path, lead, .. } = p.body {
            s.spm_seen = true;
            s.tr.source_nla = path;
            s.source = SocketAddr::new(path, self.group.port());
            let fin = p
                .options
                .iter()
                .any(|o| matches!(o, Opt::Other { id: i, .. } if *i == id::FIN));
            if fin {
                s.fin = s.tr.seq_in(lead.wrapping_add(1));
            }
        }
        let data = matches!(p.body, Body::Odata(_) | Body::Rdata(_));
        if data && !s.spm_seen && s.last_spmr.is_none_or(|t| now - t >= SPMR_GAP) {
            s.last_spmr = Some(now);
            if let Some(spmr) = s.tr.spmr() {
                let _ = self.sock.send_to(&spmr, s.source);
                let _ = self.sock.send_to(&spmr, self.group);
                self.spmrs += 1;
            }
        }
        if let Some(d) = s.tr.incoming(&p, SOURCE_NODE) {
            s.agent.handle_packet(now, SOURCE_NODE, &d);
        }
        Ok(())
    }

    /// Run the agent's timers, send what it queued, write what it delivered.
    fn service(&mut self, now: Time, out: &mut dyn Write) -> Result<(), NetError> {
        let Some(s) = self.s.as_mut() else {
            return Ok(());
        };
        let tr = &mut s.tr;
        let wire = |dg: &[u8]| match tr.outgoing(dg) {
            Some(Outgoing::Pgm { payload, .. }) => Some(payload),
            _ => None,
        };
        let ends = (self.group, s.source);
        let d = super::service(&mut s.agent, now, &self.sock, ends, wire, out)?;
        self.bytes += d.bytes;
        self.tsdus += d.messages;
        Ok(())
    }
}

/// Receive one PGM session on the group and write its data to `out` (see [`super`]).
pub fn recv(r: &OpenRecv, out: &mut dyn Write) -> Result<OpenRecvReport, NetError> {
    let (sock, _) = open_socket(&r.sock)?;
    let mut st = State {
        sock,
        group: r.sock.group,
        dport: r.dport,
        s: None,
        foreign: 0,
        spmrs: 0,
        bytes: 0,
        tsdus: 0,
    };
    let clock = Clock::new();
    let ending = loop {
        let now = clock.now();
        st.service(now, out)?;
        match &st.s {
            None => {
                if r.wait.is_some_and(|w| now.saturating_since(Time::ZERO) > w) {
                    return Err(NetError::Failed(format!(
                        "no PGM session to data-destination port {} on {} within the wait",
                        r.dport, r.sock.group
                    )));
                }
            }
            Some(s) => {
                if s.fin.is_some_and(|f| st.tsdus >= f) {
                    break Ending::Fin;
                }
                if now.saturating_since(s.last) > r.idle_exit {
                    break Ending::Idle;
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
    Ok(OpenRecvReport {
        mode: "open",
        tsi: s.tr.tsi.to_string(),
        ending,
        bytes: st.bytes,
        tsdus: st.tsdus,
        naks_sent: s.agent.stats().control_sent,
        spmrs_sent: st.spmrs,
        duplicates: s.agent.stats().duplicates,
        foreign: st.foreign,
        seconds: clock.now().saturating_since(s.first).as_secs_f64(),
        unknown: UNKNOWN,
    })
}
