//! Delivery and metric checks of single runs.

use super::*;
use rmcast_sim::BusConfig;

fn check_delivery(proto: Proto, fail: f64, r: usize, messages: u64, seed: u64) -> RunOut {
    let mut s = RunSpec::thesis(proto, r, seed);
    s.messages = messages;
    s.fail = fail;
    if fail > 0.0 {
        s.increment_bits = error_increment(r);
    }
    let o = run_one(&s, true).unwrap();
    assert_eq!(o.delivered.len(), r);
    for got in &o.delivered {
        // Exactly once, in order.
        assert!(
            got.windows(2).all(|w| w[0] < w[1]),
            "{proto:?}: out of order or twice"
        );
        // Everything the sender did not give up on arrived.
        for k in 0..messages {
            if o.failed_seqs.binary_search(&k).is_err() {
                assert!(
                    got.binary_search(&k).is_ok(),
                    "{proto:?}: message {k} missing"
                );
            }
        }
    }
    assert!(o.delivery_ok);
    o
}

#[test]
fn frames_are_the_thesis_sizes() {
    let bus = BusConfig::default();
    for proto in [
        Proto::Saw,
        Proto::Bap { window: 10 },
        Proto::Rra { window: 120 },
    ] {
        for frame in [64u64, 848, 1436, 1518] {
            let pl = payload_for_frame(proto, frame, &bus).unwrap();
            let len = data_datagram_len(proto, pl).unwrap();
            assert_eq!(bus.frame_bytes(len) as u64, frame, "{proto:?}");
        }
    }
    // Table 4.1 bounds with these frames.
    let p = RunSpec::thesis(Proto::Saw, 5, 0).params();
    assert!((p.ubrt() - 4.304).abs() < 5e-4);
    assert_eq!(p.lbl(), 14704.0);
    let p = RunSpec::thesis(Proto::Bap { window: 10 }, 60, 0).params();
    assert!((p.ubrt() - 48.088).abs() < 5e-4);
}

#[test]
fn error_increments_match_the_thesis() {
    assert_eq!(
        [
            error_increment(20),
            error_increment(40),
            error_increment(60)
        ],
        [45_000, 90_000, 135_000]
    );
}

#[test]
fn saw_on_the_bus_exactly_once_in_order_0_and_5_percent() {
    let o = check_delivery(Proto::Saw, 0.0, 5, 60, 1);
    assert!(o.failed_seqs.is_empty());
    assert_eq!(o.summary.retransmissions.max, 0.0);
    let o = check_delivery(Proto::Saw, 0.05, 5, 60, 2);
    assert!(
        o.summary.retransmissions.mean > 0.0,
        "5 % failures but no retransmission"
    );
}

#[test]
fn bap_on_the_bus_exactly_once_in_order_0_and_5_percent() {
    let o = check_delivery(Proto::Bap { window: 5 }, 0.0, 5, 60, 3);
    assert!(o.failed_seqs.is_empty());
    let o = check_delivery(Proto::Bap { window: 5 }, 0.05, 5, 60, 4);
    assert!(o.summary.retransmissions.mean > 0.0);
}

#[test]
fn rra_on_the_bus_exactly_once_in_order_0_and_5_percent() {
    let o = check_delivery(Proto::Rra { window: 10 }, 0.0, 5, 60, 5);
    assert!(o.failed_seqs.is_empty());
    check_delivery(Proto::Rra { window: 10 }, 0.05, 5, 60, 6);
}

#[test]
fn a_tight_limit_under_heavy_loss_is_recorded_as_failures() {
    let mut s = RunSpec::thesis(Proto::Saw, 5, 9);
    s.messages = 40;
    s.fail = 0.3;
    s.max_retx = Some(0);
    s.increment_bits = error_increment(5);
    let o = run_one(&s, true).unwrap();
    assert!(
        !o.failed_seqs.is_empty(),
        "30 % loss with no retransmissions allowed"
    );
}

#[test]
fn one_receiver_msaw_takes_d_plus_a() {
    let mut s = RunSpec::thesis(Proto::Saw, 1, 1);
    s.messages = 20;
    let o = run_one(&s, false).unwrap();
    assert_eq!(o.summary.latency.min, 12656.0);
    assert_eq!(o.summary.latency.max, 12656.0);
}

#[test]
fn error_families_find_the_thesis_table_of_their_r() {
    use super::plots::paper_err_key;
    assert_eq!(
        paper_err_key("saw_r40_rand0").as_deref(),
        Some("t4_6_saw_r40_rand0_mean_lat")
    );
    assert_eq!(
        paper_err_key("bap_w10_r60_rand22000").as_deref(),
        Some("t4_13_bap_w10_r60_rand22000_mean_lat")
    );
    // Sensitivity families compare with the thesis's runs at their r without random wait.
    assert_eq!(
        paper_err_key("sens.saw_r60_drop2").as_deref(),
        Some("t4_6_saw_r60_rand0_mean_lat")
    );
    assert_eq!(
        paper_err_key("sens.bap_w10_r20_t25000").as_deref(),
        Some("t4_8_bap_w10_r20_rand0_mean_lat")
    );
    assert_eq!(paper_err_key("sens.saw_exclusive"), None);
    assert_eq!(paper_err_key("t4_1"), None);
}

#[test]
fn two_failure_draws_per_interface_lose_more() {
    use super::run::{run_one, Proto, RunSpec};
    let mut retx = [0.0; 2];
    for (i, checks) in [1u32, 2].into_iter().enumerate() {
        for seed in 0..3 {
            let mut s = RunSpec::thesis(Proto::Saw, 20, seed);
            s.fail = 0.03;
            s.increment_bits = 45_000;
            s.messages = 200;
            s.drop_checks = checks;
            retx[i] += run_one(&s, false).unwrap().summary.retransmissions.mean;
        }
    }
    assert!(retx[1] > retx[0] * 1.15, "{retx:?}");
}

#[test]
fn a_measure_names_its_x_by_the_sweep_it_comes_from() {
    for (name, x) in [
        ("t4_1.rt_mean", "receivers"),
        ("t4_3_rand12000.lat_mean", "receivers"),
        ("sens.bap_w10_t25000.retx_mean", "receivers"),
        ("err.saw_r20_rand0.lat_mean", "failure rate %"),
        ("sens.saw_r40_drop2.lat_mean", "failure rate %"),
        ("sens.bap_w10_r60_t50000.retx_mean", "failure rate %"),
        ("proc.saw_r60.lat_mean", "failure rate %"),
    ] {
        assert_eq!(super::measure::unit_of(name).1, x, "{name}");
    }
    assert_eq!(
        super::measure::unit_of("inc.saw_r20.retransmitted_frac"),
        ("fraction", "timeout increment (bit times)")
    );
}

/// The table of seed 000 a claim tests (its id's second part; the §4.4 text claims by the
/// tables they quote).
fn table_of(id: &str) -> String {
    let rest = id.trim_start_matches("segovia.");
    let head = rest.split('.').next().unwrap_or(rest);
    match head {
        "errors" if rest.contains("msaw") => "4.6-4.7 (§4.4 text)".into(),
        "errors" => "4.8-4.13 (§4.4 text)".into(),
        "f" => "§4.4 timeout selection".into(),
        h if h.starts_with("t4_") => format!("Table 4.{}", &h[3..]),
        h => h.to_string(),
    }
}

/// The study's claims with unstated values given as `--explore` would give them: the
/// verdicts of every claim, per table, for each reading. Not a unit test (a full-mode run
/// takes minutes): the evidence for `[[unstated]]`'s `backoff` and the MSAW pins, run as
///
/// ```text
/// SEGOVIA_READINGS='backoff=1;backoff=0' SEGOVIA_MODE=full SEGOVIA_OUT=docs/repro/x \
///     SEGOVIA_THREADS=2 cargo test --release -p rmcast-repro --lib readings -- --ignored
/// ```
///
/// It writes `<out>-claims.csv` (one row per reading and claim) and `<out>-tables.csv` (per
/// reading and table: claims passed, failed, inconclusive).
#[test]
#[ignore]
fn readings() {
    use crate::claim::{evaluate, parse_claims};
    use crate::study::{NoProgress, RunCtx, Study, Sweeps};
    use std::collections::BTreeMap;
    use std::fmt::Write as _;
    let readings = std::env::var("SEGOVIA_READINGS").unwrap_or_else(|_| "backoff=1".into());
    let mode = std::env::var("SEGOVIA_MODE").unwrap_or_else(|_| "quick".into());
    let out = std::env::var("SEGOVIA_OUT").unwrap_or_else(|_| "/tmp/segovia-readings".into());
    let threads: usize = std::env::var("SEGOVIA_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let sweeps = if mode == "full" {
        Sweeps::Full
    } else {
        Sweeps::Quick
    };
    let study = Segovia;
    let mut claims = parse_claims("segovia", study.about().claims_toml).unwrap();
    if sweeps == Sweeps::Quick {
        claims.specs.retain(|c| !c.full_only);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let mut rows = String::from("reading,mode,claim,table,verdict,value,x\n");
    let mut tables = String::from("reading,mode,table,claims,passed,failed,inconclusive\n");
    for reading in readings.split(';').filter(|r| !r.is_empty()) {
        let overrides: BTreeMap<String, f64> = reading
            .split(',')
            .map(|kv| {
                let (k, v) = kv.split_once('=').expect("NAME=VALUE");
                (k.trim().to_string(), v.trim().parse().expect("a number"))
            })
            .collect();
        let started = std::time::Instant::now();
        let ctx = RunCtx::new(sweeps, &NoProgress, &claims).with_overrides(overrides);
        let mut o = pool.install(|| study.run(&ctx)).unwrap();
        claims.add_paper_measures(&mut o.measures);
        let mut per: BTreeMap<String, [usize; 3]> = BTreeMap::new();
        for spec in &claims.specs {
            let r = evaluate(spec, &o.measures);
            let v = match r.verdict {
                crate::Verdict::Pass => 0,
                crate::Verdict::Fail => 1,
                crate::Verdict::Inconclusive => 2,
            };
            per.entry(table_of(&spec.id)).or_default()[v] += 1;
            let value = r.measured.map(|e| e.mean.to_string()).unwrap_or_default();
            let x = r.x.map(|x| x.to_string()).unwrap_or_default();
            let verdict = ["pass", "fail", "inconclusive"][v];
            writeln!(
                rows,
                "\"{reading}\",{mode},{},{},{verdict},{value},{x}",
                spec.id,
                table_of(&spec.id)
            )
            .unwrap();
        }
        for (t, [p, f, i]) in &per {
            writeln!(tables, "\"{reading}\",{mode},{t},{},{p},{f},{i}", p + f + i).unwrap();
        }
        eprintln!("{reading}: {:.1} s", started.elapsed().as_secs_f64());
    }
    std::fs::write(format!("{out}-claims.csv"), rows).unwrap();
    std::fs::write(format!("{out}-tables.csv"), tables).unwrap();
}

/// The one run of the thesis's configuration whose delivery check failed in the full run of
/// 2026-11-28 (err.saw_r20_rand22000 at 2 %): what each receiver got wrong.
#[test]
#[ignore]
fn saw_r20_rand22000_delivery() {
    let mut s = RunSpec::thesis(Proto::Saw, 20, 0x43fb_fc5b_d7ef_dbea);
    s.rand_bits = 22_000;
    s.fail = 0.02;
    s.increment_bits = error_increment(20);
    let o = run_one(&s, true).unwrap();
    eprintln!(
        "delivery_ok {} failed {:?} retx mean {}",
        o.delivery_ok, o.failed_seqs, o.summary.retransmissions.mean
    );
    for (j, got) in o.delivered.iter().enumerate() {
        let missing: Vec<u64> = (0..s.messages)
            .filter(|k| got.binary_search(k).is_err())
            .collect();
        let disorder: Vec<(u64, u64)> = got
            .windows(2)
            .filter(|w| w[0] >= w[1])
            .map(|w| (w[0], w[1]))
            .collect();
        if !missing.is_empty() || !disorder.is_empty() {
            eprintln!(
                "receiver {j}: {} delivered, missing {missing:?}, out of order or twice {disorder:?}",
                got.len()
            );
        }
    }
}

/// The setup's fixed numbers are rendered from the values the runs use (the bus's rules, the
/// thesis's frame and increments, RRA's limit), not typed into `setup.toml`.
#[test]
fn the_setup_says_what_the_runs_use() {
    let plan = Plan::new(crate::Sweeps::Quick);
    let s = setup::setup(&plan, &plan::Unstated::DEFAULT, 1).unwrap();
    let bus = BusConfig::default();
    for want in [
        format!("costs {} bit times", bus.jam_bits),
        format!("slots of {} bit times", bus.slot_bits),
        format!("discarded after {} attempts", bus.max_attempts),
    ] {
        assert!(s.topology.contains(&want), "{want}: {}", s.topology);
    }
    let param = |name: &str| &s.parameters.iter().find(|(n, _)| n == name).unwrap().1;
    let thesis = RunSpec::thesis(Proto::Saw, 20, 0);
    assert!(param("data frame").starts_with(&format!("{} bytes", thesis.data_frame)));
    let timeouts = param("timeouts");
    assert!(timeouts.contains("600,000"), "{timeouts}");
    assert_eq!(error_increment(20), 45_000);
    assert!(timeouts.contains("45,000/90,000/135,000"), "{timeouts}");
}
