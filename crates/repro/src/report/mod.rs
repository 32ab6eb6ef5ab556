//! The report: `report.md`, `index.html` (self-contained, SVGs inline), `claims.csv`,
//! `claims.json` and one SVG per plot, all in one directory.
//!
//! The files depend only on the studies' results (no timestamps, no host names), so the same
//! run gives byte-identical files.

use crate::claim::{fmt_num, ClaimResult};
use crate::plot::esc;
use crate::study::{StudyReport, Sweeps};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

mod markup;
mod rows;
pub(crate) use markup::Markup;
use markup::{md_cell, md_inline_to_html};
use rows::CSV_HEADER;
pub use rows::{csv_table, ClaimRow};

/// Everything one `rmcast repro` invocation produced.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// How much of the sweeps was run.
    pub sweeps: Sweeps,
    /// Runs per point as a multiple of the mode's (`--runs-factor`; 1 by default).
    pub runs_factor: u32,
    /// Every study's section, in report order.
    pub studies: Vec<StudyReport>,
    /// The commit the running tool was built from, as it says itself (the `rmcast` binary's
    /// `RMCAST_COMMIT`: a short id, `-dirty` with uncommitted changes, or `unknown`); `None`
    /// where the caller does not know it.
    pub commit: Option<String>,
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// A plot failed its check.
    #[error(transparent)]
    Plot(#[from] crate::plot::PlotError),
    /// The CSV encoder failed.
    #[error("cannot encode CSV: {0}")]
    Csv(#[from] csv::Error),
    /// The JSON encoder failed.
    #[error("cannot encode JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// The files written, for the caller to print.
#[derive(Debug, Clone)]
pub struct Written {
    /// The report folder.
    pub dir: PathBuf,
    /// `report.md`.
    pub markdown: PathBuf,
    /// `index.html`.
    pub html: PathBuf,
    /// `claims.csv`.
    pub csv: PathBuf,
    /// `claims.json`.
    pub json: PathBuf,
    /// One SVG per plot.
    pub svgs: Vec<PathBuf>,
}

impl Report {
    /// How many claims passed.
    pub fn passed(&self) -> usize {
        self.studies.iter().map(|s| s.passed()).sum()
    }
    /// How many claims failed.
    pub fn failed(&self) -> usize {
        self.studies.iter().map(|s| s.failed()).sum()
    }
    /// How many claims are inconclusive.
    pub fn inconclusive(&self) -> usize {
        self.studies.iter().map(|s| s.inconclusive()).sum()
    }

    /// The line for the inconclusive claims, `None` when there are none: what inconclusive
    /// means, and how many of them two, four and ten times this run's runs would decide if
    /// the means and SDs held (each claim's [`ClaimResult::runs_factor_to_decide`]), as the
    /// `--runs-factor` to ask for.
    pub fn inconclusive_line(&self) -> Option<String> {
        let n = self.inconclusive();
        if n == 0 {
            return None;
        }
        let needs: Vec<u32> = self
            .studies
            .iter()
            .flat_map(|s| &s.claims)
            .filter_map(|c| c.runs_factor_to_decide)
            .collect();
        let decided = [2, 4, 10].map(|k| {
            let f = k * self.runs_factor;
            let m = needs.iter().filter(|&&need| need <= k).count();
            format!("--runs-factor {f} would decide {m}")
        });
        Some(format!(
            "{n} inconclusive: a 95 % interval straddles the claim's band or bound; if this \
             run's means and spreads held, {} of them",
            decided.join(", ")
        ))
    }

    /// Pass rate by what the claims test (simulation, formula, network), e.g.
    /// `simulation claims: 180 of 251 passed (71.7 %); formula: 35 of 35; network: 2 of 3`,
    /// calibration claims apart (left out of those counts), and the claims quick mode did
    /// not run.
    pub fn tests_line(&self) -> String {
        use crate::claim::Tests;
        let mut parts = Vec::new();
        for t in [Tests::Simulation, Tests::Formula, Tests::Network] {
            let of: Vec<_> = self
                .studies
                .iter()
                .flat_map(|s| &s.claims)
                .filter(|c| c.spec.tests == t && !c.spec.calibration)
                .collect();
            if of.is_empty() {
                continue;
            }
            let passed = of.iter().filter(|c| c.passed()).count();
            parts.push(if t == Tests::Simulation {
                format!(
                    "simulation claims: {passed} of {} passed ({:.1} %)",
                    of.len(),
                    100.0 * passed as f64 / of.len() as f64
                )
            } else {
                format!("{}: {passed} of {}", t.word(), of.len())
            });
        }
        let calibration: Vec<_> = self
            .studies
            .iter()
            .flat_map(|s| &s.claims)
            .filter(|c| c.spec.calibration)
            .collect();
        if !calibration.is_empty() {
            let passed = calibration.iter().filter(|c| c.passed()).count();
            parts.push(format!(
                "calibration (fitted on, not counted): {passed} of {}",
                calibration.len()
            ));
        }
        let not_run: usize = self.studies.iter().map(|s| s.not_run.len()).sum();
        if not_run > 0 {
            parts.push(format!("{not_run} not run (full mode only)"));
        }
        parts.join("; ")
    }

    /// The summary line printed last: `claims: N passed, K inconclusive, M failed`.
    pub fn summary_line(&self) -> String {
        let cannot: usize = self.studies.iter().map(|s| s.cannot_fail()).sum();
        format!(
            "claims: {} passed,{} {} inconclusive, {} failed",
            self.passed(),
            if self.studies.iter().any(|s| s.mutation.is_some()) {
                format!(" {cannot} cannot fail,")
            } else {
                String::new()
            },
            self.inconclusive(),
            self.failed()
        )
    }

    /// The mutation score line (`--mutants` only).
    pub fn mutation_line(&self) -> Option<String> {
        crate::mutants::score_line(&self.studies)
    }

    /// All claims, flat.
    pub fn rows(&self) -> Vec<ClaimRow> {
        self.studies
            .iter()
            .flat_map(|s| {
                s.claims
                    .iter()
                    .map(|c| ClaimRow::new(s, c, self.sweeps == Sweeps::Quick, self.runs_factor))
            })
            .collect()
    }

    /// Every claim as a row of `claims.csv`.
    pub fn claims_csv(&self) -> Result<String, ReportError> {
        Ok(csv_table(
            CSV_HEADER,
            self.rows().iter().map(ClaimRow::csv_fields),
        )?)
    }

    /// Every claim as an object of `claims.json`.
    pub fn claims_json(&self) -> Result<String, ReportError> {
        Ok(serde_json::to_string_pretty(&self.rows())? + "\n")
    }

    /// Write every file into `dir` (created if needed).
    pub fn write(&self, dir: &Path) -> Result<Written, ReportError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| ReportError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let mut svgs = Vec::new();
        let mut inline = std::collections::BTreeMap::new();
        for s in &self.studies {
            for p in &s.plots {
                let svg = p.to_svg()?;
                let path = dir.join(format!("{}.svg", p.id));
                std::fs::write(&path, &svg).map_err(io(&path))?;
                svgs.push(path);
                inline.insert(p.id.clone(), svg);
            }
        }
        for s in &self.studies {
            for (i, c) in crate::explored::of_study(&s.name).enumerate() {
                let path = dir.join(crate::explored::heat_map_file(&s.name, i));
                std::fs::write(&path, c.heat_map).map_err(io(&path))?;
                svgs.push(path);
            }
        }
        let w = Written {
            dir: dir.to_path_buf(),
            markdown: dir.join("report.md"),
            html: dir.join("index.html"),
            csv: dir.join("claims.csv"),
            json: dir.join("claims.json"),
            svgs,
        };
        std::fs::write(&w.markdown, self.markdown()).map_err(io(&w.markdown))?;
        std::fs::write(&w.html, self.html(&inline)).map_err(io(&w.html))?;
        std::fs::write(&w.csv, self.claims_csv()?).map_err(io(&w.csv))?;
        std::fs::write(&w.json, self.claims_json()?).map_err(io(&w.json))?;
        Ok(w)
    }

    fn mode_text(&self) -> String {
        let text = self.runs_text();
        match &self.commit {
            Some(c) => format!("{text} Built from commit `{c}`."),
            None => text,
        }
    }

    fn runs_text(&self) -> String {
        let mode = self.sweeps_text();
        if self.runs_factor > 1 {
            format!(
                "{mode} **Runs per point: {} times the mode's** (`--runs-factor {}`): the first \
                 runs at every point are the mode's own, the rest new seeds, so intervals are \
                 narrower and fewer claims are inconclusive.",
                self.runs_factor, self.runs_factor
            )
        } else {
            mode.to_string()
        }
    }

    fn sweeps_text(&self) -> &'static str {
        match self.sweeps {
            Sweeps::Quick => {
                "**Quick mode** (`--quick`): reduced sweeps with fewer points and fewer runs per \
                 point, for CI. Confidence intervals are wider and some points of the full \
                 sweeps are missing; run without `--quick` for the full study."
            }
            Sweeps::Full => {
                "Full mode: every sweep point the claims and the paper's figures need, with the \
                 runs per point the studies specify; the largest beyond-the-paper sizes and the \
                 extra runs that change no claim are left to `--extended`."
            }
            Sweeps::Extended => {
                "**Extended mode** (`--extended`): full mode plus the largest beyond-the-paper \
                 sizes and every extra run."
            }
        }
    }

    /// `report.md`.
    pub fn markdown(&self) -> String {
        let mut m = String::new();
        let _ = writeln!(m, "# rmcast reproduction report\n");
        let _ = writeln!(m, "{}\n", self.mode_text());
        let _ = writeln!(m, "{}\n", self.summary_line());
        let _ = writeln!(m, "{}\n", self.tests_line());
        if let Some(line) = self.inconclusive_line() {
            let _ = writeln!(m, "{line}\n");
        }
        if let Some(line) = self.mutation_line() {
            let _ = writeln!(m, "{line}\n");
        }
        self.summary_table(Markup::Markdown, &mut m);
        for s in &self.studies {
            let _ = writeln!(m, "## {}\n", s.name);
            let _ = writeln!(m, "**{}** — {}\n", s.title, s.source);
            if let Some(e) = &s.error {
                let _ = writeln!(m, "> **The study did not run:** {e}\n");
            }
            let _ = writeln!(m, "### Setup\n");
            if !s.setup.summary.is_empty() {
                let _ = writeln!(m, "{}\n", s.setup.summary);
            }
            if !s.setup.topology.is_empty() {
                let _ = writeln!(m, "**Topology.** {}\n", s.setup.topology);
            }
            setup_tables(Markup::Markdown, &mut m, s);
            let _ = writeln!(m, "### Claims\n");
            let _ = writeln!(
                m,
                "| claim | source | statement | paper | measured | predicate | verdict |\n|---|---|---|---|---|---|---|"
            );
            for c in &s.claims {
                let _ = writeln!(
                    m,
                    "| `{}` | {} | {} | {} | {} | {} | **{}** |",
                    c.spec.id,
                    md_cell(&c.spec.source),
                    md_cell(&c.spec.statement_with_quote()),
                    c.spec
                        .paper_value
                        .map(fmt_num)
                        .unwrap_or_else(|| "—".into()),
                    md_cell(&c.measured_text()),
                    md_cell(&c.spec.predicate.to_string()),
                    c.verdict
                );
            }
            m.push('\n');
            let failed: Vec<&ClaimResult> = s.claims.iter().filter(|c| c.failed()).collect();
            if !failed.is_empty() {
                let _ = writeln!(m, "### Failed claims\n");
                for c in failed {
                    let _ = writeln!(
                        m,
                        "* `{}` — {}\n  * Measured: {}\n  * Scenario: {}\n  * Explanation: {}",
                        c.spec.id,
                        c.detail,
                        c.measured_text(),
                        c.spec.scenario,
                        explanation(c)
                    );
                }
                m.push('\n');
            }
            crate::explored::section(Markup::Markdown, &mut m, s);
            crate::mutants::section(Markup::Markdown, &mut m, s);
            let _ = writeln!(
                m,
                "<details><summary>How each claim was decided</summary>\n"
            );
            for c in &s.claims {
                let _ = writeln!(
                    m,
                    "* `{}` ({}): {}. Scenario: {}.",
                    c.spec.id, c.verdict, c.detail, c.spec.scenario
                );
            }
            let _ = writeln!(m, "\n</details>\n");
            if !s.plots.is_empty() {
                let _ = writeln!(m, "### Plots\n");
                for p in &s.plots {
                    let _ = writeln!(m, "![{}]({}.svg)\n\n{}\n", p.title, p.id, p.caption);
                }
            }
            if !s.notes.is_empty() {
                let _ = writeln!(m, "### Notes\n");
                for n in &s.notes {
                    let _ = writeln!(m, "* {n}");
                }
                m.push('\n');
            }
        }
        let _ = writeln!(
            m,
            "---\nFiles: `claims.csv` and `claims.json` (one row per claim), one SVG per plot, \
             `index.html` (this report with the plots inline)."
        );
        m
    }

    /// `index.html`: self-contained, the SVGs inline.
    pub fn html(&self, svgs: &std::collections::BTreeMap<String, String>) -> String {
        let mut h = String::new();
        h.push_str(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>rmcast reproduction report</title>\n<style>\n\
             body{font-family:system-ui,-apple-system,'DejaVu Sans',sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}\n\
             table{border-collapse:collapse;margin:1em 0;font-size:0.92em}\n\
             th,td{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}\n\
             th{background:#f3f3f3}\n\
             .pass{color:#176f2c;font-weight:bold}.fail{color:#b00020;font-weight:bold}.inconclusive{color:#8a5a00;font-weight:bold}\n\
             .summary{font-size:1.2em;font-weight:bold}\n\
             .mode{background:#fff7d6;border:1px solid #e6d27a;padding:0.5em 1em}\n\
             figure{margin:1.5em 0}figcaption{color:#444;max-width:780px}\n\
             code{background:#f4f4f4;padding:0 3px}\n\
             </style>\n</head>\n<body>\n<h1>rmcast reproduction report</h1>\n",
        );
        let _ = writeln!(
            h,
            "<p class=\"mode\">{}</p>",
            md_inline_to_html(&self.mode_text())
        );
        let _ = writeln!(
            h,
            "<p class=\"summary\" id=\"summary\">{}</p>",
            esc(&self.summary_line())
        );
        let _ = writeln!(h, "<p class=\"summary\">{}</p>", esc(&self.tests_line()));
        if let Some(line) = self.inconclusive_line() {
            let _ = writeln!(h, "<p class=\"summary\">{}</p>", esc(&line));
        }
        if let Some(line) = self.mutation_line() {
            let _ = writeln!(h, "<p class=\"summary\">{}</p>", esc(&line));
        }
        self.summary_table(Markup::Html, &mut h);
        for s in &self.studies {
            let _ = writeln!(
                h,
                "<section id=\"{}\">\n<h2>{}</h2>\n<p><strong>{}</strong> — {}</p>",
                anchor(&s.name),
                esc(&s.name),
                esc(&s.title),
                esc(&s.source)
            );
            if let Some(e) = &s.error {
                let _ = writeln!(h, "<p class=\"fail\">The study did not run: {}</p>", esc(e));
            }
            h.push_str("<h3>Setup</h3>\n");
            if !s.setup.summary.is_empty() {
                let _ = writeln!(h, "<p>{}</p>", md_inline_to_html(&s.setup.summary));
            }
            if !s.setup.topology.is_empty() {
                let _ = writeln!(
                    h,
                    "<p><strong>Topology.</strong> {}</p>",
                    md_inline_to_html(&s.setup.topology)
                );
            }
            setup_tables(Markup::Html, &mut h, s);
            h.push_str("<h3>Claims</h3>\n<table><tr><th>claim</th><th>source</th><th>statement</th><th>paper</th><th>measured</th><th>predicate</th><th>verdict</th></tr>\n");
            for c in &s.claims {
                let cls = c.verdict.word();
                let _ = writeln!(
                    h,
                    "<tr class=\"claim\" data-verdict=\"{cls}\"><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{cls}\" title=\"{}\">{}</td></tr>",
                    esc(&c.spec.id),
                    esc(&c.spec.source),
                    esc(&c.spec.statement_with_quote()),
                    c.spec.paper_value.map(fmt_num).unwrap_or_else(|| "—".into()),
                    esc(&c.measured_text()),
                    esc(&c.spec.predicate.to_string()),
                    esc(&c.detail),
                    c.verdict
                );
            }
            h.push_str("</table>\n");
            let failed: Vec<&ClaimResult> = s.claims.iter().filter(|c| c.failed()).collect();
            if !failed.is_empty() {
                h.push_str("<h3>Failed claims</h3>\n<ul>\n");
                for c in failed {
                    let _ = writeln!(
                        h,
                        "<li><code>{}</code> — {}<br>Measured: {}<br>Scenario: {}<br>Explanation: {}</li>",
                        esc(&c.spec.id),
                        esc(&c.detail),
                        esc(&c.measured_text()),
                        esc(&c.spec.scenario),
                        esc(&explanation(c))
                    );
                }
                h.push_str("</ul>\n");
            }
            crate::explored::section(Markup::Html, &mut h, s);
            crate::mutants::section(Markup::Html, &mut h, s);
            h.push_str("<details><summary>How each claim was decided</summary><ul>\n");
            for c in &s.claims {
                let _ = writeln!(
                    h,
                    "<li><code>{}</code> ({}): {}. Scenario: {}.</li>",
                    esc(&c.spec.id),
                    c.verdict,
                    esc(&c.detail),
                    esc(&c.spec.scenario)
                );
            }
            h.push_str("</ul></details>\n");
            if !s.plots.is_empty() {
                h.push_str("<h3>Plots</h3>\n");
                for p in &s.plots {
                    let svg = svgs.get(&p.id).map(String::as_str).unwrap_or("");
                    let _ = writeln!(
                        h,
                        "<figure>\n{svg}<figcaption>{} <a href=\"{}.svg\">(SVG)</a></figcaption>\n</figure>",
                        md_inline_to_html(&p.caption),
                        esc(&p.id)
                    );
                }
            }
            if !s.notes.is_empty() {
                h.push_str("<h3>Notes</h3>\n<ul>\n");
                for n in &s.notes {
                    let _ = writeln!(h, "<li>{}</li>", md_inline_to_html(n));
                }
                h.push_str("</ul>\n");
            }
            h.push_str("</section>\n");
        }
        h.push_str("<hr><p>Files beside this page: <code>report.md</code>, <code>claims.csv</code>, <code>claims.json</code>, one SVG per plot.</p>\n</body>\n</html>\n");
        h
    }
}

fn explanation(c: &ClaimResult) -> String {
    match &c.explanation {
        Some(e) => e.clone(),
        None => "none recorded by the study: this failure is unexplained and needs investigation."
            .to_string(),
    }
}

fn anchor(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

impl Report {
    /// The table of studies with their claim counts, each linked to its section.
    fn summary_table(&self, f: Markup, out: &mut String) {
        f.table(
            out,
            &[
                "study",
                "source",
                "claims",
                "passed",
                "inconclusive",
                "failed",
            ],
            self.studies.iter().map(|s| {
                vec![
                    f.link(&s.name, &anchor(&s.name)),
                    f.text(&s.source),
                    s.claims.len().to_string(),
                    s.passed().to_string(),
                    s.inconclusive().to_string(),
                    s.failed().to_string(),
                ]
            }),
        );
    }
}

/// A study's parameter table and the table of the choices its source left to rmcast (each
/// left out when empty).
fn setup_tables(f: Markup, out: &mut String, s: &StudyReport) {
    let pairs = |pairs: &[(String, String)]| -> Vec<Vec<String>> {
        pairs
            .iter()
            .map(|(k, v)| vec![f.inline(k), f.inline(v)])
            .collect()
    };
    if !s.setup.parameters.is_empty() {
        f.table(out, &["parameter", "value"], pairs(&s.setup.parameters));
    }
    if !s.setup.choices.is_empty() {
        f.para(out, "Left unspecified by the source, chosen by rmcast:");
        f.table(
            out,
            &["unspecified", "rmcast's choice"],
            pairs(&s.setup.choices),
        );
    }
    if !s.setup.unstated.is_empty() {
        f.para(
            out,
            "Values the seed leaves unstated, as data (`[[unstated]]` in the study's \
             setup.toml): the value the runs use and where it comes from. Claims a value was \
             fitted on are calibration claims, reported apart and left out of the pass rate.",
        );
        let rows: Vec<Vec<String>> = s
            .setup
            .unstated
            .iter()
            .map(|u| {
                vec![
                    f.inline(&format!("`{}`", u.name)),
                    f.inline(&u.value),
                    f.inline(&u.provenance_text()),
                    f.inline(&u.range.map_or(String::new(), |[lo, hi]| {
                        format!("{} – {}", fmt_num(lo), fmt_num(hi))
                    })),
                    f.inline(&u.note),
                ]
            })
            .collect();
        f.table(
            out,
            &["unstated", "value", "provenance", "seed's range", "note"],
            rows,
        );
    }
}

#[cfg(test)]
impl Report {
    /// A report of one study `s` holding `claims`, for tests of what reads reports.
    pub(crate) fn of_claims(sweeps: Sweeps, runs_factor: u32, claims: Vec<ClaimResult>) -> Self {
        Report {
            sweeps,
            runs_factor,
            studies: vec![crate::study::StudyReport {
                claims,
                ..crate::study::StudyReport::new(crate::study::About {
                    name: "s",
                    title: "",
                    source: "",
                    claims_toml: "",
                })
            }],
            commit: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inconclusive_line_counts_what_more_runs_would_decide_as_runs_factors() {
        use crate::claim::{ClaimSpec, Verdict};
        let claim = |id: &str, verdict: Verdict, k: Option<u32>| ClaimResult {
            verdict,
            runs_factor_to_decide: k,
            ..ClaimResult::not_evaluated(ClaimSpec::bare(id), String::new())
        };
        let report = |f, claims| Report::of_claims(Sweeps::Full, f, claims);
        let i = Verdict::Inconclusive;
        let claims = vec![
            claim("s.a", i, Some(2)),
            claim("s.b", i, Some(3)),
            claim("s.c", i, Some(40)),
            claim("s.d", i, None),
            claim("s.e", Verdict::Pass, None),
        ];
        // A run already at factor 2: the factors to ask for are 4, 8 and 20.
        let r = report(2, claims.clone());
        assert_eq!(
            r.inconclusive_line().unwrap(),
            "4 inconclusive: a 95 % interval straddles the claim's band or bound; if this run's \
             means and spreads held, --runs-factor 4 would decide 1, --runs-factor 8 would \
             decide 2, --runs-factor 20 would decide 2 of them"
        );
        assert!(r.markdown().contains("--runs-factor 8 would decide 2"));
        let rows = r.rows();
        let want: Vec<Option<u32>> = vec![Some(4), Some(6), Some(80), None, None];
        let got: Vec<Option<u32>> = rows.iter().map(|r| r.decide_at_runs_factor).collect();
        assert_eq!(got, want);
        // The column, wherever it stands: its header's index in the CSV.
        let csv = r.claims_csv().unwrap();
        let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let col = head
            .iter()
            .position(|h| *h == "decide_at_runs_factor")
            .unwrap();
        let row: Vec<&str> = csv.lines().nth(2).unwrap().split(',').collect();
        assert_eq!(row[row.len() - head.len() + col], "6");
        assert_eq!(
            report(1, vec![claim("s.e", Verdict::Pass, None)]).inconclusive_line(),
            None
        );
    }

    #[test]
    fn csv_quotes_commas_quotes_and_newlines() {
        let t = csv_table(&["h"], [["plain"], ["a,b"], ["say \"hi\""], ["x\ny"]]).unwrap();
        assert_eq!(t, "h\nplain\n\"a,b\"\n\"say \"\"hi\"\"\"\n\"x\ny\"\n");
    }

    #[test]
    fn inline_markdown_is_escaped_then_tagged() {
        assert_eq!(
            md_inline_to_html("a `x<y` **b** & c"),
            "a <code>x&lt;y</code> <strong>b</strong> &amp; c"
        );
    }
}
