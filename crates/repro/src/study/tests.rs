//! Tests of the study runner, the setup files and the schedule.

use super::runner::check_calibration;
use super::*;
use crate::claim::Verdict;
use crate::plot::{Axis, PlotSeries};
use crate::report::Report;
use crate::stats::Estimate;

/// A study whose measurements are given, to test the runner and the report.
struct Fixed {
    claims: &'static str,
    fail_run: bool,
    plot_unit: &'static str,
}

impl Study for Fixed {
    fn about(&self) -> About {
        About {
            name: "fixed",
            title: "Fixed measurements",
            source: "test",
            claims_toml: self.claims,
        }
    }
    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        if self.fail_run {
            return Err(StudyError::Run("simulated failure".into()));
        }
        // Runs through the parallel map, in order.
        let xs: Vec<f64> = vec![1.0, 2.0, 3.0];
        let ys = ctx.map(&xs, |x| x * 2.0);
        assert_eq!(ys, vec![2.0, 4.0, 6.0]);
        let mut m = Measures::new();
        let pts: Vec<(f64, Estimate)> = xs
            .iter()
            .zip(&ys)
            .map(|(&x, &y)| (x, Estimate::from_samples(&[y - 0.01, y + 0.01]).unwrap()))
            .collect();
        m.series("y", "ms", "n", pts.clone());
        Ok(StudyOutput {
            setup: Setup {
                summary: "s".into(),
                ..Setup::default()
            },
            measures: m,
            plots: vec![Plot {
                id: "fixed-y".into(),
                title: "y".into(),
                caption: "c".into(),
                x: Axis::new("n", "count"),
                y: Axis::new("y", self.plot_unit),
                series: vec![PlotSeries::measured("y", 0, &pts)],
            }],
            notes: vec![],
        })
    }
}

const CLAIMS: &str = include_str!("../../testdata/fixed-claims.toml");

/// A study that only names itself and records when it ran (to test the schedule).
struct Named {
    name: &'static str,
    alone: bool,
    log: &'static std::sync::Mutex<Vec<String>>,
}

impl Study for Named {
    fn about(&self) -> About {
        About {
            name: self.name,
            title: "",
            source: "",
            claims_toml: "",
        }
    }
    fn runs_alone(&self) -> bool {
        self.alone
    }
    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        self.log
            .lock()
            .unwrap()
            .push(format!("start {}", self.name));
        let _ = ctx.map(&[1, 2, 3], |x| x + 1);
        self.log.lock().unwrap().push(format!("end {}", self.name));
        Ok(StudyOutput {
            setup: Setup::default(),
            measures: Measures::new(),
            plots: vec![],
            notes: vec![],
        })
    }
}

#[test]
fn studies_run_together_except_those_that_run_alone_which_come_last_one_at_a_time() {
    static LOG: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let (a, b, c, d) = (
        Named {
            name: "a",
            alone: false,
            log: &LOG,
        },
        Named {
            name: "b",
            alone: true,
            log: &LOG,
        },
        Named {
            name: "c",
            alone: false,
            log: &LOG,
        },
        Named {
            name: "d",
            alone: true,
            log: &LOG,
        },
    );
    let studies: Vec<&dyn Study> = vec![&a, &b, &c, &d];
    let claims: Vec<String> = ["a", "b", "c", "d"]
        .iter()
        .map(|n| format!("study = \"{n}\""))
        .collect();
    let finished = std::sync::Mutex::new(Vec::new());
    let reports = with_jobs(Some(2), || {
        run_studies(
            &studies,
            &claims,
            &RunOptions::new(Sweeps::Quick),
            |_| NoProgress,
            |_, r, _| finished.lock().unwrap().push(r.name.clone()),
        )
    })
    .unwrap();
    // The reports in the given order, whatever order the studies finished in.
    let names: Vec<&str> = reports.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    let log = LOG.lock().unwrap().clone();
    // The two that run alone start after the others ended, each after the previous ended.
    let at = |what: &str| log.iter().position(|l| l == what).unwrap();
    assert!(at("start b") > at("end a").max(at("end c")), "{log:?}");
    assert_eq!(at("start d"), at("end b") + 1, "{log:?}");
    let finished = finished.into_inner().unwrap();
    assert_eq!(&finished[2..], ["b", "d"], "{finished:?}");
}

#[test]
fn verdicts_and_report_of_a_failing_claim() {
    let r = run_study(
        &Fixed {
            claims: CLAIMS,
            fail_run: false,
            plot_unit: "ms",
        },
        Sweeps::Full,
        &NoProgress,
    );
    assert!(r.error.is_none());
    let v: Vec<Verdict> = r.claims.iter().map(|c| c.verdict).collect();
    assert_eq!(v, vec![Verdict::Pass, Verdict::Fail]);
    let rep = Report {
        sweeps: Sweeps::Quick,
        runs_factor: 1,
        studies: vec![r],
        commit: Some("1a2b3c4-dirty".into()),
    };
    assert_eq!(
        rep.summary_line(),
        "claims: 1 passed, 0 inconclusive, 1 failed"
    );
    let md = rep.markdown();
    assert!(md.contains("### Failed claims"));
    assert!(md.contains("known: y reaches 6 at n = 3"));
    assert!(md.contains("Quick mode"));
    assert!(md.contains("Built from commit `1a2b3c4-dirty`."), "{md}");
    let csv = rep.claims_csv().unwrap();
    assert_eq!(csv.lines().count(), 3);
    assert!(csv
        .lines()
        .nth(2)
        .unwrap()
        .starts_with("fixed.small,fixed,"));
    let dir = std::env::temp_dir().join(format!("rmcast-repro-unit-{}", std::process::id()));
    let w = rep.write(&dir).unwrap();
    assert_eq!(w.svgs.len(), 1);
    let html = std::fs::read_to_string(&w.html).unwrap();
    assert!(html.contains("id=\"plot-fixed-y\""));
    assert!(html.contains("data-verdict=\"fail\""));
    assert!(html.contains("Built from commit <code>1a2b3c4-dirty</code>."));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_study_that_errors_fails_every_claim() {
    let r = run_study(
        &Fixed {
            claims: CLAIMS,
            fail_run: true,
            plot_unit: "ms",
        },
        Sweeps::Full,
        &NoProgress,
    );
    assert_eq!(r.claims.len(), 2);
    assert!(r.claims.iter().all(|c| !c.passed()));
    assert!(r.claims[0].detail.contains("simulated failure"));
}

#[test]
fn a_plot_without_units_is_a_study_error() {
    let r = run_study(
        &Fixed {
            claims: CLAIMS,
            fail_run: false,
            plot_unit: "",
        },
        Sweeps::Full,
        &NoProgress,
    );
    assert!(r.error.as_deref().unwrap_or("").contains("unit"));
    assert_eq!(r.failed(), 2);
}

#[test]
fn a_broken_claims_file_is_one_failed_claim() {
    let r = run_study(
        &Fixed {
            claims: "study = \"fixed\"\n[[claim]]\nid = 3\n",
            fail_run: false,
            plot_unit: "ms",
        },
        Sweeps::Full,
        &NoProgress,
    );
    assert_eq!(r.claims.len(), 1);
    assert_eq!(r.claims[0].spec.id, "fixed.claims_file");
    assert_eq!(r.failed(), 1);
}

#[test]
fn a_setup_file_is_filled_from_the_values() {
    let toml = r#"
        summary = "{runs} runs of {what}"
        topology = "a star"
        parameters = [["runs", "{runs}"]]
        choices = [["{what} size", "1 KB"]]
    "#;
    let values = [("runs", "12".to_string()), ("what", "blocks".to_string())];
    let s = Setup::from_toml("setup.toml", toml, &values).unwrap();
    assert_eq!(s.summary, "12 runs of blocks");
    assert_eq!(s.topology, "a star");
    assert_eq!(s.parameters, vec![("runs".to_string(), "12".to_string())]);
    assert_eq!(s.choices, vec![("blocks size".into(), "1 KB".into())]);
    // A placeholder without a value, a value without a placeholder, an unclosed brace and
    // an unknown key are errors that name the file.
    let unknown = Setup::from_toml("setup.toml", toml, &values[..1]).unwrap_err();
    assert!(
        unknown.to_string().contains("no value for `{what}`"),
        "{unknown}"
    );
    let extra = [
        ("runs", "1".into()),
        ("what", "x".into()),
        ("seeds", "3".into()),
    ];
    let unused = Setup::from_toml("setup.toml", toml, &extra).unwrap_err();
    assert!(unused.to_string().contains("seeds"), "{unused}");
    let open = Setup::from_toml("s.toml", "summary = \"{runs\"\ntopology = \"\"", &values);
    assert!(open.unwrap_err().to_string().starts_with("s.toml: "));
    let key = Setup::from_toml("s.toml", "summary = \"\"\ntopology = \"\"\nx = 1", &[]);
    assert!(key.is_err());
}

#[test]
fn unstated_values_are_read_with_their_provenance_and_checked() {
    let toml = r#"
        summary = "s"
        topology = "t"
        [[unstated]]
        name = "t"
        value = "{t} bit times"
        provenance = "fitted"
        fitted_on = ["x.a"]
        range = [25000.0, 300000.0]
        explore = true
        note = "fitted"
        [[unstated]]
        name = "limit"
        value = "20"
        provenance = "seed"
        section = "§A.2"
    "#;
    let s = Setup::from_toml("setup.toml", toml, &[("t", "95000".into())]).unwrap();
    assert_eq!(s.unstated.len(), 2);
    assert_eq!(s.unstated[0].value, "95000 bit times");
    assert_eq!(
        s.unstated[0].provenance_text(),
        "fitted on calibration claims [x.a]"
    );
    assert_eq!(s.unstated[1].provenance_text(), "seed §A.2");
    // `fitted` without the claims, `seed` without a section: errors naming the value.
    let no_claims = toml.replace("fitted_on = [\"x.a\"]", "");
    let e = Setup::from_toml("setup.toml", &no_claims, &[("t", "1".into())]).unwrap_err();
    assert!(e.to_string().contains("unstated `t`"), "{e}");
    let no_section = toml.replace("section = \"§A.2\"", "");
    let e = Setup::from_toml("setup.toml", &no_section, &[("t", "1".into())]).unwrap_err();
    assert!(e.to_string().contains("unstated `limit`"), "{e}");
    // Calibration claims and fitted values must name each other.
    let claims = |calibration: bool| Claims {
        specs: vec![crate::claim::ClaimSpec {
            calibration,
            ..crate::claim::ClaimSpec::bare("x.a")
        }],
        paper: Default::default(),
    };
    assert!(check_calibration(&s, &claims(true)).is_ok());
    let e = check_calibration(&s, &claims(false)).unwrap_err();
    assert!(e.to_string().contains("does not mark"), "{e}");
    let e = check_calibration(&Setup::default(), &claims(true)).unwrap_err();
    assert!(e.to_string().contains("no `[[unstated]]`"), "{e}");
}

#[test]
fn zero_jobs_is_refused() {
    assert!(with_jobs(Some(0), || 1).is_err());
    assert_eq!(with_jobs(Some(2), rayon::current_num_threads).unwrap(), 2);
}
