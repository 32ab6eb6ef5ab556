//! Evaluating a claim against a study's measures: resolving operands, selecting points,
//! applying the predicate.

use super::*;

/// Relative slack for float comparisons of values that are meant to be exact.
fn eps(t: f64) -> f64 {
    1e-9 * t.abs().max(1.0)
}

struct Failure(String);

fn subject<'a>(spec: &ClaimSpec, measures: &'a Measures) -> Result<&'a Measure, Failure> {
    let name = spec
        .measure
        .as_deref()
        .ok_or_else(|| Failure("claim names no measure".into()))?;
    measures
        .get(name)
        .ok_or_else(|| Failure(format!("the study recorded no measure `{name}`")))
}

fn resolve(op: &Operand, x: Option<f64>, measures: &Measures) -> Result<f64, Failure> {
    match op {
        Operand::Value(v) => Ok(*v),
        Operand::Measure(name) => {
            let m = measures
                .get(name)
                .ok_or_else(|| Failure(format!("the study recorded no measure `{name}`")))?;
            m.at(x).map(|e| e.mean).ok_or_else(|| {
                Failure(format!(
                    "`{name}` has no point at x = {}",
                    x.map(fmt_num).unwrap_or_else(|| "(none)".into())
                ))
            })
        }
    }
}

/// Whether `op` is a value or a measure the study recorded.
fn target_recorded(op: &Operand, measures: &Measures) -> bool {
    match op {
        Operand::Value(_) => true,
        Operand::Measure(name) => measures.get(name).is_some(),
    }
}

fn select(
    points: Vec<(Option<f64>, Estimate)>,
    at: &Option<f64>,
) -> Result<Vec<(Option<f64>, Estimate)>, Failure> {
    let pts: Vec<_> = match at {
        None => points,
        Some(a) => points
            .into_iter()
            .filter(|(x, _)| x.is_none() || x.is_some_and(|x| same_x(x, *a)))
            .collect(),
    };
    if pts.is_empty() {
        return Err(Failure(format!(
            "no measured point{}",
            at.map(|a| format!(" at x = {}", fmt_num(a)))
                .unwrap_or_default()
        )));
    }
    Ok(pts)
}

fn in_range(x: f64, from: &Option<f64>, to: &Option<f64>) -> bool {
    from.is_none_or(|a| x >= a - eps(a)) && to.is_none_or(|b| x <= b + eps(b))
}

/// The series points of `m` with `from <= x <= to` (a scalar has none).
fn points_in_range(m: &Measure, from: &Option<f64>, to: &Option<f64>) -> Vec<(f64, Estimate)> {
    m.points()
        .into_iter()
        .filter_map(|(x, e)| x.map(|x| (x, e)))
        .filter(|(x, _)| in_range(*x, from, to))
        .collect()
}

fn xs(x: Option<f64>) -> String {
    x.map(|x| format!("x = {}: ", fmt_num(x)))
        .unwrap_or_default()
}

struct Outcome {
    verdict: Verdict,
    /// No point's mean misses (see [`ClaimResult::means_hold`]).
    means_hold: bool,
    x: Option<f64>,
    measured: Option<Estimate>,
    detail: String,
    /// For an inconclusive verdict, the runs factor that would decide every unsure point
    /// (see [`ClaimResult::runs_factor_to_decide`]).
    decide: Option<u32>,
    /// The x values of the points whose intervals straddle (see
    /// [`ClaimResult::undecided_at`]).
    undecided_at: Vec<Option<f64>>,
}

/// A point or comparison whose 95 % interval straddles: its text, the runs factor that would
/// decide it ([`runs_factor_to_resolve`]) and the x values of the points involved (`None`: a
/// scalar).
type Unsure = (String, Option<u32>, Vec<Option<f64>>);

/// The x values `unsure` involves, each once, in order.
fn undecided_at(unsure: &[Unsure]) -> Vec<Option<f64>> {
    let mut out: Vec<Option<f64>> = Vec::new();
    for x in unsure.iter().flat_map(|u| &u.2) {
        let seen = out.iter().any(|o| match (o, x) {
            (Some(a), Some(b)) => crate::measure::same_x(*a, *b),
            (None, None) => true,
            _ => false,
        });
        if !seen {
            out.push(*x);
        }
    }
    out
}

/// The runs factor that decides every one of `unsure`: the largest, or `None` if one has none.
fn decide_all(unsure: &[Unsure]) -> Option<u32> {
    unsure
        .iter()
        .try_fold(None, |m: Option<u32>, (_, k, _)| {
            k.map(|k| Some(m.map_or(k, |m| m.max(k))))
        })
        .flatten()
}

/// The texts of `unsure`.
fn unsure_texts(unsure: &[Unsure]) -> String {
    unsure
        .iter()
        .map(|(t, _, _)| t.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Distance from `mean` to the nearer edge of the region `[lo, hi]` (an end may be infinite).
fn edge_gap(mean: f64, (lo, hi): (f64, f64)) -> f64 {
    (mean - lo).abs().min((hi - mean).abs())
}

impl Outcome {
    /// The outcome every predicate builds: failed when `bad` points failed, else inconclusive
    /// when something is listed in `unsure`, else passed; the detail is `detail`, followed by
    /// `; <unsure_label>: <unsure…>` when something is unsure.
    fn judged(
        (x, measured): (Option<f64>, Option<Estimate>),
        mut detail: String,
        (bad, unsure): (usize, &[Unsure]),
        unsure_label: &str,
        means_hold: bool,
    ) -> Self {
        if !unsure.is_empty() {
            detail = format!("{detail}; {unsure_label}: {}", unsure_texts(unsure));
        }
        Outcome {
            verdict: Verdict::of(bad, unsure.len()),
            means_hold,
            x,
            measured,
            detail,
            decide: decide_all(unsure),
            undecided_at: undecided_at(unsure),
        }
    }

    /// A bound judged point by point: the detail is `head`, followed by `; <label>: <bad…>`
    /// and `; 95 % interval across the edge: <unsure…>` for what is listed.
    fn listing(
        x: Option<f64>,
        e: Estimate,
        head: String,
        label: &str,
        (bad, unsure): (&[String], &[Unsure]),
        means_hold: bool,
    ) -> Self {
        let mut detail = head;
        if !bad.is_empty() {
            detail = format!("{detail}; {label}: {}", bad.join("; "));
        }
        Outcome::judged(
            (x, Some(e)),
            detail,
            (bad.len(), unsure),
            "95 % interval across the edge",
            means_hold,
        )
    }
}

/// How the unsure points of a comparison between points (an order, a trend) are introduced.
const OVERLAP: &str = "95 % intervals overlap at";

/// How a point's estimate stands against the region a claim accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Judged {
    /// The 95 % interval lies inside (one run or an analytic value: the value does).
    In,
    /// The interval lies wholly outside (one run or an analytic value: the value does).
    Out,
    /// The interval crosses the region's edge: more runs would decide.
    Across,
}

/// The interval a point is judged by: its 95 % confidence interval with two runs or more
/// (widened to hold the mean), else the value itself.
fn interval(e: &Estimate) -> (f64, f64) {
    if e.n >= 2 {
        (e.ci_lo.min(e.mean), e.ci_hi.max(e.mean))
    } else {
        (e.mean, e.mean)
    }
}

/// Judge `e` against the region `[lo, hi]` (an end may be infinite); `mean_ok` is whether the
/// mean itself is accepted (strictness already applied).
fn judge(e: &Estimate, (lo, hi): (f64, f64), mean_ok: bool) -> Judged {
    if e.n < 2 {
        return if mean_ok { Judged::In } else { Judged::Out };
    }
    let (a, b) = interval(e);
    let slack = |v: f64| if v.is_finite() { eps(v) } else { 0.0 };
    if mean_ok && a >= lo - slack(lo) && b <= hi + slack(hi) {
        Judged::In
    } else if !mean_ok && (b < lo - slack(lo) || a > hi + slack(hi)) {
        Judged::Out
    } else {
        Judged::Across
    }
}

/// Judge point `e` at `x` against `region` around target `t` (`mean_ok`: whether its mean is
/// accepted), listing it in `bad` when it is outside and in `unsure` when its interval
/// crosses the edge.
fn list_point(
    (x, e, t): (Option<f64>, &Estimate, f64),
    (region, mean_ok): ((f64, f64), bool),
    (bad, unsure): (&mut Vec<String>, &mut Vec<Unsure>),
) {
    match judge(e, region, mean_ok) {
        Judged::In => {}
        Judged::Out => bad.push(format!("{}{} vs {}", xs(x), fmt_num(e.mean), fmt_num(t))),
        Judged::Across => unsure.push((
            across_text(x, e, t),
            runs_factor_to_resolve(&[e], edge_gap(e.mean, region)),
            vec![x],
        )),
    }
}

/// Judge the ordering `a` before `b` (`ok`: the means are in order): decided when the two
/// intervals do not overlap; two points without intervals are judged by their values.
fn order_judge(a: &Estimate, b: &Estimate, ok: bool) -> Judged {
    if a.n < 2 && b.n < 2 {
        return if ok { Judged::In } else { Judged::Out };
    }
    let ((alo, ahi), (blo, bhi)) = (interval(a), interval(b));
    // No spread on either side (every run gave the same value): nothing is left to chance.
    if alo == ahi && blo == bhi {
        return if ok { Judged::In } else { Judged::Out };
    }
    if ok && ahi <= blo + eps(blo) {
        Judged::In
    } else if !ok && alo > bhi + eps(bhi) {
        Judged::Out
    } else {
        Judged::Across
    }
}

/// "mean [lo, hi]": a value with the interval it is judged by.
fn with_interval(e: &Estimate) -> String {
    let (a, b) = interval(e);
    format!("{} [{}, {}]", fmt_num(e.mean), fmt_num(a), fmt_num(b))
}

/// "x = …: mean [lo, hi] vs t".
fn across_text(x: Option<f64>, e: &Estimate, t: f64) -> String {
    format!("{}{} vs {}", xs(x), with_interval(e), fmt_num(t))
}

/// "x = x0 → x1: a → b", a change between two points of a trend, each value shown by `show`
/// (its mean, or its mean with the interval it is judged by).
fn change_text(
    (x0, a): (f64, &Estimate),
    (x1, b): (f64, &Estimate),
    show: fn(&Estimate) -> String,
) -> String {
    format!(
        "x = {} → {}: {} → {}",
        fmt_num(x0),
        fmt_num(x1),
        show(a),
        show(b)
    )
}

/// An estimate's mean, as shown beside a verdict.
fn mean_text(e: &Estimate) -> String {
    fmt_num(e.mean)
}

/// Evaluate one claim against a study's measures.
pub fn evaluate(spec: &ClaimSpec, measures: &Measures) -> ClaimResult {
    let subject = spec.measure.as_deref().and_then(|m| measures.get(m));
    let unit = subject.map(|m| m.unit().to_string()).unwrap_or_default();
    let x_label = match subject {
        Some(Measure::Series { x_label, .. }) => x_label.clone(),
        _ => String::new(),
    };
    let (o, evaluated) = match eval_inner(spec, measures) {
        Ok(o) => (o, true),
        Err(Failure(why)) => (
            Outcome::judged(
                (None, None),
                format!("cannot evaluate: {why}"),
                (1, &[]),
                OVERLAP,
                false,
            ),
            false,
        ),
    };
    let (detail, runs_factor_to_decide) = if o.verdict == Verdict::Inconclusive {
        let more = match o.decide {
            Some(k) => {
                format!("; {k} times the runs would decide it if the means and spreads held")
            }
            None => format!(
                "; no factor up to {MAX_RUNS_FACTOR} times the runs would decide it (a mean \
                 on the edge, or too wide a spread)"
            ),
        };
        (o.detail + &more, o.decide)
    } else {
        (o.detail, None)
    };
    ClaimResult {
        spec: spec.clone(),
        x: o.x,
        x_label,
        measured: o.measured,
        unit,
        verdict: o.verdict,
        detail,
        runs_factor_to_decide,
        undecided_at: if o.verdict == Verdict::Inconclusive {
            o.undecided_at
        } else {
            Vec::new()
        },
        evaluated,
        means_hold: o.means_hold,
        explanation: spec
            .explain_fail
            .as_deref()
            .map(|t| fill(t, o.measured.map(|e| e.mean), measures)),
    }
}

/// `template` with `{value}` (`value`), `{NAME}` and `{NAME@X}` replaced by this run's
/// numbers (see [`ClaimSpec::explain_fail`]); other text, and a `{` without a closing `}`,
/// stay as written.
pub(crate) fn fill(template: &str, value: Option<f64>, measures: &Measures) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(len) = rest[open..].find('}') else {
            break;
        };
        out.push_str(&rest[..open]);
        let key = &rest[open + 1..open + len];
        let (name, x) = match key.split_once('@') {
            Some((n, x)) => (n, x.trim().parse::<f64>().ok()),
            None => (key, None),
        };
        let v = if name == "value" {
            value
        } else {
            measures.get(name).and_then(|m| m.at(x)).map(|e| e.mean)
        };
        match v {
            Some(v) => out.push_str(&fmt_num(v)),
            None => {
                out.push('{');
                out.push_str(key);
                out.push_str(": not measured}");
            }
        }
        rest = &rest[open + len + 1..];
    }
    out.push_str(rest);
    out
}

/// The outcome of a claim's predicate, judged by the function of its kind.
fn eval_inner(spec: &ClaimSpec, measures: &Measures) -> Result<Outcome, Failure> {
    match &spec.predicate {
        Predicate::Within(band) => within(spec, band, measures),
        Predicate::AtMost {
            of,
            strict,
            at,
            from,
        } => bound(spec, measures, true, of, *strict, (at, from)),
        Predicate::AtLeast {
            of,
            strict,
            at,
            from,
        } => bound(spec, measures, false, of, *strict, (at, from)),
        Predicate::Order {
            measures: names,
            strict,
            at,
        } => order(names, *strict, at, measures),
        Predicate::Trend {
            direction,
            from,
            to,
            slack,
            max_change,
        } => trend(spec, measures, *direction, (from, to), *slack, *max_change),
        Predicate::Flat { from, to, rel } => flat(spec, measures, (from, to), *rel),
    }
}

/// `within`: every point (from `from` on) lies within its band around the target.
fn within(spec: &ClaimSpec, within: &Band, measures: &Measures) -> Result<Outcome, Failure> {
    let Band { of, abs, rel, .. } = within;
    let pts = select(subject(spec, measures)?.points(), &within.at)?
        .into_iter()
        .filter(|(x, _)| x.is_none() || in_range(x.unwrap_or_default(), &within.from, &None));
    // Worst point: largest deviation relative to its band.
    let mut worst: Option<(f64, Option<f64>, Estimate, f64, f64)> = None;
    let (mut bad, mut unsure) = (Vec::new(), Vec::new());
    let mut means_hold = true;
    for (x, e) in pts {
        let t = match resolve(of, x, measures) {
            Ok(t) => t,
            // The target exists but has no value at this x: skipped when asked.
            Err(_) if within.where_target && target_recorded(of, measures) => continue,
            Err(f) => return Err(f),
        };
        let band = abs + rel * t.abs();
        let dev = (e.mean - t).abs();
        let score = if band > 0.0 { dev / band } else { dev };
        let mean_ok = dev <= band + eps(t);
        means_hold &= mean_ok;
        let region = (t - band, t + band);
        list_point((x, &e, t), (region, mean_ok), (&mut bad, &mut unsure));
        if worst.as_ref().is_none_or(|w| score > w.0) {
            worst = Some((score, x, e, t, band));
        }
    }
    let Some((_, x, e, t, band)) = worst else {
        return Err(Failure("no points".into()));
    };
    let head = format!(
        "worst {}{} vs target {} (band [{}, {}])",
        xs(x),
        fmt_num(e.mean),
        fmt_num(t),
        fmt_num(t - band),
        fmt_num(t + band)
    );
    Ok(Outcome::listing(
        x,
        e,
        head,
        "outside",
        (&bad, &unsure),
        means_hold,
    ))
}

/// `at_most` (`upper`) or `at_least`: every point (at `at`, from `from` on) keeps to the bound.
fn bound(
    spec: &ClaimSpec,
    measures: &Measures,
    upper: bool,
    of: &Operand,
    strict: bool,
    (at, from): (&Option<f64>, &Option<f64>),
) -> Result<Outcome, Failure> {
    let mut pts = select(subject(spec, measures)?.points(), at)?;
    pts.retain(|(x, _)| x.is_none_or(|x| in_range(x, from, &None)));
    if pts.is_empty() {
        return Err(Failure(format!(
            "no measured point{}",
            from.map(|a| format!(" at x ≥ {}", fmt_num(a)))
                .unwrap_or_default()
        )));
    }
    let mut worst: Option<(f64, Option<f64>, Estimate, f64)> = None;
    let (mut bad, mut unsure) = (Vec::new(), Vec::new());
    let mut means_hold = true;
    for (x, e) in pts {
        let t = resolve(of, x, measures)?;
        // margin > 0 means the bound holds with room to spare.
        let margin = if upper { t - e.mean } else { e.mean - t };
        let ok = if strict {
            margin > 0.0
        } else {
            margin >= -eps(t)
        };
        means_hold &= ok;
        let region = if upper {
            (f64::NEG_INFINITY, t)
        } else {
            (t, f64::INFINITY)
        };
        list_point((x, &e, t), (region, ok), (&mut bad, &mut unsure));
        if worst.as_ref().is_none_or(|w| margin < w.0) {
            worst = Some((margin, x, e, t));
        }
    }
    let Some((_, x, e, t)) = worst else {
        return Err(Failure("no points".into()));
    };
    let op = match (upper, strict) {
        (true, true) => "<",
        (true, false) => "≤",
        (false, true) => ">",
        (false, false) => "≥",
    };
    let head = format!(
        "closest {}{} {op} {} required",
        xs(x),
        fmt_num(e.mean),
        fmt_num(t)
    );
    Ok(Outcome::listing(
        x,
        e,
        head,
        "violated at",
        (&bad, &unsure),
        means_hold,
    ))
}

/// `order`: at every compared x the named measures are in order.
fn order(
    names: &[String],
    strict: bool,
    at: &Option<f64>,
    measures: &Measures,
) -> Result<Outcome, Failure> {
    let mut series = Vec::new();
    for n in names {
        let m = measures
            .get(n)
            .ok_or_else(|| Failure(format!("the study recorded no measure `{n}`")))?;
        series.push((n, m));
    }
    // Points to compare: the x values of the first series-shaped measure.
    let base = series
        .iter()
        .find(|(_, m)| matches!(m, Measure::Series { .. }))
        .map(|(_, m)| m.points())
        .unwrap_or_else(|| vec![(None, Estimate::exact(0.0))]);
    let xs_all: Vec<Option<f64>> = select(base, at)?.into_iter().map(|p| p.0).collect();
    let (mut bad, mut unsure) = (Vec::new(), Vec::new());
    let mut shown = String::new();
    let mut held = 0;
    let mut means_hold = true;
    for x in &xs_all {
        let mut vals = Vec::new();
        for (n, m) in &series {
            let v = m.at(*x).ok_or_else(|| {
                Failure(format!(
                    "`{n}` has no point at x = {}",
                    x.map(fmt_num).unwrap_or_else(|| "(none)".into())
                ))
            })?;
            vals.push(v);
        }
        let mut judged = Judged::In;
        // The runs factor deciding every overlapping pair at this x (None: one has none).
        let mut need = Some(1);
        for w in vals.windows(2) {
            if let [a, b] = w {
                let ok = if strict {
                    a.mean < b.mean
                } else {
                    a.mean <= b.mean + eps(b.mean)
                };
                means_hold &= ok;
                match order_judge(a, b, ok) {
                    Judged::Out => judged = Judged::Out,
                    Judged::Across => {
                        if judged == Judged::In {
                            judged = Judged::Across;
                        }
                        let k = runs_factor_to_resolve(&[a, b], (b.mean - a.mean).abs());
                        need = need.zip(k).map(|(m, k)| m.max(k));
                    }
                    _ => {}
                }
            }
        }
        let sep = if strict { " < " } else { " ≤ " };
        let text = format!(
            "{}{}",
            xs(*x),
            vals.iter()
                .map(|v| fmt_num(v.mean))
                .collect::<Vec<_>>()
                .join(sep)
        );
        match judged {
            Judged::In => {}
            Judged::Out => bad.push(text.clone()),
            Judged::Across => unsure.push((
                format!(
                    "{}{}",
                    xs(*x),
                    vals.iter().map(with_interval).collect::<Vec<_>>().join(sep)
                ),
                need,
                vec![*x],
            )),
        }
        // The example shown: the first point that holds.
        if judged == Judged::In {
            held += 1;
            if held == 1 {
                shown = text;
            }
        }
    }
    let detail = if bad.is_empty() {
        match held {
            0 => "decided at no point".to_string(),
            h if h < xs_all.len() => {
                format!("holds at {h} of {} point(s), e.g. {shown}", xs_all.len())
            }
            h => format!("holds at {h} point(s), e.g. {shown}"),
        }
    } else {
        format!("violated at: {}", bad.join("; "))
    };
    Ok(Outcome::judged(
        (None, None),
        detail,
        (bad.len(), &unsure),
        OVERLAP,
        means_hold,
    ))
}

/// `trend`: no step goes against `direction` by more than the slack, the whole range moves
/// with it, and (with `max_change`) by no more than that share of the first point.
fn trend(
    spec: &ClaimSpec,
    measures: &Measures,
    direction: Direction,
    (from, to): (&Option<f64>, &Option<f64>),
    slack: f64,
    max_change: Option<f64>,
) -> Result<Outcome, Failure> {
    let pts = points_in_range(subject(spec, measures)?, from, to);
    if pts.len() < 2 {
        return Err(Failure("a trend needs at least two points in range".into()));
    }
    let sign = match direction {
        Direction::Increasing => 1.0,
        Direction::Decreasing => -1.0,
    };
    // A step against the trend fails when the two points' 95 % intervals are apart by
    // more than the slack, and is unsure (inconclusive) when they overlap; so is the
    // overall change from the first point to the last.
    let (mut bad, mut unsure) = (Vec::new(), Vec::new());
    let mut steps_hold = true;
    for w in pts.windows(2) {
        if let [(x0, a), (x1, b)] = w {
            let step = sign * (b.mean - a.mean);
            let tol = slack * a.mean.abs() + eps(a.mean);
            if step < -tol {
                steps_hold = false;
                let ((alo, ahi), (blo, bhi)) = (interval(a), interval(b));
                let apart = if sign > 0.0 {
                    bhi < alo - tol
                } else {
                    blo > ahi + tol
                };
                if apart || (a.n < 2 && b.n < 2) {
                    bad.push(change_text((*x0, a), (*x1, b), mean_text));
                } else {
                    // Decided when the intervals come apart by more than the slack.
                    unsure.push((
                        change_text((*x0, a), (*x1, b), with_interval),
                        runs_factor_to_resolve(&[a, b], -step - tol),
                        vec![Some(*x0), Some(*x1)],
                    ));
                }
            }
        }
    }
    let (first, last) = match (pts.first(), pts.last()) {
        (Some(f), Some(l)) => (*f, *l),
        _ => return Err(Failure("no points".into())),
    };
    let overall = sign * (last.1.mean - first.1.mean) > 0.0;
    let (a, b) = if sign > 0.0 {
        (&first.1, &last.1)
    } else {
        (&last.1, &first.1)
    };
    let (from, to) = ((first.0, &first.1), (last.0, &last.1));
    match order_judge(a, b, overall) {
        Judged::In => {}
        Judged::Out => bad.push(format!("overall {}", change_text(from, to, mean_text))),
        Judged::Across => unsure.push((
            format!("overall {}", change_text(from, to, with_interval)),
            runs_factor_to_resolve(&[a, b], (b.mean - a.mean).abs()),
            vec![Some(first.0), Some(last.0)],
        )),
    }
    let mut means_hold = overall && steps_hold;
    if let Some(m) = max_change {
        // "Slightly": the move from the first point to the last is at most m of the
        // first; beyond it when even the intervals' nearest ends are that far apart.
        let limit = m * first.1.mean.abs() + eps(first.1.mean);
        let moved = sign * (last.1.mean - first.1.mean);
        let ((flo, fhi), (llo, lhi)) = (interval(&first.1), interval(&last.1));
        let least = if sign > 0.0 { llo - fhi } else { flo - lhi };
        if moved > limit {
            means_hold = false;
            let text = format!(
                "moves {} % overall (at most {} %): {}",
                fmt_num(100.0 * moved / first.1.mean.abs()),
                fmt_num(100.0 * m),
                change_text(from, to, with_interval)
            );
            if least > limit || (first.1.n < 2 && last.1.n < 2) {
                bad.push(text);
            } else {
                unsure.push((
                    text,
                    runs_factor_to_resolve(&[a, b], moved - limit),
                    vec![Some(first.0), Some(last.0)],
                ));
            }
        }
    }
    let detail = if bad.is_empty() {
        format!(
            "{} points, {} at x = {} → {} at x = {}",
            pts.len(),
            fmt_num(first.1.mean),
            fmt_num(first.0),
            fmt_num(last.1.mean),
            fmt_num(last.0)
        )
    } else {
        format!("against the trend: {}", bad.join("; "))
    };
    Ok(Outcome::judged(
        (Some(last.0), Some(last.1)),
        detail,
        (bad.len(), &unsure),
        OVERLAP,
        means_hold,
    ))
}

/// `flat`: every point in range lies within `rel` of the points' mean.
fn flat(
    spec: &ClaimSpec,
    measures: &Measures,
    (from, to): (&Option<f64>, &Option<f64>),
    rel: f64,
) -> Result<Outcome, Failure> {
    let pts = points_in_range(subject(spec, measures)?, from, to);
    if pts.is_empty() {
        return Err(Failure("no points in range".into()));
    }
    let mean = pts.iter().map(|p| p.1.mean).sum::<f64>() / pts.len() as f64;
    let band = rel * mean.abs();
    let mut worst = (0.0f64, pts[0]);
    for p in &pts {
        let dev = (p.1.mean - mean).abs();
        if dev >= worst.0 {
            worst = (dev, *p);
        }
    }
    let pass = worst.0 <= band + eps(mean);
    let detail = format!(
        "{} points with mean {}; farthest x = {}: {} (band [{}, {}])",
        pts.len(),
        fmt_num(mean),
        fmt_num(worst.1 .0),
        fmt_num(worst.1 .1.mean),
        fmt_num(mean - band),
        fmt_num(mean + band)
    );
    Ok(Outcome::judged(
        (Some(worst.1 .0), Some(worst.1 .1)),
        detail,
        (usize::from(!pass), &[]),
        OVERLAP,
        pass,
    ))
}
