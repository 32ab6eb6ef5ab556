//! Export one of rmcast's flat random graphs, with source and receiver hosts attached by
//! rmcast's own generator, as an edge list (`a b delay_ms bandwidth_bps`) that both
//! `rmcast sim` (`kind = "edge_list"`) and the ns-2 Tcl script read.
//!
//! Usage: ns2-export N P GRAPH_SEED RECEIVERS PLACEMENT_SEED BANDWIDTH_BPS HOST_DELAY_MS
//! Prints `# source S`, `# receivers R1 R2 ...`, `# source_link L` then one edge a line.

use rmcast_sim::topo::{self, PlaneParams};
use rmcast_sim::LinkConfig;
use std::time::Duration;

fn arg<T: std::str::FromStr>(a: &[String], i: usize, name: &str) -> Result<T, String> {
    a.get(i)
        .ok_or_else(|| format!("missing argument {name}"))?
        .parse()
        .map_err(|_| format!("bad {name}: {:?}", a[i]))
}

fn run() -> Result<(), String> {
    let a: Vec<String> = std::env::args().collect();
    let n: usize = arg(&a, 1, "N")?;
    let p: f64 = arg(&a, 2, "P")?;
    let gseed: u64 = arg(&a, 3, "GRAPH_SEED")?;
    let r: usize = arg(&a, 4, "RECEIVERS")?;
    let pseed: u64 = arg(&a, 5, "PLACEMENT_SEED")?;
    let bw: u64 = arg(&a, 6, "BANDWIDTH_BPS")?;
    let host_ms: f64 = arg(&a, 7, "HOST_DELAY_MS")?;
    let pl = PlaneParams {
        bandwidth_bps: bw,
        ..PlaneParams::default()
    };
    let mut t = topo::flat_random(n, p, &pl, gseed).map_err(|e| e.to_string())?;
    let host = LinkConfig::new(bw, Duration::from_nanos((host_ms * 1e6).round() as u64));
    topo::attach_hosts(&mut t, r, &host, pseed).map_err(|e| e.to_string())?;
    println!(
        "# rmcast flat_random n={n} p={p} seed={gseed}; {r} receivers placed with seed {pseed}"
    );
    println!("# source {}", t.source.0);
    let recv: Vec<String> = t.receivers.iter().map(|x| x.0.to_string()).collect();
    println!("# receivers {}", recv.join(" "));
    let mut src_link = None;
    for i in 0..t.net.link_count() {
        let (x, y, _) = t.net.link(i).ok_or("link index out of range")?;
        if x == t.source || y == t.source {
            src_link = Some(i);
        }
    }
    println!("# source_link {}", src_link.ok_or("source has no link")?);
    println!("# a b delay_ms bandwidth_bps   (line k is link k)");
    for i in 0..t.net.link_count() {
        let (x, y, cfg) = t.net.link(i).ok_or("link index out of range")?;
        println!(
            "{} {} {:.6} {}",
            x.0,
            y.0,
            cfg.delay.as_nanos() as f64 / 1e6,
            cfg.bandwidth_bps
        );
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("ns2-export: {e}");
        std::process::exit(2);
    }
}
