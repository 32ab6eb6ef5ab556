//! `rmcast bench xtp`: the seed-002 thesis's `metric` tool for rmcast's `xtp` — send a message
//! of a given size in writes of a given size, by unicast or to N receivers, loss injected at
//! one receiver, and record per run the timing, throughput, number of calls, time per call
//! and whether the run failed.
//!
//! The runs themselves are the `xtp` study's (`rmcast_repro::studies::xtp::run_sim` for the
//! simulated bus with the per-call cost model, `rmcast_lab::xtp::run_cell` for
//! real sockets); this module only parses, loops and prints.

use anyhow::{bail, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rmcast_lab::netns::{self, Segment};
use rmcast_lab::xtp::{run_cell, Place};
use rmcast_proto::rng::mix64;
use rmcast_repro::studies::xtp::{self, Cell, Mode, Setting};
use rmcast_repro::studies::xtp_net::{NetCell, NetOut};
use serde_json::{json, Value};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  rmcast bench xtp                                  50 KB in 1024-B writes to 1 receiver, loopback
  rmcast bench xtp --message 1024000 --write 1024,8192 --receivers 1,2,3 --loss 0,1/25,1/10,1/5
  rmcast bench xtp --sim --unicast --receivers 1,3 --write 64,1024,8192 --reps 3 --csv
  sudo rmcast bench xtp --netns --receivers 10 --loss 1/10 --json

Where: real UDP multicast sockets on this host's loopback (default), `--netns`: the sender and
each receiver in its own network namespace on a Linux bridge (root and iproute2), `--sim`: the
simulated 10 Mb/s Ethernet bus of seed 002's study with its per-call cost model (4.7 ms before
each write reaches the protocol; the thesis's 1997 SPARCs), a pure function of the arguments.

Per run: timing (ms, FIRST to the last write's acknowledgment in --sim, the sender's transfer
time on sockets), throughput (Mbit/s = message bytes x 8 / timing), calls (writes the sender
made: ceil(message / write) in --sim; on sockets also rmcast-net's file-header and finish
frames, and each write carries write - 1 message bytes after its frame byte), ms per call,
repairs, failed (CTIMEOUT abort, timeout, or a receiver's copy differing).

Settings: thesis (block on acknowledgment per write, go-back-N, FASTNAK, uncapped WTIMER
back-off, CTIMEOUT 60 s), improved (selective repeat, back-off capped at 1 s, an SREQ every 8
packets; on sockets rmcast-net's default xtp: writes do not block, sliding window of 64
packets), coalesce (--sim only: thesis with non-blocking writes packed into shared packets).
Loss: Bernoulli at receiver 1 on receive, data and control alike.

Exit status: 0 every run completed, 1 some run failed, 2 bad arguments or no namespaces.")]
pub struct Args {
    /// Message sizes in bytes (the thesis: 51200 and 1024000)
    #[arg(long, value_delimiter = ',', default_value = "51200")]
    pub message: Vec<u64>,
    /// Write (call) sizes in bytes (the thesis: 64 to 8192 in powers of two)
    #[arg(long, value_delimiter = ',', default_value = "1024")]
    pub write: Vec<usize>,
    /// Receiver counts (multicast)
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub receivers: Vec<usize>,
    /// Also (or, with --receivers 0, only) unicast to one receiver (on sockets: `rmcast send
    /// --unicast`, the session found on the group, data and status by unicast)
    #[arg(long)]
    pub unicast: bool,
    /// Loss at one receiver: probabilities or fractions (0, 0.04, 1/25, 1/10, 1/5)
    #[arg(long, value_delimiter = ',', default_value = "0", value_parser = parse_loss)]
    pub loss: Vec<f64>,
    /// Repetitions of every configuration
    #[arg(long, default_value_t = 1)]
    pub reps: u64,
    /// Protocol setting: thesis, improved or coalesce
    #[arg(long, default_value = "thesis")]
    pub setting: String,
    /// The simulated 10 Mb/s bus with the study's per-call cost model
    #[arg(long, conflicts_with = "netns")]
    pub sim: bool,
    /// Network-namespace hosts on a Linux bridge instead of loopback (root, iproute2)
    #[arg(long)]
    pub netns: bool,
    /// JSON: one object with where, setting, runs (one object per run) and failed
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// CSV, one row per run
    #[arg(long)]
    pub csv: bool,
}

fn parse_loss(s: &str) -> Result<f64, String> {
    let v = match s.split_once('/') {
        Some((a, b)) => {
            let a: f64 = a.trim().parse().map_err(|_| format!("not a number: {a}"))?;
            let b: f64 = b.trim().parse().map_err(|_| format!("not a number: {b}"))?;
            if b == 0.0 {
                return Err("division by zero".into());
            }
            a / b
        }
        None => s.trim().parse().map_err(|_| format!("not a number: {s}"))?,
    };
    if !(0.0..1.0).contains(&v) {
        return Err(format!("{s}: a loss probability is at least 0 and below 1"));
    }
    Ok(v)
}

/// One configuration to run.
#[derive(Debug, Clone, Copy)]
struct Job {
    message: u64,
    write: usize,
    mode: Mode,
    loss: f64,
    rep: u64,
}

fn validate(a: &Args, setting: Setting) -> Result<()> {
    if a.message.is_empty() || a.message.iter().any(|&m| m == 0 || m > 1 << 30) {
        bail!("--message: sizes from 1 byte to 1 GiB");
    }
    let min_write = if a.sim { 1 } else { 2 };
    if a.write.is_empty()
        || a.write
            .iter()
            .any(|&w| w < min_write || w > rmcast_proto::xtp::MAX_WRITE)
    {
        bail!(
            "--write: sizes from {min_write} to {} bytes{}",
            rmcast_proto::xtp::MAX_WRITE,
            if a.sim {
                ""
            } else {
                " (on sockets each write carries a 1-byte frame header)"
            }
        );
    }
    let max_rx = if a.sim { 1000 } else { 249 };
    if a.receivers.iter().any(|&n| n > max_rx) {
        bail!("--receivers: at most {max_rx} here");
    }
    if !a.unicast && a.receivers.iter().all(|&n| n == 0) {
        bail!("--receivers: give at least one receiver count of 1 or more, or --unicast");
    }
    if a.reps == 0 || a.reps > 1000 {
        bail!("--reps: 1 to 1000");
    }
    if setting == Setting::Coalesce && !a.sim {
        bail!("--setting coalesce runs only with --sim (rmcast-net has no such switch)");
    }
    Ok(())
}

fn setting_of(s: &str) -> Result<Setting> {
    Ok(match s {
        "thesis" => Setting::Thesis,
        "improved" => Setting::Improved,
        "coalesce" => Setting::Coalesce,
        _ => bail!("--setting {s}: choose thesis, improved or coalesce"),
    })
}

fn jobs(a: &Args) -> Vec<Job> {
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
fn row(j: &Job, o: &NetOut) -> Value {
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

/// The runs as a readable table on stdout, each failure's reason on stderr.
fn print_table(where_: &str, detail: &str, setting: &str, rows: &[Value], failed: usize) {
    println!("{where_} ({detail}), setting {setting}");
    println!(
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
        println!(
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
    for r in rows.iter().filter(|r| r["ok"] != json!(true)) {
        eprintln!(
            "failed: {} B in {} B writes, {} receiver(s), loss {}: {}",
            r["message"],
            r["write"],
            r["receivers"],
            r["loss"],
            r["why"].as_str().unwrap_or("unknown")
        );
    }
    println!("{} runs, {failed} failed", rows.len());
}

pub fn run(a: Args) -> Result<ExitCode> {
    let setting = setting_of(&a.setting)?;
    validate(&a, setting)?;
    let jobs = jobs(&a);
    let seg = if a.netns {
        if let Err(why) = netns::available() {
            bail!("--netns: {why}");
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
    let (where_, detail) = if a.sim {
        ("sim", "simulated 10 Mb/s bus, 4.7 ms per call")
    } else if a.netns {
        ("netns", "namespace hosts on a Linux bridge, real sockets")
    } else {
        ("loopback", "this host's loopback, real sockets")
    };
    let bar = ProgressBar::with_draw_target(Some(jobs.len() as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} runs {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut rows = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        bar.set_message(format!(
            "{} B, {} B writes, {}, loss {}",
            j.message,
            j.write,
            j.mode.key(),
            j.loss
        ));
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
        bar.inc(1);
    }
    bar.finish_and_clear();
    drop(seg);
    let failed = rows.iter().filter(|r| r["ok"] != json!(true)).count();
    if a.json {
        let out = crate::commit::stamp(json!({
            "where": where_,
            "where_detail": detail,
            "setting": a.setting,
            "runs": rows,
            "failed": failed,
        }));
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else if a.csv {
        print!("{}", csv_rows(where_, &a.setting, &rows)?);
    } else {
        print_table(where_, detail, &a.setting, &rows, failed);
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The runs as CSV, one row per run.
fn csv_rows(where_: &str, setting: &str, rows: &[Value]) -> Result<String> {
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
    Ok(rmcast_repro::report::csv_table(
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
    )?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn loss_accepts_fractions_and_probabilities() {
        assert_eq!(parse_loss("1/25").unwrap(), 0.04);
        assert_eq!(parse_loss("0.1").unwrap(), 0.1);
        assert_eq!(parse_loss("0").unwrap(), 0.0);
        assert!(parse_loss("1").is_err());
        assert!(parse_loss("1/0").is_err());
        assert!(parse_loss("-0.1").is_err());
        assert!(parse_loss("x").is_err());
    }

    #[test]
    fn csv_quotes_commas() {
        let row = |why: &str| json!({"message": 1, "write": 2, "mode": "unicast", "why": why});
        let t = csv_rows("sim", "thesis", &[row("a, b"), row("plain")]).unwrap();
        let mut lines = t.lines().skip(1);
        assert!(lines.next().unwrap().ends_with(",\"a, b\""));
        assert!(lines.next().unwrap().ends_with(",plain"));
    }
}
