//! Export one of rmcast's flat random graphs, with source and receiver hosts attached by
//! rmcast's own generator, as an edge list (`a b delay_ms bandwidth_bps`) that both
//! `rmcast sim` (`kind = "edge_list"`) and the ns-2 Tcl script read.
//!
//! Usage: ns2-export N P GRAPH_SEED RECEIVERS PLACEMENT_SEED BANDWIDTH_BPS HOST_DELAY_MS
//!        ns2-export study {TOPOLOGY PLACEMENT RECEIVERS | ts TOPOLOGY PLACEMENT RECEIVERS
//!                          | tree HEIGHT}
//!        ns2-export run-lms {the same placement} DROPS STOP_S MESSAGES
//! Prints `# source S`, `# receivers R1 R2 ...`, `# source_link L` then one edge a line.
//!
//! `study` prints a placement of rmcast's `lms` repro study, built by the study's own code
//! (`rmcast_repro::studies::lms::random_placement`, family `Random(R)`: `flat_random(100,
//! 0.1)` on the study's plane, 1 ms of delay per unit of distance, 1.5 Mb/s, from seed
//! `0x0030000 + TOPOLOGY`, then R receivers and the source attached *with replacement* over
//! 1 ms host links). `study ts T P R` is the study's transit-stub placement
//! (`transit_stub_placement`, receivers on stub routers), `study tree H` its binary tree of
//! height H (`tree_topology`, 10 ms links). `study` prints each link's class (`random`,
//! `transit-stub`, ...) as a trailing `# class` comment.
//!
//! `run-lms` runs rmcast's LMS on such a placement with the study's own `simulate` and
//! `run_seed` (see `run_lms`).

use rmcast_repro::studies::lms;
use rmcast_sim::topo::{self, PlaneParams};
use rmcast_sim::LinkConfig;
use std::time::Duration;

fn arg<T: std::str::FromStr>(a: &[String], i: usize, name: &str) -> Result<T, String> {
    a.get(i)
        .ok_or_else(|| format!("missing argument {name}"))?
        .parse()
        .map_err(|_| format!("bad {name}: {:?}", a[i]))
}

/// A placement named by arguments from `i`: `tree H` (2 arguments), `ts T P R` (4) or
/// `T P R` (3, a random graph).
fn placement(a: &[String], i: usize) -> Result<(topo::Topology, u64, usize), String> {
    if a.get(i).map(String::as_str) == Some("tree") {
        let h: u32 = arg(a, i + 1, "HEIGHT")?;
        // The study's trees have placement seed 0.
        return Ok((lms::tree_topology(h)?, 0, i + 2));
    }
    if a.get(i).map(String::as_str) == Some("ts") {
        let t: usize = arg(a, i + 1, "TOPOLOGY")?;
        let p: usize = arg(a, i + 2, "PLACEMENT")?;
        let r: usize = arg(a, i + 3, "RECEIVERS")?;
        let (tp, s) = lms::transit_stub_placement(t, p, r)?;
        return Ok((tp, s, i + 4));
    }
    let t: usize = arg(a, i, "TOPOLOGY")?;
    let p: usize = arg(a, i + 1, "PLACEMENT")?;
    let r: usize = arg(a, i + 2, "RECEIVERS")?;
    let (tp, s) = lms::random_placement(t, p, r)?;
    Ok((tp, s, i + 3))
}

/// `run-lms {TOPOLOGY PLACEMENT RECEIVERS | tree HEIGHT} DROPS STOP_S MESSAGES`: one run of
/// rmcast's LMS on the study's placement, run by the study's own `lms::simulate` with its
/// `run_seed`: source and receivers are *host* nodes, an LMS router agent on each router of the
/// source's tree above a receiver, `install_scheme(Lms)` with the spec's defaults;
/// 1024-byte messages every 100 ms and per line `FROM TO SEQ LINK K` of DROPS a
/// `DropNth { k: K }` rule on link LINK entered from FROM (original data only).
/// Prints one JSON object: every LossDetected/Delivered pair of the receivers, every
/// receiver's duplicates, requests and repairs sent, the source's repairs, the drops.
fn run_lms(a: &[String]) -> Result<(), String> {
    use rmcast_proto::{NodeId, Time};
    let (tp, pseed, i) = placement(a, 2)?;
    let drops: String = arg(a, i, "DROPS")?;
    let stop_s: u64 = arg(a, i + 1, "STOP_S")?;
    let messages: u64 = arg(a, i + 2, "MESSAGES")?;
    let text = std::fs::read_to_string(&drops).map_err(|e| format!("{drops}: {e}"))?;
    let mut loss = Vec::new();
    for line in text.lines() {
        let w: Vec<u64> = line
            .split_whitespace()
            .map(|x| x.parse().map_err(|_| format!("{drops}: bad line {line:?}")))
            .collect::<Result<_, _>>()?;
        let [from, _, _, link, k] = w[..] else {
            return Err(format!("{drops}: expected `FROM TO SEQ LINK K`: {line:?}"));
        };
        loss.push(lms::LossSpec {
            link: link as usize,
            from: NodeId(from as u32),
            ks: vec![k],
        });
    }
    let pl = lms::Placement::new(tp.net, tp.source, tp.receivers, 0, pseed)?;
    let shape = lms::RunShape {
        messages,
        stop: Time::from_secs(stop_s),
        lose_repairs: false,
    };
    let seed = lms::run_seed(&pl, lms::Scheme::Lms);
    let sim = lms::simulate(&pl, lms::Scheme::Lms, &loss, shape, seed)?;
    let secs = |t: Time| t.as_nanos() as f64 / 1e9;
    let mut rec = Vec::new();
    let mut rcv = Vec::new();
    for &x in &pl.receivers {
        let (det, del) = lms::recovery_times(&sim, x);
        for (seq, td) in det {
            let d = del
                .get(&seq)
                .map_or("null".to_string(), |&t| format!("{:.9}", secs(t)));
            rec.push(format!("[{},{},{:.9},{}]", x.0, seq, secs(td), d));
        }
        let s = sim.agent(x).map(|a| a.stats().clone()).unwrap_or_default();
        rcv.push(format!(
            "[{},{},{},{}]",
            x.0, s.duplicates, s.control_sent, s.repairs_sent
        ));
    }
    let src = sim
        .agent(pl.source)
        .map(|a| a.stats().repairs_sent)
        .unwrap_or(0);
    println!(
        "{{\"recoveries\":[{}],\"receivers\":[{}],\"source_repairs\":{},\"drops\":{}}}",
        rec.join(","),
        rcv.join(","),
        src,
        lms::drops(&sim)
    );
    Ok(())
}

fn study(a: &[String]) -> Result<(), String> {
    if a.get(2).map(String::as_str) == Some("ts") {
        let (tp, _, _) = placement(a, 2)?;
        return print(
            &tp,
            &format!(
                "rmcast lms study transit-stub placement: topology {}, placement {}, {} receivers",
                a[3], a[4], a[5]
            ),
            true,
        );
    }
    if a.get(2).map(String::as_str) == Some("tree") {
        let h: u32 = arg(a, 3, "HEIGHT")?;
        let tp = lms::tree_topology(h)?;
        return print(
            &tp,
            &format!("rmcast lms study binary tree: height {h}, 10 ms links, 1.5 Mb/s"),
            true,
        );
    }
    let t: usize = arg(a, 2, "TOPOLOGY")?;
    let p: usize = arg(a, 3, "PLACEMENT")?;
    let r: usize = arg(a, 4, "RECEIVERS")?;
    let (tp, pseed) = lms::random_placement(t, p, r)?;
    let (n, prob) = (lms::RANDOM_NODES, lms::RANDOM_P);
    let tseed = lms::TOPO_SEED_BASE + t as u64;
    print(
        &tp,
        &format!(
            "rmcast lms study placement: flat_random n={n} p={prob} seed={tseed:#x} \
             (topology {t}), 1 ms/unit; {r} receivers with replacement, placement {p} (seed {pseed:#x})"
        ),
        true,
    )
}

/// Prints `t` as the edge list: `# title`, the `# source`, `# receivers` and `# source_link`
/// headers, then a line `a b delay_ms bandwidth_bps` per link (line k is link k), followed by
/// `  # CLASS` when `classes` and the link has one.
fn print(t: &topo::Topology, title: &str, classes: bool) -> Result<(), String> {
    println!("# {title}");
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
    if classes {
        println!("# a b delay_ms bandwidth_bps  # class   (line k is link k)");
    } else {
        println!("# a b delay_ms bandwidth_bps   (line k is link k)");
    }
    for i in 0..t.net.link_count() {
        let (x, y, cfg) = t.net.link(i).ok_or("link index out of range")?;
        let class = if !classes || cfg.class.is_empty() {
            String::new()
        } else {
            format!("  # {}", cfg.class)
        };
        println!(
            "{} {} {:.6} {}{}",
            x.0,
            y.0,
            cfg.delay.as_nanos() as f64 / 1e6,
            cfg.bandwidth_bps,
            class
        );
    }
    Ok(())
}

fn run() -> Result<(), String> {
    let a: Vec<String> = std::env::args().collect();
    match a.get(1).map(String::as_str) {
        Some("study") => return study(&a),
        Some("run-lms") => return run_lms(&a),
        _ => {}
    }
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
    print(
        &t,
        &format!(
            "rmcast flat_random n={n} p={p} seed={gseed}; {r} receivers placed with seed {pseed}"
        ),
        false,
    )
}

fn main() {
    if let Err(e) = run() {
        eprintln!("ns2-export: {e}");
        std::process::exit(2);
    }
}
