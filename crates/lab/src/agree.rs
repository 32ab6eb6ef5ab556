//! `rmcast testbed --agree N SCENARIO`: the simulator and the testbed judged against each
//! other (issue 61 item 3). The file runs N times in the simulator (through `rmcast_sim`,
//! seeds `seed .. seed + N`) and N times on the testbed (the same seeds: each run's emulator
//! draws its losses from its own seed), and each metric below gets both sides' mean and 95 %
//! interval ([`Estimate::from_samples`]) and a [`Verdict`]: the two agree when the testbed's
//! mean is within [`TOLERANCE`] of the simulator's or the two intervals overlap.
//!
//! A disagreement is a finding to explain (a model gap in the simulator, the socket driver,
//! the emulator), never a reason to tune either side.

pub mod pins;

use crate::testbed::{self, Options};
use rmcast_net::NetError;
use rmcast_repro::Estimate;
use rmcast_sim::scenario::{to_csv, Metric, RunOptions, RunResult, Scenario};
use serde_json::{json, Value};
use std::path::Path;

/// Relative distance of the testbed's mean from the simulator's within which the two agree
/// whatever their intervals.
pub const TOLERANCE: f64 = 0.15;

/// How one metric's two sides compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The testbed's mean is within [`TOLERANCE`] of the simulator's.
    Within,
    /// Farther apart than that, but the two 95 % intervals overlap.
    Overlap,
    /// Neither: a difference to explain.
    Disagree,
    /// A side has no value (no finite sample in any run): not judged, so not agreement.
    Undefined,
}

impl Verdict {
    /// The word `agreement.csv` writes.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Within => "agree-within-15%",
            Verdict::Overlap => "agree-intervals-overlap",
            Verdict::Disagree => "disagree",
            Verdict::Undefined => "undefined",
        }
    }
    /// The verdict [`Verdict::as_str`] writes as `word`.
    pub fn from_word(word: &str) -> Option<Verdict> {
        [
            Verdict::Within,
            Verdict::Overlap,
            Verdict::Disagree,
            Verdict::Undefined,
        ]
        .into_iter()
        .find(|v| v.as_str() == word)
    }
    /// Whether the two sides agree.
    pub fn agrees(self) -> bool {
        matches!(self, Verdict::Within | Verdict::Overlap)
    }
}

/// Judge the testbed's estimate `tb` against the simulator's `sim`.
pub fn judge(sim: &Estimate, tb: &Estimate) -> Verdict {
    let gap = (tb.mean - sim.mean).abs();
    if gap <= TOLERANCE * sim.mean.abs() {
        Verdict::Within
    } else if tb.ci_lo <= sim.ci_hi && sim.ci_lo <= tb.ci_hi {
        Verdict::Overlap
    } else {
        Verdict::Disagree
    }
}

/// Which side a run came from: the simulator measures time from 0, the traffic starts at
/// `start_ms`; the testbed's `last_delivery_s` is already from the sender's first data.
#[derive(Debug, Clone, Copy)]
enum Side {
    Sim { start_s: f64 },
    Testbed,
}

fn num(r: &RunResult, k: &str) -> Option<f64> {
    match r.column(k)? {
        Metric::U(v) => Some(*v as f64),
        Metric::F(v) => Some(*v),
        Metric::B(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    }
    .filter(|v| v.is_finite())
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    let (a, b) = (a?, b?);
    (b > 0.0).then(|| a / b)
}

/// The simulator's loss causes that are not loss rules.
const BUILTIN_CAUSES: [&str; 3] = ["queue_overflow", "implosion", "excess_collisions"];

/// The column [`with_rule_losses`] adds to a simulated run.
const SIM_RULE_LOSSES: &str = "lost_rules_to_last_delivery";
/// The same, of data packets only (original or repair).
const SIM_RULE_DATA_LOSSES: &str = "lost_rules_data_to_last_delivery";

/// Packets the scenario's loss rules dropped up to the last delivery: in the simulator from
/// its loss trace ([`with_rule_losses`]; `lost_total` also counts what a NAK protocol's
/// source sends while it lingers, 30 s of heartbeats in these files, which the testbed, whose
/// sender ends when every receiver has reported, never sends); on the testbed the emulators'
/// drops by the rules from the sender's first data to the last delivery
/// (`frames_dropped_in_transfer`; `frames_dropped` also counts the receivers' wait for the
/// sender, the join and the goodbye, where srm's session messages meet losses too).
fn losses(r: &RunResult, side: Side) -> Option<f64> {
    match side {
        Side::Testbed => num(r, "frames_dropped_in_transfer"),
        Side::Sim { .. } => num(r, SIM_RULE_LOSSES),
    }
}

/// [`losses`] of data packets (frames) only: what repairs answer. On the testbed the frames
/// that carried an agent's data (`frames_dropped_in_transfer_data`), not its control, nor the
/// sockets' session layer, nor ARP; in the simulator the rule losses of data packets.
fn data_losses(r: &RunResult, side: Side) -> Option<f64> {
    match side {
        Side::Testbed => num(r, "frames_dropped_in_transfer_data"),
        Side::Sim { .. } => num(r, SIM_RULE_DATA_LOSSES),
    }
}

/// Every host's repairs (not the relays'): the simulator's `originated_repair`, the testbed's
/// sender's and receivers'.
fn all_repairs(r: &RunResult, side: Side) -> Option<f64> {
    match side {
        Side::Sim { .. } => num(r, "originated_repair"),
        Side::Testbed => Some(num(r, "sender_repairs")? + num(r, "receiver_repairs_sent")?),
    }
}

/// Add [`SIM_RULE_LOSSES`] to a simulated run from its trace (losses by a rule, not a
/// built-in cause, at or before `last_delivery_s`), then drop the trace.
fn with_rule_losses(mut r: RunResult) -> RunResult {
    if let (Some(t), Some(last)) = (r.trace.take(), num(&r, "last_delivery_s")) {
        let data: std::collections::HashSet<u64> = t
            .packets
            .iter()
            .filter(|p| p.class.is_some_and(|c| c.is_data()))
            .map(|p| p.id)
            .collect();
        let rule: Vec<u64> = t
            .losses
            .iter()
            .filter(|l| !BUILTIN_CAUSES.contains(&l.cause.as_str()))
            .filter(|l| l.time.as_secs_f64() <= last)
            .map(|l| l.id)
            .collect();
        let of_data = rule.iter().filter(|id| data.contains(id)).count();
        r.columns
            .push((SIM_RULE_LOSSES.to_string(), Metric::U(rule.len() as u64)));
        r.columns
            .push((SIM_RULE_DATA_LOSSES.to_string(), Metric::U(of_data as u64)));
    }
    r
}

/// The judged metrics: name, what it is, and its value for one run.
type Measure = (
    &'static str,
    &'static str,
    fn(&RunResult, Side) -> Option<f64>,
);

/// Every metric judged, in the table's order.
const METRICS: [Measure; 8] = [
    (
        "completed",
        "runs in which every receiver delivered every message (1) or not (0)",
        |r, _| num(r, "completed"),
    ),
    (
        "completion_time_s",
        "seconds from the sender's first data to the last receiver's last delivery",
        |r, side| {
            let t = num(r, "last_delivery_s")?;
            match side {
                Side::Sim { start_s } => Some(t - start_s),
                Side::Testbed => Some(t),
            }
        },
    ),
    (
        "repairs_per_loss",
        "the sender's repairs per packet (frame) dropped by the loss rules",
        |r, side| ratio(num(r, "sender_repairs"), losses(r, side)),
    ),
    (
        "all_repairs_per_loss",
        "every host's repairs (srm's and lms's receivers too; not the relays') per drop",
        |r, side| ratio(all_repairs(r, side), losses(r, side)),
    ),
    (
        "duplicates_per_receiver",
        "data packets received more than once, per receiver",
        |r, _| ratio(num(r, "receiver_duplicates"), num(r, "receivers")),
    ),
    (
        "feedback_per_delivered",
        "receivers' feedback packets per message delivered",
        |r, _| ratio(num(r, "receiver_control_sent"), num(r, "delivered_total")),
    ),
    (
        "repairs_per_data_loss",
        "the sender's repairs per data packet (frame) dropped by the loss rules",
        |r, side| ratio(num(r, "sender_repairs"), data_losses(r, side)),
    ),
    (
        "all_repairs_per_data_loss",
        "every host's repairs (not the relays') per data drop",
        |r, side| ratio(all_repairs(r, side), data_losses(r, side)),
    ),
];

/// One metric judged.
#[derive(Debug, Clone)]
pub struct Judged {
    /// Its name (a column of `agreement.csv`'s `metric`).
    pub metric: &'static str,
    /// What it measures.
    pub what: &'static str,
    /// The simulator's runs, if any gave a value.
    pub sim: Option<Estimate>,
    /// The testbed's runs, if any gave a value.
    pub testbed: Option<Estimate>,
    /// The verdict.
    pub verdict: Verdict,
}

/// Judge every metric over the simulator's runs `sim` and the testbed's `tb`; `start_s` is
/// the scenario's traffic start (seconds) in the simulator.
pub fn judge_runs(sim: &[RunResult], tb: &[RunResult], start_s: f64) -> Vec<Judged> {
    METRICS
        .iter()
        .map(|&(metric, what, f)| {
            let est = |rs: &[RunResult], side| {
                let v: Vec<f64> = rs.iter().filter_map(|r| f(r, side)).collect();
                Estimate::from_samples(&v)
            };
            let s = est(sim, Side::Sim { start_s });
            let t = est(tb, Side::Testbed);
            let verdict = match (&s, &t) {
                (Some(s), Some(t)) => judge(s, t),
                _ => Verdict::Undefined,
            };
            Judged {
                metric,
                what,
                sim: s,
                testbed: t,
                verdict,
            }
        })
        .collect()
}

/// `agreement.csv`: one row per metric, both sides' n, mean and interval, the ratio of the
/// means (testbed / simulator) and the verdict.
pub fn to_agreement_csv(rows: &[Judged]) -> String {
    let mut s = String::from(
        "metric,sim_n,sim_mean,sim_ci_lo,sim_ci_hi,testbed_n,testbed_mean,testbed_ci_lo,\
         testbed_ci_hi,ratio,verdict,agree\n",
    );
    let side = |e: &Option<Estimate>| match e {
        Some(e) => format!("{},{},{},{}", e.n, e.mean, e.ci_lo, e.ci_hi),
        None => "0,,,".to_string(),
    };
    for r in rows {
        s.push_str(&format!(
            "{},{},{},{},{},{}\n",
            r.metric,
            side(&r.sim),
            side(&r.testbed),
            ratio_text(r),
            r.verdict.as_str(),
            r.verdict.agrees()
        ));
    }
    s
}

fn ratio_text(r: &Judged) -> String {
    match (&r.sim, &r.testbed) {
        (Some(s), Some(t)) if s.mean != 0.0 => format!("{}", t.mean / s.mean),
        _ => String::new(),
    }
}

/// `agreement.json`: the command's inputs and every row.
pub fn to_agreement_json(scenario: &str, seeds: (u64, usize), rows: &[Judged]) -> Value {
    json!({
        "scenario": scenario,
        "first_seed": seeds.0,
        "runs_per_side": seeds.1,
        "tolerance": TOLERANCE,
        "all_agree": rows.iter().all(|r| r.verdict.agrees()),
        "metrics": rows.iter().map(|r| json!({
            "metric": r.metric,
            "what": r.what,
            "sim": r.sim,
            "testbed": r.testbed,
            "verdict": r.verdict.as_str(),
            "agree": r.verdict.agrees(),
        })).collect::<Vec<_>>(),
    })
}

/// The table printed on standard output.
pub fn to_table(rows: &[Judged]) -> String {
    let side = |e: &Option<Estimate>| match e {
        Some(e) => format!("{:.4} [{:.4}, {:.4}]", e.mean, e.ci_lo, e.ci_hi),
        None => "-".to_string(),
    };
    let mut s = format!(
        "{:<24} {:<32} {:<32} {:>7}  verdict\n",
        "metric", "sim mean [95 %]", "testbed mean [95 %]", "tb/sim"
    );
    for r in rows {
        let ratio = ratio_text(r)
            .parse::<f64>()
            .map_or("-".into(), |x| format!("{x:.3}"));
        s.push_str(&format!(
            "{:<24} {:<32} {:<32} {:>7}  {}\n",
            r.metric,
            side(&r.sim),
            side(&r.testbed),
            ratio,
            r.verdict.as_str()
        ));
    }
    s
}

/// The scenario `sc` (one run, no sweep) as `runs` runs on seeds `seed .. seed + runs`.
fn seeded(sc: &Scenario, runs: usize) -> Result<(Scenario, u64), NetError> {
    let bad = |m: String| NetError::setup(format!("{}: {m}", sc.file));
    if sc.runs() != 1 {
        return Err(bad(format!(
            "--agree runs one configuration; this file sweeps {} runs ({})",
            sc.runs(),
            sc.axes
                .iter()
                .map(|a| a.key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    if !(2..=1000).contains(&runs) {
        return Err(bad(format!(
            "--agree needs 2 to 1000 runs per side (an interval needs two), got {runs}"
        )));
    }
    let seed = sc
        .doc
        .get("seed")
        .and_then(toml::Value::as_integer)
        .unwrap_or(1)
        .max(0) as u64;
    let mut doc = sc.doc.clone();
    let seeds: Vec<toml::Value> = (0..runs as u64)
        .map(|k| toml::Value::Integer(seed.saturating_add(k).min(i64::MAX as u64) as i64))
        .collect();
    doc.insert("seed".into(), toml::Value::Array(seeds));
    let text = toml::to_string(&doc).map_err(|e| bad(e.to_string()))?;
    let swept = Scenario::parse(&text, &sc.file, sc.dir.clone()).map_err(|e| bad(e.to_string()))?;
    Ok((swept, seed))
}

fn write(dir: &Path, name: &str, text: &str) -> Result<(), NetError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| NetError::io(format!("create {}", dir.display()), e))?;
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| NetError::io(format!("write {}", path.display()), e))
}

/// Run `a.scenario` `runs` times each way, judge, and write `sim/runs.csv`,
/// `testbed/runs.csv`, `agreement.csv` and `agreement.json` in `a.out`; the rows judged.
pub fn run(a: &Options, runs: usize) -> Result<Vec<Judged>, NetError> {
    let sc = Scenario::load(&a.scenario).map_err(|e| NetError::setup(e.to_string()))?;
    let (swept, seed) = seeded(&sc, runs)?;
    if !a.quiet {
        eprintln!(
            "agreement: {runs} simulator runs (seeds {seed}..{})",
            seed + runs as u64
        );
    }
    let traced = RunOptions {
        trace_all: true,
        ..RunOptions::default()
    };
    let sim: Vec<RunResult> = rmcast_sim::scenario::run_sweep(&swept, traced, &|| {})
        .map_err(|e| NetError::setup(e.to_string()))?
        .into_iter()
        .map(with_rule_losses)
        .collect();
    write(&a.out.join("sim"), "runs.csv", &to_csv(&sim))?;
    if !a.quiet {
        eprintln!("agreement: {runs} testbed runs");
    }
    let tb_opts = Options {
        out: a.out.join("testbed"),
        ..a.clone()
    };
    let (tb, _) = testbed::run_scenario(&swept, &tb_opts)?;
    let start_s = sc
        .doc
        .get("traffic")
        .and_then(|t| t.get("start_ms"))
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
        .unwrap_or(0.0)
        / 1e3;
    let rows = judge_runs(&sim, &tb, start_s);
    write(&a.out, "agreement.csv", &to_agreement_csv(&rows))?;
    let j = to_agreement_json(&sc.file, (seed, runs), &rows);
    write(&a.out, "agreement.json", &format!("{j:#}\n"))?;
    Ok(rows)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn est(v: &[f64]) -> Estimate {
        Estimate::from_samples(v).unwrap()
    }

    #[test]
    fn within_fifteen_percent_or_overlapping_intervals_agree_and_nothing_else_does() {
        // Means 10 % apart, tight intervals: within the tolerance.
        let sim = est(&[1.0, 1.01, 0.99]);
        assert_eq!(judge(&sim, &est(&[1.1, 1.11, 1.09])), Verdict::Within);
        // 50 % apart but both wide: the intervals overlap.
        assert_eq!(
            judge(&est(&[1.0, 2.0, 0.5]), &est(&[1.5, 3.0, 0.8])),
            Verdict::Overlap
        );
        // 50 % apart, tight: a disagreement.
        let far = est(&[1.5, 1.51, 1.49]);
        assert_eq!(judge(&sim, &far), Verdict::Disagree);
        assert!(!Verdict::Disagree.agrees() && !Verdict::Undefined.agrees());
        // Below the simulator too; the tolerance is relative to the simulator's mean.
        assert_eq!(judge(&sim, &est(&[0.8, 0.81, 0.79])), Verdict::Disagree);
        assert_eq!(judge(&est(&[0.0, 0.0]), &est(&[0.0, 0.0])), Verdict::Within);
    }

    fn row(cols: &[(&str, Metric)]) -> RunResult {
        RunResult {
            index: 0,
            columns: cols
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            trace: None,
            samples: Vec::new(),
        }
    }

    #[test]
    fn each_side_is_measured_by_its_own_columns_and_a_missing_one_is_undefined() {
        let sim = |t: f64, lost: u64| {
            row(&[
                ("completed", Metric::B(true)),
                ("last_delivery_s", Metric::F(t)),
                ("sender_repairs", Metric::U(50)),
                (SIM_RULE_LOSSES, Metric::U(lost)),
                (SIM_RULE_DATA_LOSSES, Metric::U(lost / 2)),
                ("receivers", Metric::U(4)),
                ("receiver_duplicates", Metric::U(40)),
            ])
        };
        let tb = |t: f64, dropped: u64| {
            row(&[
                ("completed", Metric::B(true)),
                ("last_delivery_s", Metric::F(t)),
                ("sender_repairs", Metric::U(50)),
                ("frames_dropped", Metric::U(dropped + 40)),
                ("frames_dropped_in_transfer", Metric::U(dropped)),
                // Twice the simulator's data losses: what the data metrics judge.
                ("frames_dropped_in_transfer_data", Metric::U(dropped)),
                ("receivers", Metric::U(4)),
                ("receiver_duplicates", Metric::U(80)),
            ])
        };
        let rows = judge_runs(
            &[sim(1.5, 100), sim(1.52, 100)],
            &[tb(1.0, 100), tb(1.02, 100)],
            0.5,
        );
        let get = |m: &str| rows.iter().find(|r| r.metric == m).unwrap();
        assert_eq!(get("completed").verdict, Verdict::Within);
        // 1.5 s less the traffic's 0.5 s start against 1.0 s.
        assert!((get("completion_time_s").sim.unwrap().mean - 1.01).abs() < 1e-9);
        assert_eq!(get("completion_time_s").verdict, Verdict::Within);
        // 50 repairs per 100 rule losses on both sides.
        assert_eq!(get("repairs_per_loss").sim.unwrap().mean, 0.5);
        assert_eq!(get("repairs_per_loss").verdict, Verdict::Within);
        // 50 repairs per 50 data losses against 50 per 100: the denominator is the data's.
        assert_eq!(get("repairs_per_data_loss").sim.unwrap().mean, 1.0);
        assert_eq!(get("repairs_per_data_loss").testbed.unwrap().mean, 0.5);
        assert_eq!(get("repairs_per_data_loss").verdict, Verdict::Disagree);
        assert_eq!(get("all_repairs_per_data_loss").verdict, Verdict::Undefined);
        // 10 against 20 duplicates per receiver, no spread: a disagreement.
        assert_eq!(get("duplicates_per_receiver").verdict, Verdict::Disagree);
        // No feedback column on either side, nor every repairer's repairs.
        assert_eq!(get("feedback_per_delivered").verdict, Verdict::Undefined);
        assert_eq!(get("all_repairs_per_loss").verdict, Verdict::Undefined);
        let csv = to_agreement_csv(&rows);
        assert!(csv.lines().nth(5).unwrap().ends_with(",disagree,false"));
        assert_eq!(csv.lines().count(), 1 + METRICS.len());
    }

    #[test]
    fn the_simulators_losses_are_the_rules_up_to_the_last_delivery() {
        let loss = |ms: u64, cause: &str| rmcast_sim::LossRecord {
            id: ms,
            time: rmcast_proto::Time::from_nanos(ms * 1_000_000),
            node: rmcast_proto::NodeId(0),
            cause: cause.to_string(),
        };
        let mut r = row(&[("last_delivery_s", Metric::F(1.0))]);
        let packet = |id: u64, class: Option<rmcast_wire::PacketClass>| rmcast_sim::PacketRecord {
            id,
            time: rmcast_proto::Time::ZERO,
            src: rmcast_proto::NodeId(0),
            dest: rmcast_proto::Dest::Group(rmcast_proto::GroupId(1)),
            class,
            payload: Default::default(),
        };
        use rmcast_wire::PacketClass::{Control, OriginalData, RepairData};
        r.trace = Some(rmcast_sim::scenario::Trace {
            // Of the three, one original and one repair (data), one control.
            packets: vec![
                packet(10, Some(OriginalData)),
                packet(500, Some(Control)),
                packet(1000, Some(RepairData)),
                packet(1001, Some(OriginalData)),
            ],
            // Two by the rule before the last delivery, one at it, one in the linger after
            // it, and a queue overflow: three.
            losses: vec![
                loss(10, "bernoulli"),
                loss(500, "bernoulli"),
                loss(1000, "bernoulli"),
                loss(1001, "bernoulli"),
                loss(20, "queue_overflow"),
            ],
            recoveries: Vec::new(),
            nodes: 1,
            groups: Vec::new(),
        });
        let r = with_rule_losses(r);
        assert!(r.trace.is_none());
        let side = Side::Sim { start_s: 0.0 };
        assert_eq!(losses(&r, side), Some(3.0));
        assert_eq!(data_losses(&r, side), Some(2.0));
        // Without a trace there is no count, and no ratio is made of it.
        assert_eq!(losses(&with_rule_losses(row(&[])), side), None);
    }

    #[test]
    fn a_sweep_or_fewer_than_two_runs_is_refused_and_seeds_follow_the_files() {
        let text = "seed = 7\n[topology]\nkind = \"binary_tree\"\nheight = 1\n\
                    [protocol]\nname = \"saw\"\n[traffic]\nmessages = 5\n";
        let sc = Scenario::parse(text, "t.toml", ".".into()).unwrap();
        let (s, first) = seeded(&sc, 3).unwrap();
        assert_eq!((first, s.runs()), (7, 3));
        let seeds: Vec<i64> = s
            .points()
            .iter()
            .filter_map(|p| p.table.get("seed").and_then(toml::Value::as_integer))
            .collect();
        assert_eq!(seeds, [7, 8, 9]);
        assert!(seeded(&sc, 1).is_err());
        let swept = text.replace("height = 1", "height = [1, 2]");
        let sc = Scenario::parse(&swept, "t.toml", ".".into()).unwrap();
        assert!(seeded(&sc, 3).is_err());
    }
}
