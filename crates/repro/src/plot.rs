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
//! [`Plot::check`] enforces it and the report refuses a plot that fails it.

use crate::claim::fmt_num;
use crate::measure::Measures;
use crate::stats::Estimate;
use crate::study::{RunCtx, StudyError};
use crate::sweep::means;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

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

/// Why a plot cannot go into a report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plot `{id}`: {what}")]
pub struct PlotError {
    /// The plot's id.
    pub id: String,
    /// What is wrong with it.
    pub what: String,
}

/// Size of one rendered plot, px.
const W: f64 = 780.0;
const H: f64 = 440.0;

const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
];

fn color(i: usize) -> &'static str {
    PALETTE.get(i % PALETTE.len()).copied().unwrap_or("#000000")
}

/// XML text escaping.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A "nice" tick step (1, 2, 2.5 or 5 × 10^k) giving about `target` intervals over `span`.
fn nice_step(span: f64, target: f64) -> f64 {
    if span.is_nan() || span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / target;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nf = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nf * mag
}

/// Axis range and ticks for data in [lo, hi].
fn ticks(lo: f64, hi: f64, include_zero: bool) -> (f64, f64, Vec<f64>) {
    let (mut lo, mut hi) = (lo, hi);
    if include_zero && lo > 0.0 && lo <= 0.5 * hi {
        lo = 0.0;
    }
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        let pad = if hi == 0.0 { 1.0 } else { hi.abs() * 0.1 };
        lo -= pad;
        hi += pad;
    }
    let step = nice_step(hi - lo, 5.0);
    let start = (lo / step).floor() * step;
    let end = (hi / step).ceil() * step;
    let mut t = Vec::new();
    let mut v = start;
    let mut guard = 0;
    while v <= end + step * 1e-9 && guard < 100 {
        t.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        v += step;
        guard += 1;
    }
    (start, end, t)
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

    /// Render as a standalone SVG document (also valid inline in HTML).
    pub fn to_svg(&self) -> Result<String, PlotError> {
        self.check()?;
        let (left, right, top, bottom) = (78.0, 540.0, 44.0, 380.0);
        let pts = self.series.iter().flat_map(|s| s.points.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for p in pts {
            x0 = x0.min(p.x);
            x1 = x1.max(p.x);
            y0 = y0.min(p.lo.min(p.y));
            y1 = y1.max(p.hi.max(p.y));
        }
        let (xa, xb, xt) = ticks(x0, x1, false);
        let (ya, yb, yt) = ticks(y0, y1, true);
        let sx = |x: f64| left + (x - xa) / (xb - xa) * (right - left);
        let sy = |y: f64| bottom - (y - ya) / (yb - ya) * (bottom - top);

        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="rmcast-plot" id="plot-{id}" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{t}" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="12">"#,
            id = esc(&self.id),
            t = esc(&self.title)
        );
        let _ = write!(s, "<title>{}</title>", esc(&self.title));
        let _ = write!(
            s,
            r##"<rect x="0" y="0" width="{W}" height="{H}" fill="#ffffff"/>"##
        );
        let _ = write!(
            s,
            r#"<text x="{}" y="24" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
            (left + right) / 2.0,
            esc(&self.title)
        );
        // Grid and ticks.
        for &t in &xt {
            let x = sx(t);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{bottom}" stroke="#e5e5e5"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                bottom + 16.0,
                esc(&fmt_num(t))
            );
        }
        for &t in &yt {
            let y = sy(t);
            let _ = write!(
                s,
                r##"<line x1="{left}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                left - 6.0,
                y + 4.0,
                esc(&fmt_num(t))
            );
        }
        let _ = write!(
            s,
            r##"<rect x="{left}" y="{top}" width="{}" height="{}" fill="none" stroke="#333333"/>"##,
            right - left,
            bottom - top
        );
        // Axis labels with units.
        let _ = write!(
            s,
            r#"<text class="x-label" x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">{}</text>"#,
            (left + right) / 2.0,
            bottom + 40.0,
            esc(&self.x.text())
        );
        let _ = write!(
            s,
            r#"<text class="y-label" x="0" y="0" transform="translate(20 {:.1}) rotate(-90)" text-anchor="middle" font-size="13">{}</text>"#,
            (top + bottom) / 2.0,
            esc(&self.y.text())
        );
        // Bands first, then lines, then markers, so nothing hides a point.
        for ser in self.series.iter().filter(|s| s.style == Style::Measured) {
            if ser.points.len() > 1 && ser.points.iter().any(|p| p.hi > p.lo) {
                let mut path = String::new();
                for p in &ser.points {
                    let _ = write!(path, "{:.1},{:.1} ", sx(p.x), sy(p.hi));
                }
                for p in ser.points.iter().rev() {
                    let _ = write!(path, "{:.1},{:.1} ", sx(p.x), sy(p.lo));
                }
                let _ = write!(
                    s,
                    r#"<polygon class="band" points="{}" fill="{}" fill-opacity="0.18" stroke="none"/>"#,
                    path.trim_end(),
                    color(ser.color)
                );
            }
        }
        // Measured lines, then dashed bounds over them, then the paper's markers on top.
        let rank = |s: &Style| match s {
            Style::Measured => 0,
            Style::Bound => 1,
            Style::Paper => 2,
        };
        let mut order: Vec<&PlotSeries> = self.series.iter().collect();
        order.sort_by_key(|s| rank(&s.style));
        for ser in order {
            let c = color(ser.color);
            let line: String = ser
                .points
                .iter()
                .map(|p| format!("{:.1},{:.1}", sx(p.x), sy(p.y)))
                .collect::<Vec<_>>()
                .join(" ");
            match ser.style {
                Style::Measured => {
                    if ser.points.len() > 1 {
                        let _ = write!(
                            s,
                            r#"<polyline class="measured" points="{line}" fill="none" stroke="{c}" stroke-width="2"/>"#
                        );
                    }
                    for p in &ser.points {
                        if p.hi > p.lo {
                            let _ = write!(
                                s,
                                r#"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{c}" stroke-width="1"/>"#,
                                sy(p.lo),
                                sy(p.hi),
                                x = sx(p.x)
                            );
                        }
                        let _ = write!(
                            s,
                            r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"/>"#,
                            sx(p.x),
                            sy(p.y)
                        );
                    }
                }
                Style::Bound => {
                    let _ = write!(
                        s,
                        r#"<polyline class="bound" points="{line}" fill="none" stroke="{c}" stroke-width="1.5" stroke-dasharray="7 4"/>"#
                    );
                }
                Style::Paper => {
                    for p in &ser.points {
                        let (x, y) = (sx(p.x), sy(p.y));
                        let _ = write!(
                            s,
                            r##"<path class="paper" d="M{x:.1} {:.1} L{:.1} {y:.1} L{x:.1} {:.1} L{:.1} {y:.1} Z" fill="#ffffff" stroke="{c}" stroke-width="1.8"/>"##,
                            y - 6.0,
                            x + 6.0,
                            y + 6.0,
                            x - 6.0
                        );
                    }
                }
            }
        }
        // Legend.
        let lx = right + 18.0;
        let mut ly = top + 8.0;
        let _ = write!(s, r#"<g class="legend">"#);
        for ser in &self.series {
            let c = color(ser.color);
            match ser.style {
                Style::Measured => {
                    let _ = write!(
                        s,
                        r#"<rect x="{lx}" y="{:.1}" width="28" height="10" fill="{c}" fill-opacity="0.18"/><line x1="{lx}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{c}" stroke-width="2"/><circle cx="{:.1}" cy="{ly:.1}" r="3" fill="{c}"/>"#,
                        ly - 5.0,
                        lx + 28.0,
                        lx + 14.0
                    );
                }
                Style::Bound => {
                    let _ = write!(
                        s,
                        r#"<line x1="{lx}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{c}" stroke-width="1.5" stroke-dasharray="7 4"/>"#,
                        lx + 28.0
                    );
                }
                Style::Paper => {
                    let (x, y) = (lx + 14.0, ly);
                    let _ = write!(
                        s,
                        r##"<path d="M{x:.1} {:.1} L{:.1} {y:.1} L{x:.1} {:.1} L{:.1} {y:.1} Z" fill="#ffffff" stroke="{c}" stroke-width="1.8"/>"##,
                        y - 5.0,
                        x + 5.0,
                        y + 5.0,
                        x - 5.0
                    );
                }
            }
            // Long labels wrap onto a second line.
            let words: Vec<&str> = ser.label.split_whitespace().collect();
            let mut lines = vec![String::new()];
            for w in words {
                let cur = lines.last_mut();
                if let Some(cur) = cur {
                    if !cur.is_empty() && cur.len() + w.len() > 26 {
                        lines.push(w.to_string());
                    } else {
                        if !cur.is_empty() {
                            cur.push(' ');
                        }
                        cur.push_str(w);
                    }
                }
            }
            for (i, l) in lines.iter().enumerate() {
                let _ = write!(
                    s,
                    r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
                    lx + 36.0,
                    ly + 4.0 + 14.0 * i as f64,
                    esc(l)
                );
            }
            ly += 14.0 * lines.len() as f64 + 10.0;
        }
        if self.series.iter().any(|s| s.style == Style::Measured) {
            let _ = write!(
                s,
                r##"<text x="{lx}" y="{:.1}" font-size="11" fill="#555555">shaded: 95 % CI of the mean</text>"##,
                ly + 4.0
            );
        }
        s.push_str("</g></svg>\n");
        Ok(s)
    }
}

/// Several plots side by side in one standalone SVG document, each panel as
/// [`Plot::to_svg`] renders it, nested at its offset.
pub fn panels_svg(plots: &[Plot]) -> Result<String, PlotError> {
    let w = W * plots.len() as f64;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{H}" viewBox="0 0 {w} {H}">"#
    );
    for (i, p) in plots.iter().enumerate() {
        let panel = p.to_svg()?;
        s.push_str(&panel.replacen("<svg ", &format!("<svg x=\"{}\" y=\"0\" ", W * i as f64), 1));
    }
    s.push_str("</svg>\n");
    Ok(s)
}

#[cfg(test)]
mod tests {
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
