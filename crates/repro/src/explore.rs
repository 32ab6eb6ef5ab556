//! `rmcast repro STUDY --explore NAME=LO..HI[:STEPS]`: sweep a study's unstated parameters
//! and judge every claim at every value.
//!
//! A seed that leaves a value unstated can be reproduced only if *some* value of it passes
//! the seed's tables. An exploration runs the study at every point of a grid over one or two
//! of its unstated parameters (each read by the study through [`RunCtx::param`]), judges all
//! its claims there, and writes what passes where: `explore.csv` (one row per grid point and
//! claim), `explore-points.csv` (one row per grid point: the validation pass rate),
//! `explore.md` (the best values, and for each of the seed's tables whether any value inside
//! the seed's stated ranges passes all of it) and two SVG heat maps (the pass rate over the
//! grid; which claims pass at which point).
//!
//! [`RunCtx::param`]: crate::RunCtx::param

use crate::claim::{fmt_num, ClaimResult, Tests, Verdict};
use crate::plot::esc;
use crate::study::{run_study_opts, Progress, RunOptions, Study, StudyError, Unstated};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// One swept parameter: its name and the values it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The unstated parameter's name, as the study reads it.
    pub name: String,
    /// The values, in order.
    pub values: Vec<f64>,
}

/// Steps when `NAME=LO..HI` gives none.
pub const DEFAULT_STEPS: usize = 5;
/// The most values one axis may take.
pub const MAX_STEPS: usize = 50;

impl FromStr for Axis {
    type Err = String;

    /// `NAME=LO..HI[:STEPS]`: STEPS values evenly spaced from LO to HI inclusive
    /// ([`DEFAULT_STEPS`] when left out; one value when LO = HI).
    fn from_str(s: &str) -> Result<Self, String> {
        let usage = || format!("`{s}`: expected NAME=LO..HI[:STEPS], e.g. t=50000..100000:6");
        let (name, range) = s.split_once('=').ok_or_else(usage)?;
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("`{s}`: the name must be letters, digits and `_`"));
        }
        let (range, steps) = match range.split_once(':') {
            Some((r, n)) => (
                r,
                n.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("`{s}`: STEPS must be a whole number"))?,
            ),
            None => (range, DEFAULT_STEPS),
        };
        let (lo, hi) = range.split_once("..").ok_or_else(usage)?;
        let num = |t: &str| {
            t.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("`{s}`: `{}` is not a finite number", t.trim()))
        };
        let (lo, hi) = (num(lo)?, num(hi)?);
        if lo > hi {
            return Err(format!("`{s}`: LO must not exceed HI"));
        }
        if !(1..=MAX_STEPS).contains(&steps) || (steps == 1 && lo != hi) {
            return Err(format!(
                "`{s}`: STEPS must be 2 to {MAX_STEPS} (1 only when LO = HI)"
            ));
        }
        let values = if lo == hi {
            vec![lo]
        } else {
            (0..steps)
                .map(|i| lo + (hi - lo) * i as f64 / (steps - 1) as f64)
                .collect()
        };
        Ok(Axis {
            name: name.to_string(),
            values,
        })
    }
}

/// One grid point of an exploration and the claims judged there.
#[derive(Debug, Clone)]
pub struct GridPoint {
    /// The value of each axis, in the axes' order.
    pub values: Vec<f64>,
    /// Every claim's verdict at this point.
    pub claims: Vec<ClaimResult>,
}

impl GridPoint {
    /// The validation claims (simulation, not calibration) among `claims`.
    fn validation(&self) -> impl Iterator<Item = &ClaimResult> {
        self.claims
            .iter()
            .filter(|c| c.spec.tests == Tests::Simulation && !c.spec.calibration)
    }

    /// Validation claims passed, and how many there are.
    pub fn validation_passed(&self) -> (usize, usize) {
        let all = self.validation().count();
        (self.validation().filter(|c| c.passed()).count(), all)
    }
}

/// A finished exploration.
#[derive(Debug, Clone)]
pub struct Exploration {
    /// The study explored.
    pub study: String,
    /// The swept parameters.
    pub axes: Vec<Axis>,
    /// Every grid point, the first axis varying slowest.
    pub points: Vec<GridPoint>,
    /// The study's unstated values as its setup states them (for their stated ranges).
    pub unstated: Vec<Unstated>,
}

/// Sweep `study` over the grid of `axes` (one or two), with `opts` (its mode, runs and cap)
/// and the axes' values as overrides; `each` is told every finished point.
pub fn explore(
    study: &dyn Study,
    claims_toml: &str,
    opts: &RunOptions,
    axes: &[Axis],
    progress: &dyn Progress,
    each: &dyn Fn(&GridPoint, usize, usize),
) -> Result<Exploration, StudyError> {
    if axes.is_empty() || axes.len() > 2 {
        return Err(StudyError::Run(
            "--explore takes one or two parameters".into(),
        ));
    }
    if axes.len() == 2 && axes[0].name == axes[1].name {
        return Err(StudyError::Run(format!(
            "--explore names `{}` twice",
            axes[0].name
        )));
    }
    let grid: Vec<Vec<f64>> = match axes {
        [a] => a.values.iter().map(|&v| vec![v]).collect(),
        [a, b] => a
            .values
            .iter()
            .flat_map(|&u| b.values.iter().map(move |&v| vec![u, v]))
            .collect(),
        _ => Vec::new(),
    };
    let mut points = Vec::with_capacity(grid.len());
    let mut unstated = Vec::new();
    for (i, values) in grid.into_iter().enumerate() {
        let mut o = opts.clone();
        o.overrides = axes
            .iter()
            .zip(&values)
            .map(|(a, &v)| (a.name.clone(), v))
            .collect::<BTreeMap<_, _>>();
        let r = run_study_opts(study, claims_toml, &o, progress);
        if let Some(e) = r.error {
            return Err(StudyError::Run(format!(
                "at {}: {e}",
                point_text(axes, &values)
            )));
        }
        if unstated.is_empty() {
            unstated = r.setup.unstated.clone();
        }
        let p = GridPoint {
            values,
            claims: r.claims,
        };
        each(&p, i + 1, axes.iter().map(|a| a.values.len()).product());
        points.push(p);
    }
    Ok(Exploration {
        study: study.name().to_string(),
        axes: axes.to_vec(),
        points,
        unstated,
    })
}

/// `t = 95000, limit = 20`: a grid point's values, named by their axes.
pub fn point_text(axes: &[Axis], values: &[f64]) -> String {
    axes.iter()
        .zip(values)
        .map(|(a, v)| format!("{} = {}", a.name, fmt_num(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The table or figure a claim belongs to: the second part of its id
/// (`segovia.t4_8.bap_w10_r20_latency` → `t4_8`).
pub fn table_of(id: &str) -> &str {
    id.split('.').nth(1).unwrap_or(id)
}

/// The files an exploration wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// `explore.md`.
    pub markdown: PathBuf,
    /// `explore.csv`.
    pub csv: PathBuf,
    /// `explore-points.csv`.
    pub points_csv: PathBuf,
    /// `explore-pass-rate.svg`.
    pub heat_map: PathBuf,
    /// `explore-claims.svg`.
    pub claims_map: PathBuf,
}

impl Exploration {
    /// Whether every axis value of `p` lies inside the seed's stated range for that axis
    /// (an axis whose value the seed gives no range for counts as inside).
    pub fn in_seed_range(&self, p: &GridPoint) -> bool {
        self.axes.iter().zip(&p.values).all(|(a, &v)| {
            match self
                .unstated
                .iter()
                .find(|u| u.name == a.name)
                .and_then(|u| u.range)
            {
                Some([lo, hi]) => v >= lo - 1e-9 * lo.abs() && v <= hi + 1e-9 * hi.abs(),
                None => true,
            }
        })
    }

    /// The grid points with the highest validation pass rate.
    pub fn best(&self) -> Vec<&GridPoint> {
        let score = |p: &GridPoint| p.validation_passed().0;
        let top = self.points.iter().map(score).max().unwrap_or(0);
        self.points.iter().filter(|p| score(p) == top).collect()
    }

    /// One row per grid point and claim.
    pub fn csv(&self) -> Result<String, csv::Error> {
        let mut header: Vec<&str> = self.axes.iter().map(|a| a.name.as_str()).collect();
        header.extend([
            "claim",
            "table",
            "tests",
            "calibration",
            "verdict",
            "mean",
            "in_seed_range",
            "detail",
        ]);
        let rows = self.points.iter().flat_map(|p| {
            let in_range = self.in_seed_range(p);
            p.claims.iter().map(move |c| {
                let mut r: Vec<String> = p.values.iter().map(|v| v.to_string()).collect();
                r.extend([
                    c.spec.id.clone(),
                    table_of(&c.spec.id).to_string(),
                    c.spec.tests.word().to_string(),
                    c.spec.calibration.to_string(),
                    c.verdict.word().to_string(),
                    c.measured.map(|e| e.mean.to_string()).unwrap_or_default(),
                    in_range.to_string(),
                    c.detail.clone(),
                ]);
                r
            })
        });
        crate::report::csv_table(&header, rows)
    }

    /// One row per grid point: the validation claims passed, failed and inconclusive.
    pub fn points_csv(&self) -> Result<String, csv::Error> {
        let mut header: Vec<&str> = self.axes.iter().map(|a| a.name.as_str()).collect();
        header.extend([
            "validation_claims",
            "passed",
            "inconclusive",
            "failed",
            "pass_rate",
            "in_seed_range",
        ]);
        let rows = self.points.iter().map(|p| {
            let (passed, all) = p.validation_passed();
            let failed = p.validation().filter(|c| c.failed()).count();
            let mut r: Vec<String> = p.values.iter().map(|v| v.to_string()).collect();
            r.extend([
                all.to_string(),
                passed.to_string(),
                (all - passed - failed).to_string(),
                failed.to_string(),
                format!("{:.4}", rate(passed, all)),
                self.in_seed_range(p).to_string(),
            ]);
            r
        });
        crate::report::csv_table(&header, rows)
    }

    /// Each table's verdict over the grid: the validation claims of the table, and the grid
    /// points (inside the seed's ranges or not) where all of them pass.
    pub fn tables(&self) -> Vec<TableVerdict> {
        let mut ids: BTreeMap<String, Vec<String>> = BTreeMap::new();
        if let Some(p) = self.points.first() {
            for c in p.validation() {
                ids.entry(table_of(&c.spec.id).to_string())
                    .or_default()
                    .push(c.spec.id.clone());
            }
        }
        ids.into_iter()
            .map(|(table, claims)| {
                let passes = |p: &GridPoint| {
                    p.claims
                        .iter()
                        .filter(|c| claims.contains(&c.spec.id))
                        .filter(|c| c.passed())
                        .count()
                };
                let all_pass: Vec<usize> = (0..self.points.len())
                    .filter(|&i| passes(&self.points[i]) == claims.len())
                    .collect();
                let best = (0..self.points.len())
                    .max_by_key(|&i| (passes(&self.points[i]), core::cmp::Reverse(i)));
                TableVerdict {
                    in_range: all_pass
                        .iter()
                        .copied()
                        .filter(|&i| self.in_seed_range(&self.points[i]))
                        .collect(),
                    all_pass,
                    best: best.map(|i| (i, passes(&self.points[i]))),
                    table,
                    claims,
                }
            })
            .collect()
    }

    /// `explore.md`: the grid, the best values and each table's verdict.
    pub fn markdown(&self) -> String {
        let mut md = String::new();
        let names: Vec<String> = self
            .axes
            .iter()
            .map(|a| {
                format!(
                    "`{}` = {}",
                    a.name,
                    a.values
                        .iter()
                        .map(|v| fmt_num(*v))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .collect();
        let _ = writeln!(md, "# Exploring `{}`'s unstated parameters\n", self.study);
        let _ = writeln!(
            md,
            "Every claim of the study judged at each of {} grid points: {}. Validation claims \
             are the simulation claims that no value was fitted on.\n",
            self.points.len(),
            names.join("; ")
        );
        for a in &self.axes {
            let u = self.unstated.iter().find(|u| u.name == a.name);
            let _ = writeln!(
                md,
                "- `{}`: {}; {}",
                a.name,
                // The value the study runs by default is in its report's table of unstated
                // values (here every run had an explored value).
                u.map_or("not listed in setup.toml".to_string(), |u| format!(
                    "the study's value from {}",
                    u.provenance_text()
                )),
                match u.and_then(|u| u.range) {
                    Some([lo, hi]) =>
                        format!("the seed's range: {} to {}", fmt_num(lo), fmt_num(hi)),
                    None => "the seed states no range".to_string(),
                }
            );
        }
        let best = self.best();
        if let Some(b) = best.first() {
            let (passed, all) = b.validation_passed();
            let _ = writeln!(
                md,
                "\n**Best:** {passed} of {all} validation claims ({:.1} %) at {}{}.\n",
                100.0 * rate(passed, all),
                best.iter()
                    .map(|p| point_text(&self.axes, &p.values))
                    .collect::<Vec<_>>()
                    .join("; "),
                if best.iter().any(|p| self.in_seed_range(p)) {
                    ""
                } else {
                    " (outside the seed's ranges)"
                }
            );
        }
        let _ = writeln!(md, "## Pass rate at each point\n");
        let mut head: Vec<String> = self.axes.iter().map(|a| format!("`{}`", a.name)).collect();
        head.extend(["validation passed".into(), "in the seed's range".into()]);
        let _ = writeln!(md, "| {} |", head.join(" | "));
        let _ = writeln!(md, "|{}", "---|".repeat(head.len()));
        for p in &self.points {
            let (passed, all) = p.validation_passed();
            let mut cells: Vec<String> = p.values.iter().map(|v| fmt_num(*v)).collect();
            cells.push(format!(
                "{passed} of {all} ({:.1} %)",
                100.0 * rate(passed, all)
            ));
            cells.push(if self.in_seed_range(p) { "yes" } else { "no" }.into());
            let _ = writeln!(md, "| {} |", cells.join(" | "));
        }
        let _ = writeln!(md, "\n## Tables\n");
        let _ = writeln!(
            md,
            "Whether some explored value passes every validation claim of a table, inside the \
             seed's stated ranges and anywhere in the grid.\n"
        );
        let _ = writeln!(
            md,
            "| table | claims | passes all inside the seed's ranges | anywhere | best |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|");
        for t in self.tables() {
            let at = |is: &[usize]| match is.len() {
                0 => "no".to_string(),
                n if n == self.points.len() => format!("every point ({n})"),
                n => {
                    let mut shown: Vec<String> = is
                        .iter()
                        .take(4)
                        .map(|&i| point_text(&self.axes, &self.points[i].values))
                        .collect();
                    if n > 4 {
                        shown.push(format!("… ({n} points)"));
                    }
                    shown.join("; ")
                }
            };
            let best = t.best.map_or(String::new(), |(i, n)| {
                format!(
                    "{n} of {} at {}",
                    t.claims.len(),
                    point_text(&self.axes, &self.points[i].values)
                )
            });
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                t.table,
                t.claims.len(),
                at(&t.in_range),
                at(&t.all_pass),
                best
            );
        }
        md
    }

    /// The validation pass rate over the grid as an SVG heat map (one row for one axis).
    pub fn heat_map_svg(&self) -> String {
        let (xs, ys): (&Axis, Option<&Axis>) = match self.axes.as_slice() {
            [a] => (a, None),
            [a, b] => (b, Some(a)),
            _ => return String::new(),
        };
        let rows = ys.map_or(1, |a| a.values.len());
        let cols = xs.values.len();
        let cells: Vec<(usize, usize, f64, String)> = self
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let (passed, all) = p.validation_passed();
                let r = rate(passed, all);
                let (row, col) = if ys.is_some() {
                    (i / cols, i % cols)
                } else {
                    (0, i)
                };
                (row, col, r, format!("{:.0} %", 100.0 * r))
            })
            .collect();
        let title = format!(
            "{}: validation claims passed (of {})",
            self.study,
            self.points.first().map_or(0, |p| p.validation_passed().1)
        );
        let row_labels: Vec<String> = ys.map_or(vec![String::new()], |a| {
            a.values.iter().map(|v| fmt_num(*v)).collect()
        });
        let col_labels: Vec<String> = xs.values.iter().map(|v| fmt_num(*v)).collect();
        heat_svg(
            &title,
            (&xs.name, &col_labels),
            (ys.map_or("", |a| a.name.as_str()), &row_labels),
            rows,
            &cells,
        )
    }

    /// Which validation claims pass at which grid point, as an SVG matrix (a row per claim,
    /// a column per grid point; green pass, red fail, grey inconclusive).
    pub fn claims_svg(&self) -> String {
        let Some(first) = self.points.first() else {
            return String::new();
        };
        let ids: Vec<String> = first.validation().map(|c| c.spec.id.clone()).collect();
        let col_labels: Vec<String> = self
            .points
            .iter()
            .map(|p| {
                p.values
                    .iter()
                    .map(|v| fmt_num(*v))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .collect();
        let mut cells = Vec::new();
        for (col, p) in self.points.iter().enumerate() {
            for (row, id) in ids.iter().enumerate() {
                let v = p.claims.iter().find(|c| &c.spec.id == id);
                let (score, word) = match v.map(|c| c.verdict) {
                    Some(Verdict::Pass) => (1.0, "pass"),
                    Some(Verdict::Fail) => (0.0, "fail"),
                    _ => (f64::NAN, "inconclusive"),
                };
                cells.push((row, col, score, word.to_string()));
            }
        }
        let axes = self
            .axes
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        heat_svg(
            &format!("{}: which claims pass where", self.study),
            (&axes, &col_labels),
            ("claim", &ids),
            ids.len(),
            &cells,
        )
    }

    /// Write the five files into `dir` (created if needed), each through a temporary file.
    pub fn write(&self, dir: &Path) -> Result<Written, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let w = Written {
            markdown: dir.join("explore.md"),
            csv: dir.join("explore.csv"),
            points_csv: dir.join("explore-points.csv"),
            heat_map: dir.join("explore-pass-rate.svg"),
            claims_map: dir.join("explore-claims.svg"),
        };
        let put = |path: &Path, text: String| {
            rmcast_sim::shard::write_atomic(path, text.as_bytes()).map_err(|e| e.to_string())
        };
        put(&w.csv, self.csv().map_err(|e| e.to_string())?)?;
        put(&w.points_csv, self.points_csv().map_err(|e| e.to_string())?)?;
        put(&w.heat_map, self.heat_map_svg())?;
        put(&w.claims_map, self.claims_svg())?;
        put(&w.markdown, self.markdown())?;
        Ok(w)
    }
}

/// A table's verdict over an exploration's grid.
#[derive(Debug, Clone, PartialEq)]
pub struct TableVerdict {
    /// The table or figure (the claims' id part, e.g. `t4_8`).
    pub table: String,
    /// Its validation claims.
    pub claims: Vec<String>,
    /// Grid points (indices) where all of them pass.
    pub all_pass: Vec<usize>,
    /// Those of `all_pass` inside the seed's stated ranges.
    pub in_range: Vec<usize>,
    /// The point passing most of them (the first such), and how many it passes.
    pub best: Option<(usize, usize)>,
}

fn rate(passed: usize, all: usize) -> f64 {
    if all == 0 {
        0.0
    } else {
        passed as f64 / all as f64
    }
}

/// Red (0) through yellow to green (1); grey for NaN.
fn colour(v: f64) -> String {
    if v.is_nan() {
        return "#bbbbbb".into();
    }
    let v = v.clamp(0.0, 1.0);
    let (r, g) = if v < 0.5 {
        (215.0, 48.0 + (v / 0.5) * (200.0 - 48.0))
    } else {
        (
            215.0 - ((v - 0.5) / 0.5) * (215.0 - 26.0),
            200.0 - ((v - 0.5) / 0.5) * 50.0,
        )
    };
    format!("#{:02x}{:02x}{:02x}", r as u8, g as u8, 60u8)
}

/// An SVG grid of `rows` × column labels cells, each `(row, col, value in 0..1 or NaN, text)`.
fn heat_svg(
    title: &str,
    (x_name, cols): (&str, &[String]),
    (y_name, rows_labels): (&str, &[String]),
    rows: usize,
    cells: &[(usize, usize, f64, String)],
) -> String {
    let cw = if cols.len() > 12 { 44.0 } else { 70.0 };
    let ch = if rows > 12 { 16.0 } else { 34.0 };
    let left = 12.0
        + 6.5
            * rows_labels
                .iter()
                .map(|l| l.chars().count())
                .max()
                .unwrap_or(0)
                .max(y_name.chars().count()) as f64;
    let top = 56.0;
    let w = left + cw * cols.len() as f64 + 20.0;
    let h = top + ch * rows as f64 + 60.0;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w:.0}\" height=\"{h:.0}\" \
         viewBox=\"0 0 {w:.0} {h:.0}\" font-family=\"sans-serif\" font-size=\"11\">\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\
         <text x=\"{left:.0}\" y=\"20\" font-size=\"14\">{}</text>\
         <text x=\"4\" y=\"{:.0}\" font-weight=\"bold\">{}</text>",
        esc(title),
        top - 8.0,
        esc(y_name)
    );
    for (r, l) in rows_labels.iter().enumerate().take(rows) {
        let _ = write!(
            s,
            "<text x=\"4\" y=\"{:.1}\">{}</text>",
            top + ch * (r as f64 + 0.65),
            esc(l)
        );
    }
    for &(r, c, v, ref text) in cells {
        let (x, y) = (left + cw * c as f64, top + ch * r as f64);
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\" \
             stroke=\"white\"><title>{}</title></rect>",
            cw,
            ch,
            colour(v),
            esc(text)
        );
        if ch >= 20.0 {
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                x + cw / 2.0,
                y + ch * 0.62,
                esc(text)
            );
        }
    }
    let base = top + ch * rows as f64;
    for (c, l) in cols.iter().enumerate() {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            left + cw * (c as f64 + 0.5),
            base + 16.0,
            esc(l)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-weight=\"bold\">{}</text></svg>",
        left + cw * cols.len() as f64 / 2.0,
        base + 36.0,
        esc(x_name)
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::ClaimSpec;

    #[test]
    fn axes_parse_with_default_steps_and_refuse_nonsense() {
        let a: Axis = "t=50000..100000:6".parse().unwrap();
        assert_eq!(a.name, "t");
        assert_eq!(
            a.values,
            vec![50000.0, 60000.0, 70000.0, 80000.0, 90000.0, 100000.0]
        );
        let b: Axis = "limit=10..20".parse().unwrap();
        assert_eq!(b.values.len(), DEFAULT_STEPS);
        assert_eq!(b.values[2], 15.0);
        let one: Axis = "x=3..3:1".parse().unwrap();
        assert_eq!(one.values, vec![3.0]);
        for bad in [
            "t",
            "t=1",
            "=1..2",
            "t=2..1",
            "t=1..2:1",
            "t=1..2:0",
            "t=a..2",
            "t=1..inf",
            "t=1..2:x",
            "t-x=1..2",
            "t=1..2:51",
        ] {
            assert!(bad.parse::<Axis>().is_err(), "{bad}");
        }
    }

    fn claim(id: &str, v: Verdict, calibration: bool) -> ClaimResult {
        let mut c = ClaimResult::not_evaluated(
            ClaimSpec {
                calibration,
                ..ClaimSpec::bare(id)
            },
            String::new(),
        );
        c.verdict = v;
        c
    }

    #[test]
    fn tables_say_where_all_their_claims_pass_inside_the_seeds_range() {
        use Verdict::{Fail, Pass};
        let at = |t: f64, a: Verdict, b: Verdict| GridPoint {
            values: vec![t],
            claims: vec![
                claim("s.t1.a", a, false),
                claim("s.t1.b", b, false),
                claim("s.t2.c", Fail, false),
                claim("s.t2.fit", Pass, true),
            ],
        };
        let e = Exploration {
            study: "s".into(),
            axes: vec!["t=1..3:3".parse().unwrap()],
            points: vec![
                at(1.0, Pass, Fail),
                at(2.0, Pass, Pass),
                at(3.0, Pass, Pass),
            ],
            unstated: vec![Unstated {
                name: "t".into(),
                value: "2".into(),
                provenance: crate::study::Provenance::Chosen,
                section: None,
                fitted_on: vec![],
                range: Some([2.5, 10.0]),
                explore: true,
                note: String::new(),
            }],
        };
        let t = e.tables();
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].table.as_str(), t[0].claims.len()), ("t1", 2));
        assert_eq!(t[0].all_pass, vec![1, 2]);
        // Only t = 3 lies inside the seed's range [2.5, 10].
        assert_eq!(t[0].in_range, vec![2]);
        // The calibration claim is left out of its table and of the pass rate.
        assert_eq!(t[1].claims, vec!["s.t2.c".to_string()]);
        assert!(t[1].all_pass.is_empty());
        assert_eq!(e.points[1].validation_passed(), (2, 3));
        assert_eq!(e.best().len(), 2);
        let md = e.markdown();
        assert!(md.contains("| t1 | 2 | t = 3 | t = 2; t = 3 |"), "{md}");
        assert!(md.contains("| t2 | 1 | no | no |"), "{md}");
        let csv = e.points_csv().unwrap();
        assert_eq!(csv.lines().count(), 4);
        assert!(csv.lines().nth(1).unwrap().ends_with(",false"), "{csv}");
        assert_eq!(e.csv().unwrap().lines().count(), 1 + 3 * 4);
        assert!(e.heat_map_svg().starts_with("<svg"));
        assert!(e.claims_svg().contains("s.t2.c"));
    }
}
