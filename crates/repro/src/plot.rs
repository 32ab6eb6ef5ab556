//! Plots as data, rendered to self-contained SVG (no fonts, no external files).
//!
//! Three kinds of series, one look each:
//!
//! * [`Style::Measured`]: rmcast's curve, a solid line with markers and a shaded band for the
//!   95 % confidence interval of the mean across runs;
//! * [`Style::Paper`]: the paper's tabulated values, as hollow diamonds without a line;
//! * [`Style::Bound`]: an analytic bound or formula, as a dashed line.
//!
//! Every plot must have axis labels with units and a legend entry for every series;
//! [`Plot::check`] enforces it and the report refuses a plot that fails it. Rendering is in
//! `svg`; a plot declared as data is a [`crate::plot_spec::PlotSpec`].

mod svg;

pub use svg::{esc, panels_svg};

use crate::stats::Estimate;
use serde::Serialize;

/// A plot axis: what is on it and in which unit (`"dimensionless"` for ratios).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Axis {
    /// What is on the axis.
    pub label: String,
    /// Its unit.
    pub unit: String,
}

impl Axis {
    /// An axis of `label` in `unit`.
    pub fn new(label: impl Into<String>, unit: impl Into<String>) -> Self {
        Axis {
            label: label.into(),
            unit: unit.into(),
        }
    }

    fn text(&self) -> String {
        format!("{} ({})", self.label, self.unit)
    }
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Style {
    /// rmcast's measurement: line, markers, 95 % CI band.
    Measured,
    /// The paper's values: hollow diamonds.
    Paper,
    /// An analytic bound or formula: dashed line.
    Bound,
}

/// One point of a series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PlotPoint {
    /// Its x.
    pub x: f64,
    /// Its y (the mean for a measured series).
    pub y: f64,
    /// Band (95 % CI) for measured series; equal to `y` otherwise.
    pub lo: f64,
    /// Band (95 % CI) top; equal to `y` for unmeasured series.
    pub hi: f64,
}

/// One curve of a plot, with its legend entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlotSeries {
    /// Legend entry.
    pub label: String,
    /// How it is drawn.
    pub style: Style,
    /// Palette index; series that belong together (a configuration's measured curve, the
    /// paper's points and its bound) share a colour.
    pub color: usize,
    /// Its points.
    pub points: Vec<PlotPoint>,
}

impl PlotSeries {
    /// rmcast's measurement: line, markers and the 95 % CI band.
    pub fn measured(label: impl Into<String>, color: usize, points: &[(f64, Estimate)]) -> Self {
        PlotSeries {
            label: label.into(),
            style: Style::Measured,
            color,
            points: points
                .iter()
                .map(|&(x, e)| PlotPoint {
                    x,
                    y: e.mean,
                    lo: e.ci_lo,
                    hi: e.ci_hi,
                })
                .collect(),
        }
    }

    fn plain(label: String, style: Style, color: usize, points: &[(f64, f64)]) -> Self {
        PlotSeries {
            label,
            style,
            color,
            points: points
                .iter()
                .map(|&(x, y)| PlotPoint { x, y, lo: y, hi: y })
                .collect(),
        }
    }

    /// The paper's tabulated values, as points.
    pub fn paper(label: impl Into<String>, color: usize, points: &[(f64, f64)]) -> Self {
        Self::plain(label.into(), Style::Paper, color, points)
    }

    /// An analytic bound or formula, as a dashed line.
    pub fn bound(label: impl Into<String>, color: usize, points: &[(f64, f64)]) -> Self {
        Self::plain(label.into(), Style::Bound, color, points)
    }
}

/// One figure of a report; written as `<id>.svg`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plot {
    /// File stem, unique in a report: `<study>-<name>`, lowercase letters, digits, `-`, `_`.
    pub id: String,
    /// Title above the figure.
    pub title: String,
    /// One or two sentences under the figure: what it shows and how to read it.
    pub caption: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// The curves.
    pub series: Vec<PlotSeries>,
}

/// Why a plot cannot go into a report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plot `{id}`: {what}")]
pub struct PlotError {
    /// The plot's id.
    pub id: String,
    /// What is wrong with it.
    pub what: String,
}

impl Plot {
    /// Every plot has axis labels with units, a legend entry per series and data to show.
    pub fn check(&self) -> Result<(), PlotError> {
        let err = |what: &str| PlotError {
            id: self.id.clone(),
            what: what.to_string(),
        };
        if self.id.is_empty()
            || !self
                .id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        {
            return Err(err("id must be lowercase letters, digits, '-' or '_'"));
        }
        if self.title.trim().is_empty() {
            return Err(err("no title"));
        }
        for (name, a) in [("x", &self.x), ("y", &self.y)] {
            if a.label.trim().is_empty() || a.unit.trim().is_empty() {
                return Err(err(&format!("{name} axis needs a label and a unit")));
            }
        }
        if self.series.is_empty() {
            return Err(err("no series"));
        }
        for s in &self.series {
            if s.label.trim().is_empty() {
                return Err(err("every series needs a legend label"));
            }
            if s.points.is_empty() {
                return Err(err(&format!("series `{}` has no points", s.label)));
            }
            if s.points.iter().any(|p| {
                !(p.x.is_finite() && p.y.is_finite() && p.lo.is_finite() && p.hi.is_finite())
            }) {
                return Err(err(&format!("series `{}` has a non-finite value", s.label)));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::svg::ticks;
    use super::*;

    fn plot() -> Plot {
        let e = |v: f64| Estimate::from_samples(&[v - 0.2, v, v + 0.2]).unwrap();
        Plot {
            id: "demo-rt".into(),
            title: "Relative throughput <MSAW>".into(),
            caption: "test".into(),
            x: Axis::new("receivers", "count"),
            y: Axis::new("relative throughput", "dimensionless"),
            series: vec![
                PlotSeries::measured("rmcast", 0, &[(5.0, e(3.5)), (10.0, e(4.8))]),
                PlotSeries::paper("thesis Table 4.1", 0, &[(5.0, 3.504), (10.0, 4.85)]),
                PlotSeries::bound("UBRT (eq. 4.5)", 1, &[(5.0, 4.28), (10.0, 7.1)]),
            ],
        }
    }

    #[test]
    fn svg_has_labels_legend_band_and_escapes() {
        let svg = plot().to_svg().unwrap();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.contains("receivers (count)"));
        assert!(svg.contains("relative throughput (dimensionless)"));
        assert!(svg.contains("Relative throughput &lt;MSAW&gt;"));
        assert!(svg.contains("class=\"band\""));
        assert!(svg.contains("class=\"bound\""));
        assert!(svg.contains("stroke-dasharray"));
        assert_eq!(svg.matches("class=\"paper\"").count(), 2);
        assert!(svg.contains("thesis Table 4.1"));
        assert!(svg.trim_end().ends_with("</svg>"));
        // Deterministic.
        assert_eq!(svg, plot().to_svg().unwrap());
    }

    #[test]
    fn panels_sit_side_by_side_in_one_document() {
        let two = panels_svg(&[plot(), plot()]).unwrap();
        assert!(two.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" width="1560""#));
        assert!(two.contains(r#"<svg x="0" y="0" "#));
        assert!(two.contains(r#"<svg x="780" y="0" "#));
        assert_eq!(two.matches("<svg ").count(), 3);
        let mut bad = plot();
        bad.y.unit.clear();
        assert!(panels_svg(&[plot(), bad]).is_err());
    }

    #[test]
    fn check_refuses_missing_units_legend_or_data() {
        let mut p = plot();
        p.y.unit.clear();
        assert!(p.check().is_err());
        let mut p = plot();
        p.series[1].label = " ".into();
        assert!(p.check().is_err());
        let mut p = plot();
        p.series[0].points[0].y = f64::NAN;
        assert!(p.check().is_err());
        let mut p = plot();
        p.id = "Bad/Name".into();
        assert!(p.check().is_err());
        assert!(plot().check().is_ok());
    }

    #[test]
    fn ticks_are_nice_and_cover_data() {
        let (a, b, t) = ticks(3.2, 17.9, true);
        assert_eq!(a, 0.0);
        assert!(b >= 17.9);
        assert!(t.len() >= 4 && t.len() <= 12, "{t:?}");
        let (a, b, _) = ticks(12656.0, 12656.0, false);
        assert!(a < 12656.0 && b > 12656.0);
    }
}
