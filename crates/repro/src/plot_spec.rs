//! Plots declared as data: a `[[plot]]` table of a study's `plots.toml` names its text, its axes
//! and the measures or paper tables its curves draw; [`PlotSpec::plot`] makes the [`Plot`].

use crate::measure::{means, Measures};
use crate::plot::{Axis, Plot, PlotSeries};
use crate::study::{RunCtx, StudyError};
use serde::Deserialize;

/// A plot declared as data, e.g. a `[[plot]]` table of a study's `plots.toml`: its text, its
/// axes and what its curves draw.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// The plot's id ([`Plot::id`]).
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its caption.
    pub caption: String,
    /// Horizontal axis: label and unit.
    pub x: (String, String),
    /// Vertical axis: label and unit.
    pub y: (String, String),
    /// Its curves.
    #[serde(default)]
    pub series: Vec<SeriesSpec>,
}

/// One curve of a [`PlotSpec`]: a measure the study recorded, drawn as a measured curve (or
/// its means as a dashed bound), or a paper table of the claims file, drawn as points.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeriesSpec {
    /// Legend entry.
    pub label: String,
    /// The measure it draws.
    #[serde(default)]
    pub measure: Option<String>,
    /// With `measure`: draw the measure's means as an analytic bound.
    #[serde(default)]
    pub bound: bool,
    /// The paper table (`[paper.<name>]` of the claims file) it draws instead of a measure.
    #[serde(default)]
    pub paper: Option<String>,
    /// Palette index; the curve's position in the plot when absent.
    #[serde(default)]
    pub color: Option<usize>,
}

impl SeriesSpec {
    /// The measured curve of `measure`, legend entry `label`.
    pub fn measured(label: impl Into<String>, measure: impl Into<String>) -> Self {
        SeriesSpec {
            label: label.into(),
            measure: Some(measure.into()),
            bound: false,
            paper: None,
            color: None,
        }
    }
}

/// The `[[plot]]` tables of a plots file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlotFile {
    plot: Vec<PlotSpec>,
}

impl PlotSpec {
    /// The `[[plot]]` tables of a plots file (TOML), in file order; `file` names it in an error.
    pub fn parse_all(file: &str, toml_text: &str) -> Result<Vec<PlotSpec>, StudyError> {
        toml::from_str::<PlotFile>(toml_text)
            .map(|f| f.plot)
            .map_err(|e| StudyError::Run(format!("{file}: {e}")))
    }

    /// The plot, its curves drawn from `m` (no points where `m` has no such series) and the
    /// paper tables of `ctx`'s claims file.
    pub fn plot(&self, m: &Measures, ctx: &RunCtx<'_>) -> Result<Plot, StudyError> {
        let mut series = Vec::new();
        for (i, s) in self.series.iter().enumerate() {
            let (label, color) = (s.label.as_str(), s.color.unwrap_or(i));
            series.push(match (&s.measure, &s.paper) {
                (Some(name), None) if s.bound => PlotSeries::bound(label, color, &means(m, name)),
                (Some(name), None) => PlotSeries::measured(label, color, &m.points(name)),
                (None, Some(table)) => PlotSeries::paper(label, color, &ctx.paper(table)?.points()),
                _ => {
                    return Err(StudyError::Run(format!(
                        "plot `{}`, curve `{label}`: give a measure or a paper table",
                        self.id
                    )))
                }
            });
        }
        Ok(Plot {
            id: self.id.clone(),
            title: self.title.clone(),
            caption: self.caption.clone(),
            x: Axis::new(&self.x.0, &self.x.1),
            y: Axis::new(&self.y.0, &self.y.1),
            series,
        })
    }
}
