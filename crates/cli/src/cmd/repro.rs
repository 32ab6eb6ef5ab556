//! `rmcast repro`: run the registered studies, write the report, print the verdicts.
//! All study logic lives in `rmcast-repro`; this is argument parsing, progress bars, output
//! and exit codes.

use crate::progress::{Board, Progress as Shown};
use anyhow::Context as _;
use rmcast_repro::explore::{explore, point_text, Axis, GridPoint};
use rmcast_repro::{
    report::Report, run_studies, select, with_jobs, Gate, Pins, Progress, RunOptions, Sweeps,
    STUDIES,
};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  rmcast repro                       run every study, report in rmcast-report/
  rmcast repro --extended            also the largest beyond-the-paper sizes (hours)
  rmcast repro --quick --check       reduced sweeps; exit 1 if a claim fails that is not
                                     pinned as an expected failure (CI)
  rmcast repro demo --out /tmp/r     one study, report in /tmp/r
  rmcast repro segovia --runs-factor 4   four times the runs per point, to decide
                                     claims whose 95 % interval straddles their bound
  rmcast repro --runs-cap 8          let sequential sampling give an undecided point up to
                                     8 times its runs (default 4 in full mode, 1 in quick)
  rmcast repro segovia --quick --explore t=50000..100000:6 --explore limit=10..20:3
                                     judge every claim over a grid of unstated values:
                                     DIR/explore.md, explore.csv, explore-points.csv and
                                     two SVG heat maps
  rmcast repro paul --quick --mutants   could each claim have failed? the mutants that refute
                                     it, and the claims no mutant refutes (cannot fail)
  rmcast repro --list                the registered studies
  rmcast repro --claims scenarios/repro   use the claims files on disk (edit without rebuilding)
  rmcast repro --quick --json | jq '.[] | select(.verdict == \"fail\") | .id'

Writes DIR/report.md, DIR/index.html (plots inline), DIR/claims.csv, DIR/claims.json and one
SVG per plot (with --explore, the exploration's files instead). In full mode a point gets
more runs only while a claim on it is inconclusive: the study runs again with those points'
runs doubled, up to --runs-cap times (sequential sampling; the report's notes say how many
points got more). The last line printed is `claims: N passed, M failed` (on stderr with --json).
With --check, the expected failures are the claims pinned in scenarios/repro/pinned.toml
(built in; --pinned FILE reads another), each with its reason: a failure outside that list,
a claim that cannot be evaluated, a pin naming no claim, or a pinned claim whose value moved
more than 25 % from the one recorded with its pin, or has none recorded (scripts/pin_values.py
records them from a run's claims.json), fails the check; a pinned claim that passes is listed so the list shrinks.
Exit status: 0 done (with --check: every failure was pinned and held its value), 1 --check
found an unpinned failure or a moved value, 2 bad usage, a bad pinned list or an unwritable
output directory.")]
pub struct Args {
    /// Studies to run (default: all registered)
    #[arg(value_name = "STUDY")]
    studies: Vec<String>,
    /// Directory for the report
    #[arg(long, value_name = "DIR", default_value = "rmcast-report")]
    out: PathBuf,
    /// Reduced sweeps (fewer points and runs), for CI; the report says so
    #[arg(long, conflicts_with = "extended")]
    quick: bool,
    /// Full sweeps plus the largest beyond-the-paper sizes and the extra runs that change no
    /// claim (hours on a small machine); the report says so
    #[arg(long)]
    extended: bool,
    /// Exit with status 1 if a claim failed that is not pinned as an expected failure
    #[arg(long)]
    check: bool,
    /// The expected failures for --check (default: the built-in scenarios/repro/pinned.toml)
    #[arg(long, value_name = "FILE")]
    pinned: Option<PathBuf>,
    /// Run K times the mode's runs at every point (seeds, placements, repetitions): narrower
    /// intervals, so fewer inconclusive verdicts, for K times the CPU time. The first runs are
    /// the mode's own, so the measures only gain runs
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs_factor: u32,
    /// Sequential sampling's cap: a point feeding an inconclusive claim gets up to K times its
    /// mode's runs, doubling per round (default: 4 in full mode, 1 in quick mode; 1 turns it
    /// off)
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=64))]
    runs_cap: Option<u32>,
    /// Sweep an unstated parameter of one study, NAME=LO..HI[:STEPS] (STEPS values, 5 by
    /// default); give it twice for a two-dimensional grid. Every claim is judged at every
    /// value; the names a study reads are listed in its report's table of unstated values
    #[arg(long, value_name = "NAME=LO..HI[:STEPS]", value_parser = parse_axis)]
    explore: Vec<Axis>,
    /// Also judge every claim under mutants: the study's declared mutations (each a new
    /// run: protocols swapped, a mechanism removed, the driving loss at zero, a timer
    /// doubled) and a generic one (the claim's measure replaced by a constant).
    /// Each claim gets the mutants that fail it; a passing claim that none fails is marked
    /// `cannot fail` and not counted as passed; the mutation score is printed
    #[arg(long, conflicts_with = "explore")]
    mutants: bool,
    /// Worker threads for the runs (default: all cores)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// No progress bars
    #[arg(long, short)]
    quiet: bool,
    /// Print the claims as JSON on stdout (the summary line goes to stderr)
    #[arg(long)]
    json: bool,
    /// List the registered studies and exit
    #[arg(long)]
    list: bool,
    /// Read each study's claims from DIR/<study>/claims.toml instead of the built-in copy
    /// (studies without a file there keep the built-in one)
    #[arg(long, value_name = "DIR")]
    claims: Option<PathBuf>,
}

fn parse_axis(s: &str) -> Result<Axis, String> {
    s.parse()
}

impl Progress for Shown {
    fn add_total(&self, n: u64) {
        Shown::add_total(self, n);
    }
    fn inc(&self, n: u64) {
        Shown::inc(self, n);
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    // The xtp study's real-network cells run on this binary's sockets (`rmcast-repro` links
    // none): loopback, and namespace hosts as root.
    rmcast_repro::studies::xtp_net::install(&rmcast_lab::xtp::SOCKETS);
    if args.list {
        for s in STUDIES {
            let a = s.about();
            println!("{:10} {}  [{}]", a.name, a.title, a.source);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let studies = select(&args.studies)?;
    let pins = match &args.pinned {
        Some(path) => Pins::parse(
            &std::fs::read_to_string(path)
                .with_context(|| format!("--pinned {}", path.display()))?,
        ),
        None => Pins::builtin(),
    }?;
    let mut claim_files: Vec<String> = Vec::new();
    for s in &studies {
        let text = match &args.claims {
            Some(dir) if dir.join(s.name()).join("claims.toml").is_file() => {
                let path = dir.join(s.name()).join("claims.toml");
                std::fs::read_to_string(&path)
                    .with_context(|| format!("reading {}", path.display()))?
            }
            Some(dir) if !dir.is_dir() => {
                anyhow::bail!("--claims {}: not a directory", dir.display())
            }
            _ => s.about().claims_toml.to_string(),
        };
        claim_files.push(text);
    }
    let sweeps = if args.extended {
        Sweeps::Extended
    } else {
        Sweeps::from_quick(args.quick)
    };
    let mut opts = RunOptions::new(sweeps);
    opts.runs_factor = args.runs_factor;
    if let Some(cap) = args.runs_cap {
        opts.runs_cap = cap;
    }
    opts.mutants = args.mutants;
    if !args.explore.is_empty() {
        return run_explore(&args, &studies, &claim_files, &opts);
    }
    let quiet = args.quiet;
    let jobs = args.jobs.map(usize::from);
    let threads = jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    if !args.json {
        println!(
            "running {} stud{} ({}{}) on {threads} thread{}",
            studies.len(),
            if studies.len() == 1 { "y" } else { "ies" },
            match sweeps {
                Sweeps::Quick => "quick: reduced sweeps",
                Sweeps::Full => "full sweeps",
                Sweeps::Extended => "extended: full sweeps and the largest sizes",
            },
            if args.runs_factor > 1 {
                format!(", {} times the runs per point", args.runs_factor)
            } else {
                String::new()
            },
            if threads == 1 { "" } else { "s" }
        );
        println!("rmcast {}", crate::commit::VERSION);
    }
    // The studies run at once, sharing the threads (a study's long last runs overlap the
    // others' work); a study that times real transfers runs alone afterwards. Each study's
    // line is printed as soon as it finishes, so a long run shows its results as it goes.
    let started_all = std::time::Instant::now();
    let board = Board::new();
    let studies_out = with_jobs(jobs, || {
        run_studies(
            &studies,
            &claim_files,
            &opts,
            |s| board.progress(s.name(), quiet),
            |progress, r, took| {
                progress.finish();
                if !args.json {
                    board.suspend(|| print_study(r, took));
                }
            },
        )
    })?;
    if !args.json {
        println!("all studies: {:.1} s", started_all.elapsed().as_secs_f64());
    }
    let report = Report {
        sweeps,
        runs_factor: args.runs_factor,
        studies: studies_out,
        commit: Some(crate::commit::COMMIT.into()),
    };
    let written = report
        .write(&args.out)
        .with_context(|| format!("writing the report to {}", args.out.display()))?;
    let summary = report.summary_line();
    if args.json {
        print!("{}", report.claims_json()?);
        eprintln!("{}", report.tests_line());
        if let Some(line) = report.inconclusive_line() {
            eprintln!("{line}");
        }
        if let Some(line) = report.mutation_line() {
            eprintln!("{line}");
        }
        eprintln!("{summary}");
    } else {
        println!(
            "report: {} (also report.md, claims.csv, claims.json, {} SVG plot{})",
            written.html.display(),
            written.svgs.len(),
            if written.svgs.len() == 1 { "" } else { "s" }
        );
        println!("{}", report.tests_line());
        if let Some(line) = report.inconclusive_line() {
            println!("{line}");
        }
        if let Some(line) = report.mutation_line() {
            println!("{line}");
        }
        println!("{summary}");
    }
    if !args.check {
        return Ok(ExitCode::SUCCESS);
    }
    let gate = pins.gate(&report);
    print_gate(&gate, pins.len());
    Ok(if gate.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--explore`: run one study over the grid of its unstated parameters, print a line per
/// grid point, write the exploration's files.
fn run_explore(
    args: &Args,
    studies: &[&'static dyn rmcast_repro::Study],
    claim_files: &[String],
    opts: &RunOptions,
) -> anyhow::Result<ExitCode> {
    let ([study], [claims]) = (studies, claim_files) else {
        anyhow::bail!("--explore needs exactly one study, e.g. `rmcast repro segovia --explore t=50000..100000:6`");
    };
    anyhow::ensure!(
        args.explore.len() <= 2,
        "--explore takes one or two parameters (a line or a grid), not {}",
        args.explore.len()
    );
    anyhow::ensure!(
        !args.check,
        "--check judges a report against the pinned list; it does not apply to --explore"
    );
    let points: usize = args.explore.iter().map(|a| a.values.len()).product();
    if !args.json {
        println!(
            "exploring {} over {points} grid point{} ({})",
            study.name(),
            if points == 1 { "" } else { "s" },
            if opts.sweeps == Sweeps::Quick {
                "quick: reduced sweeps"
            } else {
                "full sweeps"
            }
        );
    }
    let started = std::time::Instant::now();
    let board = Board::new();
    let progress = board.progress(study.name(), args.quiet);
    let each = |p: &GridPoint, i: usize, n: usize| {
        if args.json {
            return;
        }
        let (passed, all) = p.validation_passed();
        board.suspend(|| {
            println!(
                "[{i}/{n}] {}: {passed} of {all} validation claims passed ({:.1} %)",
                point_text(&args.explore, &p.values),
                if all == 0 {
                    0.0
                } else {
                    100.0 * passed as f64 / all as f64
                }
            );
            let _ = std::io::Write::flush(&mut std::io::stdout());
        });
    };
    let jobs = args.jobs.map(usize::from);
    let e = with_jobs(jobs, || {
        explore(*study, claims, opts, &args.explore, &progress, &each)
    })??;
    progress.finish();
    let w = e.write(&args.out).map_err(|why| {
        anyhow::anyhow!("writing the exploration to {}: {why}", args.out.display())
    })?;
    if args.json {
        let rows: Vec<serde_json::Value> = e
            .points
            .iter()
            .map(|p| {
                let (passed, all) = p.validation_passed();
                serde_json::json!({
                    "values": args.explore.iter().zip(&p.values)
                        .map(|(a, v)| (a.name.clone(), serde_json::json!(v)))
                        .collect::<serde_json::Map<_, _>>(),
                    "validation_claims": all,
                    "passed": passed,
                    "in_seed_range": e.in_seed_range(p),
                    "verdicts": p.claims.iter()
                        .map(|c| (c.spec.id.clone(), serde_json::json!(c.verdict.word())))
                        .collect::<serde_json::Map<_, _>>(),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!("explored in {:.1} s", started.elapsed().as_secs_f64());
        if let Some(b) = e.best().first() {
            let (passed, all) = b.validation_passed();
            println!(
                "best: {passed} of {all} validation claims at {}",
                point_text(&args.explore, &b.values)
            );
        }
        println!(
            "wrote {} (also {}, {}, {}, {})",
            w.markdown.display(),
            w.csv.display(),
            w.points_csv.display(),
            w.heat_map.display(),
            w.claims_map.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A study's line (claims, passed, inconclusive, failed, time) and its failures.
fn print_study(r: &rmcast_repro::StudyReport, took: std::time::Duration) {
    println!(
        "{}: {} claims, {} passed,{} {} inconclusive, {} failed{} ({:.1} s)",
        r.name,
        r.claims.len() + r.not_run.len(),
        r.passed(),
        r.mutation.as_ref().map_or(String::new(), |m| {
            let (killed, passing) = m.score();
            format!(
                " {} cannot fail (mutation score {killed} of {passing}),",
                passing - killed
            )
        }),
        r.inconclusive(),
        r.failed(),
        if r.not_run.is_empty() {
            String::new()
        } else {
            format!(", {} in full mode only", r.not_run.len())
        },
        took.as_secs_f64()
    );
    if let Some(e) = &r.error {
        println!("  the study did not run: {e}");
    }
    // The failures; the inconclusive claims are counted here and listed in the report.
    for c in r.claims.iter().filter(|c| c.failed()) {
        println!("  FAIL {}: {}", c.spec.id, c.detail);
    }
    // Piped to a file, stdout is block-buffered: flush so the line shows now.
    let _ = std::io::Write::flush(&mut std::io::stdout());
}

/// The --check verdict, on stderr (stdout may carry the JSON).
fn print_gate(gate: &Gate, pinned: usize) {
    for u in &gate.unexpected {
        eprintln!("check: unexpected failure {}: {}", u.id, u.why);
    }
    for id in &gate.unknown {
        eprintln!("check: pinned claim {id} is not a claim of its study (renamed or removed?)");
    }
    for m in &gate.moved {
        eprintln!(
            "check: pinned claim {} moved: {} (investigate, or if the change is intended re-record with scripts/pin_values.py)",
            m.id, m.why
        );
    }
    for (id, v) in &gate.unrecorded {
        eprintln!(
            "check: pinned claim {id} has no recorded value for this mode (this run: {}): record it with scripts/pin_values.py",
            rmcast_repro::claim::fmt_num(*v)
        );
    }
    for id in &gate.now_passing {
        eprintln!(
            "check: pinned claim {id} passed in this run: remove its pin if it keeps passing"
        );
    }
    eprintln!(
        "check: {} unexpected failure{}, {} expected (of {pinned} pinned), {} pinned now passing, {} inconclusive{}{}{}",
        gate.unexpected.len(),
        if gate.unexpected.len() == 1 { "" } else { "s" },
        gate.expected.len(),
        gate.now_passing.len(),
        gate.inconclusive.len(),
        if gate.unknown.is_empty() {
            String::new()
        } else {
            format!(", {} unknown pins", gate.unknown.len())
        },
        if gate.moved.is_empty() {
            String::new()
        } else {
            format!(", {} pinned values moved", gate.moved.len())
        },
        if gate.unrecorded.is_empty() {
            String::new()
        } else {
            format!(", {} pinned values unrecorded", gate.unrecorded.len())
        }
    );
}
