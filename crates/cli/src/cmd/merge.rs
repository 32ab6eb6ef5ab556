//! `rmcast merge`: join the shard directories of `rmcast sim --shard K/N` into one sweep.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = "Examples:
  rmcast sim sweep.toml --shard 0/3 --out shards/0     (on three machines, or array tasks)
  rmcast sim sweep.toml --shard 1/3 --out shards/1
  rmcast sim sweep.toml --shard 2/3 --out shards/2
  rmcast merge shards/* --out out/sweep

Writes DIR/runs.csv and DIR/runs.jsonl, byte-identical to `rmcast sim sweep.toml --out DIR`.
Every shard 0..N must be given once, all from the same scenario (the fingerprint of its
contents, seed included, is recorded in each shard.json) and the same rmcast version.
Both files are written to a temporary name and renamed; runs.csv comes last, so an
interrupted merge never leaves a runs.csv that looks complete. Exit status 2 on any mismatch.")]
pub struct Args {
    /// Shard directories written by `rmcast sim --shard K/N --out DIR`
    #[arg(required = true, value_name = "SHARD_DIR")]
    shards: Vec<PathBuf>,
    /// Output directory (created if missing)
    #[arg(long)]
    out: PathBuf,
    /// No summary line
    #[arg(long, short)]
    quiet: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let results = match rmcast_sim::shard::merge(&args.shards) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    rmcast_sim::shard::write_runs(&args.out, &results)?;
    if !args.quiet {
        println!(
            "merged {} shard(s), {} runs -> {}",
            args.shards.len(),
            results.len(),
            args.out.join("runs.csv").display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
