//! A [`Plot`] rendered to a self-contained SVG document: the frame (title, grid, ticks, axis
//! labels), the 95 % bands, the curves and the legend, each drawn by its own function.

use super::{Plot, PlotError, PlotSeries, Style};
use crate::claim::fmt_num;
use std::fmt::Write as _;

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
pub(super) fn ticks(lo: f64, hi: f64, include_zero: bool) -> (f64, f64, Vec<f64>) {
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

/// Where a plot's data lands: the plot area on the canvas (px) and each axis' range and ticks.
struct Frame {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    /// The x axis' range and ticks.
    x: (f64, f64, Vec<f64>),
    /// The y axis' range and ticks (from zero when the data is not far from it).
    y: (f64, f64, Vec<f64>),
}

impl Frame {
    /// The frame that shows every point and band of `plot`.
    fn of(plot: &Plot) -> Self {
        let pts = plot.series.iter().flat_map(|s| s.points.iter());
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
        Frame {
            left: 78.0,
            right: 540.0,
            top: 44.0,
            bottom: 380.0,
            x: ticks(x0, x1, false),
            y: ticks(y0, y1, true),
        }
    }

    /// The canvas x of data x.
    fn sx(&self, x: f64) -> f64 {
        let (xa, xb, _) = &self.x;
        self.left + (x - xa) / (xb - xa) * (self.right - self.left)
    }

    /// The canvas y of data y.
    fn sy(&self, y: f64) -> f64 {
        let (ya, yb, _) = &self.y;
        self.bottom - (y - ya) / (yb - ya) * (self.bottom - self.top)
    }
}

impl Plot {
    /// Render as a standalone SVG document (also valid inline in HTML).
    pub fn to_svg(&self) -> Result<String, PlotError> {
        self.check()?;
        let f = Frame::of(self);
        let mut s = String::new();
        self.frame_svg(&f, &mut s);
        self.bands_svg(&f, &mut s);
        self.curves_svg(&f, &mut s);
        self.legend_svg(&f, &mut s);
        s.push_str("</g></svg>\n");
        Ok(s)
    }

    /// The document's head, the title, the grid with its tick labels, the plot area's border and
    /// the axis labels with units.
    fn frame_svg(&self, f: &Frame, s: &mut String) {
        let Frame {
            left,
            right,
            top,
            bottom,
            ..
        } = *f;
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
        for &t in &f.x.2 {
            let x = f.sx(t);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{top}" x2="{x:.1}" y2="{bottom}" stroke="#e5e5e5"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                bottom + 16.0,
                esc(&fmt_num(t))
            );
        }
        for &t in &f.y.2 {
            let y = f.sy(t);
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
    }

    /// The 95 % bands of the measured curves, drawn first so that nothing hides a point.
    fn bands_svg(&self, f: &Frame, s: &mut String) {
        for ser in self.series.iter().filter(|s| s.style == Style::Measured) {
            if ser.points.len() > 1 && ser.points.iter().any(|p| p.hi > p.lo) {
                let mut path = String::new();
                for p in &ser.points {
                    let _ = write!(path, "{:.1},{:.1} ", f.sx(p.x), f.sy(p.hi));
                }
                for p in ser.points.iter().rev() {
                    let _ = write!(path, "{:.1},{:.1} ", f.sx(p.x), f.sy(p.lo));
                }
                let _ = write!(
                    s,
                    r#"<polygon class="band" points="{}" fill="{}" fill-opacity="0.18" stroke="none"/>"#,
                    path.trim_end(),
                    color(ser.color)
                );
            }
        }
    }

    /// The measured lines, then the dashed bounds over them, then the paper's markers on top.
    fn curves_svg(&self, f: &Frame, s: &mut String) {
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
                .map(|p| format!("{:.1},{:.1}", f.sx(p.x), f.sy(p.y)))
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
                                f.sy(p.lo),
                                f.sy(p.hi),
                                x = f.sx(p.x)
                            );
                        }
                        let _ = write!(
                            s,
                            r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"/>"#,
                            f.sx(p.x),
                            f.sy(p.y)
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
                        let (x, y) = (f.sx(p.x), f.sy(p.y));
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
    }

    /// The legend: one entry per curve, drawn as the curve is, with its label wrapped.
    fn legend_svg(&self, f: &Frame, s: &mut String) {
        let lx = f.right + 18.0;
        let mut ly = f.top + 8.0;
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
            let lines = wrap_label(&ser.label);
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
    }
}

/// A legend label as lines: a long label wraps onto a second line.
fn wrap_label(label: &str) -> Vec<String> {
    let words: Vec<&str> = label.split_whitespace().collect();
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
    lines
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
