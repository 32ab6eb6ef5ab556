//! Claim evaluation on hand-made measures: every predicate, operand and failure path.

use super::*;

/// Three runs around `v`, a 95 % interval of about ± 0.025.
fn est(v: f64) -> Estimate {
    Estimate::from_samples(&[v - 0.01, v, v + 0.01]).unwrap()
}

/// Three runs around `v`, a 95 % interval of about ± 2.5.
fn wide(v: f64) -> Estimate {
    Estimate::from_samples(&[v - 1.0, v, v + 1.0]).unwrap()
}

fn measures() -> Measures {
    let mut m = Measures::new();
    m.series(
        "rt",
        "",
        "receivers",
        vec![(5.0, est(3.5)), (10.0, est(4.85)), (20.0, est(5.64))],
    );
    m.series(
        "bound",
        "",
        "receivers",
        vec![
            (5.0, Estimate::exact(4.3)),
            (10.0, Estimate::exact(7.2)),
            (20.0, Estimate::exact(11.3)),
        ],
    );
    m.series(
        "low",
        "",
        "receivers",
        vec![(5.0, est(1.0)), (10.0, est(2.0)), (20.0, est(6.0))],
    );
    m.series(
        "paper_gappy",
        "",
        "receivers",
        vec![(5.0, Estimate::exact(3.6)), (20.0, Estimate::exact(5.5))],
    );
    m.scalar("time", "bit times", Estimate::exact(12656.0));
    m
}

fn claim(measure: Option<&str>, predicate: Predicate) -> ClaimSpec {
    ClaimSpec {
        id: "t.x".into(),
        source: "test".into(),
        statement: "test".into(),
        quote: None,
        paper_value: None,
        scenario: "test".into(),
        measure: measure.map(String::from),
        predicate,
        explain_fail: None,
        tests: Default::default(),
        full_only: false,
        calibration: false,
    }
}

fn verdict(measure: Option<&str>, p: Predicate) -> Verdict {
    evaluate(&claim(measure, p), &measures()).verdict
}

#[test]
fn within_exact_and_relative() {
    let p = |of: f64, abs: f64, rel: f64| {
        Predicate::Within(Band {
            abs,
            rel,
            ..Band::of(Operand::Value(of))
        })
    };
    assert_eq!(verdict(Some("time"), p(12656.0, 0.0, 0.0)), Verdict::Pass);
    assert_eq!(verdict(Some("time"), p(12657.0, 0.0, 0.0)), Verdict::Fail);
    assert_eq!(verdict(Some("time"), p(12657.0, 1.0, 0.0)), Verdict::Pass);
    // Series: every point must be inside; 3.5 vs 5 is 30 % off.
    assert_eq!(verdict(Some("rt"), p(5.0, 0.0, 0.15)), Verdict::Fail);
    let at20 = Predicate::Within(Band {
        rel: 0.15,
        at: Some(20.0),
        ..Band::of(Operand::Value(5.0))
    });
    assert_eq!(verdict(Some("rt"), at20), Verdict::Pass);
}

#[test]
fn within_a_gappy_table_skips_its_gaps_only_when_asked() {
    let p = |where_target: bool, target: &str| {
        Predicate::Within(Band {
            rel: 0.05,
            where_target,
            ..Band::of(Operand::Measure(target.into()))
        })
    };
    let run = |p: Predicate| {
        let r = evaluate(&claim(Some("rt"), p), &measures());
        (r.verdict, r.evaluated)
    };
    // `rt` has a point at 10 where the table has none.
    assert_eq!(run(p(false, "paper_gappy")), (Verdict::Fail, false));
    assert_eq!(run(p(true, "paper_gappy")), (Verdict::Pass, true));
    // A target the study never recorded is not a gap.
    assert_eq!(run(p(true, "no_such_table")), (Verdict::Fail, false));
}

#[test]
fn within_from_leaves_out_the_points_below() {
    // rt = 3.5, 4.85, 5.64 at 5, 10, 20: only 10 and 20 are within 15 % of 5.
    let p = |from: Option<f64>| {
        Predicate::Within(Band {
            rel: 0.15,
            from,
            ..Band::of(Operand::Value(5.0))
        })
    };
    assert_eq!(verdict(Some("rt"), p(None)), Verdict::Fail);
    assert_eq!(verdict(Some("rt"), p(Some(10.0))), Verdict::Pass);
    assert_eq!(
        verdict(Some("rt"), p(Some(30.0))),
        Verdict::Fail,
        "no points left"
    );
}

#[test]
fn an_interval_across_the_edge_is_inconclusive() {
    let mut m = Measures::new();
    m.scalar("near", "", wide(10.0));
    m.scalar("one_run", "", Estimate::from_samples(&[10.0]).unwrap());
    m.series("pair", "", "x", vec![(1.0, wide(10.0)), (2.0, wide(30.0))]);
    m.series("lower", "", "x", vec![(1.0, wide(9.0)), (2.0, est(1.0))]);
    let run = |measure: &str, p: Predicate| {
        let r = evaluate(&claim(Some(measure), p), &m);
        (r.verdict, r.means_hold)
    };
    let within = |of: f64, abs: f64| {
        Predicate::Within(Band {
            abs,
            ..Band::of(Operand::Value(of))
        })
    };
    // 10 ± 2.5 against [9, 11]: the mean is inside, the interval is not.
    assert_eq!(
        run("near", within(10.0, 1.0)),
        (Verdict::Inconclusive, true)
    );
    // ... against [5, 15]: inside; against [20, 22]: wholly outside.
    assert_eq!(run("near", within(10.0, 5.0)), (Verdict::Pass, true));
    assert_eq!(run("near", within(21.0, 1.0)), (Verdict::Fail, false));
    // The mean outside [11.5, 12.5] but the interval reaching in: inconclusive, mean misses.
    assert_eq!(
        run("near", within(12.0, 0.5)),
        (Verdict::Inconclusive, false)
    );
    // One run has no interval: judged by its value.
    assert_eq!(run("one_run", within(10.5, 1.0)), (Verdict::Pass, true));
    assert_eq!(run("one_run", within(12.0, 1.0)), (Verdict::Fail, false));
    let at_least = |of: f64| Predicate::AtLeast {
        of: Operand::Value(of),
        strict: false,
        at: None,
        from: None,
    };
    assert_eq!(run("near", at_least(9.0)), (Verdict::Inconclusive, true));
    assert_eq!(run("near", at_least(5.0)), (Verdict::Pass, true));
    // One point failing outright fails the claim whatever the others.
    assert_eq!(run("pair", at_least(20.0)), (Verdict::Fail, false));
    // Orderings: overlapping intervals are inconclusive at that point.
    let order = |ms: &[&str]| Predicate::Order {
        measures: ms.iter().map(|s| s.to_string()).collect(),
        strict: true,
        at: None,
    };
    let r = evaluate(&claim(None, order(&["lower", "pair"])), &m);
    assert_eq!((r.verdict, r.means_hold), (Verdict::Inconclusive, true));
    assert!(r.detail.contains("overlap at: x = 1"), "{}", r.detail);
    // The example shown is a point that holds, and the count says how many of them do.
    assert!(
        r.detail
            .starts_with("holds at 1 of 2 point(s), e.g. x = 2: 1 < 30;"),
        "{}",
        r.detail
    );
    let r = evaluate(&claim(None, order(&["pair", "lower"])), &m);
    assert_eq!((r.verdict, r.means_hold), (Verdict::Fail, false));
}

#[test]
fn an_inconclusive_claim_says_how_many_times_the_runs_would_decide_it() {
    use crate::stats::runs_factor_to_resolve;
    let mut m = Measures::new();
    // wide(v): three runs, SD 1, 95 % interval v ± 2.48.
    m.scalar("near", "", wide(10.0));
    m.scalar("on_edge", "", wide(11.0));
    m.series("a", "", "x", vec![(1.0, wide(9.0)), (2.0, wide(1.0))]);
    m.series("b", "", "x", vec![(1.0, wide(10.5)), (2.0, wide(20.0))]);
    let decide = |measure: Option<&str>, p: Predicate| {
        let r = evaluate(&claim(measure, p), &m);
        (r.verdict, r.runs_factor_to_decide, r.detail)
    };
    let within = |of: f64, abs: f64| {
        Predicate::Within(Band {
            abs,
            ..Band::of(Operand::Value(of))
        })
    };
    // 10 against [8.5, 11]: the nearer edge is 1 away; the factor is the first whose projected
    // half-width fits in 1, and the detail says so.
    let (v, k, detail) = decide(Some("near"), within(9.75, 1.25));
    let want = runs_factor_to_resolve(&[&wide(10.0)], 1.0);
    assert_eq!((v, k), (Verdict::Inconclusive, want));
    assert!(want.is_some_and(|k| k > 2), "{want:?}");
    let k = want.unwrap_or_default();
    assert!(
        detail.ends_with(&format!(
            "; {k} times the runs would decide it if the means and spreads held"
        )),
        "{detail}"
    );
    // A mean on the edge: no number of runs decides it, and the detail says that instead.
    let (v, k, detail) = decide(Some("on_edge"), within(10.0, 1.0));
    assert_eq!((v, k), (Verdict::Inconclusive, None));
    assert!(detail.contains("no factor up to 1000"), "{detail}");
    // Decided claims carry no factor.
    assert_eq!(decide(Some("near"), within(10.0, 5.0)).1, None);
    assert_eq!(decide(Some("near"), within(30.0, 1.0)).1, None);
    // An ordering: the pair's two intervals must come apart over the 1.5 between the means.
    let order = Predicate::Order {
        measures: vec!["a".into(), "b".into()],
        strict: true,
        at: None,
    };
    let (v, k, detail) = decide(None, order);
    assert!(
        detail.starts_with("holds at 1 of 2 point(s), e.g. x = 2: 1 < 20; 95 % intervals"),
        "{detail}"
    );
    // With no point decided there is no example to give.
    let only_first = Predicate::Order {
        measures: vec!["a".into(), "b".into()],
        strict: true,
        at: Some(1.0),
    };
    let detail = decide(None, only_first).2;
    assert!(
        detail.starts_with("decided at no point; 95 % intervals overlap at: x = 1: 9 ["),
        "{detail}"
    );
    assert_eq!(
        (v, k),
        (
            Verdict::Inconclusive,
            runs_factor_to_resolve(&[&wide(9.0), &wide(10.5)], 1.5)
        )
    );
    // A claim whose several points straddle takes the largest factor: the point nearest its
    // edge decides.
    m.series("two", "", "x", vec![(1.0, wide(10.0)), (2.0, wide(10.5))]);
    let r = evaluate(&claim(Some("two"), within(10.0, 1.0)), &m);
    assert_eq!(
        r.runs_factor_to_decide,
        runs_factor_to_resolve(&[&wide(10.5)], 0.5)
    );
}

#[test]
fn bounds_against_series_measure() {
    let below = Predicate::AtMost {
        of: Operand::Measure("bound".into()),
        strict: true,
        at: None,
        from: None,
    };
    assert_eq!(verdict(Some("rt"), below.clone()), Verdict::Pass);
    // low is 6.0 at x = 20 which is ≤ 11.3, but 1.0 ≥ 4.3 fails for at_least.
    let above = Predicate::AtLeast {
        of: Operand::Measure("bound".into()),
        strict: false,
        at: None,
        from: None,
    };
    assert_eq!(verdict(Some("rt"), above), Verdict::Fail);
    let r = evaluate(&claim(Some("rt"), below), &measures());
    // Closest to the bound: x = 5 (4.3 − 3.5 = 0.8).
    assert_eq!(r.x, Some(5.0));
}

#[test]
fn a_bound_from_x_leaves_out_the_points_below_it() {
    // rt / bound is 0.81 at x = 5, 0.67 at 10 and 0.50 at 20: "at most 0.7" holds from 10.
    let at_most = |from: Option<f64>| Predicate::AtMost {
        of: Operand::Value(0.7),
        strict: false,
        at: None,
        from,
    };
    let name = Some("ratio(rt, bound)");
    let mut m = measures();
    let claims = Claims {
        specs: vec![claim(name, at_most(None))],
        ..Default::default()
    };
    claims.add_derived_measures(&mut m);
    assert_eq!(
        evaluate(&claim(name, at_most(None)), &m).verdict,
        Verdict::Fail
    );
    assert_eq!(
        evaluate(&claim(name, at_most(Some(10.0))), &m).verdict,
        Verdict::Pass
    );
    let none = evaluate(&claim(name, at_most(Some(30.0))), &m);
    assert!(none.failed(), "no point at x ≥ 30 cannot pass");
}

#[test]
fn order_pointwise() {
    let p = |ms: &[&str], at: Option<f64>| Predicate::Order {
        measures: ms.iter().map(|s| s.to_string()).collect(),
        strict: false,
        at,
    };
    assert_eq!(verdict(None, p(&["rt", "bound"], None)), Verdict::Pass);
    // low ≤ rt holds at 5 and 10 but not at 20 (6.0 > 5.64).
    assert_eq!(verdict(None, p(&["low", "rt"], None)), Verdict::Fail);
    assert_eq!(verdict(None, p(&["low", "rt"], Some(10.0))), Verdict::Pass);
    assert_eq!(
        verdict(None, p(&["low", "rt", "bound"], Some(5.0))),
        Verdict::Pass
    );
}

#[test]
fn trend_and_flat() {
    let inc = Predicate::Trend {
        direction: Direction::Increasing,
        from: None,
        to: None,
        slack: 0.0,
        max_change: None,
    };
    let dec = Predicate::Trend {
        direction: Direction::Decreasing,
        from: None,
        to: None,
        slack: 0.0,
        max_change: None,
    };
    assert_eq!(verdict(Some("rt"), inc), Verdict::Pass);
    assert_eq!(verdict(Some("rt"), dec), Verdict::Fail);
    let flat = |rel: f64, from: f64| Predicate::Flat {
        from: Some(from),
        to: None,
        rel,
    };
    assert_eq!(verdict(Some("rt"), flat(0.1, 10.0)), Verdict::Pass);
    assert_eq!(verdict(Some("rt"), flat(0.1, 5.0)), Verdict::Fail);
}

#[test]
fn a_slight_trend_fails_when_it_moves_too_far_or_not_at_all() {
    let falls_slightly = Predicate::Trend {
        direction: Direction::Decreasing,
        from: None,
        to: None,
        slack: 0.01,
        max_change: Some(0.1),
    };
    let judge = |ys: [f64; 3]| {
        let mut m = Measures::new();
        let pts = [1.0, 2.0, 3.0]
            .into_iter()
            .zip(ys)
            .map(|(x, y)| (x, Estimate::exact(y)))
            .collect();
        m.series("s", "", "x", pts);
        evaluate(&claim(Some("s"), falls_slightly.clone()), &m).verdict
    };
    assert_eq!(judge([1.0, 0.97, 0.95]), Verdict::Pass);
    assert_eq!(judge([1.0, 0.9, 0.8]), Verdict::Fail, "falls 20 %");
    assert_eq!(judge([1.0, 1.0, 1.0]), Verdict::Fail, "does not fall");
    assert!(falls_slightly.to_string().contains("by ≤ 10 % overall"));
}

#[test]
fn a_trend_step_within_the_intervals_is_inconclusive() {
    let inc = || Predicate::Trend {
        direction: Direction::Increasing,
        from: None,
        to: None,
        slack: 0.0,
        max_change: None,
    };
    let run = |pts: Vec<(f64, Estimate)>| {
        let mut m = Measures::new();
        m.series("s", "", "x", pts);
        let r = evaluate(&claim(Some("s"), inc()), &m);
        (r.verdict, r.means_hold)
    };
    // A dip of 0.2 between points whose intervals (± 2.5) overlap: unsure, and its mean misses.
    assert_eq!(
        run(vec![
            (1.0, wide(1.0)),
            (2.0, wide(5.0)),
            (3.0, wide(4.8)),
            (4.0, wide(9.0))
        ]),
        (Verdict::Inconclusive, false)
    );
    // The same dip with narrow intervals (± 0.025) is decided against the trend.
    assert_eq!(
        run(vec![
            (1.0, est(1.0)),
            (2.0, est(5.0)),
            (3.0, est(4.8)),
            (4.0, est(9.0))
        ]),
        (Verdict::Fail, false)
    );
    // Every step with the trend, but the first and last points' intervals overlap: unsure,
    // with the means holding.
    assert_eq!(
        run(vec![(1.0, wide(1.0)), (2.0, wide(1.5)), (3.0, wide(2.0))]),
        (Verdict::Inconclusive, true)
    );
    // Single runs (no interval) are judged by their values.
    let one = Estimate::exact;
    assert_eq!(
        run(vec![(1.0, one(1.0)), (2.0, one(0.9))]),
        (Verdict::Fail, false)
    );
    assert_eq!(
        run(vec![(1.0, one(1.0)), (2.0, one(1.1))]),
        (Verdict::Pass, true)
    );
}

#[test]
fn missing_measure_fails_with_reason() {
    let r = evaluate(
        &claim(
            Some("nope"),
            Predicate::AtMost {
                of: Operand::Value(1.0),
                strict: false,
                at: None,
                from: None,
            },
        ),
        &measures(),
    );
    assert_eq!(r.verdict, Verdict::Fail);
    assert!(r.detail.contains("no measure `nope`"), "{}", r.detail);
}

#[test]
fn parse_valid_and_invalid_files() {
    let ok = r#"
        study = "demo"
        [[claim]]
        id = "demo.a"
        source = "s"
        statement = "st"
        scenario = "sc"
        measure = "time"
        predicate = { kind = "within", of = 12656, abs = 0 }
        [[claim]]
        id = "demo.b"
        source = "s"
        statement = "st"
        scenario = "sc"
        predicate = { kind = "order", measures = ["a", "b"] }
    "#;
    let claims = parse_claims("demo", ok).unwrap().specs;
    assert_eq!(claims.len(), 2);
    assert_eq!(
        claims[0].predicate,
        Predicate::Within(Band::of(Operand::Value(12656.0)))
    );
    assert!(matches!(
        parse_claims("other", ok),
        Err(ClaimFileError::WrongStudy { .. })
    ));
    let bad_id = ok.replace("demo.a", "x.a");
    assert!(matches!(
        parse_claims("demo", &bad_id),
        Err(ClaimFileError::BadId { .. })
    ));
    let dup = ok.replace("demo.b", "demo.a");
    assert!(matches!(
        parse_claims("demo", &dup),
        Err(ClaimFileError::Duplicate { .. })
    ));
    let unknown = ok.replace("abs = 0", "absolute = 0");
    assert!(matches!(
        parse_claims("demo", &unknown),
        Err(ClaimFileError::Toml { .. })
    ));
    let with_table =
        format!("{ok}\n[paper.t1]\nsource = \"T\"\nx_label = \"r\"\nx = [5, 10]\ny = [3.5, 4.8]\n");
    let c = parse_claims("demo", &with_table).unwrap();
    let mut m = Measures::new();
    c.add_paper_measures(&mut m);
    assert_eq!(m.get("paper.t1").unwrap().at(Some(10.0)).unwrap().mean, 4.8);
    let ragged = with_table.replace("y = [3.5, 4.8]", "y = [3.5]");
    assert!(matches!(
        parse_claims("demo", &ragged),
        Err(ClaimFileError::Invalid { .. })
    ));
    let one = ok.replace(r#"["a", "b"]"#, r#"["a"]"#);
    assert!(matches!(
        parse_claims("demo", &one),
        Err(ClaimFileError::Invalid { .. })
    ));
}

#[test]
fn number_formatting() {
    assert_eq!(fmt_num(12656.0), "12656");
    assert_eq!(fmt_num(24.71875), "24.72");
    assert_eq!(fmt_num(0.5), "0.5");
    assert_eq!(fmt_num(3.504), "3.504");
    assert_eq!(fmt_num(1.0e-5), "1.000e-5");
    assert_eq!(fmt_num(0.0005), "0.0005");
}

#[test]
fn explanations_take_their_numbers_from_the_run() {
    let m = measures();
    let t = "{value} here; time {time}; rt at 10: {rt@10}; {rt} has no x; {nothing}; {open";
    assert_eq!(
        eval::fill(t, Some(0.25), &m),
        "0.25 here; time 12656; rt at 10: 4.85; {rt: not measured} has no x; \
         {nothing: not measured}; {open"
    );
    // A failed claim's explanation is filled from the measures it was evaluated against.
    let mut spec = claim(
        Some("time"),
        Predicate::AtMost {
            of: Operand::Value(1.0),
            strict: false,
            at: None,
            from: None,
        },
    );
    spec.explain_fail = Some("the bus needs {value} bit times".into());
    let r = evaluate(&spec, &m);
    assert_eq!(r.verdict, Verdict::Fail);
    assert_eq!(
        r.explanation.as_deref(),
        Some("the bus needs 12656 bit times")
    );
}

/// Equal values without spread (every run gave the same) decide a strict order and a trend:
/// nothing is left to chance. With spread, equal means stay undecided, and a mutant's run
/// that leaves a claim so refutes it only when its means miss.
#[test]
fn equal_values_without_spread_decide_and_missing_means_refute() {
    let mut m = Measures::new();
    let flat = |e: Estimate| vec![(1.0, e), (2.0, e), (3.0, e)];
    m.series("one", "", "x", flat(Estimate::exact(1.0)));
    m.series("also_one", "", "x", flat(Estimate::exact(1.0)));
    m.series("noisy", "", "x", flat(est(1.0)));
    m.series("noisy_too", "", "x", flat(est(1.0)));
    let strict = |a: &str, b: &str| Predicate::Order {
        measures: vec![a.into(), b.into()],
        strict: true,
        at: None,
    };
    let falls = Predicate::Trend {
        direction: Direction::Decreasing,
        from: None,
        to: None,
        slack: 0.01,
        max_change: None,
    };
    let exact = evaluate(&claim(None, strict("one", "also_one")), &m);
    assert_eq!(exact.verdict, Verdict::Fail);
    assert!(exact.refuted());
    assert_eq!(
        evaluate(&claim(Some("one"), falls), &m).verdict,
        Verdict::Fail
    );
    let noisy = evaluate(&claim(None, strict("noisy", "noisy_too")), &m);
    assert_eq!(noisy.verdict, Verdict::Inconclusive);
    assert!(!noisy.means_hold);
    assert!(noisy.refuted(), "equal means miss a strict order");
    // Undecided with means that hold: not refuted.
    m.series("noisy_above", "", "x", flat(est(1.01)));
    let holds = evaluate(&claim(None, strict("noisy", "noisy_above")), &m);
    assert_eq!(holds.verdict, Verdict::Inconclusive);
    assert!(holds.means_hold && !holds.refuted());
}
