//! The open-mode sender: a [`pgm::Source`] on a plain RFC 3208 socket (see [`super`]).

use super::{fill, gap, open_socket, timed_out, wait_readable, UNKNOWN};
use crate::clock::Clock;
use crate::socket::SocketOpts;
use crate::NetError;
use bytes::Bytes;
use rmcast_proto::pgm::rfc3208::{Outgoing, Translator, RECEIVER_NODE, SOURCE_NODE};
use rmcast_proto::{pgm, Agent, Event, GroupId, SenderAgent, Time};
use rmcast_wire::rfc3208::{self, Gsi, Tsi};
use serde::Serialize;
use std::io::Read;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

/// IPv4 (20), UDP (8), the PGM header (16) and ODATA's sqn and trail (8): what one ODATA
/// adds to its APDU on the wire.
pub const ODATA_OVERHEAD: usize = 52;

/// Copies of the source's first SPM sent before its first ODATA, back to back, as OpenPGM's
/// `pgm_connect` announces a source with three SPMs. A receiver learns the source's address
/// (the SPM's path NLA) only from an SPM and sends no NAK before: OpenPGM's declares a loss
/// unrecoverable ("Dropped N messages due to invalid NLA", then a session reset) when its NAK
/// back-off ends with no SPM seen. With one SPM at the start and the next a whole
/// `spm_interval` later, a lost first SPM lost every packet lost in that interval
/// (`docs/pgm-rfc3208.md`, issue 62).
const ANNOUNCE_SPMS: u32 = 3;

/// An SPMR is answered with an SPM at once, but at most once in this long: any host can send
/// SPMRs, and a flood of them must not become a flood of SPMs to the group (a defence limit
/// of ours, below the 250 ms between an open receiver's own SPMRs).
const SPMR_ANSWER_GAP: Duration = Duration::from_millis(100);

/// SPMs with OPT_FIN sent at the end, this far apart.
const FINS: u32 = 3;
const FIN_GAP: Duration = Duration::from_millis(20);

/// An open-mode sender's settings.
#[derive(Debug, Clone)]
pub struct OpenSend {
    /// Group, interface, TTL, loopback, buffers.
    pub sock: SocketOpts,
    /// Pacing rate of new data, bit/s on the wire (0: unpaced).
    pub rate_bps: u64,
    /// Bytes of the input per ODATA (one APDU each).
    pub segment: usize,
    /// How long after the last new data the source answers NAKs.
    pub linger: Duration,
    /// PGM data-destination port.
    pub dport: u16,
    /// The TSI's source port.
    pub sport: u16,
    /// The GSI.
    pub gsi: [u8; 6],
    /// Packets kept for repair (the transmit window).
    pub txw: u64,
}

/// What an open-mode sender knows at the end.
#[derive(Debug, Clone, Serialize)]
pub struct OpenSendReport {
    /// Always "open".
    pub mode: &'static str,
    /// The TSI, as OpenPGM prints it.
    pub tsi: String,
    /// Bytes of input sent as ODATA.
    pub bytes: u64,
    /// ODATA packets (APDUs).
    pub odata: u64,
    /// RDATA packets sent.
    pub rdata: u64,
    /// NAKs (and NAK lists) received.
    pub naks_received: u64,
    /// Of those, held off (a repair of the same packet had just gone).
    pub naks_held_off: u64,
    /// Datagrams on the port that were not this session's or not PGM.
    pub foreign: u64,
    /// Seconds from the first ODATA to the end of the linger.
    pub seconds: f64,
    /// Seconds the data took (first ODATA to the last).
    pub data_seconds: f64,
    /// What open mode cannot know.
    pub unknown: [&'static str; 4],
}

fn source_config(s: &OpenSend) -> pgm::SourceConfig {
    let mut c = pgm::SourceConfig::new(SOURCE_NODE, GroupId(0));
    c.session = rmcast_proto::pgm::rfc3208::SESSION;
    let spm = crate::agents::socket_ms("pgm", "spm_interval_ms");
    c.spm_interval = (!spm.is_zero()).then_some(spm);
    c.repair_delay = crate::agents::socket_ms("pgm", "repair_delay_ms");
    c.rdata_holdoff = crate::agents::socket_ms("pgm", "rdata_holdoff_ms");
    c.linger = s.linger;
    c.txw = Some(s.txw.max(1));
    c.fec_k = 0;
    c.fec_proactive = 0;
    c.cc = None;
    c
}

struct Io {
    sock: UdpSocket,
    group: SocketAddr,
    tr: Translator,
    foreign: u64,
    /// When an SPMR was last answered.
    spmr_answered: Option<Time>,
}

impl Io {
    /// Announce the session before any data: what the agent sends when its timers first run
    /// (its first SPM, due at time zero), [`ANNOUNCE_SPMS`] times.
    fn announce(&mut self, agent: &mut pgm::Source, now: Time) -> Result<(), NetError> {
        if agent.poll_timeout().is_some_and(|t| t <= now) {
            agent.handle_timeout(now);
        }
        self.send_queued(agent, ANNOUNCE_SPMS)
    }

    /// Send what the agent queued.
    fn flush(&mut self, agent: &mut pgm::Source) -> Result<(), NetError> {
        self.send_queued(agent, 1)
    }

    /// Send each datagram the agent queued `copies` times, translated to RFC 3208.
    fn send_queued(&mut self, agent: &mut pgm::Source, copies: u32) -> Result<(), NetError> {
        while let Some(t) = agent.poll_transmit() {
            // Open mode has no session layer: TFMCC's datagrams (never made: no TFMCC here)
            // would have nowhere to go.
            let Some(Outgoing::Pgm { payload, .. }) = self.tr.outgoing(&t.payload) else {
                continue;
            };
            for _ in 0..copies {
                self.sock
                    .send_to(&payload, self.group)
                    .map_err(|e| NetError::io("send to the group", e))?;
            }
        }
        Ok(())
    }

    /// Read one datagram (or time out) and hand a NAK of this session to the agent.
    fn read(&mut self, agent: &mut pgm::Source, now: Time) -> Result<(), NetError> {
        let mut buf = [0u8; 65536];
        let n = match self.sock.recv_from(&mut buf) {
            Ok((n, _)) => n,
            Err(e) if timed_out(&e) => return Ok(()),
            Err(e) => return Err(NetError::io("receive", e)),
        };
        let Ok(p) = rfc3208::Packet::decode(buf.get(..n).unwrap_or_default()) else {
            self.foreign += 1;
            return Ok(());
        };
        if !p.body.upstream() {
            // Our own packets looped back, or another source's.
            if p.tsi() != self.tr.tsi {
                self.foreign += 1;
            }
            return Ok(());
        }
        if !self.tr.ours(&p) {
            self.foreign += 1;
            return Ok(());
        }
        // SPMR (a receiver that saw data before any SPM): an SPM at once, rate-limited.
        if p.body == rfc3208::Body::Spmr {
            if self
                .spmr_answered
                .is_none_or(|t| now.saturating_since(t) >= SPMR_ANSWER_GAP)
            {
                self.spmr_answered = Some(now);
                agent.spm_now(now);
            }
            return Ok(());
        }
        if let Some(d) = self.tr.incoming(&p, RECEIVER_NODE) {
            agent.handle_packet(now, RECEIVER_NODE, &d);
        }
        Ok(())
    }
}

/// Send `input` as plain PGM (see [`super`]).
pub fn send(s: &OpenSend, input: &mut dyn Read) -> Result<OpenSendReport, NetError> {
    if s.segment == 0 || s.segment > pgm::MAX_MESSAGE {
        return Err(NetError::setup(format!(
            "an APDU of {} bytes does not fit one ODATA",
            s.segment
        )));
    }
    let (sock, local) = open_socket(&s.sock)?;
    let tsi = Tsi {
        gsi: Gsi(s.gsi),
        sport: s.sport,
    };
    let tr = Translator::new(tsi, s.dport, 0, local.into(), s.sock.group.ip());
    let mut io = Io {
        sock,
        group: s.sock.group,
        tr,
        foreign: 0,
        spmr_answered: None,
    };
    let mut agent = pgm::Source::new(source_config(s));
    let clock = Clock::new();
    io.announce(&mut agent, clock.now())?;
    let step = gap(s.segment + ODATA_OVERHEAD, s.rate_bps);
    let (mut next, mut sent, mut bytes) = (Time::ZERO, 0u64, 0u64);
    let (mut eof, mut data_end) = (false, Time::ZERO);
    let mut chunk = vec![0u8; s.segment];
    loop {
        let now = clock.now();
        while !eof && now >= next && agent.can_send() {
            let n = fill(input, &mut chunk).map_err(|e| NetError::io("read the input", e))?;
            if n == 0 {
                eof = true;
                data_end = now;
                agent.close(now);
                break;
            }
            agent.delivered_by_all(now, (sent + 1).saturating_sub(s.txw.max(1)));
            agent
                .send(
                    now,
                    Bytes::copy_from_slice(chunk.get(..n).unwrap_or_default()),
                )
                .map_err(|e| NetError::Failed(format!("the pgm source refused data: {e:?}")))?;
            sent += 1;
            bytes += n as u64;
            next = if now.saturating_since(next) > step {
                now
            } else {
                next
            } + step;
            io.flush(&mut agent)?;
        }
        if agent.poll_timeout().is_some_and(|t| t <= now) {
            agent.handle_timeout(now);
        }
        io.flush(&mut agent)?;
        let mut done = false;
        while let Some(ev) = agent.poll_event() {
            done |= matches!(ev, Event::Completed);
        }
        if done {
            break;
        }
        let mut wake = agent.poll_timeout().unwrap_or(Time::MAX);
        if !eof {
            wake = wake.min(next);
        }
        let wait = clock
            .until(wake)
            .clamp(Duration::from_micros(50), Duration::from_millis(20));
        wait_readable(&io.sock, wait);
        io.read(&mut agent, clock.now())?;
    }
    for i in 0..FINS {
        if let Some(fin) = io.tr.fin_spm(io.tr.spm_next + u64::from(i), sent) {
            io.sock
                .send_to(&fin, io.group)
                .map_err(|e| NetError::io("send to the group", e))?;
        }
        std::thread::sleep(FIN_GAP);
    }
    let st = agent.stats();
    Ok(OpenSendReport {
        mode: "open",
        tsi: tsi.to_string(),
        bytes,
        odata: sent,
        rdata: st.repairs_sent,
        naks_received: agent.naks_received,
        naks_held_off: agent.naks_held_off,
        foreign: io.foreign,
        seconds: clock.now().as_secs_f64(),
        data_seconds: data_end.as_secs_f64(),
        unknown: UNKNOWN,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcast_wire::rfc3208::Body;

    /// An SPMR brings an SPM to the group at once; a second one within
    /// [`SPMR_ANSWER_GAP`] does not, one after it does.
    #[test]
    fn an_spmr_is_answered_with_an_spm_at_once_rate_limited() {
        let tsi = Tsi {
            gsi: Gsi([1, 2, 3, 4, 5, 6]),
            sport: 4000,
        };
        let lo = "127.0.0.1".parse().unwrap();
        let group = UdpSocket::bind("127.0.0.1:0").unwrap();
        group
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        let at = sock.local_addr().unwrap();
        let mut io = Io {
            sock,
            group: group.local_addr().unwrap(),
            tr: Translator::new(tsi, 7500, 0, lo, lo),
            foreign: 0,
            spmr_answered: None,
        };
        let mut c = pgm::SourceConfig::new(SOURCE_NODE, GroupId(0));
        c.session = rmcast_proto::pgm::rfc3208::SESSION;
        c.spm_interval = None;
        let mut agent = pgm::Source::new(c);
        let receiver = Translator::new(tsi, 7500, 0, lo, lo);
        let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
        let spms_after = |io: &mut Io, agent: &mut pgm::Source, ms: u64| {
            peer.send_to(&receiver.spmr().unwrap(), at).unwrap();
            io.read(agent, Time::from_millis(ms)).unwrap();
            io.flush(agent).unwrap();
            let mut buf = [0u8; 2048];
            let mut n = 0;
            while let Ok(len) = group.recv(&mut buf) {
                let p = rfc3208::Packet::decode(&buf[..len]).unwrap();
                assert!(matches!(p.body, Body::Spm { .. }), "{:?}", p.body);
                n += 1;
                group
                    .set_read_timeout(Some(Duration::from_millis(100)))
                    .unwrap();
            }
            n
        };
        assert_eq!(spms_after(&mut io, &mut agent, 1000), 1, "answered");
        assert_eq!(spms_after(&mut io, &mut agent, 1050), 0, "within the gap");
        assert_eq!(spms_after(&mut io, &mut agent, 1100), 1, "after it");
        assert_eq!(io.foreign, 0);
    }
}
