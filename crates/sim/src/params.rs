//! Typed access to a scenario's TOML tables, with errors naming the file, the key and what
//! was expected. Shared by the scenario loader and the protocol registry.

use toml::{Table, Value};

/// A scenario error: where, and what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    #[error("{file}: cannot read: {msg}")]
    /// The file cannot be read.
    Io {
        /// The file.
        file: String,
        /// Why.
        msg: String,
    },
    #[error("{file}: not valid TOML: {msg}")]
    /// The file is not TOML.
    Syntax {
        /// The file.
        file: String,
        /// The parser's message.
        msg: String,
    },
    #[error(
        "{file}: {run}: receiver node {node} is unreachable from the source (node {from}): \
         the topology has no path between them"
    )]
    /// A receiver the topology gives no path from the source (found before the run starts).
    Unreachable {
        /// The file.
        file: String,
        /// The run: its index and swept values.
        run: String,
        /// The receiver.
        node: u32,
        /// The source.
        from: u32,
    },
    #[error("{file}: key `{key}`: expected {expected}")]
    /// A key with a wrong value (or an unknown key).
    Key {
        /// The file.
        file: String,
        /// The key, dotted.
        key: String,
        /// What it should be.
        expected: String,
    },
    #[error("{file}: stopped after {done} of {runs} runs")]
    /// The caller asked the sweep to stop ([`crate::scenario::Progress::stopped`]); the runs
    /// in flight finished, the others never started.
    Stopped {
        /// The file.
        file: String,
        /// Runs that finished.
        done: usize,
        /// Runs asked for.
        runs: usize,
    },
}

/// Typed access to one table of a scenario, with errors naming the key.
#[derive(Debug, Clone)]
pub struct Params {
    file: String,
    prefix: String,
    pub(crate) table: Table,
}

impl Params {
    pub(crate) fn new(file: &str, prefix: &str, table: Table) -> Params {
        Params {
            file: file.to_string(),
            prefix: prefix.to_string(),
            table,
        }
    }
    /// The file the table comes from.
    pub(crate) fn file(&self) -> &str {
        &self.file
    }
    fn path(&self, key: &str) -> String {
        if self.prefix.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.prefix)
        }
    }
    /// An error for `key`.
    pub fn bad(&self, key: &str, expected: &str) -> ScenarioError {
        ScenarioError::Key {
            file: self.file.clone(),
            key: self.path(key),
            expected: expected.to_string(),
        }
    }
    /// Whether the table sets `key`.
    pub fn has(&self, key: &str) -> bool {
        self.table.contains_key(key)
    }
    /// Reject keys not in `allowed`.
    pub fn check_keys(&self, allowed: &[&str]) -> Result<(), ScenarioError> {
        for k in self.table.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(self.bad(
                    k,
                    &format!("no such key here; known keys: {}", allowed.join(", ")),
                ));
            }
        }
        Ok(())
    }
    fn num(&self, key: &str) -> Result<Option<f64>, ScenarioError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(Value::Float(f)) => Ok(Some(*f)),
            Some(_) => Err(self.bad(key, "a number")),
        }
    }
    /// A number in `[min, max]`, or `default` when absent.
    pub fn f64_in(
        &self,
        key: &str,
        default: f64,
        min: f64,
        max: f64,
    ) -> Result<f64, ScenarioError> {
        let v = self.num(key)?.unwrap_or(default);
        let ok = v.is_finite() && v >= min && v <= max;
        self.in_range(key, "a number", (min, max), v, ok)
    }
    /// A required number in [`min`, `max`].
    pub fn req_f64_in(&self, key: &str, min: f64, max: f64) -> Result<f64, ScenarioError> {
        self.required(key, "a number", (min, max))?;
        self.f64_in(key, 0.0, min, max)
    }
    /// `v` if it is `ok`, else the error for `key` expecting `what` in `[min, max]`.
    fn in_range<T: core::fmt::Display>(
        &self,
        key: &str,
        what: &str,
        (min, max): (T, T),
        v: T,
        ok: bool,
    ) -> Result<T, ScenarioError> {
        if ok {
            Ok(v)
        } else {
            Err(self.bad(key, &format!("{what} in [{min}, {max}], got {v}")))
        }
    }
    /// The error for a missing `key` that must be `what` in `[min, max]`.
    fn required<T: core::fmt::Display>(
        &self,
        key: &str,
        what: &str,
        (min, max): (T, T),
    ) -> Result<(), ScenarioError> {
        if self.has(key) {
            Ok(())
        } else {
            Err(self.bad(key, &format!("{what} in [{min}, {max}] (required)")))
        }
    }
    /// A non-negative integer, or `None` when absent.
    pub fn opt_u64(&self, key: &str) -> Result<Option<u64>, ScenarioError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(Value::Integer(i)) if *i >= 0 => Ok(Some(*i as u64)),
            Some(_) => Err(self.bad(key, "a non-negative integer")),
        }
    }
    /// A non-negative integer in [`min`, `max`], `default` when absent.
    pub fn u64_in(
        &self,
        key: &str,
        default: u64,
        min: u64,
        max: u64,
    ) -> Result<u64, ScenarioError> {
        let v = self.opt_u64(key)?.unwrap_or(default);
        self.in_range(key, "an integer", (min, max), v, (min..=max).contains(&v))
    }
    /// A required integer in [`min`, `max`].
    pub fn req_u64_in(&self, key: &str, min: u64, max: u64) -> Result<u64, ScenarioError> {
        self.required(key, "an integer", (min, max))?;
        self.u64_in(key, 0, min, max)
    }
    /// A string, `default` when absent.
    pub fn str_or(&self, key: &str, default: &str) -> Result<String, ScenarioError> {
        match self.table.get(key) {
            None => Ok(default.to_string()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(self.bad(key, "a string")),
        }
    }
    /// A switch, `default` when absent.
    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool, ScenarioError> {
        match self.table.get(key) {
            None => Ok(default),
            Some(Value::Boolean(b)) => Ok(*b),
            Some(_) => Err(self.bad(key, "true or false")),
        }
    }
    pub(crate) fn list(&self, key: &str) -> Option<&Vec<Value>> {
        self.table.get(key).and_then(Value::as_array)
    }
    pub(crate) fn num_list(&self, key: &str) -> Result<Option<Vec<f64>>, ScenarioError> {
        let Some(v) = self.table.get(key) else {
            return Ok(None);
        };
        let arr = v
            .as_array()
            .ok_or_else(|| self.bad(key, "a list of numbers"))?;
        arr.iter()
            .map(|x| match x {
                Value::Integer(i) => Ok(*i as f64),
                Value::Float(f) if f.is_finite() => Ok(*f),
                _ => Err(self.bad(key, "a list of numbers")),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
    pub(crate) fn sub(&self, key: &str) -> Result<Option<Params>, ScenarioError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(Value::Table(t)) => Ok(Some(Params::new(&self.file, &self.path(key), t.clone()))),
            Some(_) => Err(self.bad(key, "a table")),
        }
    }
    /// The table without `key`.
    pub fn without(&self, key: &str) -> Params {
        let mut p = self.clone();
        p.table.remove(key);
        p
    }
}
