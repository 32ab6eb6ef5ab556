//! `claims.csv` and `claims.json`: one flat row per claim, its columns declared once.

use super::*;

/// A CSV table (header, then one record per row; fields quoted only where they hold a comma,
/// a quote or a line break), as text.
pub fn csv_table<R, F>(header: &[&str], rows: R) -> Result<String, csv::Error>
where
    R: IntoIterator<Item = F>,
    F: IntoIterator,
    F::Item: AsRef<[u8]>,
{
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header)?;
    for r in rows {
        w.write_record(r)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| csv::Error::from(e.into_error()))?;
    String::from_utf8(bytes)
        .map_err(|e| csv::Error::from(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

/// Declares [`ClaimRow`] and, from the same field list, the columns of `claims.csv`: a column
/// per field, named and ordered as the fields are (as `claims.json`'s keys are), each value
/// written as its [`CsvCell`].
macro_rules! claim_row {
    (
        $(#[$meta:meta])*
        pub struct ClaimRow {
            $($(#[$fmeta:meta])* pub $field:ident: $ty:ty,)*
        }
    ) => {
        $(#[$meta])*
        pub struct ClaimRow {
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        /// `claims.csv`'s header.
        pub(super) const CSV_HEADER: &[&str] = &[$(stringify!($field)),*];

        impl ClaimRow {
            /// The row's `claims.csv` record.
            pub(super) fn csv_fields(&self) -> Vec<String> {
                vec![$(self.$field.csv_cell()),*]
            }
        }
    };
}

/// A [`ClaimRow`] value as a CSV field: as displayed, an absent value empty.
trait CsvCell {
    fn csv_cell(&self) -> String;
}

impl CsvCell for String {
    fn csv_cell(&self) -> String {
        self.clone()
    }
}

impl CsvCell for bool {
    fn csv_cell(&self) -> String {
        self.to_string()
    }
}

impl<T: std::fmt::Display> CsvCell for Option<T> {
    fn csv_cell(&self) -> String {
        self.as_ref().map(T::to_string).unwrap_or_default()
    }
}

claim_row! {
    /// The flat, script-friendly form of one claim (one CSV row, one JSON object).
    #[derive(Debug, Clone, Serialize)]
    pub struct ClaimRow {
        /// Claim id.
        pub id: String,
        /// The study it belongs to.
        pub study: String,
        /// Where the paper states it.
        pub source: String,
        /// What the paper states.
        pub statement: String,
        /// The paper's own words the claim tests (claims citing a seed).
        pub quote: Option<String>,
        /// The paper's number, if it gives one.
        pub paper_value: Option<f64>,
        /// The run or sweep that tests it.
        pub scenario: String,
        /// The measure the predicate is applied to.
        pub measure: Option<String>,
        /// The decisive point's x.
        pub x: Option<f64>,
        /// What x is.
        pub x_label: String,
        /// Mean across runs at the decisive point.
        pub mean: Option<f64>,
        /// Sample standard deviation across runs.
        pub sd: Option<f64>,
        /// Number of runs (0: analytic).
        pub n: Option<usize>,
        /// Lower end of the 95 % confidence interval of the mean.
        pub ci_lo: Option<f64>,
        /// Upper end of the 95 % confidence interval of the mean.
        pub ci_hi: Option<f64>,
        /// The measure's unit.
        pub unit: String,
        /// The predicate, in words.
        pub predicate: String,
        /// `pass` or `FAIL`.
        pub verdict: String,
        /// How the verdict was reached, in numbers.
        pub detail: String,
        /// Why the claim may not hold in rmcast, for a failed claim that gives a reason.
        pub explanation: Option<String>,
        /// Measured with reduced sweeps.
        pub quick: bool,
        /// What the claim tests: `simulation`, `formula` or `network`.
        pub tests: String,
        /// A calibration claim (an unstated value was fitted on it): reported apart, not in
        /// the validation pass rate.
        pub calibration: bool,
        /// For an inconclusive claim, the `--runs-factor` that would decide it if this run's
        /// means and SDs held (a projection; empty when none up to 1,000 times this run's
        /// runs would, and for every other verdict).
        pub decide_at_runs_factor: Option<u32>,
        /// The mutants under which the claim failed (`rmcast repro --mutants` only).
        pub killed_by: Option<Killers>,
        /// It passes, and no mutant refutes it (`--mutants` only): not counted as passed.
        pub cannot_fail: bool,
    }
}

/// The mutants that fail a claim: a list in `claims.json`, `;`-separated in `claims.csv`.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct Killers(pub Vec<String>);

impl std::fmt::Display for Killers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join(";"))
    }
}

impl ClaimRow {
    pub(super) fn new(s: &StudyReport, c: &ClaimResult, quick: bool, runs_factor: u32) -> Self {
        let study = &s.name;
        let m = s.mutation.as_ref().and_then(|m| m.claim(&c.spec.id));
        ClaimRow {
            id: c.spec.id.clone(),
            study: study.to_string(),
            source: c.spec.source.clone(),
            statement: c.spec.statement.clone(),
            quote: c.spec.quote.clone(),
            paper_value: c.spec.paper_value,
            scenario: c.spec.scenario.clone(),
            measure: c.spec.measure.clone(),
            x: c.x,
            x_label: c.x_label.clone(),
            mean: c.measured.map(|e| e.mean),
            sd: c.measured.map(|e| e.sd),
            n: c.measured.map(|e| e.n),
            ci_lo: c.measured.map(|e| e.ci_lo),
            ci_hi: c.measured.map(|e| e.ci_hi),
            unit: c.unit.clone(),
            predicate: c.spec.predicate.to_string(),
            verdict: c.verdict.word().to_string(),
            detail: c.detail.clone(),
            explanation: if c.failed() {
                c.explanation.clone()
            } else {
                None
            },
            quick,
            tests: c.spec.tests.word().to_string(),
            calibration: c.spec.calibration,
            decide_at_runs_factor: c.runs_factor_to_decide.map(|k| k * runs_factor),
            killed_by: m.map(|m| Killers(m.killed_by.iter().map(|k| k.to_string()).collect())),
            cannot_fail: m.is_some_and(|m| m.cannot_fail()),
        }
    }
}
