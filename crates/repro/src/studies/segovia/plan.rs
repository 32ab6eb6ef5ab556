//! The sweep: families of runs (one configuration over receivers or failure rate) per table.

use super::run::{Proto, RunSpec, BAP_ACK_TIMEOUT};

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
    pub(super) messages: u64,
}

impl FamilyCfg {
    pub(super) fn new(proto: Proto, messages_saw: u64) -> Self {
        let messages = match proto {
            Proto::Bap { .. } => messages_saw * 9 / 10,
            _ => messages_saw,
        };
        FamilyCfg {
            proto,
            data_frame: 1518,
            rand_bits: 0,
            receivers: 0,
            ack_timeout_bits: BAP_ACK_TIMEOUT,
            max_retx_override: None,
            inclusive_backoff: true,
            bap_disarm: true,
            messages,
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
    s.increment_bits = error_increment(c.receivers);
    s
}

pub(super) struct Plan {
    pub(super) seeds: u64,
    pub(super) messages: u64,
    pub(super) rs: Vec<f64>,
    pub(super) err_rs: Vec<usize>,
    pub(super) err_fails: Vec<f64>,
    pub(super) err_windows: Vec<u16>,
    pub(super) sens_rs: Vec<f64>,
}

impl Plan {
    pub(super) fn new(quick: bool) -> Self {
        if quick {
            Plan {
                seeds: 3,
                messages: 200,
                rs: vec![5.0, 10.0, 20.0, 30.0, 60.0],
                err_rs: vec![20],
                err_fails: vec![0.0, 1.0],
                err_windows: vec![10],
                sens_rs: vec![5.0, 20.0, 60.0],
            }
        } else {
            Plan {
                seeds: 10,
                messages: 500,
                rs: (1..=12).map(|k| 5.0 * k as f64).collect(),
                err_rs: vec![20, 40, 60],
                err_fails: vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
                err_windows: vec![5, 10, 15],
                sens_rs: vec![5.0, 10.0, 20.0, 30.0, 40.0, 60.0],
            }
        }
    }

    pub(super) fn families(&self) -> Vec<Family> {
        let mut f = Vec::new();
        let m = self.messages;
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
            FamilyCfg::new(Proto::Saw, m),
        ));
        for d in [64u64, 848, 1436] {
            let mut c = FamilyCfg::new(Proto::Saw, m);
            c.data_frame = d;
            f.push(fam(format!("t4_2_d{d}"), &self.rs, by_receivers, c));
        }
        for rd in [12_000u64, 22_000, 32_000] {
            let mut c = FamilyCfg::new(Proto::Saw, m);
            c.rand_bits = rd;
            f.push(fam(format!("t4_3_rand{rd}"), &self.rs, by_receivers, c));
        }
        for w in [5u16, 10, 15] {
            let c = FamilyCfg::new(Proto::Bap { window: w }, m);
            f.push(fam(format!("t4_4_w{w}"), &self.rs, by_receivers, c));
        }
        for rd in [12_000u64, 22_000, 32_000] {
            let mut c = FamilyCfg::new(Proto::Bap { window: 10 }, m);
            c.rand_bits = rd;
            f.push(fam(format!("t4_5_rand{rd}"), &self.rs, by_receivers, c));
        }
        f.push(fam(
            "rra".into(),
            &self.rs,
            by_receivers,
            FamilyCfg::new(Proto::Rra { window: 2 }, m),
        ));
        // Error experiments (Tables 4.6–4.13): 500 packets for both protocols (digest §4.6).
        for &r in &self.err_rs {
            for rd in [0u64, 22_000] {
                let mut c = FamilyCfg::new(Proto::Saw, m);
                c.receivers = r;
                c.rand_bits = rd;
                f.push(fam(
                    format!("err.saw_r{r}_rand{rd}"),
                    &self.err_fails,
                    by_failure,
                    c,
                ));
                for &w in &self.err_windows {
                    let mut c = FamilyCfg::new(Proto::Bap { window: w }, m);
                    c.messages = m;
                    c.receivers = r;
                    c.rand_bits = rd;
                    f.push(fam(
                        format!("err.bap_w{w}_r{r}_rand{rd}"),
                        &self.err_fails,
                        by_failure,
                        c,
                    ));
                }
            }
        }
        // Sensitivity to the choices the thesis leaves open.
        let mut c = FamilyCfg::new(Proto::Saw, m);
        c.inclusive_backoff = false;
        f.push(fam(
            "sens.saw_exclusive".into(),
            &self.sens_rs,
            by_receivers,
            c,
        ));
        let mut c = FamilyCfg::new(Proto::Bap { window: 10 }, m);
        c.inclusive_backoff = false;
        f.push(fam(
            "sens.bap_w10_exclusive".into(),
            &self.sens_rs,
            by_receivers,
            c,
        ));
        for t in [25_000u64, 300_000] {
            let mut c = FamilyCfg::new(Proto::Bap { window: 10 }, m);
            c.ack_timeout_bits = t;
            f.push(fam(
                format!("sens.bap_w10_t{t}"),
                &self.sens_rs,
                by_receivers,
                c,
            ));
        }
        let mut c = FamilyCfg::new(Proto::Bap { window: 10 }, m);
        c.bap_disarm = false;
        f.push(fam(
            "sens.bap_w10_running".into(),
            &self.sens_rs,
            by_receivers,
            c,
        ));
        let fails = vec![0.0, 1.0, 5.0];
        let mut c = FamilyCfg::new(Proto::Bap { window: 10 }, m);
        c.messages = m;
        c.receivers = 20;
        c.bap_disarm = false;
        f.push(fam(
            "sens.bap_w10_r20_running".into(),
            &fails,
            by_failure,
            c,
        ));
        for (name, lim) in [("lim5", Some(5u32)), ("lim40", Some(40))] {
            let mut c = FamilyCfg::new(Proto::Saw, m);
            c.receivers = 20;
            c.max_retx_override = Some(lim);
            f.push(fam(format!("sens.saw_r20_{name}"), &fails, by_failure, c));
            let mut c = FamilyCfg::new(Proto::Bap { window: 10 }, m);
            c.messages = m;
            c.receivers = 20;
            c.max_retx_override = Some(lim);
            f.push(fam(
                format!("sens.bap_w10_r20_{name}"),
                &fails,
                by_failure,
                c,
            ));
        }
        for t in [25_000u64, 300_000] {
            let mut c = FamilyCfg::new(Proto::Bap { window: 10 }, m);
            c.messages = m;
            c.receivers = 20;
            c.ack_timeout_bits = t;
            f.push(fam(format!("sens.bap_w10_r20_t{t}"), &fails, by_failure, c));
        }
        f
    }
}
