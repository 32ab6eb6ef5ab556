//! Measures a claim names as an expression of two a study recorded: `ratio(A, B)` (A / B)
//! and `diff(A, B)` (A − B), matched point by point on x (a scalar answers at every x).
//!
//! A sentence like "+43 % at r = 30" or "N(FF-IW) is at least 4.9 % above N(FF-IW-IT)" is a
//! ratio of two families at one x. Writing it as an expression keeps the spread: the
//! result's 95 % interval comes from both operands' intervals ([`Estimate::over`],
//! [`Estimate::minus`]), so a claim is left undecided rather than decided on noise.

use super::Claims;
use crate::measure::{Measure, Measures};
use crate::stats::Estimate;

/// The two operations an expression may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Ratio,
    Diff,
}

/// `ratio(A, B)` or `diff(A, B)`: the operation and the two measure names (`None`: a plain
/// measure name).
pub(crate) fn parse(name: &str) -> Option<(Op, &str, &str)> {
    let (op, rest) = if let Some(r) = name.strip_prefix("ratio(") {
        (Op::Ratio, r)
    } else if let Some(r) = name.strip_prefix("diff(") {
        (Op::Diff, r)
    } else {
        return None;
    };
    let (a, b) = rest.strip_suffix(')')?.split_once(',')?;
    let (a, b) = (a.trim(), b.trim());
    let plain = |s: &str| !s.is_empty() && !s.contains(['(', ')', ',']);
    (plain(a) && plain(b)).then_some((op, a, b))
}

/// `a op b` with both spreads ([`Estimate::minus`], [`Estimate::over`]).
pub(crate) fn combine(op: Op, a: &Estimate, b: &Estimate) -> Option<Estimate> {
    match op {
        Op::Diff => a.minus(b),
        Op::Ratio => a.over(b),
    }
}

/// The measure the expression `name` stands for, from `m` (`None`: not an expression, or
/// an operand the study did not record).
pub(crate) fn derive(m: &Measures, name: &str) -> Option<Measure> {
    let (op, a, b) = parse(name)?;
    let (ma, mb) = (m.get(a)?, m.get(b)?);
    let unit = match op {
        Op::Ratio => "ratio".to_string(),
        Op::Diff => ma.unit().to_string(),
    };
    match (ma, mb) {
        (Measure::Scalar { value: va, .. }, Measure::Scalar { value: vb, .. }) => {
            Some(Measure::Scalar {
                unit,
                value: combine(op, va, vb)?,
            })
        }
        (Measure::Series { x_label, .. }, _) | (_, Measure::Series { x_label, .. }) => {
            let xs: Vec<f64> = match (ma, mb) {
                (Measure::Series { points, .. }, _) | (_, Measure::Series { points, .. }) => {
                    points.iter().map(|p| p.0).collect()
                }
                _ => Vec::new(),
            };
            let points = xs
                .into_iter()
                .filter_map(|x| {
                    let (ea, eb) = (ma.at(Some(x))?, mb.at(Some(x))?);
                    Some((x, combine(op, &ea, &eb)?))
                })
                .collect();
            Some(Measure::Series {
                unit,
                x_label: x_label.clone(),
                points,
            })
        }
    }
}

impl Claims {
    /// Record every expression measure (`ratio(A, B)`, `diff(A, B)`) a claim names, from the
    /// measures the study recorded. A name already recorded is left alone.
    pub fn add_derived_measures(&self, m: &mut Measures) {
        let names: Vec<String> = self
            .specs
            .iter()
            .flat_map(|s| s.measure_names())
            .filter(|n| parse(n).is_some() && m.get(n).is_none())
            .map(str::to_string)
            .collect();
        for n in names {
            match derive(m, &n) {
                Some(Measure::Scalar { unit, value }) => m.scalar(n, unit, value),
                Some(Measure::Series {
                    unit,
                    x_label,
                    points,
                }) => m.series(n, unit, x_label, points),
                None => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::same_x;

    /// Whether `x` is one of `xs`.
    fn has_x(xs: &[(f64, Estimate)], x: f64) -> bool {
        xs.iter().any(|p| same_x(p.0, x))
    }

    fn est(mean: f64, hw: f64, n: usize) -> Estimate {
        Estimate {
            mean,
            sd: hw,
            n,
            ci_lo: mean - hw,
            ci_hi: mean + hw,
        }
    }

    #[test]
    fn expressions_parse_and_anything_else_is_a_plain_name() {
        assert_eq!(parse("ratio(a.b, c_d)"), Some((Op::Ratio, "a.b", "c_d")));
        assert_eq!(parse("diff( x ,y )"), Some((Op::Diff, "x", "y")));
        for plain in [
            "a.b",
            "ratio(a)",
            "ratio(a, b",
            "diff(a, (b))",
            "ratio(, b)",
            "max(a, b)",
        ] {
            assert_eq!(parse(plain), None, "{plain}");
        }
    }

    #[test]
    fn a_ratio_and_a_difference_carry_both_spreads() {
        let r = combine(Op::Ratio, &est(3.0, 0.3, 10), &est(2.0, 0.2, 5)).unwrap();
        assert!((r.mean - 1.5).abs() < 1e-12);
        // Relative half-widths 10 % and 10 %: the ratio's is √2 · 10 %.
        assert!(((r.ci_hi - r.mean) / r.mean - 0.1 * 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(r.n, 5);
        let d = combine(Op::Diff, &est(3.0, 0.3, 10), &est(2.0, 0.4, 10)).unwrap();
        assert!((d.mean - 1.0).abs() < 1e-12 && (d.ci_hi - 1.5).abs() < 1e-12);
        // Exact operands give an exact result; a zero denominator gives none.
        let x = combine(Op::Ratio, &Estimate::exact(1.0), &Estimate::exact(4.0)).unwrap();
        assert_eq!((x.mean, x.ci_lo, x.ci_hi, x.n), (0.25, 0.25, 0.25, 0));
        assert!(combine(Op::Ratio, &est(1.0, 0.1, 3), &Estimate::exact(0.0)).is_none());
    }

    #[test]
    fn series_are_matched_on_x_and_a_scalar_answers_everywhere() {
        let mut m = Measures::new();
        let pts = |v: &[(f64, f64)]| v.iter().map(|&(x, y)| (x, est(y, 0.0, 3))).collect();
        m.series("a", "ms", "r", pts(&[(1.0, 2.0), (2.0, 6.0), (3.0, 9.0)]));
        m.series("b", "ms", "r", pts(&[(1.0, 1.0), (3.0, 3.0)]));
        m.scalar("s", "ms", est(2.0, 0.0, 3));
        let Some(Measure::Series { points, .. }) = derive(&m, "ratio(a, b)") else {
            panic!("a series")
        };
        assert_eq!(points.len(), 2);
        assert!(has_x(&points, 1.0) && has_x(&points, 3.0) && !has_x(&points, 2.0));
        assert_eq!(points[1].1.mean, 3.0);
        let Some(Measure::Series { points, .. }) = derive(&m, "diff(a, s)") else {
            panic!("a series")
        };
        let means: Vec<f64> = points.iter().map(|p| p.1.mean).collect();
        assert_eq!(means, vec![0.0, 4.0, 7.0]);
        assert!(derive(&m, "ratio(a, missing)").is_none());
        assert!(derive(&m, "a").is_none());
    }
}
