//! Sequential sampling: a point gets more runs only while a claim on it is undecided.
//!
//! A study runs its points through [`RunCtx::sample`](crate::RunCtx::sample), saying for each
//! point which measures it feeds ([`Feed`]). The runner runs the study, judges its claims, and
//! while some claim is inconclusive, and by its own means and spreads the runs left under the
//! cap might decide it ([`REACH_SLACK`]), it runs the study again with the points that feed that
//! claim's measures at its straddling x values doubled in runs, up to [`Rounds::cap`] times the
//! mode's runs. A claim whose mean sits on its edge gets no more runs. Runs already made are kept
//! (by call, point and run index), so a round costs only its new runs. Everything is decided from
//! the results alone, so the outcome is a pure function of the study's seeds, whatever the thread
//! count.
//!
//! Stopping on a verdict biases intervals slightly towards deciding (optional stopping); the
//! cap bounds it, and the report says how many runs each point got.

use crate::claim::{ClaimResult, Predicate};
use crate::measure::same_x;
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A measure a point feeds: its name (a `*` stands for any text), at `x` (`None`: at every
/// x, and the scalars derived from the series).
#[derive(Debug, Clone, PartialEq)]
pub struct Feed {
    /// The measure's name; `*` matches any run of characters.
    pub name: String,
    /// The sweep value the point gives the measure, or `None` for all of them.
    pub x: Option<f64>,
}

impl Feed {
    /// The point feeds `name` at `x`.
    pub fn at(name: impl Into<String>, x: f64) -> Self {
        Feed {
            name: name.into(),
            x: Some(x),
        }
    }

    /// The point feeds `name` whatever its x (a scalar, or a value derived from the series).
    pub fn all(name: impl Into<String>) -> Self {
        Feed {
            name: name.into(),
            x: None,
        }
    }

    /// Whether this feed reaches the undecided point `(name, x)`.
    fn reaches(&self, (name, x): &(String, Option<f64>)) -> bool {
        glob(&self.name, name)
            && match (self.x, x) {
                (Some(a), Some(b)) => same_x(a, *b),
                _ => true,
            }
    }
}

/// `pattern` (with `*` for any run of characters) matches all of `text`.
fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for p in middle {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// How far beyond what the cap leaves a claim's projected runs factor may be for it still to
/// get more runs. Measured (full mode, 2026-11-28): with 1, 7 claims that a round of more runs
/// decides stayed inconclusive (339 decided, 9 min 49 s); with no limit, lms and prmp spent
/// more than 2 minutes on claims whose means sit on their edge (346 decided, 13 min 23 s).
pub const REACH_SLACK: u32 = 4;

/// An undecided point: a measure's name and the x where its interval straddles.
pub type Undecided = (String, Option<f64>);

/// The share of a study's runs so far that one round may add for claims beyond the reach
/// ([`Rounds::choose`]): a projection from a few runs is rough, and where the points an
/// inconclusive claim needs are few, more runs cost little. Measured (full mode, 2026-11-28):
/// with no reach limit, seed 000's Min RT columns, whose projections from 10 runs said
/// 100–312 times, were decided at 40 runs.
pub const CHEAP_SHARE: u64 = 16;

/// The points an inconclusive claim needs more runs on: each measure it names (its subject,
/// an operand, an ordering's members) at each x where its intervals straddle.
fn points_of(c: &ClaimResult) -> Vec<Undecided> {
    let mut names: Vec<&str> = c.spec.measure.iter().map(String::as_str).collect();
    if let Predicate::Order { measures, .. } = &c.spec.predicate {
        names.extend(measures.iter().map(String::as_str));
    }
    names.extend(c.spec.predicate.operand_measure());
    let xs: Vec<Option<f64>> = if c.undecided_at.is_empty() {
        vec![None]
    } else {
        c.undecided_at.clone()
    };
    let mut out = Vec::new();
    for n in names {
        for x in &xs {
            out.push((n.to_string(), *x));
        }
    }
    out
}

fn inconclusive(c: &ClaimResult) -> bool {
    !c.passed() && !c.failed()
}

/// The measures the inconclusive claims among `claims` need more runs on (`points_of`).
/// Only claims that `reach` more times the runs could decide, by the projection from this
/// round's means and spreads ([`ClaimResult::runs_factor_to_decide`]), count: a mean on the
/// edge, which no number of runs within the cap would decide, gets no more runs.
pub fn undecided(claims: &[ClaimResult], reach: u32) -> Vec<Undecided> {
    claims
        .iter()
        .filter(|c| inconclusive(c) && c.runs_factor_to_decide.is_some_and(|k| k <= reach))
        .flat_map(points_of)
        .collect()
}

/// A run: the `sample` call within the study's run, the point's index in it, the run index.
type RunKey = (usize, usize, u64);

/// What one `sample` call of the last round ran: each point's feeds and doublings.
struct Call {
    feeds: Vec<Vec<Feed>>,
    doublings: Vec<u32>,
    base: u64,
}

/// The rounds of one study's sequential sampling: the undecided points of each round so far,
/// the runs already made, and the cap.
pub struct Rounds {
    /// The most runs a point gets, as a multiple of its mode's runs (a power of two).
    pub cap: u32,
    hot: Vec<Vec<Undecided>>,
    cache: Mutex<HashMap<RunKey, Arc<dyn Any + Send + Sync>>>,
    keyed: Mutex<HashMap<String, Arc<dyn Any + Send + Sync>>>,
    last: Mutex<Vec<Call>>,
}

impl Rounds {
    /// No rounds yet; points get at most `cap` times their mode's runs (rounded down to a
    /// power of two, at least 1).
    pub fn new(cap: u32) -> Self {
        let cap = cap.max(1);
        Rounds {
            cap: 1 << (31 - cap.leading_zeros()),
            hot: Vec::new(),
            cache: Mutex::new(HashMap::new()),
            keyed: Mutex::new(HashMap::new()),
            last: Mutex::new(Vec::new()),
        }
    }

    /// How many rounds have been run so far (0 before the first).
    pub fn rounds(&self) -> usize {
        self.hot.len() + 1
    }

    /// The largest projected runs factor ([`ClaimResult::runs_factor_to_decide`]) of a claim
    /// that still gets more runs: [`REACH_SLACK`] times what the cap leaves (the cap over the
    /// doublings so far), since a projection from a few runs is rough (the means move).
    pub fn reach(&self) -> u32 {
        (self.cap >> self.hot.len().min(31)).saturating_mul(REACH_SLACK)
    }

    /// How many times a point with `feeds` has its runs doubled: once per earlier round
    /// whose undecided points it feeds, at most log2(cap) times.
    fn doublings(&self, feeds: &[Feed]) -> u32 {
        let max = self.cap.trailing_zeros();
        let n = self
            .hot
            .iter()
            .filter(|hot| hot.iter().any(|u| feeds.iter().any(|f| f.reaches(u))))
            .count();
        (n as u32).min(max)
    }

    /// The undecided points of the next round: those of the claims within [`Self::reach`]
    /// ([`undecided`]), then, claim by claim, those of any other inconclusive claim while
    /// the runs they add stay within 1/[`CHEAP_SHARE`] of the runs made so far.
    pub fn choose(&self, claims: &[ClaimResult]) -> Vec<Undecided> {
        let mut hot = undecided(claims, self.reach());
        let (base_new, total) = self.new_runs(&hot);
        let budget = total / CHEAP_SHARE;
        let reach = self.reach();
        for c in claims
            .iter()
            .filter(|c| inconclusive(c) && c.runs_factor_to_decide.is_none_or(|k| k > reach))
        {
            let mut with = hot.clone();
            with.extend(points_of(c));
            let (new, _) = self.new_runs(&with);
            if new > base_new && new - base_new <= budget {
                hot = with;
            }
        }
        hot
    }

    /// The runs a round doubling the points that feed `hot` would add, and the runs made so
    /// far (by the last round's calls).
    fn new_runs(&self, hot: &[Undecided]) -> (u64, u64) {
        let max = self.cap.trailing_zeros();
        let Ok(calls) = self.last.lock() else {
            return (0, 0);
        };
        let (mut new, mut total) = (0u64, 0u64);
        for c in calls.iter() {
            for (f, &d) in c.feeds.iter().zip(&c.doublings) {
                let runs = c.base << d;
                total += runs;
                if d < max && hot.iter().any(|u| f.iter().any(|f| f.reaches(u))) {
                    new += runs;
                }
            }
        }
        (new, total)
    }

    /// Start another round that doubles the runs of the points feeding `hot`, if one of them
    /// can still grow; false (and nothing changes) when none can.
    pub fn next_round(&mut self, hot: Vec<Undecided>) -> bool {
        let max = self.cap.trailing_zeros();
        let grows = self.last.lock().is_ok_and(|calls| {
            calls.iter().any(|c| {
                c.feeds
                    .iter()
                    .zip(&c.doublings)
                    .any(|(f, &d)| d < max && hot.iter().any(|u| f.iter().any(|f| f.reaches(u))))
            })
        });
        if grows {
            self.hot.push(hot);
            if let Ok(mut last) = self.last.lock() {
                last.clear();
            }
        }
        grows
    }

    /// What sequential sampling did, for the report's notes: the rounds, and how many points
    /// got more runs than their mode's (`None` when the study samples nothing).
    pub fn note(&self) -> Option<String> {
        let calls = self.last.lock().ok()?;
        let points: usize = calls.iter().map(|c| c.doublings.len()).sum();
        if points == 0 {
            return None;
        }
        let mut by = vec![0usize; self.cap.trailing_zeros() as usize + 1];
        for &d in calls.iter().flat_map(|c| &c.doublings) {
            by[d as usize] += 1;
        }
        let more: Vec<String> = by
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(_, &n)| n > 0)
            .map(|(d, n)| format!("{n} at {}×", 1u32 << d))
            .collect();
        Some(format!(
            "Sequential sampling: {} round{}; of {points} points, {} kept the mode's runs{} \
             (more runs only where a claim was inconclusive, up to {}× the mode's runs).",
            self.rounds(),
            if self.rounds() == 1 { "" } else { "s" },
            by[0],
            if more.is_empty() {
                String::new()
            } else {
                format!(", {}", more.join(", "))
            },
            self.cap
        ))
    }

    /// Runs per point for one call: `base` times 2^doublings for each point.
    pub(crate) fn plan(&self, call: usize, feeds: Vec<Vec<Feed>>, base: u64) -> Vec<u64> {
        let doublings: Vec<u32> = feeds.iter().map(|f| self.doublings(f)).collect();
        let runs = doublings.iter().map(|&d| base << d).collect();
        if let Ok(mut last) = self.last.lock() {
            if last.len() <= call {
                last.resize_with(call + 1, || Call {
                    feeds: Vec::new(),
                    doublings: Vec::new(),
                    base: 0,
                });
            }
            last[call] = Call {
                feeds,
                doublings,
                base,
            };
        }
        runs
    }

    /// A run already made in an earlier round.
    pub(crate) fn cached<R: Clone + 'static>(&self, key: RunKey) -> Option<R> {
        let cache = self.cache.lock().ok()?;
        cache.get(&key)?.downcast_ref::<R>().cloned()
    }

    /// A result kept under a study's own key in an earlier round.
    pub(crate) fn cached_by_key<R: Clone + 'static>(&self, key: &str) -> Option<R> {
        let cache = self.keyed.lock().ok()?;
        cache.get(key)?.downcast_ref::<R>().cloned()
    }

    /// Keep a result under a study's own key for later rounds.
    pub(crate) fn keep_by_key<R: Clone + Send + Sync + 'static>(&self, key: String, r: &R) {
        if let Ok(mut cache) = self.keyed.lock() {
            cache.insert(key, Arc::new(r.clone()));
        }
    }

    /// Keep a run for later rounds.
    pub(crate) fn keep<R: Clone + Send + Sync + 'static>(&self, key: RunKey, r: &R) {
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(key, Arc::new(r.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob("win.*.cp", "win.rho.cp"));
        assert!(glob("win.*.cp", "win.peak_window.cp"));
        assert!(!glob("win.*.cp", "win.rho.csp.x"));
        assert!(!glob("win.*.cp", "rf.rho.cp"));
        assert!(glob("*", "anything"));
        assert!(glob("exact", "exact"));
        assert!(!glob("exact", "exactly"));
        assert!(glob("a*b*c", "aXbYc"));
        assert!(!glob("a*b*c", "aXcYb"));
    }

    #[test]
    fn points_double_only_while_they_feed_an_undecided_point_up_to_the_cap() {
        let mut r = Rounds::new(4);
        let feeds = |x: f64| vec![Feed::at("win.*.cp", x)];
        // Round 1: every point gets the base runs.
        assert_eq!(r.plan(0, vec![feeds(1.0), feeds(2.0)], 5), vec![5, 5]);
        // x = 2 undecided: only it doubles.
        assert!(r.next_round(vec![("win.rho.cp".into(), Some(2.0))]));
        assert_eq!(r.plan(0, vec![feeds(1.0), feeds(2.0)], 5), vec![5, 10]);
        // Still undecided: doubles again to the cap (4 × 5).
        assert!(r.next_round(vec![("win.rho.cp".into(), Some(2.0))]));
        assert_eq!(r.plan(0, vec![feeds(1.0), feeds(2.0)], 5), vec![5, 20]);
        // At the cap nothing can grow: no further round.
        assert!(!r.next_round(vec![("win.rho.cp".into(), Some(2.0))]));
        // An undecided scalar derived from the series reaches every point of it.
        assert!(r.next_round(vec![("win.peak_window.cp".into(), None)]));
        assert_eq!(r.plan(0, vec![feeds(1.0), feeds(2.0)], 5), vec![10, 20]);
        // A measure no point feeds grows nothing.
        assert!(!r.next_round(vec![("rf.rho.cp".into(), None)]));
        assert_eq!(r.rounds(), 4);
    }

    #[test]
    fn runs_are_kept_between_rounds_by_call_point_and_index() {
        let r = Rounds::new(8);
        assert_eq!(r.cap, 8);
        assert_eq!(Rounds::new(6).cap, 4);
        r.keep((0, 1, 3), &42u64);
        assert_eq!(r.cached::<u64>((0, 1, 3)), Some(42));
        assert_eq!(r.cached::<u64>((0, 1, 4)), None);
        // The wrong type is a miss, not a panic.
        assert_eq!(r.cached::<String>((0, 1, 3)), None);
    }
}
