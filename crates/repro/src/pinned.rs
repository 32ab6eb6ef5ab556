//! Expected failures: the claims rmcast is known not to reproduce, pinned by id with the
//! reason, so that `rmcast repro --check` (and CI) fails on every *other* failure.
//!
//! The list lives in `scenarios/repro/pinned.toml` (built into the binary; `--pinned FILE`
//! reads another):
//!
//! ```toml
//! [[pin]]
//! id = "lms.fig5_5.mean_decreases"
//! modes = ["quick", "full"]        # the modes in which it is known to fail (default: both)
//! reason = "static repliers: ..."  # why, in one or two sentences
//! ```
//!
//! The gate ([`Pins::gate`]) sorts a report's claims:
//!
//! * a failed claim that is not pinned for the report's mode is **unexpected** (the gate fails);
//! * a claim that could not be evaluated (a missing measure, no points, a study that did not
//!   run) is unexpected even when pinned — a missing measure is never a known result;
//! * a pinned claim that passed is listed as **now passing**, so the list shrinks (the gate
//!   does not fail on it: some claims sit close to their bound and flip with the seeds);
//! * pins, and the gate, are about the claim's **means**
//!   ([`crate::claim::ClaimResult::means_hold`]): the verdict a user reads also weighs each point's
//!   95 % interval (pass, fail or **inconclusive**, see [`crate::claim::Verdict`]), but an interval
//!   that widens or narrows with the run count must neither hide a regression nor unpin a known
//!   failure; the inconclusive claims are listed besides;
//! * a pinned id that names no claim of a study that ran is **unknown** (the gate fails: a
//!   renamed claim must not leave a stale pin behind).
//! * a pin may carry the claim's decisive value as a run measured it (`measured = { quick = …,
//!   full = … }`, written by `scripts/pin_values.py` from that run's `claims.json`, never by
//!   hand); a pinned claim whose value now lies more than [`DRIFT`] from it has **moved** (the
//!   gate fails): a known failure is only known at the size it was measured, and a
//!   simulation is a pure function of its seeds, so its value moves only when the code does.
//!   The message says re-record the value when the move is intended.
//! * a pin covering a claim that has such a value (a simulation's or a formula's, not one on
//!   real sockets, whose values vary between runs) but carries none for the run's mode is
//!   **unrecorded** (the gate fails): a new pin is not finished until its value is recorded.

use crate::claim::{fmt_num, Verdict};
use crate::report::Report;
use crate::study::Sweeps;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};

/// The built-in list (`scenarios/repro/pinned.toml`).
pub const BUILTIN: &str = include_str!("../../../scenarios/repro/pinned.toml");

/// A pinned-list file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    /// Not TOML of the expected shape.
    #[error("pinned claims: {0}")]
    Toml(#[from] toml::de::Error),
    /// One id pinned twice.
    #[error("pinned claims: `{0}` is pinned twice")]
    Duplicate(String),
    /// A pin without a reason, or for no mode.
    #[error("pinned claims: `{0}` needs a non-empty reason and at least one mode")]
    Incomplete(String),
}

/// A run mode of `rmcast repro`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// `--quick`: reduced sweeps.
    Quick,
    /// The full sweeps.
    Full,
}

fn both() -> Vec<Mode> {
    vec![Mode::Quick, Mode::Full]
}

/// How far a pinned claim's value may move from the value recorded with its pin, relative
/// to the larger of the two, before the gate fails.
pub const DRIFT: f64 = 0.25;

/// A pinned claim's value at its decisive point as a run of each mode measured it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recorded {
    /// The value in quick mode.
    pub quick: Option<f64>,
    /// The value in full mode (extended mode too).
    pub full: Option<f64>,
}

impl Recorded {
    fn get(&self, mode: Mode) -> Option<f64> {
        match mode {
            Mode::Quick => self.quick,
            Mode::Full => self.full,
        }
    }
}

/// How far apart two values are, relative to the larger magnitude (0 when equal).
pub fn drift(a: f64, b: f64) -> f64 {
    if a == b {
        return 0.0;
    }
    (a - b).abs() / a.abs().max(b.abs())
}

/// One expected failure.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// The claim's id.
    pub id: String,
    /// The modes in which it is known to fail.
    #[serde(default = "both")]
    pub modes: Vec<Mode>,
    /// Why rmcast does not reproduce it.
    pub reason: String,
    /// The claim's value when it was pinned, per mode.
    #[serde(default)]
    pub measured: Recorded,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PinFile {
    #[serde(default)]
    pin: Vec<Pin>,
}

/// The pinned list, by claim id.
#[derive(Debug, Clone, Default)]
pub struct Pins {
    pins: BTreeMap<String, Pin>,
}

/// A claim the gate does not accept, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unexpected {
    /// The claim's id.
    pub id: String,
    /// The verdict's detail, and why the pin (if any) does not cover it.
    pub why: String,
}

/// The gate's verdict on one report.
#[derive(Debug, Clone, Default)]
pub struct Gate {
    /// Failed claims no pin covers, and claims that could not be evaluated.
    pub unexpected: Vec<Unexpected>,
    /// Failed claims pinned for this mode: (id, the pin's reason).
    pub expected: Vec<(String, String)>,
    /// Pinned claims that passed in this run.
    pub now_passing: Vec<String>,
    /// Inconclusive claims, pinned or not (they do not fail the gate).
    pub inconclusive: Vec<String>,
    /// Pinned ids naming no claim of the studies that ran.
    pub unknown: Vec<String>,
    /// Pinned claims whose value moved more than [`DRIFT`] from the one recorded with the pin.
    pub moved: Vec<Unexpected>,
    /// Pinned claims with a value in this run but none recorded for this mode: (id, value).
    pub unrecorded: Vec<(String, f64)>,
}

impl Gate {
    /// True when every failure was expected, every pin names a claim and every pinned value
    /// is recorded and held.
    pub fn passed(&self) -> bool {
        self.unexpected.is_empty()
            && self.unknown.is_empty()
            && self.moved.is_empty()
            && self.unrecorded.is_empty()
    }
}

impl Pins {
    /// Parse a pinned-list file.
    pub fn parse(text: &str) -> Result<Pins, PinError> {
        let file: PinFile = toml::from_str(text)?;
        let mut pins = BTreeMap::new();
        for p in file.pin {
            if p.reason.trim().is_empty() || p.modes.is_empty() {
                return Err(PinError::Incomplete(p.id));
            }
            if pins.contains_key(&p.id) {
                return Err(PinError::Duplicate(p.id));
            }
            pins.insert(p.id.clone(), p);
        }
        Ok(Pins { pins })
    }

    /// The built-in list.
    pub fn builtin() -> Result<Pins, PinError> {
        Pins::parse(BUILTIN)
    }

    /// The pin of `id`, if any.
    pub fn get(&self, id: &str) -> Option<&Pin> {
        self.pins.get(id)
    }

    /// Number of pins.
    pub fn len(&self) -> usize {
        self.pins.len()
    }

    /// True when nothing is pinned.
    pub fn is_empty(&self) -> bool {
        self.pins.is_empty()
    }

    /// Sort `report`'s claims into unexpected, expected and now-passing (see the module).
    pub fn gate(&self, report: &Report) -> Gate {
        // Extended mode runs every point of full mode: full mode's pins hold for it.
        let mode = match report.sweeps {
            Sweeps::Quick => Mode::Quick,
            Sweeps::Full | Sweeps::Extended => Mode::Full,
        };
        let mut gate = Gate::default();
        let mut seen = BTreeSet::new();
        for study in &report.studies {
            // A claim quick mode does not run (full mode only) is still a claim of its study.
            seen.extend(study.not_run.iter().map(String::as_str));
            for c in &study.claims {
                let id = c.spec.id.as_str();
                seen.insert(id);
                let pin = self.pins.get(id).filter(|p| p.modes.contains(&mode));
                // The pins are about the means (ClaimResult::means_hold); an inconclusive
                // verdict is listed besides.
                if c.verdict == Verdict::Inconclusive {
                    gate.inconclusive.push(id.to_string());
                }
                match (c.means_hold, pin) {
                    (true, Some(_)) => gate.now_passing.push(id.to_string()),
                    (true, None) => {}
                    (false, _) if !c.evaluated => gate.unexpected.push(Unexpected {
                        id: id.to_string(),
                        why: format!(
                            "{} (not evaluated: no pin covers a claim that cannot be evaluated)",
                            c.detail
                        ),
                    }),
                    (false, Some(p)) => gate.expected.push((id.to_string(), p.reason.clone())),
                    (false, None) => gate.unexpected.push(Unexpected {
                        id: id.to_string(),
                        why: c.detail.clone(),
                    }),
                }
                // A pin's recorded value against this run's (see the module doc).
                let Some(p) = pin else { continue };
                let now = c.measured.as_ref().map(|e| e.mean);
                let why = match (p.measured.get(mode), now) {
                    (None, Some(v)) => {
                        if c.evaluated && c.spec.tests != crate::claim::Tests::Network {
                            gate.unrecorded.push((id.to_string(), v));
                        }
                        None
                    }
                    (None, None) => None,
                    (Some(was), Some(now)) if drift(now, was) <= DRIFT => None,
                    (Some(was), Some(now)) => {
                        let at =
                            c.x.map(|x| format!(" at x = {}", fmt_num(x)))
                                .unwrap_or_default();
                        Some(format!(
                            "{}{at} now, {} when pinned ({:.0} % apart; a pin holds its value within {:.0} %)",
                            fmt_num(now),
                            fmt_num(was),
                            100.0 * drift(now, was),
                            100.0 * DRIFT
                        ))
                    }
                    (Some(was), None) => {
                        Some(format!("no value now, {} when pinned", fmt_num(was)))
                    }
                };
                if let Some(why) = why {
                    gate.moved.push(Unexpected {
                        id: id.to_string(),
                        why,
                    });
                }
            }
        }
        // A pin of a study that did not run this time is not checked; one of a study that
        // ran must name one of its claims.
        let ran: BTreeSet<&str> = report.studies.iter().map(|s| s.name.as_str()).collect();
        for id in self.pins.keys() {
            let study = id.split('.').next().unwrap_or("");
            if ran.contains(study) && !seen.contains(id.as_str()) {
                gate.unknown.push(id.clone());
            }
        }
        gate
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::{ClaimResult, ClaimSpec, Verdict};

    fn claim(id: &str, pass: bool, evaluated: bool) -> ClaimResult {
        let mut c = ClaimResult::not_evaluated(ClaimSpec::bare(id), "detail".into());
        c.verdict = if pass { Verdict::Pass } else { Verdict::Fail };
        c.means_hold = pass;
        c.evaluated = evaluated;
        c
    }

    fn report(quick: bool, claims: Vec<ClaimResult>) -> Report {
        Report::of_claims(Sweeps::from_quick(quick), 1, claims)
    }

    const PINS: &str = r#"
        [[pin]]
        id = "s.known"
        reason = "known"
        [[pin]]
        id = "s.quick_only"
        modes = ["quick"]
        reason = "few runs"
        [[pin]]
        id = "s.fixed"
        reason = "was broken"
        [[pin]]
        id = "other.x"
        reason = "a study that did not run"
    "#;

    #[test]
    fn a_pin_of_a_claim_quick_mode_does_not_run_is_not_unknown() {
        let pins = Pins::parse(PINS).unwrap();
        let claims = vec![
            claim("s.known", false, true),
            claim("s.quick_only", false, true),
            claim("s.fixed", false, true),
        ];
        let mut r = report(true, claims);
        assert!(pins.gate(&r).passed());
        // Without `s.fixed` in the report its pin names nothing ...
        r.studies[0].claims.pop();
        assert_eq!(pins.gate(&r).unknown, ["s.fixed"]);
        // ... unless the study lists it as a claim for full mode only.
        r.studies[0].not_run.push("s.fixed".into());
        let g = pins.gate(&r);
        assert!(g.unknown.is_empty() && g.passed(), "{g:?}");
    }

    #[test]
    fn unpinned_failures_and_unevaluated_claims_fail_the_gate() {
        let pins = Pins::parse(PINS).unwrap();
        let claims = vec![
            claim("s.known", false, true),
            claim("s.quick_only", false, true),
            claim("s.fixed", true, true),
            claim("s.new", false, true),
            claim("s.fine", true, true),
        ];
        let g = pins.gate(&report(true, claims.clone()));
        assert_eq!(
            g.expected.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
            ["s.known", "s.quick_only"]
        );
        assert_eq!(g.now_passing, ["s.fixed"]);
        assert_eq!(g.unexpected.len(), 1);
        assert_eq!(g.unexpected[0].id, "s.new");
        assert!(
            g.unknown.is_empty(),
            "pins of studies that did not run are not checked"
        );
        assert!(!g.passed());
        // In full mode the quick-only pin does not cover its claim.
        let g = pins.gate(&report(false, claims));
        assert_eq!(g.unexpected.len(), 2);
        assert_eq!(g.unexpected[0].id, "s.quick_only");
        // A pinned claim that could not be evaluated is never an expected failure.
        let g = pins.gate(&report(true, vec![claim("s.known", false, false)]));
        assert_eq!(g.unexpected.len(), 1);
        assert!(g.unexpected[0].why.contains("not evaluated"));
        // Only expected failures: the gate passes; a pin naming no claim of `s` fails it.
        let g = pins.gate(&report(
            true,
            vec![
                claim("s.known", false, true),
                claim("s.quick_only", false, true),
                claim("s.fixed", true, true),
            ],
        ));
        assert!(g.passed(), "{g:?}");
        let g = pins.gate(&report(true, vec![claim("s.known", false, true)]));
        assert_eq!(g.unknown, ["s.fixed", "s.quick_only"]);
        assert!(!g.passed());
    }

    fn measured(mut c: ClaimResult, x: f64, mean: f64) -> ClaimResult {
        c.x = Some(x);
        c.measured = Some(crate::stats::Estimate::exact(mean));
        c
    }

    #[test]
    fn a_pinned_value_that_moves_fails_the_gate() {
        let pins = Pins::parse(
            r#"
            [[pin]]
            id = "s.known"
            reason = "known"
            measured = { quick = 1.7, full = 1.9 }
            [[pin]]
            id = "s.fixed"
            modes = ["quick"]
            reason = "near its bound"
            measured = { quick = 0.5 }
            "#,
        )
        .unwrap();
        let run = |quick, known: f64, fixed: f64, fixed_passes| {
            pins.gate(&report(
                quick,
                vec![
                    measured(claim("s.known", false, true), 1.0, known),
                    measured(claim("s.fixed", fixed_passes, true), 2.0, fixed),
                ],
            ))
        };
        // Within DRIFT of the recorded values, passing or not: the gate passes.
        let g = run(true, 1.7 * 0.8, 0.55, true);
        assert!(g.passed() && g.now_passing == ["s.fixed"], "{g:?}");
        // A known failure that grew (or shrank) beyond DRIFT has moved.
        let g = run(true, 1.136, 0.5, false);
        assert!(!g.passed());
        assert_eq!(g.moved.len(), 1);
        assert_eq!(g.moved[0].id, "s.known");
        assert!(
            g.moved[0]
                .why
                .contains("1.136 at x = 1 now, 1.7 when pinned (33 % apart"),
            "{}",
            g.moved[0].why
        );
        // A pinned claim that now passes far from its recorded value has moved too.
        let g = run(true, 1.7, 0.2, true);
        assert_eq!(g.moved.len(), 1, "{g:?}");
        assert_eq!(g.moved[0].id, "s.fixed");
        // Each mode holds its own value (1.7 is within DRIFT of full mode's 1.9, 1.3 is
        // not), and `s.fixed`, pinned in quick mode only, is not compared in full mode.
        assert!(run(false, 1.7, 0.2, true).moved.is_empty());
        let g = run(false, 1.3, 0.2, true);
        assert_eq!(g.moved.len(), 1, "{g:?}");
        assert_eq!(g.moved[0].id, "s.known");
        // A recorded value the run no longer measures has moved.
        let mut c = claim("s.known", false, true);
        c.measured = None;
        let g = pins.gate(&report(true, vec![c, claim("s.fixed", false, true)]));
        assert!(g
            .moved
            .iter()
            .any(|m| m.id == "s.known" && m.why.contains("no value now")));
        assert_eq!(drift(2.0, 2.0), 0.0);
        assert_eq!(drift(0.0, 0.0), 0.0);
        assert_eq!(drift(-1.0, 1.0), 2.0);
    }

    #[test]
    fn a_pin_without_its_value_fails_the_gate_unless_the_claim_has_none() {
        let pins = Pins::parse(PINS).unwrap();
        let fixed = || claim("s.fixed", false, true);
        let quick_only = || claim("s.quick_only", false, true);
        // `s.known` measured 1.5, its pin records nothing: unrecorded.
        let g = pins.gate(&report(
            true,
            vec![
                measured(claim("s.known", false, true), 1.0, 1.5),
                fixed(),
                quick_only(),
            ],
        ));
        assert_eq!(g.unrecorded, [("s.known".to_string(), 1.5)]);
        assert!(!g.passed());
        // An ordering (no single value) or a claim on real sockets needs none.
        let mut network = measured(claim("s.known", false, true), 1.0, 1.5);
        network.spec.tests = crate::claim::Tests::Network;
        let g = pins.gate(&report(true, vec![network, fixed(), quick_only()]));
        assert!(g.passed(), "{g:?}");
        let g = pins.gate(&report(
            true,
            vec![claim("s.known", false, true), fixed(), quick_only()],
        ));
        assert!(g.passed(), "{g:?}");
        // An unpinned claim with a value needs none either.
        let g = pins.gate(&report(
            true,
            vec![
                claim("s.known", false, true),
                fixed(),
                quick_only(),
                measured(claim("s.fine", true, true), 1.0, 3.0),
            ],
        ));
        assert!(g.passed(), "{g:?}");
    }

    #[test]
    fn bad_lists_are_refused() {
        let dup = "[[pin]]\nid = \"a\"\nreason = \"r\"\n[[pin]]\nid = \"a\"\nreason = \"r\"\n";
        assert!(matches!(Pins::parse(dup), Err(PinError::Duplicate(_))));
        let empty = "[[pin]]\nid = \"a\"\nreason = \" \"\n";
        assert!(matches!(Pins::parse(empty), Err(PinError::Incomplete(_))));
        let no_mode = "[[pin]]\nid = \"a\"\nreason = \"r\"\nmodes = []\n";
        assert!(matches!(Pins::parse(no_mode), Err(PinError::Incomplete(_))));
        let typo = "[[pin]]\nid = \"a\"\nreasn = \"r\"\n";
        assert!(matches!(Pins::parse(typo), Err(PinError::Toml(_))));
        let mode = "[[pin]]\nid = \"a\"\nreason = \"r\"\nmodes = [\"fast\"]\n";
        assert!(matches!(Pins::parse(mode), Err(PinError::Toml(_))));
        let value = "[[pin]]\nid = \"a\"\nreason = \"r\"\nmeasured = { quik = 1.0 }\n";
        assert!(matches!(Pins::parse(value), Err(PinError::Toml(_))));
    }

    #[test]
    fn the_builtin_list_parses_and_names_claims_of_registered_studies() {
        let pins = Pins::builtin().unwrap();
        assert!(!pins.is_empty());
        let studies: Vec<&str> = crate::STUDIES.iter().map(|s| s.name()).collect();
        for id in pins.pins.keys() {
            let study = id.split('.').next().unwrap_or("");
            assert!(studies.contains(&study), "{id}: no study `{study}`");
            let claims = crate::STUDIES
                .iter()
                .find(|s| s.name() == study)
                .map(|s| s.about().claims_toml)
                .unwrap_or("");
            assert!(
                claims.contains(&format!("\"{id}\"")),
                "{id}: not a claim id in {study}'s claims.toml"
            );
        }
    }
}
