//! The study toolkit: a sweep of (family, x, seed) jobs, per-point aggregation across seeds
//! into named series, and the small helpers every study needs (a summary that refuses zero
//! runs, a list of sweep values for the setup table; the means of a recorded series for a
//! bound curve are [`crate::measure::means`]). A study file then reads as its scenario (what one
//! run does), its sweep (which runs) and its measures (what is recorded from them).

use crate::measure::Measures;
use crate::sampling::Feed;
use crate::stats::Estimate;
use crate::study::{RunCtx, StudyError};
use rmcast_proto::rng::mix64;
use std::collections::BTreeMap;

/// A measured curve: (x, estimate across runs), sorted by x when recorded.
pub type Series = Vec<(f64, Estimate)>;

/// Mean, SD and 95 % CI of per-run values; an error (not a silent zero) when there are no
/// runs or a value is not finite.
pub fn est(v: &[f64]) -> Result<Estimate, StudyError> {
    Estimate::from_samples(v)
        .ok_or_else(|| StudyError::Run("a summary over zero runs or non-finite values".into()))
}

/// [`est`] of one value read off each run.
pub fn est_of<R>(runs: &[R], f: impl Fn(&R) -> f64) -> Result<Estimate, StudyError> {
    est(&runs.iter().map(f).collect::<Vec<_>>())
}

/// The seed of run `k` at sweep point `x` of the family salted `salt`: derived from the point
/// alone, so results do not depend on the order the runs are made in.
pub fn point_seed(salt: u64, x: f64, k: u64) -> u64 {
    mix64(mix64(salt) ^ x.to_bits() ^ k)
}

/// One run of a sweep: which family and point it belongs to, and what to run.
#[derive(Debug, Clone)]
pub struct Job<S> {
    /// Index of the family (curve) in the study's list.
    pub family: usize,
    /// The sweep coordinate.
    pub x: f64,
    /// What one run needs (a run spec with its seed).
    pub spec: S,
}

/// The jobs of a sweep, in the order they were added (families, then x, then seed).
#[derive(Debug, Clone)]
pub struct Sweep<S> {
    /// Every run, in the order added.
    pub jobs: Vec<Job<S>>,
}

impl<S> Default for Sweep<S> {
    fn default() -> Self {
        Sweep { jobs: Vec::new() }
    }
}

impl<S> Sweep<S> {
    /// An empty sweep.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add `seeds` runs at each of `xs` for family `family`; `make(x, k)` builds run `k` at `x`.
    pub fn family(
        &mut self,
        family: usize,
        xs: &[f64],
        seeds: u64,
        mut make: impl FnMut(f64, u64) -> S,
    ) {
        for &x in xs {
            for k in 0..seeds {
                self.jobs.push(Job {
                    family,
                    x,
                    spec: make(x, k),
                });
            }
        }
    }

    /// Run `families` through sequential sampling ([`RunCtx::sample_sized`]): family `i`
    /// has the points and runs per point `runs(f)` gives; run `k` at `x` is
    /// `make(i, f, x, k)` (its seed from the point and `k` alone), and gains runs while a
    /// claim on a measure `feeds(f, x)` names is undecided. The sweep comes back with its
    /// jobs grouped by family, then x, then run, and the results in the same order, so
    /// [`Sweep::runs_at`] works as for a sweep built by hand. The largest runs (by `size`)
    /// start first.
    #[allow(clippy::too_many_arguments)]
    pub fn sampled<'f, F, R>(
        ctx: &RunCtx<'_>,
        families: &'f [F],
        runs: impl Fn(&'f F) -> (&'f [f64], u64),
        make: impl Fn(usize, &F, f64, u64) -> S + Sync + Send,
        feeds: impl Fn(&F, f64) -> Vec<Feed>,
        size: impl Fn(&S) -> u64,
        run: impl Fn(&S) -> Result<R, String> + Sync + Send,
    ) -> Result<(Self, Vec<R>), StudyError>
    where
        F: Sync,
        S: Clone + Send + Sync + 'static,
        R: Clone + Send + Sync + 'static,
    {
        // Points with the same runs per point are sampled together (one call per distinct
        // count keeps each point's runs its own family's).
        let mut counts: Vec<u64> = families.iter().map(|f| runs(f).1).collect();
        counts.sort_unstable();
        counts.dedup();
        let mut sweep = Sweep::new();
        let mut results = Vec::new();
        // (family, x, its runs).
        type Done<S, R> = Vec<(usize, f64, Vec<(S, R)>)>;
        let mut done: Done<S, R> = Vec::new();
        for n in counts {
            let points: Vec<(usize, f64)> = families
                .iter()
                .enumerate()
                .filter(|(_, f)| runs(f).1 == n)
                .flat_map(|(i, f)| runs(f).0.iter().map(move |&x| (i, x)))
                .collect();
            let got = ctx.sample_sized(
                &points,
                n,
                |&(i, x)| feeds(&families[i], x),
                |&(i, x)| size(&make(i, &families[i], x, 0)),
                |&(i, x), k| {
                    let s = make(i, &families[i], x, k);
                    run(&s).map(|r| (s, r))
                },
            )?;
            done.extend(points.into_iter().zip(got).map(|((i, x), r)| (i, x, r)));
        }
        // Family order, then the family's own x order.
        for (i, f) in families.iter().enumerate() {
            for &x in runs(f).0 {
                if let Some(pos) = done.iter().position(|(j, y, _)| *j == i && *y == x) {
                    let (_, _, rs) = done.swap_remove(pos);
                    for (spec, r) in rs {
                        sweep.jobs.push(Job { family: i, x, spec });
                        results.push(r);
                    }
                }
            }
        }
        Ok((sweep, results))
    }

    /// How many runs.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    /// Whether it has no runs.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// The specs, in job order (what [`crate::RunCtx::try_map`] runs).
    pub fn specs(&self) -> Vec<&S> {
        self.jobs.iter().map(|j| &j.spec).collect()
    }

    /// The runs of `family` at `x`, with their results (`results` in job order).
    pub fn runs_at<'a, R>(
        &'a self,
        results: &'a [R],
        family: usize,
        x: f64,
    ) -> Vec<(&'a S, &'a R)> {
        self.jobs
            .iter()
            .zip(results)
            .filter(|(j, _)| j.family == family && j.x == x)
            .map(|(j, r)| (&j.spec, r))
            .collect()
    }
}

/// A per-run value a study records: its name and how to read it off one run's result.
pub type Column<R> = (&'static str, fn(&R) -> f64);

/// Per-point summaries across seeds, by measure name; becomes a study's series measures.
#[derive(Debug, Clone, Default)]
pub struct Agg {
    pts: BTreeMap<String, Series>,
}

impl Agg {
    /// No series yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add the point `(x, e)` to the series `name`.
    pub fn push(&mut self, name: String, x: f64, e: Estimate) {
        self.pts.entry(name).or_default().push((x, e));
    }

    /// Add the summary of per-run `samples` at `x` to the series `name`.
    pub fn samples(&mut self, name: String, x: f64, samples: &[f64]) -> Result<(), StudyError> {
        self.push(name, x, est(samples)?);
        Ok(())
    }

    /// For every column, the summary across `runs` at `x`, recorded under `name(column)`.
    pub fn columns<R>(
        &mut self,
        runs: &[&R],
        x: f64,
        cols: &[Column<R>],
        name: impl Fn(&str) -> String,
    ) -> Result<(), StudyError> {
        for (col, get) in cols {
            let v: Vec<f64> = runs.iter().map(|r| get(r)).collect();
            self.samples(name(col), x, &v)?;
        }
        Ok(())
    }

    /// The series `name` (empty when nothing was recorded under it).
    pub fn get(&self, name: &str) -> Series {
        self.pts.get(name).cloned().unwrap_or_default()
    }

    /// Every series, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Series)> {
        self.pts.iter()
    }

    /// Record every series in `m`, with the (unit, x label) `unit_of` gives its name.
    pub fn record(&self, m: &mut Measures, unit_of: impl Fn(&str) -> (&'static str, &'static str)) {
        for (name, pts) in &self.pts {
            let (unit, xl) = unit_of(name);
            m.series(name.clone(), unit, xl, pts.clone());
        }
    }
}

/// A series for a note, `x: mean ± sd; …`, each point followed by ` [<label> <value>]` where
/// `paper` has a value at the same x.
pub fn fmt_series(s: &Series, label: &str, paper: &[(f64, f64)]) -> String {
    use crate::claim::fmt_num;
    s.iter()
        .map(|(x, e)| {
            let t = paper
                .iter()
                .find(|q| q.0 == *x)
                .map(|q| format!(" [{label} {}]", fmt_num(q.1)))
                .unwrap_or_default();
            format!(
                "{}: {} ± {}{t}",
                fmt_num(*x),
                fmt_num(e.mean),
                fmt_num(e.sd)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Sweep values for a setup table: `5, 10, 20`.
pub fn join<T: std::fmt::Display>(v: &[T]) -> String {
    v.iter()
        .map(|x| format!("{x}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::means;

    #[test]
    fn sweep_groups_runs_by_family_and_point_in_job_order() {
        let mut s = Sweep::new();
        s.family(0, &[1.0, 2.0], 2, |x, k| (x, k));
        s.family(1, &[1.0], 3, |x, k| (x, k + 10));
        assert_eq!(s.len(), 7);
        let results: Vec<u64> = (0..7).collect();
        let at = s.runs_at(&results, 0, 2.0);
        assert_eq!(at, vec![(&(2.0, 0), &2), (&(2.0, 1), &3)]);
        assert_eq!(s.runs_at(&results, 1, 1.0).len(), 3);
        assert!(s.runs_at(&results, 1, 2.0).is_empty());
    }

    #[test]
    fn seeds_depend_on_the_point_only() {
        assert_eq!(point_seed(7, 2.0, 1), point_seed(7, 2.0, 1));
        assert_ne!(point_seed(7, 2.0, 1), point_seed(7, 2.0, 2));
        assert_ne!(point_seed(7, 2.0, 1), point_seed(8, 2.0, 1));
    }

    #[test]
    fn agg_records_series_with_units_and_refuses_empty_samples() {
        let mut a = Agg::new();
        a.samples("b.y".into(), 2.0, &[1.0, 3.0]).unwrap();
        a.push("b.y".into(), 1.0, Estimate::exact(5.0));
        assert!(a.samples("b.z".into(), 1.0, &[]).is_err());
        let cols: [Column<(f64, f64)>; 2] = [("u", |r| r.0), ("v", |r| r.1)];
        a.columns(&[&(1.0, 2.0), &(3.0, 4.0)], 7.0, &cols, |c| {
            format!("c.{c}")
        })
        .unwrap();
        assert_eq!(a.get("c.v")[0].1.mean, 3.0);
        let mut m = Measures::new();
        a.record(&mut m, |_| ("ms", "n"));
        assert_eq!(m.get("b.y").unwrap().unit(), "ms");
        assert_eq!(means(&m, "b.y"), vec![(1.0, 5.0), (2.0, 2.0)]);
        assert!(means(&m, "nope").is_empty());
        assert_eq!(join(&[5.0, 10.5]), "5, 10.5");
        assert_eq!(
            fmt_series(&a.get("b.y"), "paper", &[(2.0, 2.5)]),
            "2: 2 ± 1.414 [paper 2.5]; 1: 5 ± 0"
        );
    }
}
