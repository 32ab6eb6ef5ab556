//! The sweep: families of runs (one configuration over receivers or failure rate) per table.

use super::run::{Proto, RunSpec, BAP_ACK_TIMEOUT, BAP_LIMIT, RRA_LIMIT, SAW_LIMIT};
use crate::study::RunCtx;

/// The values seed 000 leaves unstated that the runs of the thesis's configuration use
/// (`[[unstated]]` in `scenarios/repro/segovia/setup.toml`), read through [`RunCtx::param`]
/// so `--explore` can sweep them. The sensitivity families (`sens.*`) set their own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Unstated {
    /// MBAP receivers' ACK-delay timeout `t`, bit times (it is also a term of the sender's
    /// packet timeout `n·d + r·a + i + t + increment`): `t`, default 95,000.
    pub(super) t: u64,
    /// MBAP's retransmission limit: `limit`, default 20.
    pub(super) limit: u32,
    /// MSAW's retransmission limit: `saw_limit`, default 10.
    pub(super) saw_limit: u32,
    /// The backoff bound: `backoff` 1 draws 0..=2^k (the thesis's words, the default), 0
    /// draws 0..2^k − 1 (IEEE 802.3).
    pub(super) inclusive_backoff: bool,
}

impl Unstated {
    /// The sample command file's values and the thesis's wording, as the study runs them.
    pub(super) const DEFAULT: Unstated = Unstated {
        t: BAP_ACK_TIMEOUT,
        limit: BAP_LIMIT,
        saw_limit: SAW_LIMIT,
        inclusive_backoff: true,
    };

    /// The values `ctx` gives (`--explore`), else [`Unstated::DEFAULT`]'s.
    pub(super) fn from_ctx(ctx: &RunCtx<'_>) -> Result<Self, String> {
        let d = Unstated::DEFAULT;
        let whole = |name: &str, default: f64, lo: f64| -> Result<f64, String> {
            let v = ctx.param(name, default).round();
            if v.is_finite() && v >= lo && v <= f64::from(u32::MAX) {
                Ok(v)
            } else {
                Err(format!(
                    "segovia: `{name}` must be a number from {lo} up, not {v}"
                ))
            }
        };
        let backoff = ctx.param("backoff", 1.0);
        if backoff != 0.0 && backoff != 1.0 {
            return Err(format!(
                "segovia: `backoff` is 1 (0..=2^k, the thesis's words) or 0 (0..2^k-1, IEEE \
                 802.3), not {backoff}"
            ));
        }
        Ok(Unstated {
            t: whole("t", d.t as f64, 0.0)? as u64,
            limit: whole("limit", f64::from(d.limit), 0.0)? as u32,
            saw_limit: whole("saw_limit", f64::from(d.saw_limit), 0.0)? as u32,
            inclusive_backoff: backoff == 1.0,
        })
    }
}

/// A sweep point family: one configuration over a varying x (receivers or failure rate).
#[derive(Debug, Clone)]
pub(super) struct Family {
    /// Measure prefix, e.g. `t4_1` or `err.saw_r20_rand0`.
    pub(super) key: String,
    /// x values (receivers, or failure rate in %).
    pub(super) xs: Vec<f64>,
    /// The run for (x, seed).
    pub(super) make: fn(&FamilyCfg, f64, u64) -> RunSpec,
    pub(super) cfg: FamilyCfg,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct FamilyCfg {
    pub(super) proto: Proto,
    pub(super) data_frame: u64,
    pub(super) rand_bits: u64,
    pub(super) receivers: usize,
    pub(super) ack_timeout_bits: u64,
    pub(super) max_retx_override: Option<Option<u32>>,
    pub(super) inclusive_backoff: bool,
    pub(super) bap_disarm: bool,
    pub(super) bap_literal: bool,
    pub(super) drop_checks: u32,
    pub(super) messages: u64,
    /// Timeout increment of the runs under failures; `None`: the thesis's
    /// [`error_increment`].
    pub(super) increment_bits: Option<u64>,
}

/// A choice the thesis leaves open, set away from rmcast's.
#[derive(Debug, Clone, Copy)]
enum Choice {
    /// The backoff bound exclusive (IEEE 802.3).
    ExclusiveBackoff,
    /// The BAP receivers' ACK-delay timeout, bit times.
    AckTimeout(u64),
    /// The BAP receivers' ACK-delay timer kept running after a block ACK.
    TimerRunning,
    /// The retransmission limit.
    Limit(u32),
    /// The BAP receiver exactly as the thesis words it (`RunSpec::bap_literal`).
    Literal,
    /// Two failure draws per interface and direction (`RunSpec::drop_checks`).
    DropTwice,
}

impl Choice {
    fn apply(self, c: &mut FamilyCfg) {
        match self {
            Choice::ExclusiveBackoff => c.inclusive_backoff = false,
            Choice::AckTimeout(t) => c.ack_timeout_bits = t,
            Choice::TimerRunning => c.bap_disarm = false,
            Choice::Limit(n) => c.max_retx_override = Some(Some(n)),
            Choice::Literal => c.bap_literal = true,
            Choice::DropTwice => c.drop_checks = 2,
        }
    }
}

impl FamilyCfg {
    pub(super) fn new(proto: Proto, messages_saw: u64, u: &Unstated) -> Self {
        let messages = match proto {
            Proto::Bap { .. } => messages_saw * 9 / 10,
            _ => messages_saw,
        };
        let limit = match proto {
            Proto::Saw => u.saw_limit,
            Proto::Bap { .. } => u.limit,
            Proto::Rra { .. } => RRA_LIMIT,
        };
        FamilyCfg {
            proto,
            data_frame: 1518,
            rand_bits: 0,
            receivers: 0,
            ack_timeout_bits: u.t,
            max_retx_override: Some(Some(limit)),
            inclusive_backoff: u.inclusive_backoff,
            bap_disarm: true,
            bap_literal: false,
            drop_checks: 1,
            messages,
            increment_bits: None,
        }
    }
    pub(super) fn base(&self, r: usize, seed: u64) -> RunSpec {
        let mut s = RunSpec::thesis(self.proto, r, seed);
        s.data_frame = self.data_frame;
        s.rand_bits = self.rand_bits;
        s.ack_timeout_bits = self.ack_timeout_bits;
        if let Some(m) = self.max_retx_override {
            s.max_retx = m;
        }
        s.inclusive_backoff = self.inclusive_backoff;
        s.bap_disarm = self.bap_disarm;
        s.bap_literal = self.bap_literal;
        s.drop_checks = self.drop_checks;
        s.messages = self.messages;
        s
    }
}

/// x = receivers, error-free, increment 600,000.
pub(super) fn by_receivers(c: &FamilyCfg, x: f64, seed: u64) -> RunSpec {
    let r = x as usize;
    let mut s = c.base(r, seed);
    if let Proto::Rra { .. } = c.proto {
        s.proto = Proto::Rra { window: 2 * r };
    }
    s
}

/// Timeout increments of the error experiments: 45,000 / 90,000 / 135,000 bit times for
/// 20 / 40 / 60 receivers (digest §4.6), i.e. 2,250 per receiver.
pub fn error_increment(r: usize) -> u64 {
    2_250 * r as u64
}

/// x = failure rate in %, at `c.receivers`, with the error experiments' increments.
pub(super) fn by_failure(c: &FamilyCfg, x: f64, seed: u64) -> RunSpec {
    let mut s = c.base(c.receivers, seed);
    s.fail = x / 100.0;
    s.increment_bits = c
        .increment_bits
        .unwrap_or_else(|| error_increment(c.receivers));
    s
}

/// x = the timeout increment in bit times, error-free, at `c.receivers` (the thesis's
/// timeout selection, §4.4).
pub(super) fn by_increment(c: &FamilyCfg, x: f64, seed: u64) -> RunSpec {
    let mut s = c.base(c.receivers, seed);
    s.increment_bits = x as u64;
    s
}

/// The thesis's criterion for its timeout increments (§4.4): "fewer than 2% of the packets
/// being retransmitted under error-free conditions".
pub const INCREMENT_CRITERION: f64 = 0.02;

crate::plan! {
    pub(super) struct Plan {
        /// Runs per point, and more where a claim is undecided (sequential sampling, up to
        /// `--runs-cap` times). With 10 everywhere 13 claims were inconclusive (most of them
        /// the Min/Max RT columns, one run's extremes, which spread widely between runs); 40
        /// everywhere (`--runs-factor 4`, 2026-11-28) decided 8 of them in 5.4 min instead
        /// of 1.2 on 2 cores.
        pub(super) seeds: u64 = quick 5, full 10;
        pub(super) messages: u64 = quick 200, full 500;
        pub(super) rs: Vec<f64> =
            quick vec![5.0, 10.0, 20.0, 30.0, 60.0],
            full (1..=12).map(|k| 5.0 * k as f64).collect();
        pub(super) err_rs: Vec<usize> = quick vec![20], full vec![20, 40, 60];
        pub(super) err_fails: Vec<f64> =
            quick vec![0.0, 1.0, 2.0],
            full vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
        pub(super) err_windows: Vec<u16> = quick vec![10], full vec![5, 10, 15];
        /// Increments scanned for the thesis's timeout selection: steps of 45,000 bit times
        /// (every increment the thesis reports is a multiple of 45,000), from 0, so that the
        /// smallest increment found can fall below the thesis's as well as above it.
        pub(super) inc_steps: Vec<f64> =
            quick vec![0.0, 45_000.0, 90_000.0, 135_000.0],
            full (0..=7).map(|k| 45_000.0 * k as f64).collect();
        pub(super) sens_rs: Vec<f64> =
            quick vec![5.0, 20.0, 60.0],
            full vec![5.0, 10.0, 20.0, 30.0, 40.0, 60.0];
    }
    runs: seeds;
}

impl Plan {
    pub(super) fn families(&self, u: &Unstated) -> Vec<Family> {
        let mut f = Vec::new();
        let m = self.messages;
        let cfg = |proto, m| FamilyCfg::new(proto, m, u);
        let fam =
            |key: String, xs: &Vec<f64>, make: fn(&FamilyCfg, f64, u64) -> RunSpec, cfg| Family {
                key,
                xs: xs.clone(),
                make,
                cfg,
            };
        f.push(fam(
            "t4_1".into(),
            &self.rs,
            by_receivers,
            cfg(Proto::Saw, m),
        ));
        for d in [64u64, 848, 1436] {
            let mut c = cfg(Proto::Saw, m);
            c.data_frame = d;
            f.push(fam(format!("t4_2_d{d}"), &self.rs, by_receivers, c));
        }
        for rd in [12_000u64, 22_000, 32_000] {
            let mut c = cfg(Proto::Saw, m);
            c.rand_bits = rd;
            f.push(fam(format!("t4_3_rand{rd}"), &self.rs, by_receivers, c));
        }
        for w in [5u16, 10, 15] {
            let c = cfg(Proto::Bap { window: w }, m);
            f.push(fam(format!("t4_4_w{w}"), &self.rs, by_receivers, c));
        }
        for rd in [12_000u64, 22_000, 32_000] {
            let mut c = cfg(Proto::Bap { window: 10 }, m);
            c.rand_bits = rd;
            f.push(fam(format!("t4_5_rand{rd}"), &self.rs, by_receivers, c));
        }
        f.push(fam(
            "rra".into(),
            &self.rs,
            by_receivers,
            cfg(Proto::Rra { window: 2 }, m),
        ));
        // Runs under failures (Tables 4.6–4.13, and the sensitivity at r = 20): 500 packets
        // for both protocols (digest §4.6), `r` receivers, by failure rate.
        let failing = |proto, r, tweak: &dyn Fn(&mut FamilyCfg)| {
            let mut c = cfg(proto, m);
            c.messages = m;
            c.receivers = r;
            tweak(&mut c);
            c
        };
        for &r in &self.err_rs {
            for rd in [0u64, 22_000] {
                let rand = |c: &mut FamilyCfg| c.rand_bits = rd;
                let saw = failing(Proto::Saw, r, &rand);
                f.push(fam(
                    format!("err.saw_r{r}_rand{rd}"),
                    &self.err_fails,
                    by_failure,
                    saw,
                ));
                for &w in &self.err_windows {
                    let bap = failing(Proto::Bap { window: w }, r, &rand);
                    let key = format!("err.bap_w{w}_r{r}_rand{rd}");
                    f.push(fam(key, &self.err_fails, by_failure, bap));
                }
            }
        }
        // The thesis's timeout selection (§4.4), repeated on rmcast's bus: error-free runs
        // of MSAW and MBAP at each r of the error tables, by increment; the study derives the
        // smallest increment meeting [`INCREMENT_CRITERION`] (`inc.<protocol>.smallest`).
        for &r in &self.err_rs {
            let mut protos = vec![("saw".to_string(), Proto::Saw)];
            for &w in &self.err_windows {
                protos.push((format!("bap_w{w}"), Proto::Bap { window: w }));
            }
            for (name, proto) in protos {
                f.push(fam(
                    format!("inc.{name}_r{r}"),
                    &self.inc_steps,
                    by_increment,
                    failing(proto, r, &|_| {}),
                ));
            }
        }
        // Sensitivity to the choices the thesis leaves open: (name, protocol, the choice, at
        // r = 20 under failures rather than error-free by receivers).
        use Choice::{AckTimeout, ExclusiveBackoff, Limit, Literal, TimerRunning};
        let bap10 = Proto::Bap { window: 10 };
        let (bap5, bap15) = (Proto::Bap { window: 5 }, Proto::Bap { window: 15 });
        let sensitivity = [
            ("saw_exclusive", Proto::Saw, ExclusiveBackoff, false),
            ("bap_w10_exclusive", bap10, ExclusiveBackoff, false),
            ("bap_w10_t25000", bap10, AckTimeout(25_000), false),
            ("bap_w10_t300000", bap10, AckTimeout(300_000), false),
            ("bap_w10_running", bap10, TimerRunning, false),
            ("bap_w10_r20_running", bap10, TimerRunning, true),
            ("saw_r20_lim5", Proto::Saw, Limit(5), true),
            ("bap_w10_r20_lim5", bap10, Limit(5), true),
            ("saw_r20_lim40", Proto::Saw, Limit(40), true),
            ("bap_w10_r20_lim40", bap10, Limit(40), true),
            ("bap_w10_r20_t25000", bap10, AckTimeout(25_000), true),
            ("bap_w10_r20_t300000", bap10, AckTimeout(300_000), true),
            ("bap_w5_r20_literal", bap5, Literal, true),
            ("bap_w10_r20_literal", bap10, Literal, true),
            ("bap_w15_r20_literal", bap15, Literal, true),
        ];
        // MSAW with every interface drawing its failures twice, at each r of the error
        // tables (the thesis's MSAW retransmissions grow faster with the failure rate than
        // rmcast's; this shows what a doubled drop rate per interface would give).
        for &r in &self.err_rs {
            f.push(fam(
                format!("sens.saw_r{r}_drop2"),
                &self.err_fails,
                by_failure,
                failing(Proto::Saw, r, &|c| Choice::DropTwice.apply(c)),
            ));
        }
        let fails = vec![0.0, 1.0, 5.0];
        // MBAP with a shorter ACK-delay timeout t = 50,000, every window at r = 20 and window
        // 10 at r = 40 and 60 (the thesis does not give t for its error tables; rmcast uses the
        // sample file's 95,000): the blow-up under failures, and what it does to error-free runs.
        for (w, r) in [(5, 20), (10, 20), (15, 20), (10, 40), (10, 60)] {
            f.push(fam(
                format!("sens.bap_w{w}_r{r}_t50000"),
                &fails,
                by_failure,
                failing(Proto::Bap { window: w }, r, &|c| {
                    Choice::AckTimeout(50_000).apply(c)
                }),
            ));
        }
        for (name, proto, choice, at_r20) in sensitivity {
            let key = format!("sens.{name}");
            f.push(if at_r20 {
                fam(
                    key,
                    &fails,
                    by_failure,
                    failing(proto, 20, &|c| choice.apply(c)),
                )
            } else {
                let mut c = cfg(proto, m);
                choice.apply(&mut c);
                fam(key, &self.sens_rs, by_receivers, c)
            });
        }
        f
    }

    /// MSAW under failures at each r with the increment rmcast's own timeout selection gave
    /// there (`found`: (r, increment)), keys `proc.saw_r<r>`: what the error tables look like
    /// when the timeouts are chosen by the thesis's procedure rather than copied.
    pub(super) fn procedure_families(&self, found: &[(usize, u64)], u: &Unstated) -> Vec<Family> {
        found
            .iter()
            .map(|&(r, inc)| {
                let mut c = FamilyCfg::new(Proto::Saw, self.messages, u);
                c.receivers = r;
                c.increment_bits = Some(inc);
                Family {
                    key: format!("proc.saw_r{r}"),
                    xs: self.err_fails.clone(),
                    make: by_failure,
                    cfg: c,
                }
            })
            .collect()
    }
}
