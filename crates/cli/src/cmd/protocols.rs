use rmcast_proto::PROTOCOLS;
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
    rmcast protocols\n  \
    rmcast protocols --params prmp\n  \
    rmcast protocols --json | jq -r '.[].name'\n  \
    rmcast protocols --json | jq '.[] | select(.name == \"prmp\") | .params[] | {key, default, unit}'\n\n\
    Every protocol's parameters come from one table (rmcast_proto::spec): the key a scenario\n\
    file's [protocol] table takes, the `rmcast send` flag where the same quantity is a flag,\n\
    unit, range and default (and the default on sockets where it differs, with the reason).")]
pub struct Args {
    /// Print a JSON array instead of a table (every protocol with its parameters)
    #[arg(long)]
    json: bool,
    /// List the parameters of this protocol (scenario key, flag, unit, range, default)
    #[arg(long, value_name = "PROTOCOL")]
    params: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(name) = &args.params {
        let Some(p) = rmcast_proto::protocols::lookup(name) else {
            let names: Vec<&str> = PROTOCOLS.iter().map(|p| p.name).collect();
            eprintln!("error: no protocol {name:?}; known: {}", names.join(", "));
            return Ok(ExitCode::from(2));
        };
        if args.json {
            println!("{}", serde_json::to_string_pretty(p.params)?);
            return Ok(ExitCode::SUCCESS);
        }
        println!("{} — {} [seed {}]", p.name, p.summary, p.seed);
        if p.params.is_empty() {
            println!("  (no tunable parameters)");
        }
        for q in p.params {
            let place = match (q.scenario, q.flag) {
                (true, Some(f)) => format!("{} / --{f}", q.key),
                (true, None) => q.key.to_string(),
                (false, Some(f)) => format!("--{f} (sockets only)"),
                (false, None) => q.key.to_string(),
            };
            let unit = if q.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", q.unit)
            };
            println!("  {place}: default {}{unit}, {}", q.default, q.range);
            if let Some((v, why)) = q.on_sockets {
                println!("      on sockets: {v}{unit} ({why})");
            }
            println!("      {}", q.help);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.json {
        // The document is the spec table's (rmcast_proto::spec, feature `serde`).
        println!("{}", serde_json::to_string_pretty(PROTOCOLS)?);
    } else {
        let width = PROTOCOLS.iter().map(|p| p.name.len()).max().unwrap_or(0);
        for p in PROTOCOLS {
            let where_ = if p.sockets { "sim, sockets" } else { "sim" };
            println!(
                "{:width$}  {}  [seed {}; {where_}]",
                p.name, p.summary, p.seed
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
