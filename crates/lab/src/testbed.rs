//! `rmcast testbed SCENARIO.toml`: run a scenario's topology and traffic on real sockets in
//! network namespaces — hosts as namespaces, every link emulated (`crate::emu`: its
//! delay, bandwidth, queue and the scenario's loss rules per Ethernet frame), every router a
//! namespace running `rmcast relay` — and
//! write `runs.csv` / `runs.jsonl` with the columns `rmcast sim` writes where the meaning is
//! the same, so one file can be run both ways and compared.

use crate::emu::{self, Carried, Emulator};
use crate::netns::{self, Router, Segment};
use crate::proc::{in_netns, Proc};
use rmcast_net::NetError;
use rmcast_proto::NodeId;
use rmcast_sim::scenario::{
    to_csv, to_jsonl, topology_from_table, Hosts, Metric, RunResult, Scenario,
};
use rmcast_sim::topo::Topology;
use rmcast_sim::{Network, NodeKind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};
use toml::Table;

mod cpu;
mod pacing;
mod tree;

/// What `rmcast testbed` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// The scenario file (as `rmcast sim` reads it).
    pub scenario: PathBuf,
    /// Output directory (runs.csv, runs.jsonl, each run's received files and logs).
    pub out: PathBuf,
    /// Print each run's row as JSON on stdout.
    pub json: bool,
    /// No progress on stderr.
    pub quiet: bool,
    /// The `rmcast` binary the hosts and routers run (`send`, `recv`, `relay`).
    pub rmcast: PathBuf,
}

/// One run's processes may take this long before they are stopped.
const DEADLINE: Duration = Duration::from_secs(300);

/// The parts of one run's scenario the testbed uses.
struct Plan {
    protocol: String,
    seed: u64,
    bytes: usize,
    /// Bytes per [traffic] message.
    size: usize,
    /// How the sender paces `[traffic]` ([`pacing`]).
    pacing: pacing::Pacing,
    /// A router's hosts are a region and its relay serves them: csp and cp (their local
    /// exchange), prmp with `relays = true` (their polling parent, multi-level PRMP), dsp with
    /// `designated = "relay"` (their designated receiver: `rmcast send --designated relay`).
    regions: bool,
}

fn setup(msg: impl Into<String>) -> NetError {
    NetError::setup(msg)
}

/// Run every point of the scenario on the testbed: `Ok(true)` if every run completed (every
/// receiver byte-exact), `Ok(false)` if one did not; an error for a bad scenario or setup
/// (not root), which makes no run.
pub fn run(a: &Options) -> Result<bool, NetError> {
    let sc = Scenario::load(&a.scenario).map_err(|e| setup(e.to_string()))?;
    run_scenario(&sc, a).map(|(_, all)| all)
}

/// Run every point of the loaded scenario `sc` on the testbed (`a.scenario` is not read
/// again), write `runs.csv` and `runs.jsonl` in `a.out`, and return the rows and whether
/// every run completed.
pub fn run_scenario(sc: &Scenario, a: &Options) -> Result<(Vec<RunResult>, bool), NetError> {
    if let Some(why) = cannot_run() {
        return Err(setup(format!("rmcast testbed needs {why}")));
    }
    std::fs::create_dir_all(&a.out)
        .map_err(|e| NetError::io(format!("create {}", a.out.display()), e))?;
    let mut results = Vec::new();
    let mut all = true;
    for p in sc.points() {
        let dir = a.out.join(format!("run-{}", p.index));
        let (cols, ok) = run_point(sc, &p.table, p.index, &dir, a)?;
        all &= ok;
        let mut columns: Vec<(String, Metric)> = p
            .assignment
            .iter()
            .map(|(k, v)| (k.clone(), Metric::S(v.to_string())))
            .collect();
        columns.extend(cols);
        let r = RunResult {
            index: p.index,
            columns,
            trace: None,
            samples: Vec::new(),
        };
        if a.json {
            print!("{}", to_jsonl(std::slice::from_ref(&r)));
        }
        results.push(r);
    }
    let write = |name: &str, text: String| {
        let path = a.out.join(name);
        let tmp = a.out.join(format!(".{name}.part"));
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| NetError::io(format!("write {}", path.display()), e))
    };
    write("runs.csv", to_csv(&results))?;
    write("runs.jsonl", to_jsonl(&results))?;
    if !a.quiet {
        eprintln!("wrote {}", a.out.join("runs.csv").display());
    }
    Ok((results, all))
}

fn cannot_run() -> Option<String> {
    netns::available().err()
}

fn plan(sc: &Scenario, table: &Table) -> Result<Plan, NetError> {
    let bad = |what: &str| setup(format!("{}: {what}", sc.file));
    let protocol = table
        .get("protocol")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str())
        .ok_or_else(|| bad("[protocol] name is missing"))?
        .to_string();
    rmcast_net::agents::protocol(&protocol).map_err(|e| bad(&format!("[protocol] name: {e}")))?;
    let relays = table
        .get("protocol")
        .and_then(|p| p.get("relays"))
        .map(|v| {
            v.as_bool()
                .ok_or_else(|| bad("[protocol] relays must be true or false"))
        })
        .transpose()?
        .unwrap_or(false);
    let designated = table
        .get("protocol")
        .and_then(|p| p.get("designated"))
        .map(|v| {
            v.as_str()
                .filter(|w| matches!(*w, "receiver" | "relay"))
                .ok_or_else(|| bad("[protocol] designated must be \"receiver\" or \"relay\""))
        })
        .transpose()?
        .unwrap_or(rmcast_proto::tree::spec::DESIGNATED);
    let dsp_relays = protocol == "dsp" && designated == "relay";
    let regions =
        matches!(protocol.as_str(), "csp" | "cp") || (protocol == "prmp" && relays) || dsp_relays;
    let seed = table
        .get("seed")
        .and_then(|s| s.as_integer())
        .unwrap_or(1)
        .max(0) as u64;
    let traffic = table.get("traffic").and_then(|t| t.as_table());
    let int = |k: &str, d: i64| {
        traffic
            .and_then(|t| t.get(k))
            .and_then(|v| v.as_integer().or_else(|| v.as_float().map(|f| f as i64)))
            .unwrap_or(d)
    };
    let (messages, size) = (int("messages", 100).max(1), int("size", 1000).max(1));
    let bytes = usize::try_from(messages.saturating_mul(size))
        .ok()
        .filter(|b| *b <= 1 << 30)
        .ok_or_else(|| bad("[traffic] messages x size is over 1 GiB"))?;
    let pacing = pacing::pacing(table, &protocol);
    Ok(Plan {
        protocol,
        regions,
        seed,
        bytes,
        size: size as usize,
        pacing,
    })
}

/// Seed 001's round trips on this tree, as the simulator derives them ([`pacing::tree_rtds`]):
/// each receiver's region is its parent (the local exchange).
fn tree_rtds(
    net: &Network,
    parent: &BTreeMap<NodeId, (NodeId, usize)>,
    receivers: &[NodeId],
    table: &Table,
    plan: &Plan,
) -> pacing::TreeRtds {
    let block = pacing::block_datagram(table);
    let one_way = |mut n: NodeId| {
        let mut ns = 0u64;
        while let Some(&(up, l)) = parent.get(&n) {
            if let Some((_, _, c)) = net.link(l) {
                ns = ns
                    .saturating_add(c.delay.as_nanos() as u64)
                    .saturating_add(c.tx_ns(block));
            }
            n = up;
        }
        ns
    };
    let mut regions: BTreeMap<NodeId, pacing::RegionDelays> = BTreeMap::new();
    for &r in receivers {
        if let Some(&(x, _)) = parent.get(&r) {
            regions
                .entry(x)
                .or_insert_with(|| pacing::RegionDelays {
                    exchange: one_way(x),
                    endpoints: Vec::new(),
                })
                .endpoints
                .push(one_way(r));
        }
    }
    let regions: Vec<_> = regions.into_values().collect();
    let at_router = plan.protocol == "dsp" && plan.regions;
    let at_exchange = plan.protocol != "dsp" || at_router;
    let mut t = pacing::tree_rtds(&regions, at_exchange, at_router);
    if let Some(given) = pacing::given_local_rtd_ms(table) {
        t.local_rtd_ms = given;
    }
    t
}

/// `rmcast ARGS` on namespace `ns`, its standard error in `log`, its standard output piped
/// (its JSON report).
fn start(bin: &Path, ns: &str, args: &[String], log: &Path) -> Result<Proc, NetError> {
    let err = std::fs::File::create(log)
        .map_err(|e| NetError::io(format!("create {}", log.display()), e))?;
    Proc::spawn(
        in_netns(ns, bin)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(err),
    )
    .map_err(|e| NetError::io("start rmcast in a namespace", e))
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The namespaces of one run: a segment per link, a router namespace per router, and where
/// each host sits (its link's segment and its host index there).
struct Bed {
    segments: Vec<Segment>,
    /// The links emulated: those of the tree to the receivers (every link of a bus bed).
    links: std::collections::BTreeSet<usize>,
    /// Each router's namespace and its downstream interfaces (`eth1..=n`; `eth0` is up).
    routers: BTreeMap<NodeId, (Router, usize)>,
    hosts: BTreeMap<NodeId, (usize, usize)>,
    /// Each host's parent toward the source (a router's hosts are its region: seed 001's
    /// local exchange, as the simulator lays csp and cp out).
    parents: BTreeMap<NodeId, NodeId>,
}

impl Bed {
    /// The region of the hosts below router `r` (its place among the routers), if some are.
    fn region(&self, r: NodeId) -> Option<u16> {
        let k = self.routers.keys().position(|&x| x == r)?;
        self.parents
            .values()
            .any(|&p| p == r)
            .then(|| u16::try_from(k).ok())
            .flatten()
    }
}

fn build(
    net: &Network,
    parent: &BTreeMap<NodeId, (NodeId, usize)>,
    source: NodeId,
) -> Result<Bed, NetError> {
    let is_host = |n: NodeId| net.kind(n) == Some(NodeKind::Host);
    let mut segments = Vec::new();
    let mut hosts = BTreeMap::new();
    for i in 0..net.link_count() {
        let Some((a, b, _)) = net.link(i) else {
            continue;
        };
        let mut count = 0;
        for n in [a, b] {
            if is_host(n) {
                if net.degree(n) != 1 {
                    return Err(setup(format!(
                        "host {n:?} has {} links: the testbed runs hosts with one",
                        net.degree(n)
                    )));
                }
                hosts.insert(n, (i, count));
                count += 1;
            }
        }
        segments.push(Segment::create(count)?);
    }
    let mut routers = BTreeMap::new();
    for (k, r) in net.nodes_of(NodeKind::Router).into_iter().enumerate() {
        if k >= 150 {
            return Err(setup("the testbed runs at most 150 routers"));
        }
        // Off the tree to the receivers: no relay (the simulator sends nothing there).
        let Some(&(_, up)) = parent.get(&r) else {
            continue;
        };
        let mut segs = vec![up];
        segs.extend(
            parent
                .iter()
                .filter(|(_, &(p, _))| p == r)
                .map(|(_, &(_, l))| l),
        );
        let refs: Vec<&Segment> = segs.iter().filter_map(|&l| segments.get(l)).collect();
        routers.insert(r, (Router::create(&refs, 100 + k as u8)?, segs.len() - 1));
    }
    if !hosts.contains_key(&source) {
        return Err(setup(
            "the source must be a host with one link (binary_tree: source_link = true)",
        ));
    }
    let parents = hosts
        .keys()
        .filter_map(|&h| parent.get(&h).map(|&(p, _)| (h, p)))
        .collect();
    Ok(Bed {
        segments,
        links: parent.values().map(|&(_, l)| l).collect(),
        routers,
        hosts,
        parents,
    })
}

/// Seed 000's shared Ethernet: one segment, every member a host on it, emulated as one
/// medium at the bus's rate (`emu::bed`; no collisions, no backoff).
fn bus_bed(net: &Network) -> Result<Bed, NetError> {
    let members = net.bus_members(0).unwrap_or_default();
    let seg = Segment::create(members.len())?;
    Ok(Bed {
        segments: vec![seg],
        links: (0..net.link_count()).collect(),
        routers: BTreeMap::new(),
        hosts: members
            .into_iter()
            .enumerate()
            .map(|(i, n)| (n, (0, i)))
            .collect(),
        parents: BTreeMap::new(),
    })
}

/// Start the emulator of every link (or the bus) of `net` on `bed`'s segments.
fn emulate(
    net: &Network,
    rules: &[rmcast_sim::LossRule],
    seed: u64,
    bed: &Bed,
) -> Result<Vec<Emulator>, NetError> {
    let port = |i: usize, n: NodeId| -> Option<String> {
        let seg = bed.segments.get(i)?;
        match (bed.hosts.get(&n), bed.routers.get(&n)) {
            (Some(&(l, h)), _) if l == i => Some(seg.port(h)),
            (_, Some((r, _))) => r.port_on(seg).map(str::to_string),
            _ => None,
        }
    };
    let carried = |i: usize| bed.links.contains(&i);
    emu::bed::emulate(net, rules, seed, &bed.segments, &port, &carried)
}

fn run_point(
    sc: &Scenario,
    table: &Table,
    index: usize,
    dir: &Path,
    a: &Options,
) -> Result<(Vec<(String, Metric)>, bool), NetError> {
    let topo_table = table
        .get("topology")
        .and_then(|t| t.as_table())
        .cloned()
        .ok_or_else(|| setup(format!("{}: [topology] is missing", sc.file)))?;
    let seed = table.get("seed").and_then(|s| s.as_integer()).unwrap_or(1);
    let topo = topology_from_table(topo_table, &sc.file, &sc.dir, Hosts::Attach(seed as u64))
        .map_err(|e| setup(e.to_string()))?;
    let net = &topo.net;
    let bus = net.bus_count() > 0;
    if bus && (net.bus_count() > 1 || net.link_count() > 0) {
        return Err(setup(format!(
            "{}: one bus alone (seed 000's Ethernet), or links without buses",
            sc.file
        )));
    }
    let mut plan = plan(sc, table)?;
    let rules = rmcast_sim::scenario::loss_rules(
        net,
        table,
        &sc.file,
        &topo.link_loss,
        topo.source,
        &topo.receivers,
    )
    .map_err(|e| setup(e.to_string()))?;
    let bed = if bus {
        bus_bed(net)?
    } else {
        let parent = tree::tree(net, topo.source);
        if let Some(r) = topo.receivers.iter().find(|r| !parent.contains_key(r)) {
            return Err(setup(format!("receiver {r:?} has no path to the source")));
        }
        let parent = tree::to_receivers(&parent, &topo.receivers);
        if pacing::is_seed001_tree(&plan.protocol) {
            plan.pacing.rtds = Some(tree_rtds(net, &parent, &topo.receivers, table, &plan));
        }
        build(net, &parent, topo.source)?
    };
    let emulators = emulate(net, &rules, plan.seed, &bed)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| NetError::io(format!("create {}", dir.display()), e))?;
    if !a.quiet {
        eprintln!(
            "run {index}: {} on {} hosts, {} routers, {} links; {} bytes",
            plan.protocol,
            bed.hosts.len(),
            bed.routers.len(),
            emulators.len(),
            plan.bytes
        );
    }
    let (load, cpu0) = (cpu::load_average(), cpu::children_cpu());
    let started = Instant::now();
    let mut out = transfer(&bed, &topo, &plan, (index, dir), &a.rmcast)?;
    let wall = started.elapsed();
    let processes = cpu::children_cpu().saturating_sub(cpu0);
    let mut stats = Vec::new();
    let mut drops = Vec::new();
    for e in emulators {
        drops.extend(e.loss_drop_times());
        stats.push(e.stop()?);
    }
    let problems = std::mem::take(&mut out.problems);
    let (mut cols, completed) = columns(&plan, &topo, out, (&stats, &drops), wall);
    let emu_cpu = Duration::from_nanos(stats.iter().map(|e| e.cpu_ns).sum());
    let host = cpu::columns(processes, emu_cpu, wall, cpu::cores(), load);
    if host
        .iter()
        .any(|(k, m)| k == "cpu_bound" && matches!(m, Metric::B(true)))
    {
        // Said with --quiet too: this run measured the machine, not the network.
        eprintln!(
            "run {index} was CPU-bound: its processes and emulators used over {:.0} % of {} \
             cores (cpu_share in runs.csv)",
            cpu::BOUND * 100.0,
            cpu::cores()
        );
    }
    cols.extend(host);
    if !completed {
        // Not progress: said with --quiet too, so an exit status of 1 never comes alone.
        eprintln!("run {index} did not complete ({} bytes):", plan.bytes);
        for p in &problems {
            eprintln!("  {p}");
        }
        if problems.is_empty() {
            eprintln!(
                "  every process exited 0, but the sender's report does not say all completed"
            );
        }
    }
    Ok((cols, completed))
}

/// What went wrong with one process of a run, for the message of a run that did not
/// complete: its exit status (or that it was stopped at the deadline) and its log's last lines.
fn problem(who: &str, out: Option<&Output>, log: &Path) -> Option<String> {
    let status = match out {
        Some(o) if o.status.success() => return None,
        Some(o) => format!("exited with {}", o.status),
        None => "was stopped at its deadline".to_string(),
    };
    // A receiver's report (--json on stdout) says its outcome and why.
    let report: Value = out
        .and_then(|o| serde_json::from_slice(&o.stdout).ok())
        .unwrap_or(Value::Null);
    let said = match (
        report.get("outcome").and_then(Value::as_str),
        report.get("reason").and_then(Value::as_str),
    ) {
        (Some(o), Some(r)) => format!(", outcome {o}: {r}"),
        (Some(o), None) => format!(", outcome {o}"),
        _ => String::new(),
    };
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines
        .get(lines.len().saturating_sub(3)..)
        .unwrap_or_default()
        .join(" | ");
    Some(if tail.is_empty() {
        format!("{who} {status}{said}; nothing in {}", log.display())
    } else {
        format!("{who} {status}{said}; {}: {tail}", log.display())
    })
}

/// What the processes of one run printed.
struct Outputs {
    sender: Value,
    receivers_ok: Vec<bool>,
    /// Each receiver's report (`rmcast recv --json`), `Null` where it printed none.
    receivers: Vec<Value>,
    relays: Vec<Value>,
    /// Each process that did not exit 0, with why (see [`problem`]).
    problems: Vec<String>,
}

fn transfer(
    bed: &Bed,
    topo: &Topology,
    plan: &Plan,
    (index, dir): (usize, &Path),
    bin: &Path,
) -> Result<Outputs, NetError> {
    let group = format!("239.77.{}.{}:{}", 20 + index / 250, 1 + index % 250, 6600);
    let host_ns = |n: NodeId| {
        bed.hosts
            .get(&n)
            .and_then(|&(l, h)| bed.segments.get(l).map(|s| s.host(h)))
    };
    // csp and cp: a router's hosts are a region, its relay their local exchange; prmp with
    // `relays = true`: their polling parent (a receiver behind no router is the sender's child).
    let regions = plan.regions;
    let mut relays = Vec::new();
    for (r, (router, children)) in &bed.routers {
        let mut args = strings(&["relay", "--group", &group, "--upstream", "eth0"]);
        for k in 1..=*children {
            args.extend(strings(&["--downstream", &format!("eth{k}")]));
        }
        if let Some(region) = bed.region(*r).filter(|_| regions) {
            args.extend(strings(&["--region", &region.to_string()]));
        }
        args.extend(strings(&["--once", "--json", "--quiet", "--wait", "120"]));
        let log = dir.join(format!("relay-{}.log", r.0));
        relays.push(start(bin, router.name(), &args, &log)?);
    }
    let mut rx = Vec::new();
    for (i, &r) in topo.receivers.iter().enumerate() {
        let ns = host_ns(r).ok_or_else(|| setup(format!("receiver {r:?} is not a host")))?;
        let rdir = dir.join(format!("r{i}"));
        let mut args = strings(&["recv", "--group", &group, "--interface", netns::IFACE]);
        args.extend(strings(&[
            "--node-id",
            &(1001 + i).to_string(),
            "--json",
            "--quiet",
        ]));
        if regions {
            match bed.parents.get(&r).and_then(|&p| bed.region(p)) {
                Some(region) => args.extend(strings(&["--region", &region.to_string()])),
                None if plan.protocol == "prmp" => {}
                None => {
                    return Err(setup(format!(
                        "{}: receiver {r:?} is not behind a router: csp, cp and dsp with \
                         designated relays need every receiver behind one",
                        plan.protocol
                    )))
                }
            }
        }
        args.extend(strings(&["--force", "--wait", "120", "--dir"]));
        args.push(rdir.display().to_string());
        rx.push(start(bin, &ns, &args, &dir.join(format!("r{i}.log")))?);
    }
    std::thread::sleep(Duration::from_millis(500));
    let file = dir.join("data.bin");
    std::fs::write(
        &file,
        rmcast_net::sender::pseudo_random(plan.bytes as u64, plan.seed),
    )
    .map_err(|e| NetError::io(format!("write {}", file.display()), e))?;
    let ns = host_ns(topo.source).ok_or_else(|| setup("the source is not a host"))?;
    let n = topo.receivers.len().to_string();
    let mut args = strings(&["send", "--group", &group, "--interface", netns::IFACE]);
    args.extend(strings(&[
        "--receivers",
        &n,
        "--json",
        "--quiet",
        "--protocol",
    ]));
    args.push(plan.protocol.clone());
    if plan.protocol == "dsp" && plan.regions {
        args.extend(strings(&["--designated", "relay"]));
    }
    // pgm's RFC 3208 packets go on a port no relay carries: in rmcast's header through them.
    if plan.protocol == "pgm" && !relays.is_empty() {
        args.push("--rmcast-header".into());
    }
    // One [traffic] message per datagram, as the simulator sends them (a frame at most).
    let overhead = rmcast_net::agents::protocol(&plan.protocol)
        .map(|p| p.data_overhead(topo.receivers.len()))
        .unwrap_or(64);
    let dgram = (plan.size + overhead).min(1472);
    args.extend(strings(&["--datagram-size", &dgram.to_string()]));
    args.extend(plan.pacing.args());
    args.push(file.display().to_string());
    let sender_log = dir.join("sender.log");
    let s = start(bin, &ns, &args, &sender_log)?.finish(Instant::now() + DEADLINE);
    let mut problems: Vec<String> = problem("the sender", s.as_ref(), &sender_log)
        .into_iter()
        .collect();
    let sender = s
        .as_ref()
        .and_then(|o| serde_json::from_slice(&o.stdout).ok())
        .unwrap_or(Value::Null);
    let mut receivers_ok = Vec::new();
    let mut receivers = Vec::new();
    for (i, p) in rx.iter_mut().enumerate() {
        let o = p.finish(Instant::now() + Duration::from_secs(30));
        let log = dir.join(format!("r{i}.log"));
        problems.extend(problem(&format!("receiver r{i}"), o.as_ref(), &log));
        receivers_ok.push(o.as_ref().is_some_and(|o| o.status.success()));
        receivers.push(
            o.and_then(|o| serde_json::from_slice(&o.stdout).ok())
                .unwrap_or(Value::Null),
        );
    }
    let mut relay_out = Vec::new();
    for ((r, _), p) in bed.routers.iter().zip(relays.iter_mut()) {
        let o = p.finish(Instant::now() + Duration::from_secs(30));
        let log = dir.join(format!("relay-{}.log", r.0));
        problems.extend(problem(
            &format!("the relay of router {}", r.0),
            o.as_ref(),
            &log,
        ));
        relay_out.push(
            o.and_then(|o| serde_json::from_slice(&o.stdout).ok())
                .unwrap_or(Value::Null),
        );
    }
    Ok(Outputs {
        sender,
        receivers_ok,
        receivers,
        relays: relay_out,
        problems,
    })
}

fn columns(
    plan: &Plan,
    topo: &Topology,
    out: Outputs,
    (emus, drops): (&[emu::Stats], &[LossDrop]),
    wall: Duration,
) -> (Vec<(String, Metric)>, bool) {
    let sum = |f: fn(&emu::Stats) -> u64| emus.iter().map(f).sum::<u64>();
    let s = &out.sender;
    let rs: Vec<&Value> = s["receivers"].as_array().into_iter().flatten().collect();
    let u = |v: &Value| v.as_u64().unwrap_or(0);
    let messages: Vec<u64> = rs.iter().map(|r| u(&r["messages"])).collect();
    let completed = s["all_completed"] == true
        && out.receivers_ok.iter().all(|ok| *ok)
        && out.receivers_ok.len() == topo.receivers.len();
    let relay_sum = |k: &str| -> u64 {
        out.relays
            .iter()
            .map(|r| {
                u(r.pointer(&format!("/sessions/0/{k}"))
                    .unwrap_or(&Value::Null))
            })
            .sum()
    };
    let cols = vec![
        ("seed".into(), Metric::U(plan.seed)),
        ("receivers".into(), Metric::U(topo.receivers.len() as u64)),
        ("completed".into(), Metric::B(completed)),
        (
            "stop_reason".into(),
            Metric::S(if completed { "complete" } else { "incomplete" }.into()),
        ),
        (
            "completion_time_s".into(),
            Metric::F(s["seconds"].as_f64().unwrap_or(f64::NAN)),
        ),
        ("last_delivery_s".into(), Metric::F(last_delivery(&out))),
        (
            "delivered_min".into(),
            Metric::U(messages.iter().copied().min().unwrap_or(0)),
        ),
        (
            "delivered_max".into(),
            Metric::U(messages.iter().copied().max().unwrap_or(0)),
        ),
        ("delivered_total".into(), Metric::U(messages.iter().sum())),
        (
            "receiver_duplicates".into(),
            Metric::U(rs.iter().map(|r| u(&r["duplicates"])).sum()),
        ),
        (
            "receiver_repairs_sent".into(),
            Metric::U(out.receivers.iter().map(|r| u(&r["repairs_sent"])).sum()),
        ),
        (
            "receiver_control_sent".into(),
            Metric::U(out.receivers.iter().map(|r| u(&r["acks_sent"])).sum()),
        ),
        (
            "sender_packets_sent".into(),
            Metric::U(u(s
                .pointer("/driver/datagrams_sent")
                .unwrap_or(&Value::Null))),
        ),
        (
            "sender_repairs".into(),
            Metric::U(u(s.pointer("/agent/repairs_sent").unwrap_or(&Value::Null))),
        ),
        (
            "sender_rto_ms".into(),
            Metric::F(s["rto_ms"].as_f64().unwrap_or(f64::NAN)),
        ),
        ("testbed_bytes".into(), Metric::U(plan.bytes as u64)),
        ("frames_dropped".into(), Metric::U(sum(|e| e.loss_drops))),
        (
            "frames_dropped_in_transfer".into(),
            drops_within(drops, transfer_window(&out), |_| true),
        ),
        (
            "frames_dropped_in_transfer_data".into(),
            drops_within(drops, transfer_window(&out), |c| c == Carried::Data),
        ),
        (
            "frames_dropped_in_transfer_control".into(),
            drops_within(drops, transfer_window(&out), |c| c == Carried::Control),
        ),
        (
            "frames_dropped_in_transfer_session".into(),
            drops_within(drops, transfer_window(&out), |c| c == Carried::Session),
        ),
        (
            "frames_dropped_in_transfer_other".into(),
            drops_within(drops, transfer_window(&out), |c| c == Carried::Other),
        ),
        ("emulator_frames_in".into(), Metric::U(sum(|e| e.frames_in))),
        (
            "frames_queue_dropped".into(),
            Metric::U(sum(|e| e.queue_drops)),
        ),
        (
            "emulator_cpu_s".into(),
            Metric::F(sum(|e| e.cpu_ns) as f64 / 1e9),
        ),
        (
            "emulator_late_us".into(),
            Metric::F(sum(|e| e.late_ns) as f64 / 1e3 / sum(|e| e.delivered).max(1) as f64),
        ),
        ("relays".into(), Metric::U(out.relays.len() as u64)),
        (
            "relay_up_forwarded".into(),
            Metric::U(relay_sum("up_forwarded")),
        ),
        (
            "relay_up_held_back".into(),
            Metric::U(relay_sum("up_consumed")),
        ),
        (
            "relay_originated".into(),
            Metric::U(relay_sum("originated")),
        ),
        ("link_delay_emulated".into(), Metric::B(!emus.is_empty())),
        (
            "emulator_realtime".into(),
            Metric::B(!emus.is_empty() && emus.iter().all(|e| e.realtime)),
        ),
        ("wall_s".into(), Metric::F(wall.as_secs_f64())),
    ];
    (cols, completed)
}

/// From the sender's first data to the last receiver's last delivery, µs since the Unix
/// epoch, from their reports' wall-clock stamps (one machine, one clock); `None` unless every
/// receiver reported one.
fn transfer_window(out: &Outputs) -> Option<(u64, u64)> {
    let start = out.sender.get("started_unix_us").and_then(Value::as_u64)?;
    let done: Option<Vec<u64>> = out
        .receivers
        .iter()
        .map(|r| r.get("done_unix_us").and_then(Value::as_u64))
        .collect();
    Some((start, done?.into_iter().max()?))
}

/// Seconds from the sender's first data to the last receiver's last delivery
/// ([`transfer_window`]; `rmcast sim`'s `last_delivery_s` with the traffic starting at 0);
/// NaN without the window.
fn last_delivery(out: &Outputs) -> f64 {
    match transfer_window(out) {
        Some((s, d)) => d.saturating_sub(s) as f64 / 1e6,
        None => f64::NAN,
    }
}

/// The loss-rule drops (their times, µs since the epoch) inside `window`: the losses the
/// transfer met, as the simulator's `lost_rules_to_last_delivery` counts them (not the set-up's,
/// the join's or the goodbye's, nor those of session messages sent while the receivers
/// waited for the sender); NaN without a window.
/// A loss-rule drop: when (µs since the Unix epoch) and what the frame carried.
type LossDrop = (u64, Carried);

/// The drops of what `of` accepts inside `window` (none: not a number).
fn drops_within(
    drops: &[LossDrop],
    window: Option<(u64, u64)>,
    of: impl Fn(Carried) -> bool,
) -> Metric {
    match window {
        Some((a, b)) => Metric::U(
            drops
                .iter()
                .filter(|(t, c)| (a..=b).contains(t) && of(*c))
                .count() as u64,
        ),
        None => Metric::F(f64::NAN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn outputs(sender: Value, receivers: Vec<Value>) -> Outputs {
        Outputs {
            sender,
            receivers_ok: vec![true; receivers.len()],
            receivers,
            relays: Vec::new(),
            problems: Vec::new(),
        }
    }

    #[test]
    fn drops_count_from_the_first_data_to_the_last_delivery() {
        let out = outputs(
            json!({"started_unix_us": 1_000}),
            vec![
                json!({"done_unix_us": 3_000}),
                json!({"done_unix_us": 5_000}),
            ],
        );
        let w = transfer_window(&out);
        assert_eq!(w, Some((1_000, 5_000)));
        assert_eq!(last_delivery(&out), 0.004);
        // Before the sender's first data (the receivers' wait, the join), inside, after the
        // last delivery (the goodbye).
        let drops = [10, 999, 1_000, 2_500, 5_000, 5_001, 9_000].map(|t| (t, Carried::Data));
        assert!(matches!(drops_within(&drops, w, |_| true), Metric::U(3)));
        // By what they carried: a session frame and an ARP inside the window too.
        let mixed = [
            (1_500, Carried::Session),
            (1_600, Carried::Other),
            (2_000, Carried::Data),
            (3_000, Carried::Data),
            (9_000, Carried::Session),
        ];
        assert!(matches!(
            drops_within(&mixed, w, |c| c == Carried::Data),
            Metric::U(2)
        ));
        assert!(matches!(
            drops_within(&mixed, w, |c| c == Carried::Session),
            Metric::U(1)
        ));
    }

    #[test]
    fn without_every_receivers_report_there_is_no_window() {
        let out = outputs(
            json!({"started_unix_us": 1_000}),
            vec![json!({"done_unix_us": 3_000}), Value::Null],
        );
        assert_eq!(transfer_window(&out), None);
        assert!(last_delivery(&out).is_nan());
        assert!(
            matches!(drops_within(&[(2_000, Carried::Other)], None, |_| true), Metric::F(v) if v.is_nan())
        );
    }
}
