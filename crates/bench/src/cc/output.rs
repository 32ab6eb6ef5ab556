//! `rmcast bench cc`'s result as files: the time series as CSV and both rates as an SVG plot.

use crate::{BenchError, Result};
use serde_json::Value;

/// The time series as CSV, one row per sample interval.
pub fn csv(v: &Value) -> Result<String> {
    const HEADER: [&str; 6] = [
        "t_s",
        "multicast_mbps",
        "tcp_mbps",
        "multicast_offered_mbps",
        "tcp_offered_mbps",
        "dropped_frames",
    ];
    let rows = v["series"].as_array().map_or(&[][..], Vec::as_slice);
    rmcast_repro::report::csv_table(
        &HEADER,
        rows.iter().map(|r| HEADER.map(|k| r[k].to_string())),
    )
    .map_err(|e| BenchError::Failed(format!("CSV: {e}")))
}

/// Both rates over time, the bottleneck dashed and the band around it dotted (dashed too:
/// the plot module draws bounds one way), drawn by the report's plot module.
pub fn svg(v: &Value) -> Result<String> {
    use rmcast_repro::plot::{Axis, Plot, PlotSeries};
    use rmcast_repro::Estimate;
    let rows = v["series"].as_array().map_or(&[][..], Vec::as_slice);
    let pts = |k: &str| -> Vec<(f64, Estimate)> {
        rows.iter()
            .filter_map(|r| Some((r["t_s"].as_f64()?, Estimate::exact(r[k].as_f64()?))))
            .collect()
    };
    let s = &v["summary"];
    let b = s["bottleneck_mbps"].as_f64().unwrap_or(0.0);
    let t_end = rows.last().and_then(|r| r["t_s"].as_f64()).unwrap_or(0.0);
    let flat = |y: f64| vec![(0.0, y), (t_end, y)];
    let band = |i: usize| s["band_mbps"][i].as_f64().unwrap_or(b);
    let plot = Plot {
        id: "bench-cc".into(),
        title: format!(
            "{} against a {b:.0} Mbit/s bottleneck",
            v["command"].as_str().unwrap_or("rmcast send")
        ),
        caption: format!(
            "Rates through the bottleneck per {} ms; the TCP flow runs from {:.1} s",
            v["sample_ms"].as_f64().unwrap_or(0.0),
            s["shared_from_s"].as_f64().unwrap_or(0.0)
        ),
        x: Axis::new("time since the sender started", "s"),
        y: Axis::new("rate through the bottleneck", "Mbit/s"),
        series: vec![
            PlotSeries::measured("multicast (rmcast)", 0, &pts("multicast_mbps")),
            PlotSeries::measured("TCP", 1, &pts("tcp_mbps")),
            PlotSeries::bound("bottleneck", 2, &flat(b)),
            PlotSeries::bound("band (± tolerance)", 7, &flat(band(0))),
            PlotSeries::bound("band (± tolerance)", 7, &flat(band(1))),
        ],
    };
    plot.to_svg()
        .map_err(|e| BenchError::Failed(format!("plot: {e}")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::{csv, svg};
    use serde_json::json;

    fn result() -> serde_json::Value {
        json!({
            "command": "rmcast send --receivers 1 --rate 300M FILE",
            "sample_ms": 100.0,
            "summary": {"bottleneck_mbps": 100.0, "band_mbps": [85.0, 115.0], "shared_from_s": 0.2},
            "series": [
                {"t_s": 0.1, "multicast_mbps": 99.5, "tcp_mbps": 0.0, "multicast_offered_mbps": 300.0,
                 "tcp_offered_mbps": 0.0, "dropped_frames": 1600},
                {"t_s": 0.2, "multicast_mbps": 80.0, "tcp_mbps": 20.25, "multicast_offered_mbps": 300.0,
                 "tcp_offered_mbps": 30.0, "dropped_frames": 1700}
            ]
        })
    }

    #[test]
    fn the_series_goes_to_csv_one_row_per_sample() {
        let t = csv(&result()).unwrap();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            "t_s,multicast_mbps,tcp_mbps,multicast_offered_mbps,tcp_offered_mbps,dropped_frames"
        );
        assert_eq!(lines[2], "0.2,80.0,20.25,300.0,30.0,1700");
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn the_plot_has_both_rates_and_the_bottleneck() {
        let s = svg(&result()).unwrap();
        for label in ["multicast (rmcast)", "TCP", "bottleneck", "Mbit/s"] {
            assert!(s.contains(label), "{label}");
        }
    }
}
