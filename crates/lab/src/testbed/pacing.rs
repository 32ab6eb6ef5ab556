//! How the testbed's sender paces a scenario's `[traffic]`, so that it means what it means in
//! the simulator: one new message every `interval_ms` (`rmcast send --data-interval-us`, a
//! fixed schedule from the first message), and everything the sender sends — new data,
//! repairs, control — at most at the rate of the source's link (`--rate`, the
//! `[topology] bandwidth_bps` the link emulator holds it to as well; for `dsp`, `csp` and `cp`
//! their `[protocol] rate_mbps`, the source's peak rate in the simulator, when it is given and
//! slower). A sender that spaces
//! its own packets (`prmp`, `ff`) gets the scenario's gap (`[protocol] ipg_ms`, else the
//! simulator's default), not one derived from the rate.
//!
//! Before, the testbed passed `--rate` = size × 8 / interval, and the socket sender charged
//! its repairs and control packets to that rate as well as its new data: the testbed's time
//! tracked (messages + repairs) × interval where the simulator's tracked messages × interval
//! (docs/results/agreement.md).

use toml::Table;

/// The sender's pacing options for one run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Pacing {
    /// `--data-interval-us`: `[traffic] interval_ms` (none: the source is saturated).
    pub(super) data_interval_us: Option<u64>,
    /// `--rate`: `[topology] bandwidth_bps`, the source's link, or a slower `[protocol]
    /// rate_mbps` of dsp, csp and cp (none: the sender's default).
    pub(super) rate_bps: Option<u64>,
    /// `--ipg-us`: `[protocol] ipg_ms` for `prmp` and `ff`, else the simulator's default.
    pub(super) ipg_us: Option<u64>,
}

fn num(t: Option<&Table>, k: &str) -> Option<f64> {
    t.and_then(|t| t.get(k))
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// The pacing of `protocol`'s sender for scenario `table`.
pub(super) fn pacing(table: &Table, protocol: &str) -> Pacing {
    let sub = |k: &str| table.get(k).and_then(|t| t.as_table());
    let data_interval_us = num(sub("traffic"), "interval_ms").map(|ms| (ms * 1e3).round() as u64);
    let link = num(sub("topology"), "bandwidth_bps");
    let peak = match protocol {
        "dsp" | "csp" | "cp" => num(sub("protocol"), "rate_mbps").map(|m| m * 1e6),
        _ => None,
    };
    let rate_bps = match (link, peak) {
        (Some(l), Some(p)) => Some(l.min(p)),
        (l, p) => l.or(p),
    }
    .map(|b| b.round() as u64);
    let ipg_us = match protocol {
        "prmp" | "ff" => {
            let ms = num(sub("protocol"), "ipg_ms").unwrap_or(match protocol {
                "prmp" => rmcast_proto::spec::prmp::IPG_MS,
                _ => rmcast_proto::spec::ff::IPG_MS,
            });
            Some(((ms * 1e3).round() as u64).max(1))
        }
        _ => None,
    };
    Pacing {
        data_interval_us: data_interval_us.filter(|us| *us > 0),
        rate_bps: rate_bps.filter(|b| *b > 0),
        ipg_us,
    }
}

impl Pacing {
    /// The `rmcast send` arguments.
    pub(super) fn args(&self) -> Vec<String> {
        let mut a = Vec::new();
        let mut push = |flag: &str, v: Option<u64>| {
            if let Some(v) = v {
                a.extend([flag.to_string(), v.to_string()]);
            }
        };
        push("--data-interval-us", self.data_interval_us);
        push("--rate", self.rate_bps);
        push("--ipg-us", self.ipg_us);
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(s: &str) -> Table {
        s.parse().expect("toml")
    }

    #[test]
    fn new_data_at_the_interval_and_everything_at_the_links_rate() {
        let t = table(
            "[topology]\nbandwidth_bps = 1500000\ndelay_ms = 10\n[protocol]\nname = \"pgm\"\n\
             [traffic]\nmessages = 200\nsize = 1024\ninterval_ms = 10\n",
        );
        let p = pacing(&t, "pgm");
        assert_eq!(p.data_interval_us, Some(10_000));
        // The link's rate, not size x 8 / interval (819,200 bit/s), which the sender charged
        // its repairs to as well.
        assert_eq!(p.rate_bps, Some(1_500_000));
        assert_eq!(p.ipg_us, None);
        assert_eq!(
            p.args(),
            ["--data-interval-us", "10000", "--rate", "1500000"]
        );
    }

    #[test]
    fn a_saturated_source_has_no_schedule() {
        let t = table("[topology]\nbandwidth_bps = 1e8\n[traffic]\nmessages = 10\n");
        let p = pacing(&t, "srm");
        assert_eq!(p.data_interval_us, None);
        assert_eq!(p.rate_bps, Some(100_000_000));
        assert_eq!(p.args(), ["--rate", "100000000"]);
    }

    #[test]
    fn the_tree_protocols_keep_their_peak_rate() {
        let t = table("[topology]\nbandwidth_bps = 1e8\n[protocol]\nrate_mbps = 11.2\n");
        assert_eq!(pacing(&t, "csp").rate_bps, Some(11_200_000));
        assert_eq!(pacing(&t, "pgm").rate_bps, Some(100_000_000));
        let slow = table("[topology]\nbandwidth_bps = 1500000\n[protocol]\nrate_mbps = 150\n");
        assert_eq!(pacing(&slow, "dsp").rate_bps, Some(1_500_000));
    }

    #[test]
    fn prmp_and_ff_keep_the_simulators_gap() {
        let t = table("[traffic]\ninterval_ms = 0.5\n[protocol]\nname = \"ff\"\nipg_ms = 2.5\n");
        let p = pacing(&t, "ff");
        assert_eq!(p.data_interval_us, Some(500));
        assert_eq!(p.ipg_us, Some(2_500));
        let dflt = pacing(&table("[protocol]\nname = \"prmp\"\n"), "prmp");
        let us = (rmcast_proto::spec::prmp::IPG_MS * 1e3) as u64;
        assert_eq!(dflt.ipg_us, Some(us));
        assert_eq!(dflt.args(), ["--ipg-us".to_string(), us.to_string()]);
    }
}
