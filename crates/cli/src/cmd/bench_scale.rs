//! `rmcast bench scale`: seed 003's single-loss experiment for SRM, PGM and LMS on
//! transit–stub graphs of growing size. The runs, their rows and the plot are
//! `rmcast_bench::scale`'s; this command parses the arguments, answers the child role, shows
//! progress and prints the table or the JSON.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rmcast_bench::scale::{self, Progress, ScaleBench};
use rmcast_sim::Scheme;
use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  rmcast bench scale                          10^3 .. 10^6 receivers, SRM, PGM and LMS (a table)
  rmcast bench scale --max-receivers 100000   stop at 10^5
  rmcast bench scale --schemes srm --sizes 10000,30000   chosen sizes
  rmcast bench scale --schemes srm,srm-adaptive --sizes 1e5,1e6   SRM at 10^5 and 10^6
  rmcast bench scale --schemes pgm,lms --json > scale.json
  rmcast bench scale --from-json scale.json --svg scale.svg   re-plot without re-running
  rmcast bench scale --schemes pgm,lms --sizes 1e7 --timeout-s 1500 --json > s.json
                      ten million receivers (about 7 minutes and 12-14 GiB each)

Each run: a transit-stub graph with about one stub router per ten receivers (1.5 Mb/s links,
GT-ITM-style delays), five 1,000-byte packets at 10 packets/s, the second one lost at the
source, run until the source completes (5 s linger). Every (scheme, size) runs in its own
child process; peak memory is that process's VmHWM (peak resident set) from the OS. Wall time
is build (graph, routes, agents) plus run. A scheme that times out at one size is skipped at
the larger ones. Progress on stderr: a bar on a terminal; in a file or a pipe, a line as
each run starts and ends. Exit status 1 if a run failed, timed out or was skipped.")]
pub struct Args {
    /// Largest group size; sizes are the powers of ten from 10^3 up to this (1000000 or 1e6)
    #[arg(long, default_value = "1e6", value_parser = group_size)]
    max_receivers: usize,
    /// Group sizes to run instead of the powers of ten, comma separated (e.g. 1000,3e4,1e6)
    #[arg(long, value_delimiter = ',', value_name = "N,...", value_parser = group_size)]
    sizes: Vec<usize>,
    /// Schemes, comma separated (srm, pgm, lms; also srm-adaptive, lms-adaptive, norm)
    #[arg(long, default_value = "srm,pgm,lms", value_delimiter = ',')]
    schemes: Vec<String>,
    /// Topology and placement seed
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Give up on one (scheme, size) after this many seconds of wall time
    #[arg(long, default_value_t = 600)]
    timeout_s: u64,
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
    /// Also write a log-log SVG plot of wall time and peak memory against receivers
    #[arg(long, value_name = "FILE")]
    svg: Option<std::path::PathBuf>,
    /// Do not run anything: read the JSON of an earlier `--json` run (e.g. to plot it)
    #[arg(long, value_name = "FILE")]
    from_json: Option<std::path::PathBuf>,
    /// Internal: run one (scheme, receivers) in this process and print its JSON
    #[arg(long, hide = true, value_name = "SCHEME:RECEIVERS")]
    child: Option<String>,
}

/// A group size: digits (`30000`), or digits, `e` and a power of ten (`3e4`, `1e6`).
fn group_size(s: &str) -> Result<usize, String> {
    let bad = || format!("{s:?} is not a group size (e.g. 30000, 3e4, 1e7)");
    let (m, e) = s.split_once(['e', 'E']).unwrap_or((s, "0"));
    let m: usize = m.parse().map_err(|_| bad())?;
    let e: u32 = e.parse().map_err(|_| bad())?;
    10usize
        .checked_pow(e)
        .and_then(|p| m.checked_mul(p))
        .filter(|&n| n > 0)
        .ok_or_else(bad)
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(spec) = &args.child {
        let out = scale::measure(spec, args.seed).map_err(|e| anyhow::anyhow!(e))?;
        println!("{out}");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(path) = &args.from_json {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {}: {e}", path.display());
                return Ok(ExitCode::from(2));
            }
        };
        let v: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                eprintln!(
                    "error: {}: not JSON from `rmcast bench scale --json`: {e}",
                    path.display()
                );
                return Ok(ExitCode::from(2));
            }
        };
        let Some(rows) = v["runs"].as_array() else {
            eprintln!("error: {}: no `runs` list", path.display());
            return Ok(ExitCode::from(2));
        };
        return output(&args, rows.clone(), v, false);
    }
    let mut schemes = Vec::new();
    for s in &args.schemes {
        match Scheme::parse(s.trim()) {
            Some(x) => schemes.push(x),
            None => {
                eprintln!(
                    "error: --schemes: unknown scheme {s:?} ({})",
                    Scheme::ALL.map(Scheme::name).join(", ")
                );
                return Ok(ExitCode::from(2));
            }
        }
    }
    if args.max_receivers < 1000 {
        eprintln!("error: --max-receivers must be at least 1000");
        return Ok(ExitCode::from(2));
    }
    let sizes = scale::sizes(args.max_receivers, &args.sizes).map_err(|e| anyhow::anyhow!(e))?;
    let b = ScaleBench {
        schemes,
        sizes,
        seed: args.seed,
        timeout: Duration::from_secs(args.timeout_s),
    };
    let load_at_start = scale::load_average();
    let exe = std::env::current_exe().map_err(|e| e.to_string());
    // A bar on a terminal; in a file or a pipe, where a bar draws nothing, a line as each
    // run starts and ends (a run of 10^7 receivers takes minutes).
    let terminal = std::io::stderr().is_terminal();
    let total = b.sizes.len() * b.schemes.len();
    let bar = if terminal {
        ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let (rows, failed) = scale::run(
        &b,
        exe.as_deref().map_err(String::as_str),
        &mut |p| match p {
            Progress::Start {
                index,
                total,
                scheme,
                receivers,
            } => {
                bar.set_message(format!("{} {receivers}", scheme.name()));
                if !terminal {
                    eprintln!(
                        "bench scale: {} with {receivers} receivers ({} of {total}) ...",
                        scheme.name(),
                        index + 1
                    );
                }
            }
            Progress::Done { row, skipped } => {
                if !skipped {
                    let line = format!("bench scale: {}", scale::outcome(row));
                    if terminal {
                        bar.println(line);
                    } else {
                        eprintln!("{line}");
                    }
                }
                bar.inc(1);
            }
        },
    );
    bar.finish_and_clear();
    let meta = crate::commit::stamp(scale::meta(args.seed, load_at_start));
    output(&args, rows, meta, failed)
}

fn output(
    args: &Args,
    rows: Vec<serde_json::Value>,
    meta: serde_json::Value,
    failed: bool,
) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.svg {
        match scale::svg(&rows) {
            Ok(text) => std::fs::write(path, text)?,
            // e.g. every run failed: the table below says why; there is nothing to draw.
            Err(e) => eprintln!("no SVG written to {}: {e}", path.display()),
        }
    }
    if args.json {
        let mut out = meta;
        out["runs"] = serde_json::Value::Array(rows);
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print!("{}", scale::table(&rows));
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::group_size;

    #[test]
    fn group_sizes_are_digits_or_powers_of_ten() {
        assert_eq!(group_size("30000"), Ok(30_000));
        assert_eq!(group_size("1e6"), Ok(1_000_000));
        assert_eq!(group_size("3E4"), Ok(30_000));
        assert_eq!(group_size("1e7"), Ok(10_000_000));
        for bad in ["", "0", "0e3", "1e", "e5", "1.5e6", "-1", "1e400", "ten"] {
            assert!(group_size(bad).is_err(), "{bad:?}");
        }
    }
}
