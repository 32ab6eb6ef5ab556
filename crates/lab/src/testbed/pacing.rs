//! How the testbed's sender paces a scenario's `[traffic]`, so that it means what it means in
//! the simulator: one new message every `interval_ms` (`rmcast send --data-interval-us`, a
//! fixed schedule from the first message), and everything the sender sends — new data,
//! repairs, control — at most at the rate of the source's link (`--rate`, the
//! `[topology] bandwidth_bps` the link emulator holds it to as well; for `dsp`, `csp` and `cp`
//! their `[protocol] rate_mbps`, the source's peak rate in the simulator, when it is given and
//! slower; their source sends at that rate, so it is the link's rate in datagram bytes, as
//! the simulator's link counts them, not in the wire bytes the emulator counts). A sender
//! that spaces
//! its own packets (`prmp`, `ff`) gets the scenario's gap (`[protocol] ipg_ms`, else the
//! simulator's default), not one derived from the rate.
//!
//! Before, the testbed passed `--rate` = size × 8 / interval, and the socket sender charged
//! its repairs and control packets to that rate as well as its new data: the testbed's time
//! tracked (messages + repairs) × interval where the simulator's tracked messages × interval
//! (docs/results/agreement.md).

use toml::Table;

/// The sender's pacing options for one run.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Pacing {
    /// `--data-interval-us`: `[traffic] interval_ms` (none: the source is saturated).
    pub(super) data_interval_us: Option<u64>,
    /// `--rate`: `[topology] bandwidth_bps`, the source's link, or a slower `[protocol]
    /// rate_mbps` of dsp, csp and cp (none: the sender's default).
    pub(super) rate_bps: Option<u64>,
    /// `--ipg-us`: `[protocol] ipg_ms` for `prmp` and `ff`, else the simulator's default.
    pub(super) ipg_us: Option<u64>,
    /// `--rtd-ms` and `--local-rtd-ms` of dsp, csp and cp: the round trips the simulator
    /// derives from the topology ([`tree_rtds`]; the sockets' defaults are 20 ms and 1 ms).
    pub(super) rtds: Option<TreeRtds>,
    /// `--rf` of dsp, csp and cp: `[protocol] r_f` when the scenario gives it (the
    /// retransmission timeout factor the simulator reads from the same key; both default to
    /// the paper's 1.2).
    pub(super) r_f: Option<f64>,
}

/// The round trips seed 001's protocols assume, as `rmcast_sim`'s registry derives them
/// (`build_tree`): a node's one-way delay is the links' propagation plus a block's
/// transmission on each link from the source; a round trip is twice that.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct TreeRtds {
    /// To the reporters (dsp's designated receivers, csp's and cp's local exchanges), the
    /// largest, ms.
    pub(super) rtd_ms: f64,
    /// Inside a region, the largest, ms (`[protocol] local_rtd_ms` when the scenario gives it).
    pub(super) local_rtd_ms: f64,
}

/// A region: its exchange's one-way delay and its endpoints', ns.
pub(super) struct RegionDelays {
    pub(super) exchange: u64,
    pub(super) endpoints: Vec<u64>,
}

/// [`TreeRtds`] of `regions`; `at_router`: dsp's designated sits at the exchange (`designated
/// = "relay"`), which csp and cp also report to; else dsp's designated is the region's
/// endpoint closest to the source.
pub(super) fn tree_rtds(regions: &[RegionDelays], at_exchange: bool, at_router: bool) -> TreeRtds {
    let ms = |ns: u64| ns as f64 / 1e6;
    let rtd = regions
        .iter()
        .map(|g| {
            if at_exchange {
                2 * g.exchange
            } else {
                2 * g.endpoints.iter().copied().min().unwrap_or(g.exchange)
            }
        })
        .max()
        .unwrap_or(0);
    let local = regions
        .iter()
        .map(|g| rmcast_sim::registry::region_round_trip(g.exchange, &g.endpoints, at_router))
        .max()
        .unwrap_or(0);
    TreeRtds {
        rtd_ms: ms(rtd),
        local_rtd_ms: ms(local),
    }
}

/// The block datagram the simulator times seed 001's round trips with: `[protocol]
/// block_bytes` (default the spec's) plus 32 bytes of header.
pub(super) fn block_datagram(table: &Table) -> u64 {
    let sub = table.get("protocol").and_then(|t| t.as_table());
    num(sub, "block_bytes").unwrap_or(rmcast_proto::tree::spec::BLOCK_BYTES as f64) as u64 + 32
}

/// Bytes an IPv4 UDP datagram adds on an Ethernet frame before the emulator's
/// [`crate::emu::wire_bytes`]: the Ethernet header (14), IPv4 (20), UDP (8).
const FRAME_HEADERS: u64 = 14 + 20 + 8;

/// The share of the wire a datagram of `dgram` bytes fills in the emulator.
pub(super) fn datagram_share(dgram: u64) -> f64 {
    dgram as f64 / crate::emu::wire_bytes(dgram + FRAME_HEADERS) as f64
}

/// `[protocol] local_rtd_ms`, when the scenario gives it.
pub(super) fn given_local_rtd_ms(table: &Table) -> Option<f64> {
    num(
        table.get("protocol").and_then(|t| t.as_table()),
        "local_rtd_ms",
    )
}

fn num(t: Option<&Table>, k: &str) -> Option<f64> {
    t.and_then(|t| t.get(k))
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// `protocol`'s parameter `key` in its spec ([`rmcast_proto::protocols`]), if it has one.
fn spec_param(protocol: &str, key: &str) -> Option<&'static rmcast_proto::spec::Param> {
    rmcast_proto::protocols::lookup(protocol).and_then(|p| p.param(key))
}

/// Whether `protocol` is one of seed 001's tree protocols (dsp, csp, cp), known by the
/// re-multicast factor `r_f` its spec has: its sender paces blocks at a peak rate, and its
/// status round trips follow from the tree.
pub(super) fn is_seed001_tree(protocol: &str) -> bool {
    spec_param(protocol, "r_f").is_some()
}

/// The pacing of `protocol`'s sender for scenario `table`.
pub(super) fn pacing(table: &Table, protocol: &str) -> Pacing {
    let sub = |k: &str| table.get(k).and_then(|t| t.as_table());
    let data_interval_us = num(sub("traffic"), "interval_ms").map(|ms| (ms * 1e3).round() as u64);
    let mut link = num(sub("topology"), "bandwidth_bps");
    let tree = is_seed001_tree(protocol);
    let peak = match tree {
        true => num(sub("protocol"), "rate_mbps").map(|m| m * 1e6),
        false => None,
    };
    if tree {
        // The simulator's source of seed 001 sends its blocks at the link's rate as the
        // simulator's link serialises them, on datagram bytes; the emulator serialises wire
        // bytes (Ethernet, IP and UDP headers, FCS, preamble, gap), so the same rate of
        // datagrams would overfill it by 6 % at 1 KB and queue without bound while the
        // sender is busy: the link's rate in datagram bytes instead.
        link = link.map(|l| l * datagram_share(block_datagram(table)));
    }
    let rate_bps = match (link, peak) {
        (Some(l), Some(p)) => Some(l.min(p)),
        (l, p) => l.or(p),
    }
    .map(|b| b.round() as u64);
    // A protocol with an inter-packet gap (prmp, ff): the file's, or its spec's default.
    let ipg_us = spec_param(protocol, "ipg_ms").map(|p| {
        let ms = num(sub("protocol"), "ipg_ms")
            .or(p.default.real())
            .unwrap_or(0.0);
        ((ms * 1e3).round() as u64).max(1)
    });
    let r_f = tree.then(|| num(sub("protocol"), "r_f")).flatten();
    Pacing {
        data_interval_us: data_interval_us.filter(|us| *us > 0),
        rate_bps: rate_bps.filter(|b| *b > 0),
        ipg_us,
        rtds: None,
        r_f,
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
        if let Some(r) = self.rtds {
            a.extend(["--rtd-ms".to_string(), format!("{:.3}", r.rtd_ms)]);
            a.extend([
                "--local-rtd-ms".to_string(),
                format!("{:.3}", r.local_rtd_ms),
            ]);
        }
        if let Some(r_f) = self.r_f {
            a.extend(["--rf".to_string(), r_f.to_string()]);
        }
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
        // At the link's rate: the link's rate in datagram bytes. A 1,056-byte block is a
        // 1,122-byte frame on the wire (42 bytes of headers, 24 of FCS, preamble and gap).
        let slow = table(
            "[topology]\nbandwidth_bps = 1500000\n[protocol]\nrate_mbps = 150\n\
             block_bytes = 1024\n",
        );
        assert_eq!(crate::emu::wire_bytes(1_056 + FRAME_HEADERS), 1_122);
        let r = (1.5e6_f64 * 1_056.0 / 1_122.0).round() as u64;
        assert_eq!(pacing(&slow, "dsp").rate_bps, Some(r));
        // The block's time at that rate on the wire is the simulator's at 1.5 Mb/s.
        let wire_s = 1_122.0_f64 * 8.0 / 1.5e6;
        assert!((1_056.0 * 8.0 / r as f64 - wire_s).abs() < 1e-8);
        // Slower than the link: the peak rate as given.
        let peak = table("[topology]\nbandwidth_bps = 1500000\n[protocol]\nrate_mbps = 1\n");
        assert_eq!(pacing(&peak, "cp").rate_bps, Some(1_000_000));
    }

    #[test]
    fn the_tree_protocols_take_the_files_timeout_factor() {
        let t = table("[protocol]\nr_f = 2.5\n");
        assert_eq!(pacing(&t, "csp").args(), ["--rf", "2.5"]);
        assert_eq!(pacing(&t, "cp").r_f, Some(2.5));
        // Not given: the sender's default (the simulator's too), no flag.
        assert_eq!(pacing(&table("[protocol]\n"), "dsp").r_f, None);
        // Another protocol has no such flag.
        assert!(pacing(&t, "pgm").args().is_empty());
    }

    #[test]
    fn a_protocol_with_a_gap_in_its_spec_takes_the_files_or_the_default() {
        let t = table("[protocol]\nipg_ms = 2.5\n");
        assert_eq!(pacing(&t, "prmp").ipg_us, Some(2_500));
        assert_eq!(pacing(&t, "ff").ipg_us, Some(2_500));
        let none = table("[protocol]\n");
        let ms = rmcast_proto::ff::spec::IPG_MS;
        assert_eq!(pacing(&none, "ff").ipg_us, Some((ms * 1e3) as u64));
        // No gap in pgm's spec; no r_f outside seed 001's trees.
        assert_eq!(pacing(&t, "pgm").ipg_us, None);
        assert!(is_seed001_tree("dsp") && is_seed001_tree("csp") && is_seed001_tree("cp"));
        assert!(!is_seed001_tree("pgm") && !is_seed001_tree("prmp"));
    }

    #[test]
    fn seed_001s_round_trips_as_the_simulator_derives_them() {
        // The 1.5 Mb/s binary tree: 10 ms and 5.632 ms (1,056 bytes) per link; the exchanges
        // two links below the source, their endpoints three.
        let hop = 10_000_000 + 5_632_000;
        let g = || RegionDelays {
            exchange: 2 * hop,
            endpoints: vec![3 * hop, 3 * hop],
        };
        let csp = tree_rtds(&[g(), g()], true, false);
        assert!((csp.rtd_ms - 62.528).abs() < 1e-9);
        // Endpoint to endpoint through the exchange: two links each way.
        assert!((csp.local_rtd_ms - 62.528).abs() < 1e-9);
        // dsp with the designated at the router: to the farthest endpoint and back.
        let dsp = tree_rtds(&[g()], true, true);
        assert!((dsp.local_rtd_ms - 31.264).abs() < 1e-9);
        // dsp with a designated receiver: the round trip to it.
        assert!((tree_rtds(&[g()], false, false).rtd_ms - 93.792).abs() < 1e-9);
        let p = Pacing {
            rtds: Some(csp),
            ..Pacing::default()
        };
        assert_eq!(p.args(), ["--rtd-ms", "62.528", "--local-rtd-ms", "62.528"]);
        assert_eq!(
            block_datagram(&table("[protocol]\nblock_bytes = 1024\n")),
            1056
        );
    }

    #[test]
    fn prmp_and_ff_keep_the_simulators_gap() {
        let t = table("[traffic]\ninterval_ms = 0.5\n[protocol]\nname = \"ff\"\nipg_ms = 2.5\n");
        let p = pacing(&t, "ff");
        assert_eq!(p.data_interval_us, Some(500));
        assert_eq!(p.ipg_us, Some(2_500));
        let dflt = pacing(&table("[protocol]\nname = \"prmp\"\n"), "prmp");
        let us = (rmcast_proto::prmp::spec::IPG_MS * 1e3) as u64;
        assert_eq!(dflt.ipg_us, Some(us));
        assert_eq!(dflt.args(), ["--ipg-us".to_string(), us.to_string()]);
    }
}
