//! Measures derived from the sweep's series (sub-ranges, differences, ratios) and the notes.

use super::plan::Plan;
use super::run::Proto;
use super::run::ITR;
use crate::measure::Measures;
use crate::stats::Estimate;
use crate::study::StudyError;
use crate::sweep::{fmt_series, Agg, Series};

/// Points of `s` with `lo <= x <= hi`.
pub(super) fn subset(s: &Series, lo: f64, hi: f64) -> Series {
    s.iter()
        .filter(|(x, _)| *x >= lo && *x <= hi)
        .copied()
        .collect()
}

/// The mean of `s` at `x`.
pub(super) fn mean_at(s: &Series, x: f64) -> Option<f64> {
    at(s, x).map(|e| e.mean)
}

/// The mean of `s`'s point means (`None` for no points).
fn mean_of(s: &Series) -> Option<f64> {
    (!s.is_empty()).then(|| s.iter().map(|(_, e)| e.mean).sum::<f64>() / s.len() as f64)
}

/// The estimate of `s` at `x`.
fn at(s: &Series, x: f64) -> Option<Estimate> {
    s.iter().find(|(px, _)| *px == x).map(|(_, e)| *e)
}

/// `a − b` at every x both have, with both spreads ([`Estimate::minus`]).
pub(super) fn diff(a: &Series, b: &Series) -> Series {
    a.iter()
        .filter_map(|(x, ea)| Some((*x, ea.minus(&at(b, *x)?)?)))
        .collect()
}

/// `a / b` at every x both have (b ≠ 0), with both spreads ([`Estimate::over`]).
pub(super) fn over(a: &Series, b: &Series) -> Series {
    a.iter()
        .filter_map(|(x, ea)| Some((*x, ea.over(&at(b, *x)?)?)))
        .collect()
}

/// Series `<cfg>.<metric>.<version>` of the sweep.
fn get(agg: &Agg, cfg: &str, metric: &str, p: Proto) -> Series {
    agg.get(&format!("{cfg}.{metric}.{}", p.key()))
}

/// The x label of the group-size sweeps.
const NC: &str = "NC (children)";

/// Derived measures the claims need (sub-ranges, ratios and differences of the means).
pub(super) fn derived(m: &mut Measures, agg: &Agg, plan: &Plan) -> Result<(), StudyError> {
    lan_ranges(m, agg);
    lan_kept(m, agg, plan);
    hybrid_ratios(m, agg);
    differences(m, agg);
    rr_sweep(m, agg, plan);
    ff_ceiling(m, plan);
    Ok(())
}

/// Sub-ranges of the LAN (and HYBRID) curves the paper talks about, and the means over them.
fn lan_ranges(m: &mut Measures, agg: &Agg) {
    // Sub-ranges of the LAN curves the paper talks about.
    for p in [Proto::Pf, Proto::PfIw, Proto::FfIwIt] {
        m.series(
            format!("lan.t.{}.nc15_40", p.key()),
            "packets/ms",
            NC,
            subset(&get(agg, "lan", "t", p), 15.0, 40.0),
        );
    }
    for p in [Proto::Pf, Proto::PfIw] {
        let t = get(agg, "lan", "t", p);
        m.series(
            format!("lan.t.{}.nc_le8", p.key()),
            "packets/ms",
            NC,
            subset(&t, 0.0, 8.0),
        );
        m.series(
            format!("lan.t.{}.nc_ge15", p.key()),
            "packets/ms",
            NC,
            subset(&t, 15.0, f64::INFINITY),
        );
        for cfg in ["lan", "hybrid"] {
            m.series(
                format!("{cfg}.n.{}.nc_ge10", p.key()),
                "dimensionless",
                NC,
                subset(&get(agg, cfg, "n", p), 10.0, f64::INFINITY),
            );
        }
        m.series(
            format!("lan.n.{}.nc_ge40", p.key()),
            "dimensionless",
            NC,
            subset(&get(agg, "lan", "n", p), 40.0, f64::INFINITY),
        );
    }
    let at_paper: Series = get(agg, "lan", "i", Proto::Pf)
        .into_iter()
        .filter(|(x, _)| *x == 20.0 || *x == 60.0)
        .collect();
    m.series("lan.i.pf.at_20_60", "dimensionless", NC, at_paper);
    for cfg in ["lan", "hybrid"] {
        if let Some(v) = mean_of(&subset(
            &get(agg, cfg, "n", Proto::PfIw),
            10.0,
            f64::INFINITY,
        )) {
            m.scalar(
                format!("{cfg}.n.pf_iw.mean_nc_ge10"),
                "dimensionless",
                Estimate::exact(v),
            );
        }
    }
    // PF-IW's throughput over FF-IW-IT's, mean over 15 <= NC <= 40 (where the paper sees
    // PF-IW's "more or less uniform" lead in LAN), per configuration.
    for cfg in ["lan", "hybrid"] {
        let r = subset(
            &over(
                &get(agg, cfg, "t", Proto::PfIw),
                &get(agg, cfg, "t", Proto::FfIwIt),
            ),
            15.0,
            40.0,
        );
        if let Some(v) = mean_of(&r) {
            m.scalar(
                format!("{cfg}.t_pf_iw_over_ff_iw_it.mean_nc15_40"),
                "dimensionless",
                Estimate::exact(v),
            );
        }
    }
}

/// How much of its throughput each version keeps from the smallest NC to the largest, and
/// FF's and FF-IW-IT's losses compared.
fn lan_kept(m: &mut Measures, agg: &Agg, plan: &Plan) {
    // T(largest NC)/T(smallest NC) at the group sizes every LAN family ran (FF's).
    let lo = plan.lan_ff.first().copied().unwrap_or(2.0);
    let hi = plan.lan_ff.last().copied().unwrap_or(60.0);
    let kept = |p: Proto| {
        let t = get(agg, "lan", "t", p);
        at(&t, hi)?.over(&at(&t, lo)?)
    };
    for p in Proto::ALL {
        if let Some(k) = kept(p) {
            m.scalar(format!("lan.t_kept.{}", p.key()), "dimensionless", k);
        }
    }
    // FF's and FF-IW-IT's scalability compared as the shares of their throughput they lose
    // from the smallest to the largest NC (relative: FF-IW-IT's window is the whole transfer
    // and starts higher, so absolute drops mix the window into the comparison). The share of
    // FF's relative loss that FF-IW-IT, which has no implosion, does not suffer; and how many
    // times more of its throughput FF-IW-IT keeps.
    if let (Some(kf), Some(ki)) = (kept(Proto::Ff), kept(Proto::FfIwIt)) {
        let one = Estimate::exact(1.0);
        let lost = |k: &Estimate| one.minus(k);
        let share = lost(&ki)
            .zip(lost(&kf))
            .and_then(|(li, lf)| li.over(&lf))
            .and_then(|r| one.minus(&r));
        if let Some(share) = share.filter(|_| kf.mean < 1.0) {
            m.scalar("lan.ff_loss_share_implosion", "dimensionless", share);
        }
        if let Some(r) = ki.over(&kf) {
            m.scalar("lan.t_kept_ratio.ff_iw_it_over_ff", "dimensionless", r);
        }
    }
}

/// HYBRID: FF-IW's throughput over FF's, with the paper's selective ACKs and with cumulative.
fn hybrid_ratios(m: &mut Measures, agg: &Agg) {
    // HYBRID: FF-IW over FF at the smallest and the largest NC both ran.
    let ratio = over(
        &get(agg, "hybrid", "t", Proto::FfIw),
        &get(agg, "hybrid", "t", Proto::Ff),
    );
    if let (Some(first), Some(last)) = (ratio.first(), ratio.last()) {
        m.scalar("hybrid.t_ff_iw_over_ff.small_nc", "dimensionless", first.1);
        m.scalar("hybrid.t_ff_iw_over_ff.large_nc", "dimensionless", last.1);
    }
    // The same with cumulative ACKs (beyond the paper): whether the ACK is what keeps
    // FF-IW above FF.
    let cum = over(
        &get(agg, "hybrid", "t", Proto::FfIwCum),
        &get(agg, "hybrid", "t", Proto::FfCum),
    );
    if let Some(last) = cum.last() {
        m.scalar(
            "hybrid.t_ff_iw_over_ff_cum.large_nc",
            "dimensionless",
            last.1,
        );
    }
}

/// One version's series minus another's, where a claim compares them point by point.
fn differences(m: &mut Measures, agg: &Agg) {
    // One version's series minus another's: (configuration, metric, version, minus version).
    for (cfg, metric, p, q) in [
        ("lan", "n", Proto::FfIw, Proto::FfIwIt),
        ("hybrid", "i", Proto::FfIw, Proto::Ff),
        ("hybrid", "n", Proto::FfIw, Proto::Ff),
    ] {
        let d = diff(&get(agg, cfg, metric, p), &get(agg, cfg, metric, q));
        let name = format!("{cfg}.{metric}.{}_minus_{}", p.key(), q.key());
        m.series(name, "dimensionless", NC, d);
    }
}

/// The RR sweep (LAN, NC = 60) against FF-IW-IT's runs at NC = 60, and its sub-ranges below
/// and above ITR.
fn rr_sweep(m: &mut Measures, agg: &Agg, plan: &Plan) {
    let rrx = "RR (responses/s)";
    // The RR sweep (LAN, NC = 60). FF-IW-IT does not poll, so its LAN NC = 60 runs are the
    // reference for Figures 10 and 11.
    let it60_n = at(&get(agg, "lan", "n", Proto::FfIwIt), 60.0);
    let it60_t = mean_at(&get(agg, "lan", "t", Proto::FfIwIt), 60.0);
    for p in [Proto::Pf, Proto::PfIw] {
        if let Some(r) = it60_n {
            let s: Series = get(agg, "rr", "n", p)
                .iter()
                .filter_map(|(x, e)| Some((*x, e.over(&r)?)))
                .collect();
            m.series(
                format!("rr.n_over_ff_iw_it.{}", p.key()),
                "dimensionless",
                rrx,
                s,
            );
        }
        let t = get(agg, "rr", "t", p);
        if let Some((x, _)) = t.iter().max_by(|a, b| a.1.mean.total_cmp(&b.1.mean)) {
            m.scalar(
                format!("rr.t_peak_rr.{}", p.key()),
                "responses/s",
                Estimate::exact(*x),
            );
        }
        m.series(
            format!("rr.t.{}.le_itr", p.key()),
            "packets/ms",
            rrx,
            subset(&t, 0.0, ITR),
        );
        m.series(
            format!("rr.t.{}.ge_itr", p.key()),
            "packets/ms",
            rrx,
            subset(&t, ITR, f64::INFINITY),
        );
    }
    if let Some(v) = it60_t {
        let flat = |lo: f64, hi: f64| -> Series {
            plan.rr
                .iter()
                .filter(|&&x| (lo..=hi).contains(&x))
                .map(|&x| (x, Estimate::exact(v)))
                .collect()
        };
        m.series(
            "rr.t.ff_iw_it_nc60.600_1500",
            "packets/ms",
            rrx,
            flat(600.0, ITR),
        );
        m.series(
            "rr.t.ff_iw_it_nc60.ge_itr",
            "packets/ms",
            rrx,
            flat(ITR, f64::INFINITY),
        );
        m.series(
            "rr.t.pf_iw.600_1500",
            "packets/ms",
            rrx,
            subset(&get(agg, "rr", "t", Proto::PfIw), 600.0, ITR),
        );
    }
}

/// FF's analytic ceiling over the scale sweep.
fn ff_ceiling(m: &mut Measures, plan: &Plan) {
    // Beyond the paper: FF's analytic ceiling ITR/NC (every packet needs NC ACKs through a
    // parent that takes ITR per second).
    let bound: Series = plan
        .scale
        .iter()
        .map(|&x| (x, Estimate::exact(ITR / 1000.0 / x)))
        .collect();
    m.series("analytic.scale.ff_ceiling", "packets/ms", NC, bound);
}

pub(super) fn notes(agg: &Agg, plan: &Plan) -> Vec<String> {
    let mut v = vec![format!(
        "Each point is the mean of at least {} runs (seeds derived from the point; more \
         where a claim was undecided, see the sequential-sampling note) with its 95 % \
         confidence interval; §4 ran 10–20 runs per point.",
        plan.seeds
    )];
    for cfg in ["lan", "hybrid", "rr", "scale"] {
        for metric in ["t", "n", "i", "feedback", "evicted", "acked"] {
            for p in Proto::ALL.iter().chain(&Proto::CUMULATIVE).copied() {
                let name = format!("{cfg}.{metric}.{}", p.key());
                let s = agg.get(&name);
                if !s.is_empty() {
                    v.push(format!("{name}: {}.", fmt_series(&s, "", &[])));
                }
            }
        }
    }
    for metric in ["t", "hops", "i", "root_feedback", "relays"] {
        for key in ["single", "multi"] {
            let name = format!("tree.{metric}.{key}");
            v.push(format!("{name}: {}.", fmt_series(&agg.get(&name), "", &[])));
        }
    }
    if plan.quick {
        v.push(format!(
            "Quick mode: fewer group sizes and RR values, {} runs per point, scale runs at \
             NC = 100 only.",
            plan.seeds
        ));
    }
    v
}
