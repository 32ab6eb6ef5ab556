//! Spread across runs: mean, sample standard deviation and a 95 % Student-t confidence
//! interval of the mean.

use serde::Serialize;

/// A value with its spread across `n` independent runs.
///
/// `n == 0` marks an *analytic* value (a closed form or a paper's bound): it has no spread
/// and its interval is the value itself.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    /// Mean across runs (the value itself when analytic).
    pub mean: f64,
    /// Sample standard deviation across runs (0 for one run or an analytic value).
    pub sd: f64,
    /// Number of runs; 0 for an analytic value.
    pub n: usize,
    /// Lower end of the 95 % confidence interval of the mean.
    pub ci_lo: f64,
    /// Upper end of the 95 % confidence interval of the mean.
    pub ci_hi: f64,
}

impl Estimate {
    /// `self − other`, its interval's half-width `√(h₁² + h₂²)` from both intervals (the two
    /// taken as independent; families run on the same seeds are positively correlated when
    /// anything, so the interval errs wide). `None` if not finite.
    pub fn minus(&self, other: &Estimate) -> Option<Estimate> {
        self.combine(other, self.mean - other.mean, |a, b| a.hypot(b))
    }

    /// `self / other`, its interval by the delta method
    /// (`Var(A/B) ≈ Var(A)/B² + A²·Var(B)/B⁴`, the two taken as independent). `None` for a
    /// zero denominator or a result that is not finite.
    pub fn over(&self, other: &Estimate) -> Option<Estimate> {
        if other.mean == 0.0 {
            return None;
        }
        let (a, b) = (self.mean, other.mean);
        self.combine(other, a / b, |sa, sb| (sa / b).hypot(a * sb / (b * b)))
    }

    /// An estimate of `mean` whose spread is `spread` of the two operands' spreads.
    fn combine(
        &self,
        other: &Estimate,
        mean: f64,
        spread: impl Fn(f64, f64) -> f64,
    ) -> Option<Self> {
        let half = |e: &Estimate| (e.ci_hi - e.mean).max(e.mean - e.ci_lo).max(0.0);
        let hw = spread(half(self), half(other));
        let n = match (self.n, other.n) {
            (0, n) | (n, 0) => n,
            (x, y) => x.min(y),
        };
        let e = Estimate {
            mean,
            sd: spread(self.sd, other.sd),
            n,
            ci_lo: mean - hw,
            ci_hi: mean + hw,
        };
        [e.mean, e.sd, e.ci_lo, e.ci_hi]
            .iter()
            .all(|v| v.is_finite())
            .then_some(e)
    }

    /// An analytic value: no runs, no spread.
    pub fn exact(v: f64) -> Self {
        Estimate {
            mean: v,
            sd: 0.0,
            n: 0,
            ci_lo: v,
            ci_hi: v,
        }
    }

    /// The same estimate when its `n` runs are `n` distinct members of a finite population of
    /// `population` whose every member gives one fixed value (deterministic runs, e.g. every
    /// loss site of one topology): the interval of the mean narrows by the finite-population
    /// correction `sqrt((N − n)/(N − 1))`, to the mean itself when every member was run. An
    /// analytic value, one run, or a population no larger than one is returned unchanged.
    pub fn of_finite_population(self, population: usize) -> Self {
        let (n, big_n) = (self.n, population.max(self.n));
        if n < 2 || big_n < 2 {
            return self;
        }
        let f = ((big_n - n) as f64 / (big_n - 1) as f64).sqrt();
        Estimate {
            ci_lo: self.mean - (self.mean - self.ci_lo) * f,
            ci_hi: self.mean + (self.ci_hi - self.mean) * f,
            ..self
        }
    }

    /// Mean, sample SD and 95 % CI of the mean of `samples` (one value per run).
    /// Returns `None` for an empty slice or any non-finite sample.
    pub fn from_samples(samples: &[f64]) -> Option<Self> {
        let n = samples.len();
        if n == 0 || samples.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mean = samples.iter().sum::<f64>() / n as f64;
        let sd = if n > 1 {
            let ss: f64 = samples.iter().map(|v| (v - mean) * (v - mean)).sum();
            (ss / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let half = if n > 1 {
            t975(n - 1) * sd / (n as f64).sqrt()
        } else {
            0.0
        };
        Some(Estimate {
            mean,
            sd,
            n,
            ci_lo: mean - half,
            ci_hi: mean + half,
        })
    }

    /// Whether this is an analytic value rather than a measurement.
    pub fn is_exact(&self) -> bool {
        self.n == 0
    }

    /// Half-width of the confidence interval.
    pub fn half_width(&self) -> f64 {
        (self.ci_hi - self.ci_lo) / 2.0
    }
}

/// The largest runs factor [`runs_factor_to_resolve`] looks for.
pub const MAX_RUNS_FACTOR: u32 = 1000;

/// The smallest factor k (2 ≤ k ≤ [`MAX_RUNS_FACTOR`]) such that, with k times the runs of
/// every estimate in `ests` and each keeping its mean and SD, their 95 % half-widths sum to
/// less than `gap`: how many times the runs would decide a comparison whose intervals now
/// straddle (`gap`: the distance from a mean to the edge it is judged against, or between two
/// means). An analytic value or a single run adds no half-width. `None` when no such k exists:
/// a gap of zero or less, or a spread too wide for [`MAX_RUNS_FACTOR`] times the runs.
///
/// A projection, not a promise: the means and SDs of more runs move. An interval narrowed by
/// [`Estimate::of_finite_population`] is projected from its SD alone, so k can come out larger
/// than needed, never smaller.
pub fn runs_factor_to_resolve(ests: &[&Estimate], gap: f64) -> Option<u32> {
    if gap.is_nan() || gap <= 0.0 {
        return None;
    }
    let half = |e: &Estimate, k: u32| {
        if e.n < 2 {
            return 0.0;
        }
        let n = e.n * k as usize;
        t975(n - 1) * e.sd / (n as f64).sqrt()
    };
    (2..=MAX_RUNS_FACTOR).find(|&k| ests.iter().map(|e| half(e, k)).sum::<f64>() < gap)
}

/// The 0.975 quantile of Student's t distribution with `df` degrees of freedom (table for
/// df ≤ 30, then interpolation in 1/df towards the normal quantile 1.95996).
pub fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        d if d <= 30 => TABLE.get(d - 1).copied().unwrap_or(1.96),
        d => {
            // Linear in 1/df between df = 30 (2.042) and df = ∞ (1.95996); within 0.003 of
            // the true quantile for every df > 30.
            let z = 1.959_964;
            z + (2.042 - z) * 30.0 / d as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fully_run_population_has_no_interval_and_a_sample_of_it_a_narrower_one() {
        let e = Estimate::from_samples(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        let all = e.of_finite_population(4);
        assert_eq!((all.ci_lo, all.ci_hi, all.sd, all.n), (2.5, 2.5, e.sd, 4));
        let part = e.of_finite_population(16);
        let f = (12.0f64 / 15.0).sqrt();
        assert!((part.ci_hi - 2.5 - (e.ci_hi - 2.5) * f).abs() < 1e-12);
        assert!(part.ci_lo > e.ci_lo && part.ci_hi < e.ci_hi);
        // Nothing to correct: one run, an analytic value.
        let one = Estimate::from_samples(&[3.0]).unwrap();
        assert_eq!(one.of_finite_population(10), one);
        assert_eq!(
            Estimate::exact(2.0).of_finite_population(10),
            Estimate::exact(2.0)
        );
    }

    #[test]
    fn the_runs_factor_to_resolve_is_the_first_whose_half_widths_fit_the_gap() {
        // Ten runs of SD 1: half-width 2.262 / sqrt(10) = 0.715 at k = 1.
        let e = Estimate::from_samples(&[0., 1., 2., 3., 4., 5., 6., 7., 8., 9.])
            .map(|e| Estimate { sd: 1.0, ..e })
            .unwrap();
        let half = |n: usize| t975(n - 1) / (n as f64).sqrt();
        let k = runs_factor_to_resolve(&[&e], 0.3).unwrap();
        assert!(
            half(10 * k as usize) < 0.3 && half(10 * (k as usize - 1)) >= 0.3,
            "{k}"
        );
        assert_eq!(k, 5);
        // Two estimates share the gap: more runs than one needs alone.
        let two = runs_factor_to_resolve(&[&e, &e], 0.6).unwrap();
        assert!(two >= k && 2.0 * half(10 * two as usize) < 0.6);
        // An analytic value adds nothing; a mean on the edge or a hopeless spread: none.
        assert_eq!(
            runs_factor_to_resolve(&[&e, &Estimate::exact(4.0)], 0.3),
            Some(k)
        );
        assert_eq!(runs_factor_to_resolve(&[&e], 0.0), None);
        assert_eq!(runs_factor_to_resolve(&[&e], f64::NAN), None);
        assert_eq!(runs_factor_to_resolve(&[&e], 1e-4), None);
        assert_eq!(runs_factor_to_resolve(&[&e], 1.0), Some(2));
    }

    #[test]
    fn known_sample() {
        let e = Estimate::from_samples(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!((e.mean - 5.0).abs() < 1e-12);
        // sample variance = 32 / 7
        assert!((e.sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        let half = 2.365 * e.sd / 8f64.sqrt();
        assert!((e.ci_hi - 5.0 - half).abs() < 1e-12);
        assert!((5.0 - e.ci_lo - half).abs() < 1e-12);
        assert_eq!(e.n, 8);
    }

    #[test]
    fn single_run_and_exact_have_no_spread() {
        let e = Estimate::from_samples(&[3.5]).unwrap();
        assert_eq!((e.sd, e.ci_lo, e.ci_hi, e.n), (0.0, 3.5, 3.5, 1));
        let x = Estimate::exact(24.719);
        assert!(x.is_exact());
        assert_eq!(x.half_width(), 0.0);
    }

    #[test]
    fn empty_or_nan_is_refused() {
        assert!(Estimate::from_samples(&[]).is_none());
        assert!(Estimate::from_samples(&[1.0, f64::NAN]).is_none());
    }

    #[test]
    fn t_quantiles_decrease_towards_normal() {
        let mut last = f64::INFINITY;
        for df in 1..500 {
            let t = t975(df);
            assert!(t < last, "df {df}");
            assert!(t > 1.959);
            last = t;
        }
        assert!((t975(60) - 2.000).abs() < 0.003);
        assert!((t975(120) - 1.980).abs() < 0.003);
    }
}
