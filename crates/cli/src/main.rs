//! # rmcast — the command line
//!
//! The binary's edge: parses arguments (clap), calls into `rmcast-sim`, `rmcast-net` and the
//! protocol engine, prints results, and turns errors into one clear line and an exit status.
//! It holds no protocol logic and no simulation logic of its own.
//!
//! Exit statuses: 0 success; 1 the job ran but its outcome is a failure (a claim failed, a
//! receiver did not complete); 2 bad usage or bad input (unreadable file, invalid address).
//!
//! The doc comments of the argument structs are `--help`'s text, read by people in a terminal
//! (`DIR/<run>/`, `[ff15::1234]:5000`), not rustdoc Markdown.
#![allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

mod alloc;
mod cmd;
mod commit;
mod progress;

/// mimalloc rather than glibc's allocator: simulations of 10^6 receivers allocate and free
/// millions of small objects (see docs/performance.md, `rmcast bench scale`); huge pages
/// only once a simulation is large (`alloc`).
#[global_allocator]
static ALLOC: alloc::Alloc = alloc::Alloc;

#[derive(Parser)]
#[command(
    name = "rmcast",
    version = commit::VERSION,
    about = "Reliable multicast: protocols, simulator, study reproduction, file transfer",
    long_about = "rmcast implements reliable multicast protocols once, as deterministic state \
                  machines, and runs them in a discrete-event simulator or over real UDP/IP \
                  multicast.",
    after_help = "Examples:\n  rmcast protocols            list the implemented protocols\n  rmcast protocols --json     the same, for scripts"
)]
struct Cli {
    /// Log more to stderr: -v info (session found, receivers joined, refused packets),
    /// -vv debug, -vvv trace. RUST_LOG, when set, takes precedence (e.g. RUST_LOG=rmcast_net=debug)
    #[arg(long, short = 'v', action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

/// Warnings (the default), or more with -v, to stderr; RUST_LOG overrides.
fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colours only for a terminal: a log file or pipe gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init();
}

#[derive(Subcommand)]
enum Command {
    /// List the implemented protocols with a one-line description each
    Protocols(cmd::protocols::Args),
    /// Send files or a stream reliably to every receiver in a multicast group
    Send(Box<cmd::send::Args>),
    /// Receive files or a stream from `rmcast send`
    Recv(cmd::recv::Args),
    /// Relay sessions between interfaces, hosting the protocol's network agent (PGM network
    /// element, LMS router, CSP/CP local exchange)
    Relay(cmd::relay::Args),
    /// Write a new random key for `send`/`recv --key-file`
    Keygen(cmd::keygen::Args),
    /// Re-run the seed studies claim by claim and write a report with plots
    Repro(cmd::repro::Args),
    /// Run a simulation scenario or sweep; writes runs.csv and runs.jsonl
    Sim(cmd::sim::Args),
    /// Run a scenario's topology on real sockets in network namespaces (root); writes runs.csv
    Testbed(cmd::testbed::Args),
    /// Join the shard directories of `rmcast sim --shard K/N` into runs.csv and runs.jsonl
    Merge(cmd::merge::Args),
    /// Measure performance (`rmcast bench sim`)
    Bench(cmd::bench::Args),
    /// Print the Wireshark dissector (Lua) for rmcast's packets
    Dissector(cmd::dissector::Args),
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    // Huge pages stay held back for the simulator's commands (`alloc`); `bench scale`'s
    // children are rmcast itself.
    alloc::settle(match &cli.command {
        Command::Sim(_) | Command::Repro(_) => true,
        Command::Bench(b) => b.simulates(),
        _ => false,
    });
    init_logging(cli.verbose);
    let result = match cli.command {
        Command::Protocols(a) => cmd::protocols::run(a),
        Command::Send(a) => cmd::send::run(*a),
        Command::Recv(a) => cmd::recv::run(a),
        Command::Relay(a) => cmd::relay::run(a),
        Command::Keygen(a) => cmd::keygen::run(a),
        Command::Repro(a) => cmd::repro::run(a),
        Command::Sim(a) => cmd::sim::run(a),
        Command::Testbed(a) => cmd::testbed::run(a),
        Command::Merge(a) => cmd::merge::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Dissector(a) => cmd::dissector::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
