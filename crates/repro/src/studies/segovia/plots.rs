//! The study's plots: relative throughput against the bounds, latency, collisions, RRA,
//! failures and sensitivity.

use crate::measure::Measures;
use crate::plot::{Axis, Plot, PlotSeries};
use crate::study::{RunCtx, StudyError};
use crate::sweep::{means, Agg};

pub(super) fn plots(ctx: &RunCtx<'_>, agg: &Agg, m: &Measures) -> Result<Vec<Plot>, StudyError> {
    let mut out = Vec::new();
    let bound = |key: &str| means(m, &format!("analytic.{key}.ubrt"));
    // (plot id, title, [(family, label, paper table, bound key)])
    type Curve<'a> = (&'a str, &'a str, &'a str, &'a str);
    let rt_plots: Vec<(&str, &str, Vec<Curve>)> = vec![
        (
            "t4_1",
            "Table 4.1: MSAW relative throughput",
            vec![("t4_1", "MSAW 1518 B", "t4_1_mean_rt", "t4_1")],
        ),
        (
            "t4_2",
            "Table 4.2: MSAW with 64, 848 and 1436-byte data",
            vec![
                ("t4_2_d64", "64 B", "t4_2_d64_mean_rt", "t4_2_d64"),
                ("t4_2_d848", "848 B", "t4_2_d848_mean_rt", "t4_2_d848"),
                ("t4_2_d1436", "1436 B", "t4_2_d1436_mean_rt", "t4_2_d1436"),
            ],
        ),
        (
            "t4_3",
            "Table 4.3: MSAW with random ACK delay (SAWrand)",
            vec![
                ("t4_1", "SAWrand 0", "t4_1_mean_rt", "t4_1"),
                (
                    "t4_3_rand12000",
                    "SAWrand 12,000",
                    "t4_3_rand12000_mean_rt",
                    "",
                ),
                (
                    "t4_3_rand22000",
                    "SAWrand 22,000",
                    "t4_3_rand22000_mean_rt",
                    "",
                ),
                (
                    "t4_3_rand32000",
                    "SAWrand 32,000",
                    "t4_3_rand32000_mean_rt",
                    "",
                ),
            ],
        ),
        (
            "t4_4",
            "Table 4.4: MBAP with windows 5, 10, 15",
            vec![
                ("t4_4_w5", "window 5", "t4_4_w5_mean_rt", "t4_4_w5"),
                ("t4_4_w10", "window 10", "t4_4_w10_mean_rt", "t4_4_w10"),
                ("t4_4_w15", "window 15", "t4_4_w15_mean_rt", "t4_4_w15"),
            ],
        ),
        (
            "t4_5",
            "Table 4.5: MBAP window 10 with random ACK delay (BAPrand)",
            vec![
                ("t4_4_w10", "BAPrand 0", "t4_4_w10_mean_rt", "t4_4_w10"),
                (
                    "t4_5_rand12000",
                    "BAPrand 12,000",
                    "t4_5_rand12000_mean_rt",
                    "",
                ),
                (
                    "t4_5_rand22000",
                    "BAPrand 22,000",
                    "t4_5_rand22000_mean_rt",
                    "",
                ),
                (
                    "t4_5_rand32000",
                    "BAPrand 32,000",
                    "t4_5_rand32000_mean_rt",
                    "",
                ),
            ],
        ),
    ];
    for (id, title, fams) in rt_plots {
        let mut series = Vec::new();
        for (c, (fam, label, paper, bkey)) in fams.iter().enumerate() {
            series.push(PlotSeries::measured(
                format!("rmcast {label}"),
                c,
                &agg.get(&format!("{fam}.rt_mean")),
            ));
            series.push(PlotSeries::paper(
                format!("thesis {label}"),
                c,
                &ctx.paper(paper)?.points(),
            ));
            if !bkey.is_empty() {
                series.push(PlotSeries::bound(format!("UBRT {label}"), c, &bound(bkey)));
            }
        }
        out.push(Plot {
            id: format!("segovia-rt-{id}"),
            title: title.into(),
            caption: "Mean over records of the per-record relative throughput r·(n·d + a)/latency \
                      (records are messages for MSAW, blocks of n for MBAP) against the number \
                      of receivers, mean and 95 % CI across seeds; diamonds: the thesis's \
                      Mean RT column (one run each); dashed: the upper bound UBRT (eq. 4.5/4.13)."
                .into(),
            x: Axis::new("receivers r", "count"),
            y: Axis::new("relative throughput", "dimensionless"),
            series,
        });
    }
    // Fig. 4.4 style latency percentiles.
    let lbl = means(m, "analytic.t4_1.lbl");
    out.push(Plot {
        id: "segovia-latency-percentiles".into(),
        title: "MSAW message latency percentiles (Fig. 4.4 style)".into(),
        caption: "Per-run 0/25/50/75/100th percentiles of message latency (1518-byte data, no \
                  random delay, no failures), each averaged across seeds; dashed: LBL = d + r·a; \
                  diamonds: the thesis's Table 4.1 min, mean and max latency."
            .into(),
        x: Axis::new("receivers r", "count"),
        y: Axis::new("message latency", "bit times"),
        series: vec![
            PlotSeries::measured("min", 0, &agg.get("t4_1.lat_min")),
            PlotSeries::measured("25th percentile", 1, &agg.get("t4_1.lat_p25")),
            PlotSeries::measured("median", 2, &agg.get("t4_1.lat_p50")),
            PlotSeries::measured("75th percentile", 3, &agg.get("t4_1.lat_p75")),
            PlotSeries::measured("max", 4, &agg.get("t4_1.lat_max")),
            PlotSeries::bound("LBL = d + r·a", 5, &lbl),
            PlotSeries::paper("thesis min", 0, &ctx.paper("t4_1_min_lat")?.points()),
            PlotSeries::paper("thesis mean", 2, &ctx.paper("t4_1_mean_lat")?.points()),
            PlotSeries::paper("thesis max", 4, &ctx.paper("t4_1_max_lat")?.points()),
        ],
    });
    out.push(Plot {
        id: "segovia-collisions".into(),
        title: "Collisions per message (never reported by the thesis)".into(),
        caption: "Bus collisions per application message, error-free, 1518-byte data: MSAW, \
                  MBAP window 10 and RRA (window 2r); mean and 95 % CI across seeds."
            .into(),
        x: Axis::new("receivers r", "count"),
        y: Axis::new("collisions", "per message"),
        series: vec![
            PlotSeries::measured("MSAW", 0, &agg.get("t4_1.collisions")),
            PlotSeries::measured("MBAP window 10", 1, &agg.get("t4_4_w10.collisions")),
            PlotSeries::measured("RRA", 2, &agg.get("rra.collisions")),
        ],
    });
    out.push(Plot {
        id: "segovia-rra".into(),
        title: "RRA against MSAW and MBAP: aggregate relative throughput".into(),
        caption: "Messages·r·(d + a) over the run's duration (ratio of totals, so pipelined \
                  RRA is comparable), error-free, 1518-byte data; dashed: MSAW's UBRT."
            .into(),
        x: Axis::new("receivers r", "count"),
        y: Axis::new("aggregate relative throughput", "dimensionless"),
        series: vec![
            PlotSeries::measured("MSAW", 0, &agg.get("t4_1.rt_aggregate")),
            PlotSeries::measured("MBAP window 10", 1, &agg.get("t4_4_w10.rt_aggregate")),
            PlotSeries::measured("RRA window 2r", 2, &agg.get("rra.rt_aggregate")),
            PlotSeries::bound("MSAW UBRT", 0, &bound("t4_1")),
        ],
    });
    // Error experiments: latency against failure rate.
    let mut saw_s = Vec::new();
    let mut bap_s = Vec::new();
    for (c, (key, _)) in agg
        .iter()
        .filter(|(k, _)| k.starts_with("err.") && k.ends_with(".lat_mean"))
        .enumerate()
    {
        let fam = key.trim_start_matches("err.").trim_end_matches(".lat_mean");
        let paper_key = paper_err_key(fam);
        let target = if fam.starts_with("saw") {
            &mut saw_s
        } else {
            &mut bap_s
        };
        target.push(PlotSeries::measured(
            fam.replace('_', " "),
            c,
            &agg.get(key),
        ));
        if let Some(p) = paper_key.and_then(|k| ctx.paper(&k).ok()) {
            target.push(PlotSeries::paper(
                format!("thesis {}", fam.replace('_', " ")),
                c,
                &p.points(),
            ));
        }
    }
    out.push(Plot {
        id: "segovia-errors-msaw".into(),
        title: "Tables 4.6–4.7: MSAW mean message latency under failures".into(),
        caption: "Mean message latency against the per-interface failure rate (transmit and \
                  receive), timeout increment 2,250·r bit times; diamonds: the thesis."
            .into(),
        x: Axis::new("failure rate", "%"),
        y: Axis::new("mean message latency", "bit times"),
        series: saw_s,
    });
    out.push(Plot {
        id: "segovia-errors-mbap".into(),
        title: "Tables 4.8–4.13: MBAP mean block latency under failures".into(),
        caption: "Mean block latency against the per-interface failure rate, ACK-delay timeout \
                  95,000 bit times, retransmission limit 20; diamonds: the thesis."
            .into(),
        x: Axis::new("failure rate", "%"),
        y: Axis::new("mean block latency", "bit times"),
        series: bap_s,
    });
    // Sensitivity.
    out.push(Plot {
        id: "segovia-sensitivity".into(),
        title: "Sensitivity to choices the thesis leaves open".into(),
        caption: "Mean RT, error-free: MSAW and MBAP (window 10) with the backoff bound \
                  inclusive (rmcast's choice, the thesis's words) or exclusive (IEEE 802.3), \
                  and MBAP with the receivers' ACK-delay timeout t = 25,000, 95,000 (chosen, \
                  the sample command file's) and 300,000 bit times. Retransmission-limit \
                  sensitivity under failures is in the measures sens.*_lim5 / _lim40."
            .into(),
        x: Axis::new("receivers r", "count"),
        y: Axis::new("relative throughput", "dimensionless"),
        series: vec![
            PlotSeries::measured("MSAW inclusive (chosen)", 0, &agg.get("t4_1.rt_mean")),
            PlotSeries::measured("MSAW exclusive", 1, &agg.get("sens.saw_exclusive.rt_mean")),
            PlotSeries::measured(
                "MBAP-10 t=95k inclusive (chosen)",
                2,
                &agg.get("t4_4_w10.rt_mean"),
            ),
            PlotSeries::measured(
                "MBAP-10 exclusive",
                3,
                &agg.get("sens.bap_w10_exclusive.rt_mean"),
            ),
            PlotSeries::measured("MBAP-10 t=25k", 4, &agg.get("sens.bap_w10_t25000.rt_mean")),
            PlotSeries::measured(
                "MBAP-10 t=300k",
                5,
                &agg.get("sens.bap_w10_t300000.rt_mean"),
            ),
            PlotSeries::measured(
                "MBAP-10 t=95k, timer kept running after the block ACK",
                6,
                &agg.get("sens.bap_w10_running.rt_mean"),
            ),
        ],
    });
    let err_fam = |k: &str| agg.get(&format!("{k}.lat_mean"));
    out.push(Plot {
        id: "segovia-sensitivity-errors".into(),
        title: "Sensitivity under failures (r = 20)".into(),
        caption: "Mean latency (block latency for MBAP) against the failure rate at r = 20 for \
                  the choices the thesis leaves open: retransmission limit (chosen SAW 10 / \
                  BAP 20; also 5 and 40), MBAP ACK-delay timeout t (chosen 95,000; also 25,000 \
                  and 300,000, which also enter the sender's formula timeout) and whether the \
                  MBAP receiver's ACK-delay timer stops with its block ACK (chosen) or keeps \
                  running."
            .into(),
        x: Axis::new("failure rate", "%"),
        y: Axis::new("mean latency", "bit times"),
        series: vec![
            PlotSeries::measured("MSAW limit 10 (chosen)", 0, &err_fam("err.saw_r20_rand0")),
            PlotSeries::measured("MSAW limit 5", 1, &err_fam("sens.saw_r20_lim5")),
            PlotSeries::measured("MSAW limit 40", 2, &err_fam("sens.saw_r20_lim40")),
            PlotSeries::measured(
                "MBAP-10 limit 20, t=95k (chosen)",
                3,
                &err_fam("err.bap_w10_r20_rand0"),
            ),
            PlotSeries::measured("MBAP-10 limit 5", 4, &err_fam("sens.bap_w10_r20_lim5")),
            PlotSeries::measured("MBAP-10 limit 40", 5, &err_fam("sens.bap_w10_r20_lim40")),
            PlotSeries::measured("MBAP-10 t=25k", 6, &err_fam("sens.bap_w10_r20_t25000")),
            PlotSeries::measured("MBAP-10 t=300k", 7, &err_fam("sens.bap_w10_r20_t300000")),
            PlotSeries::measured(
                "MBAP-10 timer kept running",
                1,
                &err_fam("sens.bap_w10_r20_running"),
            ),
        ],
    });
    Ok(out)
}

/// The claims file's paper table for an error family such as `bap_w10_r20_rand0`.
pub(super) fn paper_err_key(fam: &str) -> Option<String> {
    let r = if fam.contains("_r20_") {
        20
    } else if fam.contains("_r40_") {
        40
    } else if fam.contains("_r60_") {
        60
    } else {
        return None;
    };
    let rand = fam.ends_with("rand22000");
    let table = if fam.starts_with("saw") {
        if rand {
            "4_7"
        } else {
            "4_6"
        }
    } else {
        match (r, rand) {
            (20, false) => "4_8",
            (40, false) => "4_9",
            (60, false) => "4_10",
            (20, true) => "4_11",
            (40, true) => "4_12",
            _ => "4_13",
        }
    };
    Some(format!("t{table}_{fam}_mean_lat"))
}
