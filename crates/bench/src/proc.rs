//! Child processes of a benchmark run (output kept in files, stopped after a time limit) and
//! the outcome of one contender's run as a JSON row.

use crate::{BenchError, Result};
use rmcast_lab::proc::Proc;
use serde_json::{json, Map, Value};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Throughput in Mbit/s of `bytes` in `secs` (0 without time).
pub(crate) fn mbit(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs / 1e6
    } else {
        0.0
    }
}

/// The system's load averages (1, 5 and 15 minutes) from `/proc/loadavg`, or null.
pub(crate) fn loadavg() -> Value {
    std::fs::read_to_string("/proc/loadavg").map_or(Value::Null, |s| {
        json!(s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
    })
}

/// BLAKE3 digest of a file.
pub(crate) fn digest(p: &Path) -> Result<blake3::Hash> {
    let f = File::open(p).map_err(BenchError::io(format!("open {}", p.display())))?;
    let mut h = blake3::Hasher::new();
    h.update_reader(f)
        .map_err(BenchError::io(format!("read {}", p.display())))?;
    Ok(h.finalize())
}

/// CPU seconds (user + system) of this process's children reaped so far (with theirs),
/// from `cutime` and `cstime` in `/proc/self/stat`; None where that cannot be read.
pub(crate) fn children_cpu_s() -> Option<f64> {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    let hz = *TICKS.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .filter(|t: &f64| *t > 0.0)
            .unwrap_or(100.0)
    });
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name in parentheses: state is field 3, cutime 16, cstime 17.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let t = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
    Some((t(13)? + t(14)?) / hz)
}

/// CPU time of one run's processes: read before the sender starts, after it was reaped, and
/// after the receivers were; and the load average when it started.
#[derive(Debug, Clone, Default)]
pub(crate) struct CpuMarks {
    t: [Option<f64>; 3],
    load: Value,
}

impl CpuMarks {
    /// Take mark `i` (0, 1, 2).
    pub(crate) fn mark(&mut self, i: usize) {
        if i == 0 {
            self.load = loadavg();
        }
        self.t[i] = children_cpu_s();
    }
}

/// A child whose standard output and error go to `<dir>/<tag>.out` and `.err`; stopped
/// (SIGKILL) when dropped while still running (the lab's [`Proc`]).
pub(crate) struct Logged {
    proc: Proc,
    out: PathBuf,
    err: PathBuf,
}

/// Start `cmd` with its output in files under `dir`.
pub(crate) fn spawn_logged(cmd: &mut Command, dir: &Path, tag: &str) -> Result<Logged> {
    std::fs::create_dir_all(dir).map_err(BenchError::io(format!("create {}", dir.display())))?;
    let out = dir.join(format!("{tag}.out"));
    let err = dir.join(format!("{tag}.err"));
    let o = File::create(&out).map_err(BenchError::io(format!("create {}", out.display())))?;
    let e = File::create(&err).map_err(BenchError::io(format!("create {}", err.display())))?;
    let proc = Proc::spawn(cmd.stdin(Stdio::null()).stdout(o).stderr(e))
        .map_err(BenchError::io(format!("start {:?}", cmd.get_program())))?;
    Ok(Logged { proc, out, err })
}

impl Logged {
    /// Wait at most `t`: `Some(success)` if it ended by itself, `None` if it was still
    /// running and has been stopped.
    pub(crate) fn wait_for(&mut self, t: Duration) -> Option<bool> {
        self.proc
            .wait_until(Instant::now() + t)
            .map(|s| s.success())
    }

    /// Its exit code if it has ended (`Some(None)`: a signal ended it), without waiting.
    pub(crate) fn ended(&mut self) -> Option<Option<i32>> {
        self.proc.status().map(|s| s.code())
    }

    /// Stop it (SIGKILL) and reap it.
    pub(crate) fn stop(&mut self) {
        self.proc.kill();
    }

    /// What it printed on standard output, as JSON (the whole output, else its last line;
    /// `null` if neither parses).
    pub(crate) fn json(&self) -> Value {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        serde_json::from_str(&text)
            .ok()
            .or_else(|| {
                text.lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .and_then(|l| serde_json::from_str(l).ok())
            })
            .unwrap_or(Value::Null)
    }

    /// The first line of standard error that starts with `error` (a refusal's reason), else
    /// the last non-empty line.
    pub(crate) fn stderr_error(&self) -> String {
        let text = std::fs::read_to_string(&self.err).unwrap_or_default();
        match text.lines().find(|l| l.trim_start().starts_with("error")) {
            Some(l) => l.trim().to_string(),
            None => self.stderr_tail(),
        }
    }

    /// The last non-empty line it printed on standard error.
    pub(crate) fn stderr_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.err).unwrap_or_default();
        text.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("(no message)")
            .trim()
            .to_string()
    }
}

/// One contender's run to a set of receivers.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub contender: String,
    pub command: String,
    /// Stopped after the time limit.
    pub timed_out: bool,
    /// Why it failed, if it did (other than the time limit).
    pub error: Option<String>,
    /// Goodput at each receiver in Mbit/s (None: it got nothing usable).
    pub per_receiver: Vec<Option<f64>>,
    /// Whether each receiver's file matched the sender's digest (None: nothing to check,
    /// the raw blast).
    pub verified: Vec<Option<bool>>,
    /// Wall time of the run in seconds.
    pub wall_s: f64,
    /// Contender-specific fields.
    pub extra: Map<String, Value>,
    /// CPU seconds of the sender and of all receivers together, load when it started.
    pub cpu: CpuMarks,
}

fn min_max_mean(v: &[f64]) -> Option<(f64, f64, f64)> {
    if v.is_empty() {
        return None;
    }
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((min, max, v.iter().sum::<f64>() / v.len() as f64))
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

impl Outcome {
    pub(crate) fn new(contender: String, command: String) -> Outcome {
        Outcome {
            contender,
            command,
            timed_out: false,
            error: None,
            per_receiver: Vec::new(),
            verified: Vec::new(),
            wall_s: 0.0,
            extra: Map::new(),
            cpu: CpuMarks::default(),
        }
    }

    fn reliable(&self) -> bool {
        self.verified.iter().any(Option::is_some)
    }

    fn all_verified(&self) -> bool {
        !self.verified.is_empty() && self.verified.iter().all(|v| *v == Some(true))
    }

    fn got(&self) -> Vec<f64> {
        self.per_receiver.iter().flatten().copied().collect()
    }

    /// Mean goodput over the receivers that got something.
    pub(crate) fn mean(&self) -> Option<f64> {
        min_max_mean(&self.got()).map(|m| m.2)
    }

    /// `ok`, `did not finish in T s`, or why it failed.
    fn status(&self, timeout: Duration) -> String {
        if self.timed_out {
            return format!("did not finish in {:.0} s", timeout.as_secs_f64());
        }
        if let Some(e) = &self.error {
            return format!("failed: {e}");
        }
        if self.reliable() && !self.all_verified() {
            let bad: Vec<String> = self
                .verified
                .iter()
                .enumerate()
                .filter(|(_, v)| **v != Some(true))
                .map(|(r, _)| (r + 1).to_string())
                .collect();
            return format!(
                "failed: file wrong or missing at receiver(s) {}",
                bad.join(",")
            );
        }
        "ok".into()
    }

    /// One progress line.
    pub(crate) fn summary(&self) -> String {
        let got = self.got();
        let rate = min_max_mean(&got).map_or("no goodput".into(), |(lo, hi, m)| {
            format!("{m:.0} Mbit/s per receiver ({lo:.0}-{hi:.0})")
        });
        let ver = if self.reliable() {
            let ok = self.verified.iter().filter(|v| **v == Some(true)).count();
            format!(", {ok}/{} files verified", self.verified.len())
        } else {
            String::new()
        };
        let end = if self.timed_out {
            " — did not finish".to_string()
        } else if let Some(e) = &self.error {
            format!(" — failed: {e}")
        } else {
            String::new()
        };
        format!(
            "{}: {rate}, wall {:.1} s{ver}{end}",
            self.contender, self.wall_s
        )
    }

    /// The JSON row for `n` receivers in condition `cond`.
    pub(crate) fn json(
        self,
        n: usize,
        cond: crate::Loss,
        size: u64,
        frames: Option<u64>,
        raw_mean: Option<f64>,
        timeout: Duration,
    ) -> Value {
        let (kind, p) = match cond {
            crate::Loss::Frame(p) => ("frame", p),
            crate::Loss::Injected(p) => ("injected", p),
        };
        let got = self.got();
        let mmm = min_max_mean(&got);
        let finished_ok = !self.timed_out && self.error.is_none();
        // Goodput over wall time: the file over the run's wall time when every receiver got
        // it; for the raw blast, the mean bytes delivered over the blast's duration.
        let wall_mbit = if !finished_ok || self.wall_s <= 0.0 {
            None
        } else if self.reliable() {
            self.all_verified().then(|| round1(mbit(size, self.wall_s)))
        } else {
            let frac = self.extra["delivered_fraction"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_f64).sum::<f64>() / a.len().max(1) as f64)
                .unwrap_or(0.0);
            Some(round1(mbit((size as f64 * frac) as u64, self.wall_s)))
        };
        let status = self.status(timeout);
        // CPU seconds per GB moved, sender and mean receiver, for a finished run.
        let [c0, c1, c2] = self.cpu.t;
        let sender_cpu = c0.zip(c1).map(|(a, b)| b - a);
        let receiver_cpu = c1.zip(c2).map(|(a, b)| (b - a) / n.max(1) as f64);
        let per_gb = |c: Option<f64>| {
            c.filter(|_| finished_ok && wall_mbit.is_some())
                .map(|c| (c / (size as f64 / 1e9) * 100.0).round() / 100.0)
        };
        let r2 = |c: Option<f64>| c.map(|c| (c * 100.0).round() / 100.0);
        let mut row = json!({
            "receivers": n,
            "loss_kind": kind,
            "loss": p,
            "contender": self.contender,
            "command": self.command,
            "status": status,
            "finished": !self.timed_out,
            "per_receiver_mbit_s": self.per_receiver.iter().map(|v| v.map(round1)).collect::<Vec<_>>(),
            "mean_mbit_s": mmm.map(|m| round1(m.2)),
            "min_mbit_s": mmm.map(|m| round1(m.0)),
            "max_mbit_s": mmm.map(|m| round1(m.1)),
            "ratio_to_raw": match (mmm, raw_mean) {
                (Some(m), Some(r)) if r > 0.0 => json!((m.2 / r * 1000.0).round() / 1000.0),
                _ => Value::Null,
            },
            "wall_s": (self.wall_s * 1000.0).round() / 1000.0,
            "wall_mbit_s": wall_mbit,
            "frames_dropped": frames,
            "verified": self.verified,
            "all_verified": if self.reliable() { json!(self.all_verified()) } else { Value::Null },
            "sender_cpu_s": r2(sender_cpu),
            "receiver_cpu_s_mean": r2(receiver_cpu),
            "sender_cpu_s_per_gb": per_gb(sender_cpu),
            "receiver_cpu_s_per_gb": per_gb(receiver_cpu),
            "loadavg_start": self.cpu.load,
        });
        if let Some(m) = row.as_object_mut() {
            m.extend(self.extra);
        }
        row
    }
}

/// The readable table of a `rmcast bench net` JSON result (from [`crate::run`]).
pub fn table(v: &Value) -> String {
    let mut s = String::new();
    let cell = |r: &Value, k: &str| r[k].as_f64();
    s.push_str(&format!(
        "{:>3}  {:<14} {:<26} {:>26}  {:>7}  {:>9}  {:>11}  {:>7}  {}\n",
        "rcv",
        "loss",
        "contender",
        "Mbit/s per receiver",
        "wall s",
        "wall Mb/s",
        "CPU/GB s/r",
        "frames",
        "result"
    ));
    for r in v["rows"].as_array().map_or(&[][..], Vec::as_slice) {
        let loss = format!(
            "{} {}%",
            r["loss_kind"].as_str().unwrap_or("?"),
            cell(r, "loss").map_or("?".into(), |p| format!("{}", p * 100.0))
        );
        let rate = match (
            cell(r, "mean_mbit_s"),
            cell(r, "min_mbit_s"),
            cell(r, "max_mbit_s"),
        ) {
            (Some(m), Some(lo), Some(hi)) => format!("{m:.0} ({lo:.0}-{hi:.0})"),
            _ => "-".into(),
        };
        let rate = match cell(r, "ratio_to_raw") {
            Some(x) if !r["contender"].as_str().unwrap_or("").starts_with("raw") => {
                format!("{rate} {:>3.0}% raw", x * 100.0)
            }
            _ => rate,
        };
        let wall = if r["finished"].as_bool() == Some(false) {
            "-".into()
        } else {
            cell(r, "wall_s").map_or("-".into(), |w| format!("{w:.1}"))
        };
        let wm = cell(r, "wall_mbit_s").map_or("-".into(), |w| format!("{w:.0}"));
        let cpu = match (
            cell(r, "sender_cpu_s_per_gb"),
            cell(r, "receiver_cpu_s_per_gb"),
        ) {
            (Some(a), Some(b)) => format!("{a:.1}/{b:.1}"),
            _ => "-".into(),
        };
        let frames = r["frames_dropped"]
            .as_u64()
            .map_or("-".into(), |f| f.to_string());
        let mut result = r["status"].as_str().unwrap_or("?").to_string();
        if let Some(d) = r["delivered_fraction"].as_array() {
            let f: Vec<String> = d
                .iter()
                .filter_map(Value::as_f64)
                .map(|x| format!("{:.1}%", x * 100.0))
                .collect();
            result = format!("unreliable; delivered {}", f.join(" "));
        }
        s.push_str(&format!(
            "{:>3}  {:<14} {:<26} {:>26}  {:>7}  {:>9}  {:>11}  {:>7}  {}\n",
            r["receivers"].as_u64().unwrap_or(0),
            loss,
            r["contender"].as_str().unwrap_or("?"),
            rate,
            wall,
            wm,
            cpu,
            frames,
            result
        ));
    }
    s
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::Loss;

    /// The JSON row of a 2-second run to one receiver per entry of `verified` (each one that
    /// verified at 400 Mbit/s), of `size` bytes in `cond`, with `frames` dropped, beside a raw
    /// ceiling of `raw` Mbit/s and a limit of `limit_s` seconds.
    fn row(
        timed_out: bool,
        verified: Vec<Option<bool>>,
        (cond, size): (Loss, u64),
        (frames, raw): (Option<u64>, Option<f64>),
        limit_s: u64,
    ) -> Value {
        let mut o = Outcome::new("rmcast (default)".into(), "rmcast send FILE".into());
        o.timed_out = timed_out;
        o.wall_s = 2.0;
        o.per_receiver = verified
            .iter()
            .map(|v| (*v == Some(true)).then_some(400.0))
            .collect();
        let n = verified.len();
        o.verified = verified;
        o.json(n, cond, size, frames, raw, Duration::from_secs(limit_s))
    }

    #[test]
    fn a_run_past_the_time_limit_is_reported_not_dropped() {
        let lost = vec![Some(false), Some(false)];
        let row = row(
            true,
            lost,
            (Loss::Frame(0.01), 100),
            (Some(7), Some(500.0)),
            120,
        );
        assert_eq!(row["status"], "did not finish in 120 s");
        assert_eq!(row["finished"], false);
        assert!(row["wall_mbit_s"].is_null() && row["mean_mbit_s"].is_null());
        assert_eq!(row["frames_dropped"], 7);
        let t = table(&json!({ "rows": [row] }));
        assert!(t.contains("did not finish in 120 s"), "{t}");
        assert!(t.contains("frame 1%"), "{t}");
    }

    #[test]
    fn a_wrong_file_fails_the_run() {
        let one_wrong = vec![Some(true), Some(false), Some(true)];
        let row = row(
            false,
            one_wrong,
            (Loss::Frame(0.0), 1_000_000),
            (Some(0), Some(800.0)),
            1,
        );
        assert_eq!(
            row["status"],
            "failed: file wrong or missing at receiver(s) 2"
        );
        assert_eq!(row["all_verified"], false);
        assert!(row["wall_mbit_s"].is_null());
        assert_eq!(row["mean_mbit_s"], 400.0);
        assert_eq!(row["ratio_to_raw"], 0.5);
    }

    #[test]
    fn reaped_children_cpu_time_is_counted() {
        let Some(before) = children_cpu_s() else {
            eprintln!("skipped: /proc/self/stat is not readable here");
            return;
        };
        let mut c = Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"])
            .spawn()
            .unwrap();
        assert!(c.wait().unwrap().success());
        let after = children_cpu_s().unwrap();
        assert!(after > before, "{before} -> {after}");
    }

    #[test]
    fn a_complete_run_reports_wall_goodput() {
        let row = row(
            false,
            vec![Some(true); 2],
            (Loss::Injected(0.0), 1_000_000),
            (None, None),
            1,
        );
        assert_eq!(row["status"], "ok");
        assert_eq!(row["wall_mbit_s"], 4.0);
        assert!(row["frames_dropped"].is_null());
    }
}
