//! `rmcast bench xtp`: the seed-002 thesis's `metric` tool for rmcast's `xtp` — send a message
//! of a given size in writes of a given size, by unicast or to N receivers, loss injected at
//! one receiver, and record per run the timing, throughput, number of calls, time per call
//! and whether the run failed.
//!
//! The runs, their rows, the table and the CSV are `rmcast_bench::xtp`'s; this module parses,
//! shows progress and prints.

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rmcast_bench::xtp::{self, XtpBench};
use serde_json::json;
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

pub fn run(a: Args) -> Result<ExitCode> {
    let setting = xtp::setting_of(&a.setting)?;
    let b = XtpBench {
        message: a.message.clone(),
        write: a.write.clone(),
        receivers: a.receivers.clone(),
        unicast: a.unicast,
        loss: a.loss.clone(),
        reps: a.reps,
        sim: a.sim,
        netns: a.netns,
    };
    xtp::validate(&b, setting)?;
    let jobs = xtp::jobs(&b);
    let (where_, detail) = xtp::place(&b);
    let bar = ProgressBar::with_draw_target(Some(jobs.len() as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} runs {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut started = 0;
    let rows = xtp::run(&b, setting, &jobs, &mut |j| {
        if started > 0 {
            bar.inc(1);
        }
        started += 1;
        bar.set_message(format!(
            "{} B, {} B writes, {}, loss {}",
            j.message,
            j.write,
            j.mode.key(),
            j.loss
        ));
    })?;
    if started > 0 {
        bar.inc(1);
    }
    bar.finish_and_clear();
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
        print!("{}", xtp::csv_rows(where_, &a.setting, &rows)?);
    } else {
        print!("{}", xtp::table(where_, detail, &a.setting, &rows));
        for line in xtp::failures(&rows) {
            eprintln!("{line}");
        }
        println!("{} runs, {failed} failed", rows.len());
    }
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
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
}
