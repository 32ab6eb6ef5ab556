//! `rmcast bench xtp`: the seed-002 thesis's `metric` tool for rmcast's `xtp` — send a message
//! of a given size in writes of a given size, by unicast or to N receivers, loss injected at
//! one receiver, and record per run the timing, throughput, number of calls, time per call
//! and whether the run failed.
//!
//! The runs themselves are the `xtp` study's (`rmcast_repro::studies::xtp::run_sim` for the
//! simulated bus with the per-call cost model, `rmcast_lab::xtp::run_cell` for real
//! sockets); this module plans them ([`jobs`]), runs them ([`run`]) and makes their rows,
//! table and CSV. The command line keeps the arguments and the output.

use crate::{BenchError, Result};
use rmcast_lab::netns::{self, Segment};
use rmcast_lab::xtp::{run_cell, Place};
use rmcast_proto::rng::mix64;
use rmcast_repro::studies::xtp::{self, Cell, Mode, Setting};
use rmcast_repro::studies::xtp_net::{NetCell, NetOut};
use serde_json::{json, Value};
use std::fmt::Write as _;

/// What to run: every combination of the lists, `reps` times.
#[derive(Debug, Clone)]
pub struct XtpBench {
    /// Message sizes in bytes.
    pub message: Vec<u64>,
    /// Write (call) sizes in bytes.
    pub write: Vec<usize>,
    /// Receiver counts (multicast); 0 is left out.
    pub receivers: Vec<usize>,
    /// Also unicast to one receiver.
    pub unicast: bool,
    /// Loss probabilities at one receiver.
    pub loss: Vec<f64>,
    /// Repetitions of every configuration.
    pub reps: u64,
    /// The simulated 10 Mb/s bus with the study's per-call cost model.
    pub sim: bool,
    /// Network-namespace hosts on a Linux bridge instead of loopback.
    pub netns: bool,
}

fn bail<T>(msg: String) -> Result<T> {
    Err(BenchError::Failed(msg))
}

/// One configuration to run.
#[derive(Debug, Clone, Copy)]
pub struct Job {
    /// Message size in bytes.
    pub message: u64,
    /// Write (call) size in bytes.
    pub write: usize,
    /// Unicast or multicast to N receivers.
    pub mode: Mode,
    /// Loss probability at one receiver.
    pub loss: f64,
    /// Repetition, from 0.
    pub rep: u64,
}

/// Refuse a benchmark that cannot run as asked; the message names the flag.
pub fn validate(a: &XtpBench, setting: Setting) -> Result<()> {
    if a.message.is_empty() || a.message.iter().any(|&m| m == 0 || m > 1 << 30) {
        return bail("--message: sizes from 1 byte to 1 GiB".into());
    }
    let min_write = if a.sim { 1 } else { 2 };
    if a.write.is_empty()
        || a.write
            .iter()
            .any(|&w| w < min_write || w > rmcast_proto::xtp::MAX_WRITE)
    {
        return bail(format!(
            "--write: sizes from {min_write} to {} bytes{}",
            rmcast_proto::xtp::MAX_WRITE,
            if a.sim {
                ""
            } else {
                " (on sockets each write carries a 1-byte frame header)"
            }
        ));
    }
    let max_rx = if a.sim { 1000 } else { 249 };
    if a.receivers.iter().any(|&n| n > max_rx) {
        return bail(format!("--receivers: at most {max_rx} here"));
    }
    if !a.unicast && a.receivers.iter().all(|&n| n == 0) {
        return bail(
            "--receivers: give at least one receiver count of 1 or more, or --unicast".into(),
        );
    }
    if a.reps == 0 || a.reps > 1000 {
        return bail("--reps: 1 to 1000".into());
    }
    if setting == Setting::Coalesce && !a.sim {
        return bail(
            "--setting coalesce runs only with --sim (rmcast-net has no such switch)".into(),
        );
    }
    Ok(())
}

/// The study's setting called `s` (thesis, improved or coalesce).
pub fn setting_of(s: &str) -> Result<Setting> {
    Ok(match s {
        "thesis" => Setting::Thesis,
        "improved" => Setting::Improved,
        "coalesce" => Setting::Coalesce,
        _ => {
            return bail(format!(
                "--setting {s}: choose thesis, improved or coalesce"
            ))
        }
    })
}

/// Every run of `a`, in order: message sizes, modes (unicast first), losses, writes,
/// repetitions.
pub fn jobs(a: &XtpBench) -> Vec<Job> {
    let mut modes = Vec::new();
    if a.unicast {
        modes.push(Mode::Unicast);
    }
    let mut rx: Vec<usize> = a.receivers.iter().copied().filter(|&n| n > 0).collect();
    rx.dedup();
    modes.extend(rx.into_iter().map(Mode::Multi));
    let mut v = Vec::new();
    for &message in &a.message {
        for &mode in &modes {
            for &loss in &a.loss {
                for &write in &a.write {
                    for rep in 0..a.reps {
                        v.push(Job {
                            message,
                            write,
                            mode,
                            loss,
                            rep,
                        });
                    }
                }
            }
        }
    }
    v
}

fn loss_key(p: f64) -> u32 {
    (p * 100.0).round() as u32
}

/// One run on the simulated bus (4.7 ms per call), its seed from the job, as a network
/// run's outcome.
fn run_simulated(cell: &NetCell, j: &Job) -> NetOut {
    let seed = mix64(
        j.message
            ^ (j.write as u64) << 20
            ^ (j.mode.receivers() as u64) << 40
            ^ u64::from(j.mode == Mode::Unicast) << 50
            ^ j.loss.to_bits().rotate_left(7)
            ^ j.rep << 60,
    );
    match xtp::run_sim(&Cell::simulating(cell, seed)) {
        Ok(o) => NetOut {
            ok: o.ok,
            seconds: o.seconds,
            mbps: o.mbps,
            calls: o.calls,
            repairs: o.repairs,
            why: (!o.ok).then(|| {
                if o.aborted {
                    "CTIMEOUT aborted the association".to_string()
                } else {
                    "did not complete".to_string()
                }
            }),
        },
        Err(e) => NetOut {
            ok: false,
            seconds: 0.0,
            mbps: 0.0,
            calls: 0,
            repairs: 0,
            why: Some(e),
        },
    }
}

/// A run's JSON row.
pub fn row(j: &Job, o: &NetOut) -> Value {
    let ms = o.seconds * 1e3;
    json!({
        "message": j.message,
        "write": j.write,
        "mode": if j.mode == Mode::Unicast { "unicast" } else { "multicast" },
        "receivers": j.mode.receivers(),
        "loss": j.loss,
        "rep": j.rep,
        "ok": o.ok,
        "ms": ms,
        "mbps": o.mbps,
        "calls": o.calls,
        "ms_per_call": if o.calls > 0 { ms / o.calls as f64 } else { 0.0 },
        "repairs": o.repairs,
        "why": o.why,
    })
}

/// Where the runs go, as the output names it: `(where, detail)`.
pub fn place(a: &XtpBench) -> (&'static str, &'static str) {
    if a.sim {
        ("sim", "simulated 10 Mb/s bus, 4.7 ms per call")
    } else if a.netns {
        ("netns", "namespace hosts on a Linux bridge, real sockets")
    } else {
        ("loopback", "this host's loopback, real sockets")
    }
}

/// Run `jobs` (from [`jobs`]) on the simulated bus, on namespace hosts (`a.netns`, root) or on
/// loopback, one row each ([`row`]); `progress` is told each job before it runs.
pub fn run(
    a: &XtpBench,
    setting: Setting,
    jobs: &[Job],
    progress: &mut dyn FnMut(&Job),
) -> Result<Vec<Value>> {
    let seg = if a.netns {
        if let Err(why) = netns::available() {
            return bail(format!("--netns: {why}"));
        }
        let n = jobs.iter().map(|j| j.mode.receivers()).max().unwrap_or(1);
        Some(Segment::create(n + 1)?)
    } else {
        None
    };
    let place = match &seg {
        Some(s) => Place::Hosts(s),
        None => Place::Loopback,
    };
    let mut rows = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        progress(j);
        let cell = NetCell {
            message: j.message,
            write: j.write,
            mode: j.mode,
            loss: (loss_key(j.loss), j.loss),
            setting,
        };
        let o = if a.sim {
            run_simulated(&cell, j)
        } else {
            run_cell(&cell, i, place)
        };
        rows.push(row(j, &o));
    }
    drop(seg);
    Ok(rows)
}

/// The runs as a readable table (the command ends it with each failure's reason,
/// [`failures`], and the count of runs and failures).
pub fn table(where_: &str, detail: &str, setting: &str, rows: &[Value]) -> String {
    let mut t = format!("{where_} ({detail}), setting {setting}\n");
    let _ = writeln!(
        t,
        "{:>9} {:>6} {:>10} {:>6} {:>3} {:>6} {:>10} {:>9} {:>7} {:>8} {:>7}",
        "message",
        "write",
        "mode",
        "loss",
        "rep",
        "result",
        "timing ms",
        "Mbit/s",
        "calls",
        "ms/call",
        "repairs"
    );
    for r in rows {
        let mode = if r["mode"] == json!("unicast") {
            "unicast".to_string()
        } else {
            format!("1:{}", r["receivers"])
        };
        let u = |k: &str| r[k].as_u64().unwrap_or(0);
        let f = |k: &str| r[k].as_f64().unwrap_or(0.0);
        let _ = writeln!(
            t,
            "{:>9} {:>6} {:>10} {:>6.3} {:>3} {:>6} {:>10.1} {:>9.3} {:>7} {:>8.3} {:>7}",
            u("message"),
            u("write"),
            mode,
            f("loss"),
            u("rep"),
            if r["ok"] == json!(true) {
                "ok"
            } else {
                "FAILED"
            },
            f("ms"),
            f("mbps"),
            u("calls"),
            f("ms_per_call"),
            u("repairs"),
        );
    }
    t
}

/// Each failed run's reason, a line each.
pub fn failures(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .filter(|r| r["ok"] != json!(true))
        .map(|r| {
            format!(
                "failed: {} B in {} B writes, {} receiver(s), loss {}: {}",
                r["message"],
                r["write"],
                r["receivers"],
                r["loss"],
                r["why"].as_str().unwrap_or("unknown")
            )
        })
        .collect()
}

/// The runs as CSV, one row per run.
pub fn csv_rows(where_: &str, setting: &str, rows: &[Value]) -> Result<String> {
    const HEADER: [&str; 15] = [
        "where",
        "setting",
        "message",
        "write",
        "mode",
        "receivers",
        "loss",
        "rep",
        "ok",
        "ms",
        "mbps",
        "calls",
        "ms_per_call",
        "repairs",
        "why",
    ];
    let f = |r: &Value, k: &str| r[k].as_f64().unwrap_or(0.0);
    rmcast_repro::report::csv_table(
        &HEADER,
        rows.iter().map(|r| {
            [
                where_.to_string(),
                setting.to_string(),
                r["message"].to_string(),
                r["write"].to_string(),
                r["mode"].as_str().unwrap_or("").to_string(),
                r["receivers"].to_string(),
                r["loss"].to_string(),
                r["rep"].to_string(),
                r["ok"].to_string(),
                format!("{:.3}", f(r, "ms")),
                format!("{:.4}", f(r, "mbps")),
                r["calls"].to_string(),
                format!("{:.4}", f(r, "ms_per_call")),
                r["repairs"].to_string(),
                r["why"].as_str().unwrap_or("").to_string(),
            ]
        }),
    )
    .map_err(|e| BenchError::Failed(format!("CSV: {e}")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    fn bench() -> XtpBench {
        XtpBench {
            message: vec![51200],
            write: vec![1024, 8192],
            receivers: vec![0, 2],
            unicast: true,
            loss: vec![0.0],
            reps: 2,
            sim: true,
            netns: false,
        }
    }

    #[test]
    fn csv_quotes_commas() {
        let row = |why: &str| json!({"message": 1, "write": 2, "mode": "unicast", "why": why});
        let t = csv_rows("sim", "thesis", &[row("a, b"), row("plain")]).unwrap();
        let mut lines = t.lines().skip(1);
        assert!(lines.next().unwrap().ends_with(",\"a, b\""));
        assert!(lines.next().unwrap().ends_with(",plain"));
    }

    #[test]
    fn jobs_run_unicast_first_and_every_repetition() {
        let j = jobs(&bench());
        assert_eq!(j.len(), 2 * 2 * 2);
        assert_eq!(j[0].mode, Mode::Unicast);
        assert_eq!(j[4].mode, Mode::Multi(2));
        assert_eq!((j[1].write, j[1].rep), (1024, 1));
    }

    #[test]
    fn validation_names_the_flag() {
        let mut b = bench();
        assert!(validate(&b, Setting::Thesis).is_ok());
        b.sim = false;
        let e = validate(&b, Setting::Coalesce).unwrap_err().to_string();
        assert!(e.starts_with("--setting coalesce"), "{e}");
        b.reps = 0;
        assert_eq!(
            validate(&b, Setting::Thesis).unwrap_err().to_string(),
            "--reps: 1 to 1000"
        );
        assert!(setting_of("fast").is_err());
    }

    #[test]
    fn a_simulated_run_gives_a_row_and_a_table_line() {
        let mut b = bench();
        b.write = vec![8192];
        b.receivers = vec![1];
        b.unicast = false;
        b.reps = 1;
        let j = jobs(&b);
        let mut told = 0;
        let rows = run(&b, Setting::Improved, &j, &mut |_| told += 1).unwrap();
        assert_eq!((told, rows.len()), (1, 1));
        assert_eq!(rows[0]["ok"], json!(true), "{}", rows[0]);
        assert_eq!(rows[0]["calls"], json!(7));
        let (w, d) = place(&b);
        let t = table(w, d, "improved", &rows);
        assert_eq!(t.lines().count(), 3, "{t}");
        assert!(t.lines().nth(2).unwrap().contains(" ok "), "{t}");
        assert!(failures(&rows).is_empty());
    }
}
