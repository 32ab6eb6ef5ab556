use rmcast_proto::PROTOCOLS;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  rmcast protocols\n  rmcast protocols --json | jq -r '.[].name'"
)]
pub struct Args {
    /// Print a JSON array instead of a table
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.json {
        let items: Vec<serde_json::Value> = PROTOCOLS
            .iter()
            .map(|p| serde_json::json!({"name": p.name, "seed": p.seed, "summary": p.summary}))
            .collect();
        println!("{}", serde_json::to_string_pretty(&items)?);
    } else {
        let width = PROTOCOLS.iter().map(|p| p.name.len()).max().unwrap_or(0);
        for p in PROTOCOLS {
            println!("{:width$}  {}  [seed {}]", p.name, p.summary, p.seed);
        }
    }
    Ok(ExitCode::SUCCESS)
}
