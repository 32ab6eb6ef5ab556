//! `rmcast testbed SCENARIO.toml`: the arguments; the testbed itself (namespaces, bridges,
//! relays, the runs and their columns) is `rmcast_lab::testbed`.

use super::send::fail;
use anyhow::Result;
use rmcast_net::NetError;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
#[command(
    about = "Run a scenario's topology on real sockets in network namespaces (root)",
    after_help = "Examples:\n  \
    sudo rmcast testbed scenarios/testbed/pgm-tree.toml --out out/pgm-testbed\n  \
    rmcast sim scenarios/testbed/pgm-tree.toml --out out/pgm-sim   # the same file simulated\n  \
    sudo rmcast testbed --agree 5 scenarios/testbed/pgm-tree.toml --out out/pgm-agree\n\n\
    Every host of the scenario's topology is a network namespace, every router a namespace\n\
    running `rmcast relay` (upstream: its link toward the source), every link an emulator\n\
    thread of this process forwarding Ethernet frames between the link's two interfaces:\n\
    the link's delay (and jitter), its bandwidth on wire bytes (frame + FCS, preamble, gap)\n\
    through its drop-tail queue, and the scenario's [[loss]] rules (every model, filter and\n\
    site `rmcast sim` has) per frame. A bus is one emulator at its rate: one member's frame\n\
    occupies the medium for all and reaches every other member (no collisions, no backoff).\n\
    The source runs `rmcast send` with a file of [traffic] messages x size bytes, one new\n\
    message every interval_ms (--data-interval-us; repairs and control are not charged to\n\
    it) and everything at most at the source link's bandwidth_bps (--rate; dsp, csp and cp\n\
    at a slower [protocol] rate_mbps; prmp and ff with the scenario's ipg_ms); every\n\
    receiver runs `rmcast recv`. The topology must be a tree below\n\
    a source host with one link (binary_tree with source_link = true, star, edge_list\n\
    trees), or one bus. Columns of runs.csv named as `rmcast sim` names them mean the same;\n\
    the others are the testbed's (frames_dropped*, frames_queue_dropped, emulator_*, relay_*).\n\
    Exit status: 0 every run completed (every receiver byte-exact); 1 a run did not; 2 bad\n\
    scenario or setup (not root).\n\n\
    --agree N judges the two against each other (issue 61): the file runs N times in the\n\
    simulator (seeds seed..seed+N) and N times on the testbed (the same seeds; each run's\n\
    emulator draws its losses from its own), then per metric (completed; completion_time_s,\n\
    from the sender's first data to the last receiver's last delivery on both sides;\n\
    repairs_per_loss, the sender's repairs per loss-rule drop, on the testbed those from the\n\
    sender's first data to the last delivery (frames_dropped_in_transfer); all_repairs_per_loss, every\n\
    host's (srm's and lms's receivers' too; not relays'); duplicates_per_receiver;\n\
    feedback_per_delivered, receivers' feedback packets per message delivered;\n\
    repairs_per_data_loss and all_repairs_per_data_loss, the same per drop of a data packet,\n\
    on the testbed a frame that carried an agent's data) both sides'\n\
    mean and 95 % interval and a verdict: agree when the testbed's mean is within 15 % of\n\
    the simulator's or the intervals overlap. Printed as a table, written to agreement.csv\n\
    and agreement.json (and sim/runs.csv, testbed/runs.csv) in --out. Exit status with\n\
    --agree: 0 every metric agrees; 1 one does not; 2 bad scenario (a sweep), N < 2, or setup.\n\n\
    --check (with --agree) judges against the known disagreements instead\n\
    (scenarios/testbed/agreement-pins.toml, built in; --pins FILE reads another), pinned by\n\
    (scenario file name without .toml, metric) with a reason and the committed run showing\n\
    them: exit 0 when every disagreement is pinned and every pinned metric still disagrees;\n\
    1 when a disagreement is not pinned, a metric is unmeasured, or a pinned one now agrees\n\
    (remove its pin), each listed after the table."
)]
pub struct Args {
    /// The scenario file (as `rmcast sim` reads it)
    pub scenario: PathBuf,
    /// Output directory (runs.csv, runs.jsonl, each run's received files and logs)
    #[arg(long, default_value = "out/testbed")]
    pub out: PathBuf,
    /// Print each run's row as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// No progress on stderr
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Run the file N times in the simulator and N times on the testbed and judge each
    /// metric's agreement (see below)
    #[arg(long, value_name = "N")]
    pub agree: Option<usize>,
    /// With --agree: exit 0 when every disagreement is pinned and every pin still disagrees
    #[arg(long, requires = "agree")]
    pub check: bool,
    /// The pinned disagreements --check reads (default: the built-in
    /// scenarios/testbed/agreement-pins.toml)
    #[arg(long, value_name = "FILE", requires = "check")]
    pub pins: Option<PathBuf>,
}

/// `--agree N`, judged on its own or (`check`: the pins file, `None` the built-in) against
/// the pinned disagreements.
fn agree(
    opts: &rmcast_lab::testbed::Options,
    n: usize,
    check: Option<Option<&Path>>,
) -> Result<ExitCode> {
    use rmcast_lab::agree::pins::Pins;
    let pins = match check.map(Pins::load).transpose() {
        Ok(p) => p,
        Err(e) => return Ok(fail(e)),
    };
    let rows = match rmcast_lab::agree::run(opts, n) {
        Ok(rows) => rows,
        Err(e) => return Ok(fail(e)),
    };
    print!("{}", rmcast_lab::agree::to_table(&rows));
    let ok = match pins {
        None => rows.iter().all(|r| r.verdict.agrees()),
        Some(pins) => {
            let stem = opts
                .scenario
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_default();
            let judged: Vec<_> = rows.iter().map(|r| (r.metric, r.verdict)).collect();
            let c = pins.check(&stem, &judged);
            print!("{}", c.report(&stem));
            c.passed()
        }
    };
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub fn run(a: Args) -> Result<ExitCode> {
    let rmcast = match std::env::current_exe() {
        Ok(bin) => bin,
        Err(e) => return Ok(fail(NetError::io("find rmcast", e))),
    };
    let opts = rmcast_lab::testbed::Options {
        scenario: a.scenario,
        out: a.out,
        json: a.json,
        quiet: a.quiet,
        rmcast,
    };
    if let Some(n) = a.agree {
        return agree(&opts, n, a.check.then_some(a.pins.as_deref()));
    }
    match rmcast_lab::testbed::run(&opts) {
        Ok(true) => Ok(ExitCode::SUCCESS),
        Ok(false) => Ok(ExitCode::from(1)),
        Err(e) => Ok(fail(e)),
    }
}
