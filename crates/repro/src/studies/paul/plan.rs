//! The study's sweeps: the families of Figures 4–12 and beyond, each a parameter moved
//! away from the paper's point, and the runs' points.

use super::Spec;
use crate::study::Sweeps;
use rmcast_proto::tree::Variant;

/// The protocols, in the order of the paper's figures (and of the curves' colours).
pub(super) const VARIANTS: [Variant; 3] = [Variant::Dsp, Variant::Csp, Variant::Cp];

/// A sweep family: which parameter moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fam {
    /// Figures 4–8: window 0.5–3.0 × the largest RTD.
    Win,
    /// Figure 9: r_f.
    Rf,
    /// Figure 10: transmission speed (Mb/s), window fixed in blocks.
    Speed,
    /// Figure 11: block error rate (x = log10).
    Err,
    /// Figure 12: number of destinations.
    Dests,
    /// Beyond the paper: destinations over 100 exchanges.
    Beyond,
}

impl Fam {
    pub(super) fn key(self) -> &'static str {
        match self {
            Fam::Win => "win",
            Fam::Rf => "rf",
            Fam::Speed => "speed",
            Fam::Err => "err",
            Fam::Dests => "dests",
            Fam::Beyond => "beyond",
        }
    }
    pub(super) fn x_label(self) -> &'static str {
        match self {
            Fam::Win => "window (× largest RTD in blocks)",
            Fam::Rf => "retransmission timeout factor r_f",
            Fam::Speed => "transmission speed (Mb/s)",
            Fam::Err => "log10 block error rate",
            Fam::Dests | Fam::Beyond => "destinations",
        }
    }
}

pub(super) struct Plan {
    pub(super) seeds: u64,
    pub(super) blocks: u64,
    pub(super) windows: Vec<f64>,
    pub(super) rfs: Vec<f64>,
    pub(super) speeds: Vec<f64>,
    pub(super) errs: Vec<f64>,
    pub(super) dests: Vec<f64>,
    pub(super) beyond: Vec<f64>,
    pub(super) beyond_blocks: u64,
}

impl Plan {
    pub(super) fn new(sweeps: Sweeps) -> Plan {
        let common = Plan {
            // 5 seeds per point, and more where a claim is undecided (sequential sampling,
            // up to `--runs-cap` times): with 5 everywhere four claims whose means hold stayed
            // inconclusive; 20 everywhere (`--runs-factor 4`) decided all four.
            seeds: 5,
            blocks: 30_000,
            windows: vec![0.5, 1.0, 1.5, 2.0, 2.5, 3.0],
            rfs: vec![1.2, 1.5, 2.0, 2.5, 3.0],
            speeds: vec![50.0, 100.0, 150.0, 300.0, 600.0],
            errs: vec![1e-4, 3e-4, 1e-3, 3e-3, 1e-2],
            // Figure 12's range is not given; §7's network has 3 to 5 destinations per
            // exchange (18–30), and the sweep goes on to 100 from there.
            dests: vec![18.0, 25.0, 30.0, 50.0, 100.0],
            // 10,000 destinations only in extended mode: no claim uses the beyond-the-paper
            // points, and those are full mode's longest runs.
            beyond: vec![1_000.0],
            beyond_blocks: 5_000,
        };
        match sweeps {
            Sweeps::Quick => Plan {
                seeds: 5,
                blocks: 4_000,
                rfs: vec![1.2, 2.0, 3.0],
                dests: vec![18.0, 25.0, 50.0],
                beyond: Vec::new(),
                ..common
            },
            Sweeps::Full => common,
            Sweeps::Extended => Plan {
                beyond: vec![1_000.0, 10_000.0],
                ..common
            },
        }
    }

    pub(super) fn xs(&self, f: Fam) -> Vec<f64> {
        match f {
            Fam::Win => self.windows.clone(),
            Fam::Rf => self.rfs.clone(),
            Fam::Speed => self.speeds.clone(),
            Fam::Err => self.errs.iter().map(|e| e.log10()).collect(),
            Fam::Dests => self.dests.clone(),
            Fam::Beyond => self.beyond.clone(),
        }
    }

    pub(super) fn spec(&self, f: Fam, v: Variant, x: f64, seed: u64) -> Spec {
        let mut s = Spec::paper(v, 2.0, self.blocks, seed);
        match f {
            Fam::Win => s.window = x,
            Fam::Rf => s.r_f = x,
            Fam::Speed => s.rate_mbps = x,
            Fam::Err => s.err = 10f64.powf(x),
            Fam::Dests => s.dests = x as usize,
            Fam::Beyond => {
                s.dests = x as usize;
                s.rtds_ms = (0..100)
                    .map(|i| 10.0 + 50.0 * f64::from(i) / 99.0)
                    .collect();
                s.blocks = self.beyond_blocks;
                s.record = false;
            }
        }
        s
    }
}

/// Every family, in the order the runs and the series go.
pub(super) const FAMS: [Fam; 6] = [
    Fam::Win,
    Fam::Rf,
    Fam::Speed,
    Fam::Err,
    Fam::Dests,
    Fam::Beyond,
];

/// A sweep point: (family index, family, protocol index, protocol, x).
pub(super) type Point = (usize, Fam, usize, Variant, f64);

impl Plan {
    /// The sweep points, the paper's and the beyond-the-paper ones apart.
    pub(super) fn points(&self) -> (Vec<Point>, Vec<Point>) {
        // Points: (family, protocol, x); run k of a point uses a seed of the point and k
        // alone. The paper's families start with `plan.seeds` runs per point and gain runs
        // where a claim on them is undecided (sequential sampling); the beyond-the-paper
        // points, which no claim uses, run once.
        let mut points: Vec<Point> = Vec::new();
        for (fi, &f) in FAMS.iter().enumerate() {
            let variants: &[Variant] = if f == Fam::Beyond {
                &[Variant::Dsp, Variant::Cp]
            } else {
                &VARIANTS
            };
            for (vi, &v) in variants.iter().enumerate() {
                for x in self.xs(f) {
                    points.push((fi, f, vi, v, x));
                }
            }
        }
        points.into_iter().partition(|p| p.1 != Fam::Beyond)
    }
}
