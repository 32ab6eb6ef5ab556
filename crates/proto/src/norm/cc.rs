//! NORM-CC (RFC 5740 §5.5.2): the state of the sender's rate and of a receiver's feedback,
//! sans-IO; [`super::cc_agent`] carries it in `norm`'s messages (CC RATE, CC ACK). It is
//! TFMCC's equation-based scheme (RFC 4654), and reuses [`crate::tfmcc`]'s pieces: the loss
//! event rate ([`LossHistory`]) and the TCP throughput equation ([`tcp_rate`]).
//!
//! * [`SenderCc`] probes every RTT of its current limiting receiver (CLR; the GRTT until one is
//!   measured, at least [`Config::probe_min`]) with its rate and the CC node list: the CLR, the
//!   potential limiting receiver (PLR) and the receivers whose RTT it measured since the last
//!   probe (the probe's time echoed in their feedback), each with its RTT. A feedback rate below
//!   the CLR's makes its receiver the CLR (the old one the PLR); a CLR whose rate rises above
//!   the PLR's gives its place up. Rates reported with an RTT other than the one measured are
//!   scaled by their ratio (the equation's rate goes as 1/RTT). In slow start (every feedback
//!   has [`cc_flag::START`]: no loss) the rate follows the CLR's, at most doubling per
//!   feedback; after it, a lower rate is taken at once and a higher one approached by one
//!   segment per RTT per RTT. A CLR silent for [`CLR_TIMEOUT_PROBES`] probes is dropped and the
//!   rate halved. The rate stays within [`Config::min_rate`] and [`Config::max_rate`].
//! * [`ReceiverCc`] measures the rate it receives at (every packet of the sender), its loss
//!   event rate (gaps in original segments), and takes its RTT from the node list once listed
//!   (the GRTT before). Its rate is twice the receive rate before any loss (with START), the
//!   equation after. The CLR and PLR answer every probe at once; the others answer only if no
//!   CLR is listed or their rate is below the sender's, after RFC 5401's random back-off, and
//!   not if they heard another's feedback at a rate not above theirs by more than 10 %.

use crate::tfmcc::{loss_rate_for, tcp_rate, LossHistory};
use crate::Time;
use core::time::Duration;
use rmcast_wire::norm::{cc_flag, CcNode};
use rmcast_wire::rfc5740::quant;

/// Probes without the CLR's feedback after which it is dropped and the rate halved.
pub const CLR_TIMEOUT_PROBES: u32 = 5;
/// Most receivers a probe lists beside the CLR and PLR for their measured RTT.
pub const MAX_LISTED: usize = 8;
/// A receiver's feedback is suppressed by another's at a rate at most this factor of its own.
pub const SUPPRESS_WITHIN: f64 = 1.1;
/// A receive-rate window spans at least the time this many packets take at the sender's rate.
const RECV_WINDOW_PACKETS: f64 = 4.0;

/// NORM-CC's settings (the sender's; a receiver needs only the initial RTT).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// The first rate, bytes per second.
    pub initial_rate: u64,
    /// The highest rate, bytes per second (0: none).
    pub max_rate: u64,
    /// The lowest rate, bytes per second.
    pub min_rate: u64,
    /// The shortest interval between probes.
    pub probe_min: Duration,
    /// Receivers measure the rate they receive at over windows at least this long.
    pub recv_window: Duration,
}

impl Default for Config {
    /// TFMCC's initial and lowest rates ([`crate::tfmcc::Config`]); probes at most every 10 ms.
    fn default() -> Self {
        let t = crate::tfmcc::Config::default();
        Config {
            initial_rate: t.initial_rate,
            max_rate: 0,
            min_rate: t.min_rate,
            probe_min: Duration::from_millis(10),
            recv_window: Duration::from_millis(20),
        }
    }
}

/// A receiver's feedback as the sender reads it (CC ACK, unquantized).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Feedback {
    /// [`cc_flag`] bits.
    pub flags: u8,
    /// The RTT the receiver used.
    pub rtt: Duration,
    /// Its loss event rate.
    pub loss: f64,
    /// The rate it computed, bytes per second.
    pub rate: f64,
}

/// A receiver the sender follows (CLR) or watches (PLR).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Limiter {
    node: u32,
    rate: f64,
    rtt: Option<Duration>,
    start: bool,
}

/// What a probe carries: its rate and node list.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    /// The sending rate, bytes per second.
    pub rate: u64,
    /// The CC node list.
    pub nodes: Vec<CcNode>,
}

/// The sender's side of NORM-CC.
#[derive(Debug, Clone)]
pub struct SenderCc {
    cfg: Config,
    rate: f64,
    slow_start: bool,
    clr: Option<Limiter>,
    plr: Option<Limiter>,
    /// RTTs measured since the last probe.
    measured: Vec<(u32, Duration)>,
    /// The largest segment sent, bytes.
    size: f64,
    /// The CLR's last feedback.
    clr_at: Option<Time>,
    /// Probes since the CLR's last feedback.
    clr_silent: u32,
}

impl SenderCc {
    /// At `cfg`'s initial rate, in slow start, with no CLR.
    pub fn new(cfg: Config) -> Self {
        let mut s = SenderCc {
            cfg,
            rate: cfg.initial_rate as f64,
            slow_start: true,
            clr: None,
            plr: None,
            measured: Vec::new(),
            size: 1_000.0,
            clr_at: None,
            clr_silent: 0,
        };
        s.bound();
        s
    }

    /// The sending rate, bytes per second.
    pub fn rate(&self) -> u64 {
        self.rate as u64
    }

    /// Whether no feedback has reported loss yet.
    pub fn slow_start(&self) -> bool {
        self.slow_start
    }

    /// The current limiting receiver.
    pub fn clr(&self) -> Option<u32> {
        self.clr.map(|c| c.node)
    }

    /// The potential limiting receiver.
    pub fn plr(&self) -> Option<u32> {
        self.plr.map(|c| c.node)
    }

    /// A segment of `len` bytes was sent (the increase is one segment per RTT per RTT).
    pub fn on_sent(&mut self, len: usize) {
        self.size = self.size.max(len as f64);
    }

    fn bound(&mut self) {
        let max = match self.cfg.max_rate {
            0 => f64::INFINITY,
            m => m as f64,
        };
        self.rate = self.rate.min(max).max(self.cfg.min_rate as f64);
    }

    /// How long until the next probe: the CLR's RTT (`grtt` until one is measured).
    pub fn probe_interval(&self, grtt: Duration) -> Duration {
        let rtt = self.clr.and_then(|c| c.rtt).unwrap_or(grtt);
        rtt.max(self.cfg.probe_min)
    }

    /// Feedback from `node` at `now`; `rtt` is its round trip as measured from the probe's
    /// echoed time (`None`: it echoed none).
    pub fn on_feedback(&mut self, now: Time, node: u32, fb: &Feedback, rtt: Option<Duration>) {
        if let Some(r) = rtt {
            self.measured.retain(|(n, _)| *n != node);
            self.measured.push((node, r));
            if self.measured.len() > MAX_LISTED {
                self.measured.remove(0);
            }
        }
        let start = fb.flags & cc_flag::START != 0;
        // The equation's rate goes as 1/RTT: correct one computed with another RTT.
        let rate = match rtt {
            Some(r) if !start && !r.is_zero() && !fb.rtt.is_zero() => {
                fb.rate * fb.rtt.as_secs_f64() / r.as_secs_f64()
            }
            _ => fb.rate,
        };
        let known_rtt = rtt.or_else(|| self.rtt_of(node));
        let me = Limiter {
            node,
            rate,
            rtt: known_rtt,
            start,
        };
        let from_clr = self.select(me);
        if !start {
            self.slow_start = false;
        }
        if from_clr {
            self.adjust(now);
        }
    }

    fn rtt_of(&self, node: u32) -> Option<Duration> {
        [self.clr, self.plr]
            .into_iter()
            .flatten()
            .find(|l| l.node == node)
            .and_then(|l| l.rtt)
    }

    /// CLR and PLR after feedback `me`; whether it is now the CLR's.
    fn select(&mut self, me: Limiter) -> bool {
        match self.clr {
            None => self.clr = Some(me),
            Some(c) if c.node == me.node => {
                self.clr = Some(me);
                if let Some(p) = self.plr.filter(|p| p.rate < me.rate) {
                    self.clr = Some(p);
                    self.plr = Some(me);
                }
            }
            Some(c) if me.rate < c.rate => {
                self.plr = Some(c);
                self.clr = Some(me);
            }
            Some(_) => {
                if self
                    .plr
                    .is_none_or(|p| p.node == me.node || me.rate < p.rate)
                {
                    self.plr = Some(me);
                }
                return false;
            }
        }
        true
    }

    /// Follow the CLR's rate.
    fn adjust(&mut self, now: Time) {
        let Some(c) = self.clr else {
            return;
        };
        let since = self.clr_at.map(|at| now.saturating_since(at));
        self.clr_at = Some(now);
        self.clr_silent = 0;
        if c.rate <= self.rate {
            self.rate = c.rate;
        } else if self.slow_start {
            self.rate = c.rate.min(2.0 * self.rate);
        } else if let (Some(rtt), Some(dt)) = (c.rtt, since) {
            // One segment per RTT per RTT.
            let r = rtt.as_secs_f64().max(1e-6);
            let step = self.size * dt.as_secs_f64() / (r * r);
            self.rate = c.rate.min(self.rate + step);
        }
        self.bound();
    }

    /// A probe goes out at `now`: the rate and node list (those measured since the last
    /// probe are listed once); a CLR silent too long is dropped and the rate halved.
    pub fn probe(&mut self, grtt: Duration) -> Probe {
        if self.clr.is_some() {
            self.clr_silent += 1;
            if self.clr_silent > CLR_TIMEOUT_PROBES {
                self.clr = self.plr.take();
                self.clr_silent = 0;
                self.rate /= 2.0;
                self.bound();
            }
        }
        let entry = |l: &Limiter, flag: u8| CcNode {
            node: l.node,
            flags: flag
                | if l.start { cc_flag::START } else { 0 }
                | if l.rtt.is_some() { cc_flag::RTT } else { 0 },
            rtt: quant::quantize_rtt(l.rtt.unwrap_or(grtt).as_secs_f64()),
            rate: quant::quantize_rate(l.rate),
        };
        let mut nodes = Vec::new();
        nodes.extend(self.clr.map(|c| entry(&c, cc_flag::CLR)));
        nodes.extend(self.plr.map(|p| entry(&p, cc_flag::PLR)));
        for (node, rtt) in std::mem::take(&mut self.measured) {
            if nodes.iter().all(|n| n.node != node) {
                nodes.push(CcNode {
                    node,
                    flags: cc_flag::RTT,
                    rtt: quant::quantize_rtt(rtt.as_secs_f64()),
                    rate: 0,
                });
            }
        }
        Probe {
            rate: self.rate(),
            nodes,
        }
    }
}

/// When a receiver answers a probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// At once (the CLR or PLR).
    Now,
    /// After this back-off, unless suppressed.
    After(Duration),
    /// Not at all.
    No,
}

/// A receiver's side of NORM-CC.
#[derive(Debug, Clone)]
pub struct ReceiverCc {
    cfg: Config,
    me: u32,
    loss: LossHistory,
    /// The RTT the sender measured and listed.
    rtt: Option<Duration>,
    grtt: Duration,
    /// The receive-rate window: its start and bytes.
    window: Option<(Time, u64)>,
    recv_rate: f64,
    /// The largest data packet, bytes.
    size: f64,
    /// The sender's rate, bytes per second.
    sender_rate: f64,
    /// Its feedback this probe is suppressed.
    suppressed: bool,
}

impl ReceiverCc {
    /// Receiver `me`, with `grtt` as its RTT until the sender lists one.
    pub fn new(cfg: Config, me: u32, grtt: Duration) -> Self {
        ReceiverCc {
            cfg,
            me,
            loss: LossHistory::default(),
            rtt: None,
            grtt,
            window: None,
            recv_rate: 0.0,
            size: 0.0,
            sender_rate: cfg.initial_rate as f64,
            suppressed: false,
        }
    }

    /// The RTT in use: the listed one, else the GRTT.
    pub fn rtt(&self) -> Duration {
        self.rtt.unwrap_or(self.grtt)
    }

    /// Its loss event rate.
    pub fn loss(&self) -> f64 {
        self.loss.loss_rate()
    }

    /// The rate it can take, bytes per second: twice its receive rate before any loss (the
    /// sender's until one is measured), the equation after.
    pub fn rate(&self) -> f64 {
        if self.loss.has_loss() {
            tcp_rate(self.size.max(1.0), self.rtt().as_secs_f64(), self.loss())
        } else if self.recv_rate > 0.0 {
            2.0 * self.recv_rate
        } else {
            2.0 * self.sender_rate
        }
    }

    /// [`cc_flag`] bits of its feedback.
    pub fn flags(&self) -> u8 {
        (if self.loss.has_loss() {
            0
        } else {
            cc_flag::START
        }) | if self.rtt.is_some() { cc_flag::RTT } else { 0 }
    }

    fn window_span(&self) -> Duration {
        let span = self.cfg.recv_window.max(self.rtt());
        if self.sender_rate <= 0.0 || self.size <= 0.0 {
            return span;
        }
        let packets = RECV_WINDOW_PACKETS * self.size / self.sender_rate;
        Duration::try_from_secs_f64(packets).map_or(span, |p| span.max(p))
    }

    /// A packet of `len` bytes from the sender (the receive rate counts them all).
    pub fn on_packet(&mut self, now: Time, len: usize) {
        self.window = match self.window {
            None => Some((now, len as u64)),
            Some((start, bytes)) => {
                let bytes = bytes + len as u64;
                let span = now.saturating_since(start);
                if span >= self.window_span() {
                    self.recv_rate = bytes as f64 / span.as_secs_f64();
                    Some((now, 0))
                } else {
                    Some((start, bytes))
                }
            }
        };
    }

    /// Original segment `seq` of `len` bytes (the loss history; call [`Self::on_packet`] too).
    pub fn on_data(&mut self, now: Time, seq: u64, len: usize) {
        self.size = self.size.max(len as f64);
        if self.loss.on_packet(now, seq, self.rtt()) {
            // The first loss: the interval that gives the rate received so far.
            let x = if self.recv_rate > 0.0 {
                self.recv_rate
            } else {
                self.sender_rate
            };
            let p = loss_rate_for(self.size.max(1.0), self.rtt().as_secs_f64(), x.max(1.0));
            self.loss.seed((1.0 / p).round() as u64);
        }
    }

    /// A probe: the sender's GRTT and rate and its node list. Says when to answer.
    pub fn on_probe(
        &mut self,
        grtt: Duration,
        rate: u16,
        nodes: impl Iterator<Item = CcNode>,
        backoff: impl FnOnce(&mut Self) -> Duration,
    ) -> Answer {
        self.grtt = grtt;
        self.sender_rate = quant::unquantize_rate(rate);
        self.suppressed = false;
        let (mut listed, mut clr) = (0, false);
        for n in nodes {
            clr |= n.flags & cc_flag::CLR != 0;
            if n.node == self.me {
                listed = n.flags;
                if n.flags & cc_flag::RTT != 0 {
                    self.rtt = Some(Duration::from_secs_f64(quant::unquantize_rtt(n.rtt)));
                }
            }
        }
        if listed & (cc_flag::CLR | cc_flag::PLR) != 0 {
            Answer::Now
        } else if !clr || self.rate() < self.sender_rate {
            Answer::After(backoff(self))
        } else {
            Answer::No
        }
    }

    /// Another receiver's feedback at `rate`: suppresses this one's if not much above it.
    pub fn on_heard(&mut self, rate: f64) {
        if rate <= SUPPRESS_WITHIN * self.rate() {
            self.suppressed = true;
        }
    }

    /// Whether a pending answer is suppressed.
    pub fn suppressed(&self) -> bool {
        self.suppressed
    }
}

#[cfg(test)]
#[path = "cc_tests.rs"]
mod tests;
