//! Committed `--explore` sweeps, shown in the report beside the run's own verdicts.
//!
//! A study whose validation claims mostly fail must show that no value of its unstated
//! parameters inside the seed's stated ranges would pass them: `rmcast repro STUDY --explore`
//! makes that sweep (see [`crate::explore`]), and its output is committed under
//! `docs/repro/`. This module embeds the committed `explore.csv` and pass-rate heat map of
//! each such sweep into the binary and, for the report, reads the CSV back: for every table
//! with a claim that failed in *this* run, the grid points where all of the table's
//! validation claims passed in the sweep, inside the seed's ranges and anywhere. Nothing here
//! is typed by hand except which sweeps exist and the command that made each.

use crate::claim::{ClaimResult, Tests};
use crate::explore::table_of;
use crate::report::Markup;
use crate::study::StudyReport;
use std::collections::{BTreeMap, BTreeSet};

/// One committed sweep.
#[derive(Debug)]
pub struct Committed {
    /// The study it explored.
    pub study: &'static str,
    /// Its directory in the repository (explore.md, the CSVs and both heat maps).
    pub dir: &'static str,
    /// The command that wrote it.
    pub command: &'static str,
    /// Its `explore.csv`.
    pub csv: &'static str,
    /// Its `explore-pass-rate.svg`.
    pub heat_map: &'static str,
}

macro_rules! committed {
    ($study:literal, $dir:literal, $command:literal) => {
        Committed {
            study: $study,
            dir: $dir,
            command: $command,
            csv: include_str!(concat!("../../../", $dir, "/explore.csv")),
            heat_map: include_str!(concat!("../../../", $dir, "/explore-pass-rate.svg")),
        }
    };
}

/// Every committed sweep, in the order the report shows them.
pub const COMMITTED: &[Committed] = &[
    committed!(
        "segovia",
        "docs/repro/explore/segovia-t-limit",
        "rmcast repro segovia --runs-cap 1 --explore t=35000..155000:5 --explore limit=10..30:3"
    ),
    committed!(
        "segovia",
        "docs/repro/explore/segovia-backoff-t",
        "rmcast repro segovia --runs-cap 1 --explore backoff=0..1:2 --explore t=35000..155000:3"
    ),
    committed!(
        "lms",
        "docs/repro/explore/lms-routes",
        "rmcast repro lms --explore hop_routes=0..1:2"
    ),
    committed!(
        "xtp",
        "docs/repro/explore/xtp-cost-wtimer",
        "rmcast repro xtp --quick --explore per_call_ms=2..8:4 --explore wtimer_ms=2..20:4"
    ),
    committed!(
        "xtp",
        "docs/repro/xtp-wtimer/fine",
        "rmcast repro xtp --quick --explore wtimer_ms=2..14:7"
    ),
    committed!(
        "xtp",
        "docs/repro/xtp-wtimer/coarse",
        "rmcast repro xtp --quick --explore wtimer_ms=5..100:20"
    ),
];

/// The committed sweeps of `study`.
pub fn of_study(study: &str) -> impl Iterator<Item = &'static Committed> + '_ {
    COMMITTED.iter().filter(move |c| c.study == study)
}

/// A committed sweep read back: its grid and, per table, where all its validation claims pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Swept {
    /// The swept parameters' names.
    pub axes: Vec<String>,
    /// Grid points, as `name = value, …`, in the CSV's order.
    pub points: Vec<String>,
    /// Per point: whether it lies inside the seed's stated ranges.
    pub in_range: Vec<bool>,
    /// Per table: its validation claims and the points (indices) where all of them pass.
    pub tables: BTreeMap<String, TableSweep>,
    /// Every claim id the sweep judged.
    pub claims: BTreeSet<String>,
}

/// One table over a committed sweep.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableSweep {
    /// Its validation claims (simulation, not calibration).
    pub claims: BTreeSet<String>,
    /// Points where every one of them passed.
    pub all_pass: Vec<usize>,
}

impl Committed {
    /// Read the embedded CSV back.
    pub fn read(&self) -> Result<Swept, String> {
        parse(self.csv).map_err(|e| format!("{}/explore.csv: {e}", self.dir))
    }
}

/// Parse an `explore.csv` ([`crate::explore::Exploration::csv`]'s columns: the axes, then
/// claim, table, tests, calibration, verdict, mean, in_seed_range, detail).
pub fn parse(text: &str) -> Result<Swept, String> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let head: Vec<String> = r
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(str::to_string)
        .collect();
    let col = |name: &str| {
        head.iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("no column `{name}`"))
    };
    let (claim, tests, calib, verdict, in_range) = (
        col("claim")?,
        col("tests")?,
        col("calibration")?,
        col("verdict")?,
        col("in_seed_range")?,
    );
    let axes: Vec<String> = head[..claim].to_vec();
    if axes.is_empty() {
        return Err("no axis columns before `claim`".into());
    }
    let mut s = Swept {
        axes: axes.clone(),
        points: Vec::new(),
        in_range: Vec::new(),
        tables: BTreeMap::new(),
        claims: BTreeSet::new(),
    };
    let mut index: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    // Per point and table: (validation claims seen, of them passed).
    let mut tally: BTreeMap<(usize, String), (usize, usize)> = BTreeMap::new();
    for (line, rec) in r.records().enumerate() {
        let rec = rec.map_err(|e| e.to_string())?;
        let field = |i: usize| {
            rec.get(i)
                .ok_or_else(|| format!("row {}: missing column {i}", line + 2))
        };
        let key: Vec<String> = (0..axes.len())
            .map(|i| field(i).map(str::to_string))
            .collect::<Result<_, _>>()?;
        let next = s.points.len();
        let p = *index.entry(key.clone()).or_insert(next);
        if p == next {
            let text: Vec<String> = axes
                .iter()
                .zip(&key)
                .map(|(a, v)| format!("{a} = {v}"))
                .collect();
            s.points.push(text.join(", "));
            s.in_range.push(field(in_range)? == "true");
        }
        let id = field(claim)?.to_string();
        s.claims.insert(id.clone());
        let validation = field(tests)? == Tests::Simulation.word() && field(calib)? != "true";
        if !validation {
            continue;
        }
        let table = table_of(&id).to_string();
        s.tables.entry(table.clone()).or_default().claims.insert(id);
        let t = tally.entry((p, table)).or_default();
        t.0 += 1;
        t.1 += usize::from(field(verdict)? == "pass");
    }
    for ((p, table), (seen, passed)) in tally {
        if let Some(t) = s.tables.get_mut(&table) {
            if seen == t.claims.len() && passed == seen {
                t.all_pass.push(p);
            }
        }
    }
    Ok(s)
}

/// The share of a study's validation claims (simulation, not calibration) that passed, as
/// (passed, all).
pub fn validation_passed(claims: &[ClaimResult]) -> (usize, usize) {
    let v = claims
        .iter()
        .filter(|c| c.spec.tests == Tests::Simulation && !c.spec.calibration);
    let (mut passed, mut all) = (0, 0);
    for c in v {
        all += 1;
        passed += usize::from(c.passed());
    }
    (passed, all)
}

/// The validation pass rate below which a study must show a committed sweep (issue 65).
pub const SHOW_BELOW: f64 = 0.8;

/// One row of the report's table for a committed sweep: a table that failed in this run and
/// where the sweep passes all of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The table.
    pub table: String,
    /// Its claims that failed in this run.
    pub failed_here: Vec<String>,
    /// Points inside the seed's ranges where the sweep passes all of its validation claims.
    pub pass_in_range: Vec<String>,
    /// Points anywhere in the grid where it does.
    pub pass_anywhere: Vec<String>,
}

/// For each table with a validation claim that failed in `claims`, where `swept` passes it.
pub fn rows(swept: &Swept, claims: &[ClaimResult]) -> Vec<Row> {
    let mut failed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for c in claims
        .iter()
        .filter(|c| c.failed() && c.spec.tests == Tests::Simulation && !c.spec.calibration)
    {
        failed
            .entry(table_of(&c.spec.id).to_string())
            .or_default()
            .push(c.spec.id.clone());
    }
    failed
        .into_iter()
        .map(|(table, failed_here)| {
            let all: Vec<usize> = swept
                .tables
                .get(&table)
                .map(|t| t.all_pass.clone())
                .unwrap_or_default();
            Row {
                pass_in_range: all
                    .iter()
                    .filter(|&&p| swept.in_range[p])
                    .map(|&p| swept.points[p].clone())
                    .collect(),
                pass_anywhere: all.iter().map(|&p| swept.points[p].clone()).collect(),
                table,
                failed_here,
            }
        })
        .collect()
}

/// The file name the report gives the heat map of `study`'s `i`-th committed sweep.
pub fn heat_map_file(study: &str, i: usize) -> String {
    format!("explored-{study}-{}.svg", i + 1)
}

/// The report's "Unstated values explored" part of a study's section: its validation pass
/// rate, and for each committed sweep its command, heat map and, per table that failed in
/// this run, where the sweep passes all of the table. Empty for a study that passes at least
/// [`SHOW_BELOW`] of its validation claims and has no committed sweep.
pub(crate) fn section(f: Markup, out: &mut String, s: &StudyReport) {
    let (passed, all) = validation_passed(&s.claims);
    let sweeps: Vec<&Committed> = of_study(&s.name).collect();
    let below = all > 0 && (passed as f64) < SHOW_BELOW * all as f64;
    if sweeps.is_empty() && !below {
        return;
    }
    f.heading(out, "Unstated values explored");
    let rate = format!(
        "{passed} of {all} validation claims (simulation, not calibration) passed ({:.1} %){}.",
        100.0 * passed as f64 / all.max(1) as f64,
        if below {
            format!(", below {:.0} %", 100.0 * SHOW_BELOW)
        } else {
            String::new()
        }
    );
    if sweeps.is_empty() {
        f.para(
            out,
            &f.text(&format!(
                "{rate} No committed `--explore` sweep of this study's unstated values shows \
                 whether a value inside the seed's ranges would pass its failed tables."
            )),
        );
        return;
    }
    f.para(
        out,
        &f.inline(&format!(
            "{rate} Committed `--explore` sweeps of the study's unstated values, every claim \
             judged at every grid point. For each table with a validation claim that failed in \
             this run: the points where the sweep passes all of the table's validation claims."
        )),
    );
    for (i, c) in sweeps.iter().enumerate() {
        let swept = match c.read() {
            Ok(sw) => sw,
            Err(e) => {
                f.para(out, &f.text(&format!("`{}`: unreadable: {e}", c.command)));
                continue;
            }
        };
        let inside = swept.in_range.iter().filter(|&&b| b).count();
        f.para(
            out,
            &f.inline(&format!(
                "`{}`: {} points, {inside} inside the seed's stated ranges; output in `{}`.",
                c.command,
                swept.points.len(),
                c.dir
            )),
        );
        f.image(
            out,
            &heat_map_file(&s.name, i),
            c.heat_map,
            "validation pass rate over the grid",
        );
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join("; ")
            }
        };
        let rows: Vec<Vec<String>> = rows(&swept, &s.claims)
            .into_iter()
            .map(|r| {
                vec![
                    f.text(&r.table),
                    f.inline(
                        &r.failed_here
                            .iter()
                            .map(|id| format!("`{id}`"))
                            .collect::<Vec<_>>()
                            .join(", "),
                    ),
                    f.text(&list(&r.pass_in_range)),
                    f.text(&list(&r.pass_anywhere)),
                ]
            })
            .collect();
        f.table(
            out,
            &[
                "table",
                "failed in this run",
                "sweep passes all of it, inside the seed's ranges",
                "anywhere in the grid",
            ],
            rows,
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const CSV: &str = "t,limit,claim,table,tests,calibration,verdict,mean,in_seed_range,detail\n\
        1,10,s.a.x,a,simulation,false,pass,1,true,d\n\
        1,10,s.a.y,a,simulation,false,FAIL,1,true,d\n\
        1,10,s.b.x,b,simulation,false,pass,1,true,d\n\
        1,10,s.c.cal,c,simulation,true,FAIL,1,true,d\n\
        1,10,s.f.x,f,formula,false,FAIL,1,true,d\n\
        2,10,s.a.x,a,simulation,false,pass,1,false,d\n\
        2,10,s.a.y,a,simulation,false,pass,1,false,d\n\
        2,10,s.b.x,b,simulation,false,inconclusive,1,false,d\n\
        2,10,s.c.cal,c,simulation,true,FAIL,1,false,d\n\
        2,10,s.f.x,f,formula,false,FAIL,1,false,d\n";

    #[test]
    fn a_table_passes_where_all_its_validation_claims_pass() {
        let s = parse(CSV).unwrap();
        assert_eq!(s.axes, ["t", "limit"]);
        assert_eq!(s.points, ["t = 1, limit = 10", "t = 2, limit = 10"]);
        assert_eq!(s.in_range, [true, false]);
        assert_eq!(s.tables["a"].all_pass, [1]);
        assert_eq!(s.tables["b"].all_pass, [0]);
        // Calibration and formula claims are not validation claims: no table of their own.
        assert!(!s.tables.contains_key("c") && !s.tables.contains_key("f"));
        assert_eq!(s.claims.len(), 5);
    }

    #[test]
    fn malformed_csv_is_an_error_not_a_panic() {
        assert!(parse("").is_err());
        assert!(parse("claim,tests\nx,simulation\n").is_err());
        assert!(
            parse("claim,table,tests,calibration,verdict,mean,in_seed_range,detail\n").is_err()
        );
        let short = "t,claim,table,tests,calibration,verdict,mean,in_seed_range,detail\n1,x\n";
        assert!(parse(short).is_err());
    }

    /// Claims removed from their study after a committed sweep judged them; the sweep keeps
    /// its rows as it ran. `lms.fig5_{7,11}.source_zero` (2026-11-29): zero exposure for a loss
    /// at the source holds by definition (every receiver lost the packet), so no mutant of
    /// the protocols could fail them (docs/repro/mutants.md).
    const REMOVED: &[&str] = &["lms.fig5_7.source_zero", "lms.fig5_11.source_zero"];

    #[test]
    fn every_committed_sweep_reads_back_and_judged_the_studys_current_claims() {
        for c in COMMITTED {
            let s = c.read().unwrap();
            let study = crate::select(&[c.study.to_string()]).unwrap()[0];
            let ids: BTreeSet<String> =
                crate::claim::parse_claims(c.study, study.about().claims_toml)
                    .unwrap()
                    .specs
                    .into_iter()
                    .map(|c| c.id)
                    .collect();
            let stale: Vec<&String> = s
                .claims
                .iter()
                .filter(|id| !ids.contains(*id) && !REMOVED.contains(&id.as_str()))
                .collect();
            assert!(
                stale.is_empty(),
                "{}: claims no longer in the study: {stale:?}",
                c.dir
            );
            assert!(c.heat_map.starts_with("<svg"), "{}: heat map", c.dir);
        }
    }
}
