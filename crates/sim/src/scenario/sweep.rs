//! Sweep expansion: every list or range value of a scenario is an axis; a run is one value
//! per axis (the first axis outermost).

use super::{Axis, ScenarioError};
use toml::{Table, Value};

/// Keys whose list value is data, not a sweep.
const LIST_KEYS: &[&str] = &[
    "rtds_ms",
    "per_exchange",
    "receiver_ids",
    "nodes",
    "links",
    "record",
];

/// Most runs a sweep may have.
pub const MAX_RUNS: usize = 1_000_000;
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

fn is_range(t: &Table) -> bool {
    t.contains_key("from")
        && t.contains_key("to")
        && t.keys()
            .all(|k| matches!(k.as_str(), "from" | "to" | "step"))
}

fn expand_range(file: &str, key: &str, t: &Table) -> Result<Vec<Value>, ScenarioError> {
    let bad = |e: &str| ScenarioError::Key {
        file: file.to_string(),
        key: key.to_string(),
        expected: e.to_string(),
    };
    let get = |k: &str| t.get(k);
    match (get("from"), get("to"), get("step")) {
        (
            Some(Value::Integer(a)),
            Some(Value::Integer(b)),
            s @ (None | Some(Value::Integer(_))),
        ) => {
            let step = s.and_then(Value::as_integer).unwrap_or(1);
            if step <= 0 || b < a {
                return Err(bad("a range with from <= to and step > 0"));
            }
            let n = ((b - a) / step + 1) as usize;
            if n > MAX_RUNS {
                return Err(bad("a range of at most 1,000,000 values"));
            }
            Ok((0..n as i64)
                .map(|i| Value::Integer(a + i * step))
                .collect())
        }
        (Some(a), Some(b), s) => {
            let f = |v: &Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
            let (Some(a), Some(b)) = (f(a), f(b)) else {
                return Err(bad("a range { from = number, to = number, step = number }"));
            };
            let step = match s {
                None => 1.0,
                Some(v) => f(v).ok_or_else(|| bad("a numeric step"))?,
            };
            if !(step > 0.0 && step.is_finite() && a.is_finite() && b.is_finite() && a <= b) {
                return Err(bad("a range with from <= to and step > 0"));
            }
            let n = ((b - a) / step + 1e-9).floor() as usize + 1;
            if n > MAX_RUNS {
                return Err(bad("a range of at most 1,000,000 values"));
            }
            // Computed as from + i*step (no accumulated error), rounded to 12 significant
            // decimals so that 0.1-steps print as written.
            Ok((0..n)
                .map(|i| {
                    let v = a + i as f64 * step;
                    Value::Float(format!("{v:.12}").parse::<f64>().unwrap_or(v))
                })
                .collect())
        }
        _ => Err(bad("a range { from = ..., to = ..., step = ... }")),
    }
}

pub(super) fn walk(
    file: &str,
    t: &Table,
    path: &mut Vec<Seg>,
    name: &str,
    axes: &mut Vec<Axis>,
) -> Result<(), ScenarioError> {
    for (k, v) in t {
        let key = if name.is_empty() {
            k.clone()
        } else {
            format!("{name}.{k}")
        };
        path.push(Seg::Key(k.clone()));
        match v {
            Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_table) => {
                for (i, x) in a.iter().enumerate() {
                    path.push(Seg::Index(i));
                    if let Value::Table(sub) = x {
                        walk(file, sub, path, &format!("{key}.{i}"), axes)?;
                    }
                    path.pop();
                }
            }
            Value::Array(a) if !LIST_KEYS.contains(&k.as_str()) => {
                if a.is_empty() || a.iter().any(|x| x.is_array() || x.is_table()) {
                    return Err(ScenarioError::Key {
                        file: file.to_string(),
                        key,
                        expected: "a scalar or a non-empty list of scalars (a sweep)".into(),
                    });
                }
                axes.push(Axis {
                    key,
                    path: path.clone(),
                    values: a.clone(),
                });
            }
            Value::Table(sub) if is_range(sub) => {
                let values = expand_range(file, &key, sub)?;
                axes.push(Axis {
                    key,
                    path: path.clone(),
                    values,
                });
            }
            Value::Table(sub) => walk(file, sub, path, &key, axes)?,
            _ => {}
        }
        path.pop();
    }
    Ok(())
}

pub(super) fn set(t: &mut Table, path: &[Seg], v: Value) {
    let Some((Seg::Key(first), rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        t.insert(first.clone(), v);
        return;
    }
    let mut cur = match t.get_mut(first) {
        Some(x) => x,
        None => return,
    };
    for (i, seg) in rest.iter().enumerate() {
        let last = i + 1 == rest.len();
        let next = match (seg, cur) {
            (Seg::Key(k), Value::Table(tt)) => {
                if last {
                    tt.insert(k.clone(), v);
                    return;
                }
                tt.get_mut(k)
            }
            (Seg::Index(j), Value::Array(a)) => a.get_mut(*j),
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
}
