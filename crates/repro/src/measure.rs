//! What a study measured: named scalars and series, each point with its spread across runs.

use crate::stats::Estimate;
use serde::Serialize;
use std::collections::BTreeMap;

/// One named measurement of a study.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum Measure {
    /// A single value (with spread across runs, or analytic).
    Scalar {
        /// The unit of the value.
        unit: String,
        /// The value.
        value: Estimate,
    },
    /// A value per sweep point `x` (e.g. per number of receivers), sorted by `x`.
    Series {
        /// The unit of y.
        unit: String,
        /// What x is, e.g. "receivers".
        x_label: String,
        /// (x, value) points.
        points: Vec<(f64, Estimate)>,
    },
}

impl Measure {
    /// The measure's unit (of y for a series).
    pub fn unit(&self) -> &str {
        match self {
            Measure::Scalar { unit, .. } | Measure::Series { unit, .. } => unit,
        }
    }

    /// The points as (x, value); a scalar has one point with no x.
    pub fn points(&self) -> Vec<(Option<f64>, Estimate)> {
        match self {
            Measure::Scalar { value, .. } => vec![(None, *value)],
            Measure::Series { points, .. } => points.iter().map(|&(x, e)| (Some(x), e)).collect(),
        }
    }

    /// The value at `x`: a scalar answers for every x; a series only at its own points.
    pub fn at(&self, x: Option<f64>) -> Option<Estimate> {
        match (self, x) {
            (Measure::Scalar { value, .. }, _) => Some(*value),
            (Measure::Series { points, .. }, Some(x)) => points
                .iter()
                .find(|(px, _)| same_x(*px, x))
                .map(|&(_, e)| e),
            (Measure::Series { .. }, None) => None,
        }
    }
}

/// Sweep coordinates are compared with a relative tolerance so that `x = 0.1` written in a
/// claims file matches a computed `0.1`.
pub fn same_x(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// All measurements of one study run, by name.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Measures {
    map: BTreeMap<String, Measure>,
}

impl Measures {
    /// No measures yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Record a scalar.
    pub fn scalar(&mut self, name: impl Into<String>, unit: impl Into<String>, value: Estimate) {
        self.map.insert(
            name.into(),
            Measure::Scalar {
                unit: unit.into(),
                value,
            },
        );
    }

    /// Record a series; points are sorted by x.
    pub fn series(
        &mut self,
        name: impl Into<String>,
        unit: impl Into<String>,
        x_label: impl Into<String>,
        mut points: Vec<(f64, Estimate)>,
    ) {
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        self.map.insert(
            name.into(),
            Measure::Series {
                unit: unit.into(),
                x_label: x_label.into(),
                points,
            },
        );
    }

    /// The measure `name`, if recorded.
    pub fn get(&self, name: &str) -> Option<&Measure> {
        self.map.get(name)
    }

    /// The points of the series `name` (empty when there is no such series, or a scalar).
    pub fn points(&self, name: &str) -> Vec<(f64, Estimate)> {
        match self.map.get(name) {
            Some(Measure::Series { points, .. }) => points.clone(),
            _ => Vec::new(),
        }
    }

    /// Every measure, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Measure)> {
        self.map.iter()
    }

    /// How many measures.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// The means of the recorded series `name` as (x, mean), e.g. an analytic bound to draw as a
/// dashed curve; empty when there is no such series.
pub fn means(m: &Measures, name: &str) -> Vec<(f64, f64)> {
    m.get(name)
        .map(|s| {
            s.points()
                .into_iter()
                .filter_map(|(x, e)| x.map(|x| (x, e.mean)))
                .collect()
        })
        .unwrap_or_default()
}
