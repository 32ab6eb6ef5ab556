//! TFMCC — TCP-friendly multicast congestion control (RFC 4654) as a sans-IO building block.
//!
//! A protocol that carries it (here `pgm`, see [`crate::pgm`]) feeds the [`Receiver`] its
//! original data packets and the source's [`Status`] messages, sends the [`Feedback`] the
//! receiver produces to the source, and there hands it to the [`Sender`], whose
//! [`Sender::rate`] paces new data. The arithmetic, after RFC 4654 and RFC 5348:
//!
//! * **Receivers** measure the loss event rate `p` from gaps in the data's sequence numbers
//!   (losses within one round-trip time of the first loss of an event are one event; the
//!   average of the last eight loss intervals with weights 1, 1, 1, 1, .8, .6, .4, .2, the
//!   open interval counted when it raises the average; the first interval is the one the
//!   equation gives for the rate received when the first loss came) and their round-trip time
//!   from the source's echo of their feedback timestamp; they compute the TCP throughput
//!   equation `X = s / (R·√(2p/3) + 4R·3√(3p/8)·p·(1 + 32p²))`. Before any loss they report
//!   twice the rate they receive at while the sender is in slow start, and no limit after it;
//!   the receive rate is measured over windows long enough to hold several packets at the
//!   sender's rate. The CLR, which has an RTT sample every feedback interval, damps the
//!   oscillation a drop-tail queue causes with RFC 5348 §4.5's rule: its equation rate is
//!   scaled by `R_sqmean / √R_sample` (the mean of √RTT samples, weight [`SQMEAN_GAIN`] for a
//!   new one, over the root of the latest), so a queue that fills lowers the rate at once,
//!   before the smoothed RTT has caught up with it.
//! * **Feedback** is suppressed: each round (`feedback_rtts` × the largest RTT, at least
//!   `min_round`), every receiver but the current limiting receiver (CLR) draws a timer biased
//!   towards low rates, `T·(γ·r + (1−γ)·max(0, 1 + ln x / ln N))` with `x` uniform in (0, 1],
//!   `r` its rate over the sending rate (at most 1), `γ` = [`RATE_BIAS`], `N` the bound on
//!   receivers; when it fires it reports only if its rate is below 90 % of the lowest rate the
//!   source has echoed this round (and, outside slow start, below the sending rate), or if it
//!   has seen loss while the sender is still in slow start (that report ends slow start). The
//!   CLR reports every RTT (at least every `min_feedback`), unsuppressed. The receive rate
//!   counts every packet from the sender (its rate paces them all), not only new data.
//! * **The sender** follows the CLR: a lower rate from any receiver is taken at once (and its
//!   receiver becomes the CLR), a higher rate from the CLR is approached by at most one packet
//!   per largest RTT per largest RTT. In slow start it doubles every round, up to twice the
//!   lowest rate received that receivers reported; the first feedback that has seen loss ends
//!   slow start. A CLR silent for [`CLR_TIMEOUT_RTTS`] feedback intervals is dropped and the
//!   rate halved. The largest RTT is the initial value until a measured one is reported, then
//!   the largest reported in a round, decaying by 10 % a round towards smaller ones.
//!
//! Choices where RFC 4654 leaves room or that we simplified (documented, not hidden): status
//! travels in its own packet (sent at a round's start and after each feedback, carrying one
//! echo) instead of in every data packet; there is no one-way-delay adjustment of RTTs
//! between echoes; a round always lasts `T`; a gap is a loss at once (no reordering grace);
//! the CLR's oscillation damping is TFRC's (RFC 5348 §4.5), which RFC 4654 does not have.
//! Times are `Time`; rates bytes per second; the sender's and each receiver's timestamps are
//! their own clocks, only echoed by the other.

use crate::rng::AgentRng;
use crate::Time;
use core::time::Duration;

/// Weights of the last eight loss intervals, newest first (RFC 5348 §5.4).
const WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
/// Share of the feedback delay given to the rate bias.
pub const RATE_BIAS: f64 = 0.25;
/// A receiver reports only if its rate is below this share of the lowest rate echoed.
pub const SUPPRESS_BELOW: f64 = 0.9;
/// Feedback intervals after which a silent CLR is dropped.
pub const CLR_TIMEOUT_RTTS: u32 = 10;
/// Weight of a new √RTT sample in the CLR's running mean (RFC 5348 §4.5: 1 − q2, q2 = 0.9).
pub const SQMEAN_GAIN: f64 = 0.1;
/// A receive-rate window spans at least the time this many packets take at the sender's rate.
pub const RECV_WINDOW_PACKETS: f64 = 4.0;
/// Status flag: the sender is in slow start.
pub const STATUS_SLOW_START: u8 = 1;
/// Feedback flag: the receiver has seen loss.
pub const FEEDBACK_LOSS: u8 = 1;
/// Feedback flag: the receiver's RTT is measured.
pub const FEEDBACK_RTT: u8 = 2;

/// The TCP throughput equation (RFC 5348 §3.1, `b = 1`, `t_RTO = 4R`): bytes per second for
/// packets of `s` bytes, round-trip time `rtt` seconds and loss event rate `p`.
pub fn tcp_rate(s: f64, rtt: f64, p: f64) -> f64 {
    if p <= 0.0 {
        return f64::INFINITY;
    }
    let rtt = rtt.max(1e-6);
    let f = (2.0 * p / 3.0).sqrt() + 12.0 * (3.0 * p / 8.0).sqrt() * p * (1.0 + 32.0 * p * p);
    s / (rtt * f)
}

/// The loss event rate at which [`tcp_rate`] gives `x` (bisection on its monotone decrease).
pub fn loss_rate_for(s: f64, rtt: f64, x: f64) -> f64 {
    let (mut lo, mut hi) = (1e-10_f64, 1.0_f64);
    if tcp_rate(s, rtt, hi) >= x {
        return hi;
    }
    if tcp_rate(s, rtt, lo) <= x {
        return lo;
    }
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if tcp_rate(s, rtt, mid) > x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo * hi).sqrt()
}

/// Parameters shared by the sender and its receivers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Round-trip time assumed before one is measured.
    pub initial_rtt: Duration,
    /// A feedback round lasts this many largest RTTs ...
    pub feedback_rtts: u32,
    /// ... and at least this long.
    pub min_round: Duration,
    /// The CLR reports at most this often.
    pub min_feedback: Duration,
    /// Upper bound on receivers (`N` of the feedback timer).
    pub receivers_bound: u32,
    /// The sender's first rate, bytes per second.
    pub initial_rate: u64,
    /// The sender never goes above this, bytes per second (0: no cap).
    pub max_rate: u64,
    /// ... nor below this, bytes per second.
    pub min_rate: u64,
    /// Receivers measure the rate they receive at over windows at least this long.
    pub recv_window: Duration,
}

impl Default for Config {
    /// RFC 4654's values where it gives them (initial RTT 500 ms, rounds of four largest RTTs,
    /// `N` = 10,000); the floors are ours.
    fn default() -> Self {
        Config {
            initial_rtt: Duration::from_millis(500),
            feedback_rtts: 4,
            min_round: Duration::from_millis(20),
            min_feedback: Duration::from_millis(10),
            receivers_bound: 10_000,
            initial_rate: 16_000,
            max_rate: 0,
            min_rate: 1_000,
            recv_window: Duration::from_millis(50),
        }
    }
}

impl Config {
    /// A round's length for the largest RTT `r_max`.
    pub fn round(&self, r_max: Duration) -> Duration {
        (r_max * self.feedback_rtts).max(self.min_round)
    }
}

/// The sender's status as receivers see it (a protocol's status packet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// The feedback round.
    pub round: u32,
    /// The sending rate, bytes per second.
    pub rate: u64,
    /// The lowest rate reported this round (`u64::MAX`: none).
    pub suppress: u64,
    /// The current limiting receiver (0: none).
    pub clr: u32,
    /// The largest RTT, microseconds.
    pub r_max_us: u32,
    /// The receiver whose timestamp is echoed (0: none), the timestamp, and how long the
    /// sender held it, microseconds.
    pub echo: (u32, u64, u32),
    /// [`STATUS_SLOW_START`].
    pub flags: u8,
}

/// A receiver's report (a protocol's feedback packet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feedback {
    /// The round it answers.
    pub round: u32,
    /// The receiver's clock, microseconds.
    pub ts_us: u64,
    /// Its RTT, microseconds.
    pub rtt_us: u32,
    /// The rate it can take, bytes per second.
    pub rate: u64,
    /// The rate it received at, bytes per second.
    pub recv_rate: u64,
    /// Its loss event rate, parts per million.
    pub loss_ppm: u32,
    /// [`FEEDBACK_LOSS`], [`FEEDBACK_RTT`].
    pub flags: u8,
}

fn micros(t: Time) -> u64 {
    t.as_nanos() / 1_000
}

fn dur_us(d: Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

fn rate_u64(x: f64) -> u64 {
    if x.is_finite() {
        x.max(0.0).min(u64::MAX as f64) as u64
    } else {
        u64::MAX
    }
}

/// Loss intervals (RFC 5348 §5): closed intervals newest first, and the open one.
#[derive(Debug, Clone, Default)]
pub struct LossHistory {
    closed: Vec<u64>,
    open: u64,
    /// When the current loss event began.
    event_at: Option<Time>,
    next: Option<u64>,
}

impl LossHistory {
    /// Data packet `seq` arrived at `now`; `rtt` separates loss events. Returns true if it
    /// began the first loss event (the caller seeds the history with [`Self::seed`]).
    pub fn on_packet(&mut self, now: Time, seq: u64, rtt: Duration) -> bool {
        let Some(next) = self.next else {
            self.next = Some(seq + 1);
            self.open = 1;
            return false;
        };
        if seq < next {
            return false;
        }
        self.next = Some(seq + 1);
        let lost = seq - next;
        if lost == 0 {
            self.open += 1;
            return false;
        }
        let new_event = self.event_at.is_none_or(|at| now >= at + rtt);
        let first = self.event_at.is_none();
        if new_event {
            if !first {
                self.closed.insert(0, self.open);
                self.closed.truncate(WEIGHTS.len());
            }
            self.event_at = Some(now);
            self.open = lost + 1;
        } else {
            self.open += lost + 1;
        }
        first
    }

    /// The first loss event: the interval before it is `interval` packets.
    pub fn seed(&mut self, interval: u64) {
        self.closed = vec![interval.max(1)];
    }

    /// Whether a loss was seen.
    pub fn has_loss(&self) -> bool {
        self.event_at.is_some()
    }

    /// The loss event rate (0 before any loss).
    pub fn loss_rate(&self) -> f64 {
        if self.closed.is_empty() {
            return 0.0;
        }
        let avg = |it: &mut dyn Iterator<Item = u64>| {
            let (mut tot, mut w) = (0.0, 0.0);
            for (i, v) in it.enumerate().take(WEIGHTS.len()) {
                tot += v as f64 * WEIGHTS[i];
                w += WEIGHTS[i];
            }
            tot / w
        };
        let without = avg(&mut self.closed.iter().copied());
        let with = avg(&mut core::iter::once(self.open).chain(self.closed.iter().copied()));
        1.0 / without.max(with).max(1.0)
    }
}

/// A TFMCC receiver.
#[derive(Debug, Clone)]
pub struct Receiver {
    cfg: Config,
    me: u32,
    loss: LossHistory,
    rtt: Option<Duration>,
    /// The running mean of √RTT samples and the latest sample, seconds (RFC 5348 §4.5).
    sqmean: Option<(f64, f64)>,
    /// Mean data packet size, bytes.
    size: f64,
    /// The receive rate measured over the last window, and the window being measured.
    recv_rate: f64,
    window: Option<(Time, u64)>,
    /// The sender's round (`None`: no status yet).
    round: Option<u32>,
    sender_rate: u64,
    suppress: u64,
    r_max: Duration,
    slow_start: bool,
    clr: bool,
    /// When feedback is due (a round's timer, or the CLR's next report).
    due: Option<Time>,
    /// Feedback sent this round.
    sent_round: Option<u32>,
}

impl Receiver {
    /// Receiver `me` (node id, not 0).
    pub fn new(cfg: Config, me: u32) -> Self {
        Receiver {
            cfg,
            me,
            loss: LossHistory::default(),
            rtt: None,
            sqmean: None,
            size: 0.0,
            recv_rate: 0.0,
            window: None,
            round: None,
            sender_rate: 0,
            suppress: u64::MAX,
            r_max: cfg.initial_rtt,
            slow_start: true,
            clr: false,
            due: None,
            sent_round: None,
        }
    }

    /// The RTT in use: measured, else the sender's largest.
    pub fn rtt(&self) -> Duration {
        self.rtt.unwrap_or(self.r_max)
    }

    /// The receive rate as of `now`: the last window's, or lower if the window running now
    /// has lasted longer than a window and brought less (data stopped or slowed: a rate
    /// measured before must not stand for ever).
    fn recv_rate_at(&self, now: Time) -> f64 {
        match self.window {
            Some((start, bytes)) => {
                let span = now.saturating_since(start);
                if span >= self.window_span() {
                    self.recv_rate.min(bytes as f64 / span.as_secs_f64())
                } else {
                    self.recv_rate
                }
            }
            None => self.recv_rate,
        }
    }

    /// How long a receive-rate window lasts: at least `recv_window` and the RTT, and long
    /// enough for [`RECV_WINDOW_PACKETS`] packets at the sender's announced rate (a window
    /// shorter than the gap between packets measures nothing: at a low rate most such
    /// windows would hold no packet and read as a receive rate of 0).
    fn window_span(&self) -> Duration {
        let span = self.cfg.recv_window.max(self.rtt());
        if self.sender_rate == 0 || self.size <= 0.0 {
            return span;
        }
        let packets = RECV_WINDOW_PACKETS * self.size / self.sender_rate as f64;
        Duration::try_from_secs_f64(packets).map_or(span, |p| span.max(p))
    }

    /// The rate this receiver can take, bytes per second, given the receive rate `recv`:
    /// the TCP throughput equation once it has seen loss; before, twice the receive rate
    /// while the sender is in slow start and no limit after it (a receiver without loss has
    /// no congestion to report; RFC 4654's calculated rate is undefined for `p = 0`).
    fn rate_with(&self, recv: f64) -> f64 {
        if self.loss.has_loss() {
            let x = tcp_rate(
                self.size.max(1.0),
                self.rtt().as_secs_f64(),
                self.loss.loss_rate(),
            );
            match (self.clr, self.sqmean) {
                (true, Some((m, r))) if r > 0.0 => x * m / r.sqrt(),
                _ => x,
            }
        } else if self.slow_start {
            2.0 * recv
        } else {
            f64::INFINITY
        }
    }

    /// The rate this receiver can take, bytes per second (see `Self::rate_with`).
    pub fn rate(&self) -> f64 {
        self.rate_with(self.recv_rate)
    }

    /// Original data packet `seq` of `len` bytes arrived: it counts towards the receive
    /// rate, the packet size and the loss history.
    pub fn on_data(&mut self, now: Time, seq: u64, len: usize) {
        self.size = if self.size == 0.0 {
            len as f64
        } else {
            0.9 * self.size + 0.1 * len as f64
        };
        self.on_other(now, len);
        if self.loss.on_packet(now, seq, self.rtt()) {
            // The first loss: the interval that gives the rate received so far.
            let x = if self.recv_rate > 0.0 {
                self.recv_rate
            } else {
                self.sender_rate as f64
            };
            let p = loss_rate_for(self.size.max(1.0), self.rtt().as_secs_f64(), x.max(1.0));
            self.loss.seed((1.0 / p).round() as u64);
        }
    }

    /// Another packet of `len` bytes from the sender arrived (a repair, a status, control):
    /// it counts towards the receive rate only. The sender's rate covers every packet it
    /// sends, so the rate it is compared with must count them too (counting new data alone,
    /// a sender whose control and repairs take a fair share of a low rate would read twice
    /// the receive rate as less than its rate and slow start would shrink it to the floor).
    pub fn on_other(&mut self, now: Time, len: usize) {
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

    /// The sender's status arrived.
    pub fn on_status(&mut self, now: Time, st: &Status, rng: &mut AgentRng) {
        self.sender_rate = st.rate;
        self.r_max = Duration::from_micros(u64::from(st.r_max_us)).max(Duration::from_micros(1));
        self.slow_start = st.flags & STATUS_SLOW_START != 0;
        let (node, ts, held) = st.echo;
        if node == self.me {
            let back = micros(now)
                .saturating_sub(ts)
                .saturating_sub(u64::from(held));
            let sample = Duration::from_micros(back.max(1));
            let r = sample.as_secs_f64();
            let m = self.sqmean.map_or(r.sqrt(), |(m, _)| {
                (1.0 - SQMEAN_GAIN) * m + SQMEAN_GAIN * r.sqrt()
            });
            self.sqmean = Some((m, r));
            let gain = if self.clr { 0.05 } else { 0.5 };
            self.rtt = Some(match self.rtt {
                None => sample,
                Some(r) => r.mul_f64(1.0 - gain) + sample.mul_f64(gain),
            });
        }
        let was_clr = self.clr;
        self.clr = st.clr == self.me;
        if self.clr && !was_clr {
            self.due = Some(now);
        }
        if self.round != Some(st.round) {
            // A new round: every receiver but the CLR draws its feedback timer.
            self.round = Some(st.round);
            self.sent_round = None;
            self.suppress = st.suppress;
            if !self.clr {
                self.due = Some(now + self.timer(rng));
            }
        } else {
            self.suppress = self.suppress.min(st.suppress);
        }
    }

    /// The biased feedback timer of a new round.
    fn timer(&self, rng: &mut AgentRng) -> Duration {
        let t = self.cfg.round(self.r_max).as_secs_f64();
        let x = 1.0 - rng.unit(); // (0, 1]
        let n = f64::from(self.cfg.receivers_bound.max(2));
        let random = (1.0 + x.ln() / n.ln()).max(0.0);
        let r = if self.sender_rate == 0 {
            1.0
        } else {
            (self.rate() / self.sender_rate as f64).min(1.0)
        };
        Duration::from_secs_f64(t * (RATE_BIAS * r + (1.0 - RATE_BIAS) * random))
    }

    /// When [`Self::poll_feedback`] may have something.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.due
    }

    /// Feedback due at `now`, if any (suppressed feedback is dropped).
    pub fn poll_feedback(&mut self, now: Time) -> Option<Feedback> {
        let due = self.due?;
        if now < due {
            return None;
        }
        let recv = self.recv_rate_at(now);
        let rate = self.rate_with(recv);
        let send = if self.clr {
            self.due = Some(now + self.rtt().max(self.cfg.min_feedback));
            true
        } else {
            self.due = None;
            // Nothing to say yet: no loss and no receive rate measured.
            if !self.loss.has_loss() && recv == 0.0 {
                return None;
            }
            let below_suppress = rate < SUPPRESS_BELOW * self.suppress as f64;
            let below_sending = self.slow_start || rate < self.sender_rate as f64;
            // A loss while the sender is still in slow start is reported whatever the rate:
            // it is what ends slow start, and the equation's rate can be far above the
            // lossless receivers' twice-the-receive-rate that set the suppression (the first
            // loss interval is seeded at the receive rate with the RTT known then). Its timer
            // is still the biased one, so few of those who saw loss report before the status
            // that ends slow start reaches the rest.
            let ends_slow_start = self.slow_start && self.loss.has_loss();
            self.sent_round != self.round && (ends_slow_start || (below_suppress && below_sending))
        };
        if !send {
            return None;
        }
        self.sent_round = self.round;
        let mut flags = 0;
        if self.loss.has_loss() {
            flags |= FEEDBACK_LOSS;
        }
        if self.rtt.is_some() {
            flags |= FEEDBACK_RTT;
        }
        Some(Feedback {
            round: self.round.unwrap_or(0),
            ts_us: micros(now),
            rtt_us: dur_us(self.rtt()),
            rate: rate_u64(rate),
            recv_rate: rate_u64(recv),
            loss_ppm: (self.loss.loss_rate() * 1e6).round() as u32,
            flags,
        })
    }

    /// Whether it is the CLR.
    pub fn is_clr(&self) -> bool {
        self.clr
    }
}

/// The CLR as the sender knows it.
#[derive(Debug, Clone, Copy)]
struct Clr {
    node: u32,
    rate: f64,
    rtt: Duration,
    heard: Time,
}

/// A TFMCC sender.
#[derive(Debug, Clone)]
pub struct Sender {
    cfg: Config,
    rate: f64,
    slow_start: bool,
    round: u32,
    round_end: Time,
    suppress: u64,
    clr: Option<Clr>,
    /// Measured largest RTT (`None`: the initial value).
    r_max: Option<Duration>,
    round_r_max: Option<Duration>,
    /// Lowest receive rate reported this round and the last (slow start's cap).
    min_recv: Option<f64>,
    last_min_recv: Option<f64>,
    /// Echo to send: node, its timestamp, when it arrived; measured RTTs wait behind others.
    echo: Option<(u32, u64, Time, bool)>,
    status_due: bool,
    last_increase: Time,
    size: f64,
    started: bool,
}

impl Sender {
    /// A sender starting at `cfg.initial_rate`.
    pub fn new(cfg: Config) -> Self {
        Sender {
            rate: cfg.initial_rate as f64,
            cfg,
            slow_start: true,
            round: 0,
            round_end: Time::ZERO,
            suppress: u64::MAX,
            clr: None,
            r_max: None,
            round_r_max: None,
            min_recv: None,
            last_min_recv: None,
            echo: None,
            status_due: true,
            last_increase: Time::ZERO,
            size: 0.0,
            started: false,
        }
    }

    /// The sending rate, bytes per second.
    pub fn rate(&self) -> u64 {
        rate_u64(self.rate)
    }

    /// Whether it is in slow start.
    pub fn slow_start(&self) -> bool {
        self.slow_start
    }

    /// The current limiting receiver.
    pub fn clr(&self) -> Option<u32> {
        self.clr.map(|c| c.node)
    }

    /// The largest RTT in use.
    pub fn r_max(&self) -> Duration {
        self.r_max.unwrap_or(self.cfg.initial_rtt)
    }

    fn clamp(&mut self) {
        let max = if self.cfg.max_rate == 0 {
            f64::INFINITY
        } else {
            self.cfg.max_rate as f64
        };
        self.rate = self.rate.min(max).max(self.cfg.min_rate as f64);
    }

    /// A data packet of `len` bytes left.
    pub fn on_sent(&mut self, now: Time, len: usize) {
        if !self.started {
            self.started = true;
            self.round_end = now + self.cfg.round(self.r_max());
            self.last_increase = now;
            self.status_due = true;
        }
        self.size = if self.size == 0.0 {
            len as f64
        } else {
            0.9 * self.size + 0.1 * len as f64
        };
    }

    /// Feedback from `node` arrived. A status goes out for it only when receivers learn
    /// something from one: an RTT echo for a receiver that has none, a lower suppression
    /// rate, a new CLR (the CLR's echo otherwise waits for the next round's status: a status
    /// per CLR report would cost the CLR's feedback rate in control packets, charged to the
    /// same rate as the data).
    pub fn on_feedback(&mut self, now: Time, node: u32, fb: &Feedback) {
        if node == 0 {
            return;
        }
        let before = (self.suppress, self.clr());
        self.apply_feedback(now, node, fb);
        if fb.flags & FEEDBACK_RTT == 0 || self.suppress < before.0 || self.clr() != before.1 {
            self.status_due = true;
        }
    }

    fn apply_feedback(&mut self, now: Time, node: u32, fb: &Feedback) {
        let measured = fb.flags & FEEDBACK_RTT != 0;
        let rtt = Duration::from_micros(u64::from(fb.rtt_us).max(1));
        if measured {
            self.round_r_max = Some(self.round_r_max.map_or(rtt, |r| r.max(rtt)));
            if self.r_max.is_none_or(|r| rtt > r) {
                self.r_max = Some(rtt);
            }
        }
        // Echo: receivers without a measured RTT first, then the CLR, then anyone.
        let prio = !measured || self.clr.is_some_and(|c| c.node == node);
        if self.echo.is_none_or(|(_, _, _, p)| prio || !p) {
            self.echo = Some((node, fb.ts_us, now, prio));
        }
        let x = fb.rate as f64;
        self.suppress = self.suppress.min(fb.rate);
        if self.slow_start {
            let recv = fb.recv_rate as f64;
            if recv > 0.0 {
                self.min_recv = Some(self.min_recv.map_or(recv, |m| m.min(recv)));
            }
            if fb.flags & FEEDBACK_LOSS != 0 {
                self.slow_start = false;
                self.clr = Some(Clr {
                    node,
                    rate: x,
                    rtt,
                    heard: now,
                });
                self.rate = self.rate.min(x);
                self.last_increase = now;
                self.clamp();
            } else if self.clr.is_none_or(|c| c.node == node || x < c.rate) {
                self.clr = Some(Clr {
                    node,
                    rate: x,
                    rtt,
                    heard: now,
                });
            }
            return;
        }
        match self.clr {
            Some(c) if c.node == node => {
                self.clr = Some(Clr {
                    rate: x,
                    rtt,
                    heard: now,
                    ..c
                });
                if x < self.rate {
                    self.rate = x;
                    self.last_increase = now;
                } else {
                    // At most one packet per largest RTT, per largest RTT.
                    let r = self.r_max().as_secs_f64();
                    let dt = now.saturating_since(self.last_increase).as_secs_f64();
                    self.rate = x.min(self.rate + self.size.max(1.0) * dt / (r * r));
                    self.last_increase = now;
                }
            }
            Some(c) if x >= c.rate => {}
            _ => {
                self.clr = Some(Clr {
                    node,
                    rate: x,
                    rtt,
                    heard: now,
                });
                if x < self.rate {
                    self.rate = x;
                }
                self.last_increase = now;
            }
        }
        self.clamp();
    }

    /// The next time [`Self::handle_timeout`] has work.
    pub fn poll_timeout(&self) -> Option<Time> {
        if !self.started {
            return None;
        }
        let clr = self.clr.map(|c| c.heard + self.clr_timeout(c));
        Some(clr.map_or(self.round_end, |t| t.min(self.round_end)))
    }

    fn clr_timeout(&self, c: Clr) -> Duration {
        c.rtt.max(self.cfg.min_feedback) * CLR_TIMEOUT_RTTS
    }

    /// Rounds end; a silent CLR is dropped.
    pub fn handle_timeout(&mut self, now: Time) {
        if let Some(c) = self.clr {
            if now >= c.heard + self.clr_timeout(c) {
                self.clr = None;
                self.rate /= 2.0;
                self.clamp();
                self.status_due = true;
            }
        }
        if self.started && now >= self.round_end {
            self.round = self.round.wrapping_add(1);
            self.suppress = u64::MAX;
            if let Some(r) = self.round_r_max.take() {
                let decayed = self.r_max.map_or(r, |m| m.mul_f64(0.9));
                self.r_max = Some(r.max(decayed));
            }
            if self.slow_start {
                // Double, up to twice the lowest rate received; without a report of what
                // arrives, hold.
                if let Some(m) = self.min_recv.or(self.last_min_recv) {
                    self.rate = (2.0 * self.rate).min(2.0 * m);
                }
                self.last_min_recv = self.min_recv.take().or(self.last_min_recv);
                self.clamp();
            }
            self.round_end = now + self.cfg.round(self.r_max());
            self.status_due = true;
        }
    }

    /// The status to send now, if one is due (a round began, feedback came in).
    pub fn poll_status(&mut self, now: Time) -> Option<Status> {
        if !self.started || !std::mem::take(&mut self.status_due) {
            return None;
        }
        let echo = match self.echo.take() {
            Some((node, ts, at, _)) => (node, ts, dur_us(now.saturating_since(at))),
            None => (0, 0, 0),
        };
        Some(Status {
            round: self.round,
            rate: self.rate(),
            suppress: self.suppress,
            clr: self.clr.map_or(0, |c| c.node),
            r_max_us: dur_us(self.r_max()),
            echo,
            flags: if self.slow_start {
                STATUS_SLOW_START
            } else {
                0
            },
        })
    }
}

#[cfg(test)]
mod tests;
