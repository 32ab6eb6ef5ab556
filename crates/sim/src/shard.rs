//! Scale-out: run one deterministic slice of a sweep, and merge the slices.
//!
//! A sweep of R runs split into N shards gives shard K (0 ≤ K < N) the runs whose index i
//! satisfies `i mod N = K` (strided, so sweeps ordered by size spread their heavy points over
//! every shard). Each run is a pure function of its point of the sweep, so a run computes the
//! same row whichever machine or shard runs it, and [`merge`] rebuilds exactly the
//! [`RunResult`]s an unsharded run returns: `runs.csv` and `runs.jsonl` written from them are
//! byte-identical.
//!
//! A shard directory holds
//!
//! * `runs.part.jsonl`: one line per run, `{"index": i, "columns": [[name, tag, value], …]}`
//!   with typed values (`u`, `f` as the IEEE-754 bits so no float is re-rounded, `s`, `b`);
//! * `shard.json`, written last (temporary file + rename): format, rmcast version, the
//!   scenario fingerprint, K, N, total runs and the run indices. A directory without it is a
//!   shard that did not finish.
//!
//! The fingerprint is FNV-1a (64 bit) over the scenario document re-serialized as TOML (so
//! comments and layout do not matter, any key or value — the seed included — does). Files the
//! scenario refers to (e.g. an edge list) are not part of it.

use crate::scenario::{Metric, RunResult, Scenario};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Format tag written in `shard.json`.
pub const FORMAT: &str = "rmcast-shard-1";
/// File names inside a shard directory.
pub const MANIFEST: &str = "shard.json";
/// The runs of a shard, one JSON object per line.
pub const PARTS: &str = "runs.part.jsonl";

/// Errors of sharding and merging; each names the directory or value at fault.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("--shard {0:?}: expected K/N with 0 ≤ K < N (e.g. 0/4), or auto/N")]
    /// `--shard` is not `K/N` or `auto/N`.
    BadSpec(String),
    #[error(
        "--shard auto/{0}: neither JOB_COMPLETION_INDEX (Kubernetes Indexed Job) nor \
         SLURM_ARRAY_TASK_ID (Slurm job array) is set"
    )]
    /// `auto/N` without an index in the environment.
    NoEnvIndex(usize),
    #[error("--shard auto/{n}: {var}={value:?} is not an index below {n}")]
    /// `auto/N` with an index variable that is not a number below N.
    BadEnvIndex {
        /// The variable read.
        var: &'static str,
        /// Its value.
        value: String,
        /// N.
        n: usize,
    },
    #[error("{}: {msg}", dir.display())]
    /// A shard directory that cannot be read or written.
    Dir {
        /// The directory.
        dir: PathBuf,
        /// What went wrong.
        msg: String,
    },
    /// Shards from different scenarios or seeds (the message names both directories).
    #[error("{0}: the shards come from different scenarios or seeds")]
    Mismatch(String),
    #[error("shard {k}/{n} given twice: {} and {}", a.display(), b.display())]
    /// The same shard in two directories.
    Duplicate {
        /// Its index.
        k: usize,
        /// The shard count.
        n: usize,
        /// One directory.
        a: PathBuf,
        /// The other.
        b: PathBuf,
    },
    #[error("missing shard(s) {missing} of {n}; merge needs every shard 0..{n}")]
    /// Shards absent from a merge.
    Missing {
        /// Their indices, listed.
        missing: String,
        /// The shard count.
        n: usize,
    },
    #[error("no shard directories given")]
    /// A merge of nothing.
    Empty,
    #[error("{}: {msg}", path.display())]
    /// A file that cannot be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        msg: String,
    },
}

/// Which slice of a sweep to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardSpec {
    /// 0-based shard index, below `count`.
    pub index: usize,
    /// How many shards the sweep is cut into.
    pub count: usize,
}

impl ShardSpec {
    /// Parse `K/N` (0-based K) or `auto/N`; `auto` reads the index from `env` —
    /// `JOB_COMPLETION_INDEX` first, then `SLURM_ARRAY_TASK_ID`.
    pub fn parse(s: &str, env: impl Fn(&str) -> Option<String>) -> Result<ShardSpec, ShardError> {
        let bad = || ShardError::BadSpec(s.to_string());
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 {
            return Err(bad());
        }
        let index = if k.trim() == "auto" {
            let (var, value) = ["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"]
                .into_iter()
                .find_map(|v| env(v).map(|x| (v, x)))
                .ok_or(ShardError::NoEnvIndex(count))?;
            match value.trim().parse::<usize>() {
                Ok(i) if i < count => i,
                _ => {
                    return Err(ShardError::BadEnvIndex {
                        var,
                        value,
                        n: count,
                    })
                }
            }
        } else {
            let index: usize = k.trim().parse().map_err(|_| bad())?;
            if index >= count {
                return Err(bad());
            }
            index
        };
        Ok(ShardSpec { index, count })
    }

    /// The run indices of this shard for a sweep of `runs` runs.
    pub fn indices(&self, runs: usize) -> Vec<usize> {
        (self.index..runs).step_by(self.count).collect()
    }
}

/// FNV-1a 64-bit of the scenario document as canonical TOML, as 16 hex digits.
pub fn fingerprint(sc: &Scenario) -> String {
    let text = toml::to_string(&sc.doc).unwrap_or_else(|_| format!("{:?}", sc.doc));
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

fn metric_json(m: &Metric) -> Value {
    match m {
        Metric::U(v) => json!(["u", v]),
        Metric::F(v) => json!(["f", v.to_bits()]),
        Metric::S(s) => json!(["s", s]),
        Metric::B(b) => json!(["b", b]),
    }
}

fn metric_from(v: &Value) -> Option<Metric> {
    let a = v.as_array()?;
    match (a.first()?.as_str()?, a.get(1)?) {
        ("u", x) => x.as_u64().map(Metric::U),
        ("f", x) => x.as_u64().map(|b| Metric::F(f64::from_bits(b))),
        ("s", x) => x.as_str().map(|s| Metric::S(s.to_string())),
        ("b", x) => x.as_bool().map(Metric::B),
        _ => None,
    }
}

/// Write `bytes` to `path` through a temporary file in the same directory and a rename, so
/// a reader never sees a half-written file under the final name.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ShardError> {
    let io = |e: std::io::Error| ShardError::Io {
        path: path.to_path_buf(),
        msg: e.to_string(),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

/// Write `runs.jsonl` then `runs.csv` (each atomically) into `dir`; `runs.csv` appears last,
/// so its presence means both are complete.
pub fn write_runs(dir: &Path, results: &[RunResult]) -> Result<(), ShardError> {
    std::fs::create_dir_all(dir).map_err(|e| ShardError::Io {
        path: dir.to_path_buf(),
        msg: e.to_string(),
    })?;
    write_atomic(
        &dir.join("runs.jsonl"),
        crate::scenario::to_jsonl(results).as_bytes(),
    )?;
    write_atomic(
        &dir.join("runs.csv"),
        crate::scenario::to_csv(results).as_bytes(),
    )
}

/// Write one shard's results into `dir`: `runs.part.jsonl`, then `shard.json`.
pub fn write_shard(
    dir: &Path,
    sc: &Scenario,
    spec: ShardSpec,
    results: &[RunResult],
) -> Result<(), ShardError> {
    std::fs::create_dir_all(dir).map_err(|e| ShardError::Io {
        path: dir.to_path_buf(),
        msg: e.to_string(),
    })?;
    // A stale manifest from an earlier shard run must not vouch for the new parts.
    let manifest = dir.join(MANIFEST);
    if manifest.exists() {
        std::fs::remove_file(&manifest).map_err(|e| ShardError::Io {
            path: manifest.clone(),
            msg: e.to_string(),
        })?;
    }
    let mut parts = String::new();
    for r in results {
        let cols: Vec<Value> = r
            .columns
            .iter()
            .map(|(k, m)| {
                let mut v = metric_json(m);
                if let Value::Array(a) = &mut v {
                    a.insert(0, k.clone().into());
                }
                v
            })
            .collect();
        parts.push_str(&json!({"index": r.index, "columns": cols}).to_string());
        parts.push('\n');
    }
    write_atomic(&dir.join(PARTS), parts.as_bytes())?;
    let m = json!({
        "format": FORMAT,
        "version": env!("CARGO_PKG_VERSION"),
        "scenario": sc.file,
        "seed": sc.doc.get("seed").map(|s| s.to_string()),
        "fingerprint": fingerprint(sc),
        "shard": spec.index,
        "shards": spec.count,
        "runs_total": sc.runs(),
        "runs": results.iter().map(|r| r.index).collect::<Vec<_>>(),
    });
    let text = serde_json::to_string_pretty(&m).unwrap_or_default();
    write_atomic(&manifest, text.as_bytes())
}

struct Manifest {
    dir: PathBuf,
    version: String,
    scenario: String,
    fingerprint: String,
    shard: usize,
    shards: usize,
    runs_total: usize,
    runs: Vec<usize>,
}

fn read_manifest(dir: &Path) -> Result<Manifest, ShardError> {
    let derr = |msg: String| ShardError::Dir {
        dir: dir.to_path_buf(),
        msg,
    };
    let path = dir.join(MANIFEST);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(derr(format!(
                "not a finished shard directory (no {MANIFEST}; the shard did not run or did not finish)"
            )))
        }
        Err(e) => return Err(derr(format!("cannot read {MANIFEST}: {e}"))),
    };
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| derr(format!("{MANIFEST} is not valid JSON: {e}")))?;
    if v["format"].as_str() != Some(FORMAT) {
        return Err(derr(format!(
            "{MANIFEST}: format {} is not {FORMAT}",
            v["format"]
        )));
    }
    let num = |k: &str| -> Result<usize, ShardError> {
        v[k].as_u64()
            .and_then(|x| usize::try_from(x).ok())
            .ok_or_else(|| derr(format!("{MANIFEST}: `{k}` missing or not a count")))
    };
    let s = |k: &str| -> Result<String, ShardError> {
        v[k].as_str()
            .map(str::to_string)
            .ok_or_else(|| derr(format!("{MANIFEST}: `{k}` missing or not a string")))
    };
    let runs = v["runs"]
        .as_array()
        .and_then(|a| {
            a.iter()
                .map(|x| x.as_u64().and_then(|x| usize::try_from(x).ok()))
                .collect::<Option<Vec<usize>>>()
        })
        .ok_or_else(|| {
            derr(format!(
                "{MANIFEST}: `runs` missing or not a list of indices"
            ))
        })?;
    let m = Manifest {
        dir: dir.to_path_buf(),
        version: s("version")?,
        scenario: s("scenario")?,
        fingerprint: s("fingerprint")?,
        shard: num("shard")?,
        shards: num("shards")?,
        runs_total: num("runs_total")?,
        runs,
    };
    if m.shards == 0 || m.shard >= m.shards {
        return Err(derr(format!(
            "{MANIFEST}: shard {}/{} is not a valid K/N",
            m.shard, m.shards
        )));
    }
    let spec = ShardSpec {
        index: m.shard,
        count: m.shards,
    };
    if m.runs != spec.indices(m.runs_total) {
        return Err(derr(format!(
            "{MANIFEST}: its run list is not shard {}/{} of {} runs",
            m.shard, m.shards, m.runs_total
        )));
    }
    Ok(m)
}

fn read_parts(m: &Manifest) -> Result<Vec<RunResult>, ShardError> {
    let path = m.dir.join(PARTS);
    let derr = |msg: String| ShardError::Dir {
        dir: m.dir.clone(),
        msg,
    };
    let text =
        std::fs::read_to_string(&path).map_err(|e| derr(format!("cannot read {PARTS}: {e}")))?;
    let mut out = Vec::with_capacity(m.runs.len());
    for (line_no, line) in text.lines().enumerate() {
        let bad = || {
            derr(format!(
                "{PARTS} line {}: not a shard run record",
                line_no + 1
            ))
        };
        let v: Value = serde_json::from_str(line).map_err(|_| bad())?;
        let index = v["index"]
            .as_u64()
            .and_then(|x| usize::try_from(x).ok())
            .ok_or_else(bad)?;
        let mut columns = Vec::new();
        for c in v["columns"].as_array().ok_or_else(bad)? {
            let a = c.as_array().ok_or_else(bad)?;
            let name = a.first().and_then(Value::as_str).ok_or_else(bad)?;
            let metric = metric_from(&Value::Array(a[1..].to_vec())).ok_or_else(bad)?;
            columns.push((name.to_string(), metric));
        }
        out.push(RunResult {
            index,
            columns,
            trace: None,
            samples: Vec::new(),
        });
    }
    let got: Vec<usize> = out.iter().map(|r| r.index).collect();
    if got != m.runs {
        return Err(derr(format!(
            "{PARTS} holds runs {} but {MANIFEST} lists {} (a damaged shard; re-run it)",
            summary(&got),
            summary(&m.runs)
        )));
    }
    Ok(out)
}

fn summary(v: &[usize]) -> String {
    if v.len() <= 6 {
        format!("{v:?}")
    } else {
        format!(
            "[{}, {}, {}, …, {}] ({} runs)",
            v[0],
            v[1],
            v[2],
            v[v.len() - 1],
            v.len()
        )
    }
}

/// Read shard directories and return every run in index order, exactly as an unsharded
/// [`crate::scenario::run_sweep`] would (without traces). Checks that all shards come from
/// one scenario (fingerprint, version, N, run count) and that each of 0..N appears once.
pub fn merge(dirs: &[PathBuf]) -> Result<Vec<RunResult>, ShardError> {
    let manifests = dirs
        .iter()
        .map(|d| read_manifest(d))
        .collect::<Result<Vec<_>, _>>()?;
    let first = manifests.first().ok_or(ShardError::Empty)?;
    for m in &manifests[1..] {
        if m.fingerprint != first.fingerprint {
            return Err(ShardError::Mismatch(format!(
                "{}: scenario fingerprint {} ({}) differs from {} ({}) in {}",
                m.dir.display(),
                m.fingerprint,
                m.scenario,
                first.fingerprint,
                first.scenario,
                first.dir.display()
            )));
        }
        let diff = |what: &str, a: String, b: String| {
            ShardError::Dir {
            dir: m.dir.clone(),
            msg: format!(
                "{what} {a} differs from {b} in {}; all shards must be cut the same way by the same rmcast",
                first.dir.display()
            ),
        }
        };
        if m.shards != first.shards {
            return Err(diff(
                "shard count",
                m.shards.to_string(),
                first.shards.to_string(),
            ));
        }
        if m.runs_total != first.runs_total {
            return Err(diff(
                "run count",
                m.runs_total.to_string(),
                first.runs_total.to_string(),
            ));
        }
        if m.version != first.version {
            return Err(diff(
                "rmcast version",
                m.version.clone(),
                first.version.clone(),
            ));
        }
    }
    let n = first.shards;
    let mut seen: Vec<Option<&Path>> = vec![None; n];
    for m in &manifests {
        if let Some(a) = seen[m.shard] {
            return Err(ShardError::Duplicate {
                k: m.shard,
                n,
                a: a.to_path_buf(),
                b: m.dir.clone(),
            });
        }
        seen[m.shard] = Some(&m.dir);
    }
    let missing: Vec<String> = (0..n)
        .filter(|&k| seen[k].is_none())
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(ShardError::Missing {
            missing: missing.join(", "),
            n,
        });
    }
    let mut all = Vec::with_capacity(first.runs_total);
    for m in &manifests {
        all.extend(read_parts(m)?);
    }
    all.sort_by_key(|r| r.index);
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{run_indices, run_sweep, to_csv, to_jsonl, RunOptions};

    const SC: &str = r#"
name = "shard test"
seed = [1, 2, 3]
[topology]
kind = "star"
children = [2, 3]
[protocol]
name = "saw"
timeout_ms = 20
[traffic]
messages = 5
size = 100
[[loss]]
model = "bernoulli"
p = 0.1
at = "link"
"#;

    fn sc(text: &str) -> Scenario {
        Scenario::parse(text, "t.toml", PathBuf::new()).unwrap()
    }

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn specs_parse_and_refuse() {
        let none = env(&[]);
        assert_eq!(
            ShardSpec::parse("1/4", &none).unwrap(),
            ShardSpec { index: 1, count: 4 }
        );
        for bad in ["4/4", "1", "a/2", "1/0", "-1/3", "1/2/3", ""] {
            assert!(
                matches!(ShardSpec::parse(bad, &none), Err(ShardError::BadSpec(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            ShardSpec::parse("auto/3", &none),
            Err(ShardError::NoEnvIndex(3))
        ));
        let k8s = env(&[("JOB_COMPLETION_INDEX", "2"), ("SLURM_ARRAY_TASK_ID", "0")]);
        assert_eq!(ShardSpec::parse("auto/3", &k8s).unwrap().index, 2);
        let slurm = env(&[("SLURM_ARRAY_TASK_ID", "1")]);
        assert_eq!(ShardSpec::parse("auto/3", &slurm).unwrap().index, 1);
        let over = env(&[("SLURM_ARRAY_TASK_ID", "3")]);
        assert!(matches!(
            ShardSpec::parse("auto/3", &over),
            Err(ShardError::BadEnvIndex { .. })
        ));
    }

    #[test]
    fn shards_partition_the_runs() {
        for n in 1..9 {
            let mut all: Vec<usize> = (0..n)
                .flat_map(|k| ShardSpec { index: k, count: n }.indices(7))
                .collect();
            all.sort_unstable();
            assert_eq!(all, (0..7).collect::<Vec<_>>());
        }
    }

    #[test]
    fn fingerprint_follows_content_not_layout() {
        let a = fingerprint(&sc(SC));
        let b = fingerprint(&sc(&format!("# a comment\n{SC}\n")));
        assert_eq!(a, b);
        let c = fingerprint(&sc(&SC.replace("seed = [1, 2, 3]", "seed = [1, 2, 4]")));
        assert_ne!(a, c);
    }

    #[test]
    fn merged_shards_equal_the_unsharded_sweep() {
        let s = sc(SC);
        let whole = run_sweep(&s, RunOptions::default(), &|| {}).unwrap();
        let tmp = std::env::temp_dir().join(format!("rmcast-shard-test-{}", std::process::id()));
        let mut dirs = Vec::new();
        for k in 0..4 {
            let spec = ShardSpec { index: k, count: 4 };
            let r =
                run_indices(&s, &spec.indices(s.runs()), RunOptions::default(), &|| {}).unwrap();
            let d = tmp.join(format!("s{k}"));
            write_shard(&d, &s, spec, &r).unwrap();
            dirs.push(d);
        }
        dirs.reverse(); // order of arguments does not matter
        let merged = merge(&dirs).unwrap();
        assert_eq!(to_csv(&merged), to_csv(&whole));
        assert_eq!(to_jsonl(&merged), to_jsonl(&whole));

        // duplicates, missing shards and foreign shards are refused
        let mut dup = dirs.clone();
        dup.push(dirs[0].clone());
        assert!(matches!(merge(&dup), Err(ShardError::Duplicate { .. })));
        assert!(matches!(merge(&dirs[1..]), Err(ShardError::Missing { .. })));
        let other = sc(&SC.replace("seed = [1, 2, 3]", "seed = [7, 2, 3]"));
        let spec = ShardSpec { index: 0, count: 4 };
        let r = run_indices(
            &other,
            &spec.indices(other.runs()),
            RunOptions::default(),
            &|| {},
        )
        .unwrap();
        let foreign = tmp.join("foreign");
        write_shard(&foreign, &other, spec, &r).unwrap();
        let mut mixed = dirs[..3].to_vec();
        mixed.push(foreign);
        assert!(matches!(merge(&mixed), Err(ShardError::Mismatch(_))));
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
