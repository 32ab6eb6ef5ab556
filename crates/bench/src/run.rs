//! One `rmcast bench net` run: for every receiver count and every loss condition, the raw
//! blast, rmcast's default and every protocol asked for, then the tools; one JSON row per
//! (receivers, loss, contender).

use crate::proc::{self, loadavg, mbit, CpuMarks, Outcome};
use crate::raw::{self, Role};
use crate::spec::{Loss, NetBench, Setup, GROUP_IP};
use crate::tools::{ensure_tools, run_norm, run_udpcast, run_uftp};
use crate::{BenchError, Result, Topo};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How long receivers get to finish after their sender ended before they are stopped.
const RECEIVER_GRACE: Duration = Duration::from_secs(15);

fn group(port: u16) -> SocketAddr {
    SocketAddr::new(GROUP_IP.parse().expect("a literal IPv4 address"), port)
}

/// The protocols `--protocols` runs when not given: those that run on sockets without an
/// `rmcast relay` in the network (the bench builds one segment, no relays: `csp` and `cp`
/// would only report that their local exchange never answered).
pub fn default_protocols() -> Vec<&'static str> {
    rmcast_net::agents::PROTOCOLS
        .iter()
        .filter(|p| !p.needs_relay())
        .map(|p| p.name())
        .collect()
}

/// Names `rmcast send --protocol` accepts (every protocol that runs on sockets).
pub fn socket_protocols() -> Vec<&'static str> {
    rmcast_net::agents::PROTOCOLS
        .iter()
        .map(|p| p.name())
        .collect()
}

/// A `--protocols` entry: a protocol, then `/`-separated `rmcast send` flags without their
/// dashes (`pgm/fec-k=16` is `--protocol pgm --fec-k 16`, `pgm/rate=auto` `--rate auto`).
/// `key-file` without a value is the bench's own key, given to the sender and every receiver
/// (`pgm/key-file/encrypt`: an encrypted session; see [`keyed`]).
fn variant(entry: &str) -> (&str, Vec<String>) {
    let mut parts = entry.split('/');
    let proto = parts.next().unwrap_or(entry);
    let mut extra = Vec::new();
    for f in parts.filter(|f| !f.is_empty()) {
        match f.split_once('=') {
            Some((k, v)) => extra.extend([format!("--{k}"), v.to_string()]),
            None => extra.push(format!("--{f}")),
        }
    }
    (proto, extra)
}

/// A variant's flags with a valueless `--key-file` given `key` (written first, a fresh one
/// per run) and the flags the receivers need for it; `None` for an unkeyed variant.
fn keyed(extra: &[String], key: &Path) -> Result<Option<(Vec<String>, Vec<String>)>> {
    if !extra.iter().any(|f| f == "--key-file") {
        return Ok(None);
    }
    let _ = std::fs::remove_file(key);
    rmcast_net::secure::Keys::generate(key)?;
    let key = key.display().to_string();
    let send: Vec<String> = extra
        .iter()
        .flat_map(|f| match f.as_str() {
            "--key-file" => vec![f.clone(), key.clone()],
            _ => vec![f.clone()],
        })
        .collect();
    let mut recv = vec!["--key-file".to_string(), key];
    if extra.iter().any(|f| f == "--encrypt") {
        recv.push("--encrypt".into());
    }
    Ok(Some((send, recv)))
}

/// A variant's socket-buffer flags (`rcvbuf=N`, `sndbuf=N`): every endpoint's sockets, so
/// the receivers are given them too.
fn socket_flags(extra: &[String]) -> Vec<String> {
    extra
        .windows(2)
        .filter(|w| w[0] == "--rcvbuf" || w[0] == "--sndbuf")
        .flat_map(|w| w.iter().cloned())
        .collect()
}

fn check(b: &NetBench) -> Result<()> {
    let fail = |m: String| Err(BenchError::Failed(m));
    if b.receivers.is_empty() || b.receivers.contains(&0) {
        return fail("--receivers: give counts of at least 1".into());
    }
    if b.size_mb == 0 {
        return fail("--size-mb: give at least 1".into());
    }
    if b.conditions.is_empty() {
        return fail("no loss condition to measure (--frame-loss or --loss)".into());
    }
    match b.slow_port {
        Some(_) if !b.bridge => return fail("--slow-port needs --bridge".into()),
        Some(0) => return fail("--slow-port 0: give a rate such as 50M".into()),
        _ => {}
    }
    for c in &b.conditions {
        if !(0.0..=1.0).contains(&c.p()) {
            return fail(format!(
                "{} loss {} is not a probability in [0, 1]",
                c.kind(),
                c.p()
            ));
        }
        if c.frame() > 0.0 && !b.bridge {
            return fail(
                "--frame-loss needs --bridge (frames are dropped on the bridge between namespaces)"
                    .into(),
            );
        }
    }
    let known = socket_protocols();
    for p in &b.protocols {
        let (p, _) = variant(p);
        if p != "default" && !known.contains(&p) {
            return fail(format!(
                "--protocols: {p:?} does not run on sockets; choose from default, {}",
                known.join(", ")
            ));
        }
    }
    for t in &b.tools {
        if !crate::tools::TOOLS.contains(&t.as_str()) {
            return fail(format!(
                "--tools: {t:?} is not one of {}",
                crate::tools::TOOLS.join(", ")
            ));
        }
    }
    Ok(())
}

/// The drop-tail queue in front of a `--slow-port` (tbf's `latency 50ms`).
const SLOW_PORT_QUEUE: Duration = Duration::from_millis(50);

/// Run the benchmark with the `rmcast` binary `exe`; `progress` gets a line per step.
pub fn run(b: &NetBench, exe: &Path, progress: &mut dyn FnMut(String)) -> Result<Value> {
    check(b)?;
    let wanted: Vec<&str> = b.tools.iter().map(String::as_str).collect();
    let missing = ensure_tools(&wanted, !b.no_install, progress);
    let work = tempfile_dir("net")?;
    let file = work.join("bench.bin");
    let size = b.size_mb * 1_000_000;
    write_pseudo_random(&file, size)?;
    let digest = proc::digest(&file)?;
    let load_start = loadavg();
    let started = Instant::now();
    let mut port = 47_300u16;
    let mut rows = Vec::new();
    let mut raw_size = b.datagram_size.unwrap_or(1472);
    let total = b.receivers.len() * b.conditions.len();
    let mut step = 0;
    for &n in &b.receivers {
        // A segment of exactly the sender and these n receivers: on a larger one, every
        // multicast frame also floods the idle hosts (no IGMP snooping on the bridge), whose
        // kernels share this machine's CPUs with the contenders; on a real LAN they would not.
        let topo = if b.bridge {
            Topo::bridge(n + 1)?
        } else {
            Topo::loopback()
        };
        if let Some(bps) = b.slow_port {
            // Host n is the last receiver (host 0 sends).
            topo.queue_bottleneck(n, bps, SLOW_PORT_QUEUE, &[])?;
        }
        // The raw blast's datagram: the one given, else one that fills the sender's MTU.
        raw_size = b.datagram_size.unwrap_or_else(|| {
            topo.mtu(0)
                .map_or(1472, |m| m.saturating_sub(28).clamp(64, 65_507))
        });
        let setup = Setup {
            b,
            topo: &topo,
            exe,
            file: &file,
            digest,
            work: &work,
        };
        for &cond in &b.conditions {
            step += 1;
            progress(format!(
                "-- [{step}/{total}] {n} receiver(s), {} loss {} ({:.0} s so far)",
                cond.kind(),
                cond.p(),
                started.elapsed().as_secs_f64()
            ));
            let mut here = Vec::new();
            let mut raw_mean = None;
            // What the slow port's queue counted during each run.
            let mut queue = topo.queue_stats();
            let mut slow = |topo: &Topo| {
                let now = topo.queue_stats();
                let d = now.zip(queue).map(|(b, a)| b.since(&a));
                queue = now;
                d
            };
            if cond.everyone() {
                port += 1;
                topo.frame_loss(cond.frame())?;
                let o = raw_blast(&setup, n, group(port), raw_size)?;
                raw_mean = o.mean();
                here.push((o, topo.frames_dropped(), slow(&topo)));
                report(progress, here.last());
            }
            for p in &b.protocols {
                port += 1;
                topo.frame_loss(cond.frame())?;
                let o = rmcast_run(&setup, n, cond, p, group(port))?;
                here.push((o, topo.frames_dropped(), slow(&topo)));
                report(progress, here.last());
            }
            if cond.everyone() {
                for t in &b.tools {
                    if missing.contains(&t.as_str()) {
                        continue;
                    }
                    port += 10;
                    topo.frame_loss(cond.frame())?;
                    let o = match t.as_str() {
                        "uftp" => run_uftp(&setup, n, port)?,
                        "udpcast" => run_udpcast(&setup, n, port)?,
                        crate::openpgm::TOOL => crate::openpgm::run_openpgm(&setup, n, port)?,
                        t => run_norm(&setup, n, port, t)?,
                    };
                    here.push((o, topo.frames_dropped(), slow(&topo)));
                    report(progress, here.last());
                }
            }
            for (o, frames, q) in here {
                let mut row = o.json(n, cond, size, frames, raw_mean, b.timeout);
                if let (Some(q), Some(m)) = (q, row.as_object_mut()) {
                    m.insert("slow_port_frames_sent".into(), json!(q.sent_frames));
                    m.insert("slow_port_frames_dropped".into(), json!(q.dropped));
                }
                rows.push(row);
            }
        }
        topo.frame_loss(0.0)?;
    }
    let out = json!({
        "topology": if b.bridge {
            "bridge (one network namespace per endpoint, rmcast_lab::netns::Segment; a segment of the sender and exactly the measured receivers per receiver count)"
        } else {
            "loopback (one host)"
        },
        "file_bytes": size,
        "datagram_size": b.datagram_size.map_or(json!("rmcast send's default"), |d| json!(d)),
        "raw_datagram_size": raw_size,
        "window": b.window.map_or(json!("each protocol's default"), |w| json!(w)),
        "rate": b.rate.as_deref().map_or(json!("rmcast send's default"), |r| json!(r)),
        "timeout_s": b.timeout.as_secs_f64(),
        "slow_port": b.slow_port.map_or(json!(null), |bps| json!({
            "receiver": "the last of each count",
            "bits_per_s": bps,
            "queue_ms": SLOW_PORT_QUEUE.as_millis() as u64,
        })),
        "tools_missing": missing,
        "cpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "loadavg_start": load_start,
        "loadavg_end": loadavg(),
        "seconds": started.elapsed().as_secs_f64(),
        "rows": rows,
    });
    let _ = std::fs::remove_dir_all(&work);
    Ok(out)
}

/// One run: its outcome, the frames the loss rule dropped, what the slow port's queue counted.
type Measured = (Outcome, Option<u64>, Option<rmcast_lab::netns::QueueStats>);

fn report(progress: &mut dyn FnMut(String), row: Option<&Measured>) {
    if let Some((o, frames, q)) = row {
        let frames = frames.map_or(String::new(), |f| format!(", {f} frames dropped"));
        let q = q.map_or(String::new(), |q| {
            format!(
                ", slow port sent {} frames, dropped {}",
                q.sent_frames, q.dropped
            )
        });
        progress(format!("   {}{frames}{q}", o.summary()));
    }
}

/// The raw ceiling to `n` receivers.
fn raw_blast(s: &Setup<'_>, n: usize, group: SocketAddr, size: usize) -> Result<Outcome> {
    let (topo, exe) = (s.topo, s.exe);
    let bytes = s.b.size_mb * 1_000_000;
    let args = |role| raw::child_args(role, group, &topo.iface, bytes, size);
    let dir = s.work.join(format!("raw-{}", group.port()));
    std::fs::create_dir_all(&dir).map_err(BenchError::io(format!("create {}", dir.display())))?;
    let mut kids = Vec::new();
    for r in 1..=n {
        let mut c = topo.cmd(r, exe);
        c.args(args(Role::Recv));
        kids.push(proc::spawn_logged(&mut c, &dir, &format!("r{r}"))?);
    }
    std::thread::sleep(Duration::from_millis(300));
    let mut c = topo.cmd(0, exe);
    c.args(args(Role::Send));
    let mut cpu = CpuMarks::default();
    cpu.mark(0);
    let mut sender = proc::spawn_logged(&mut c, &dir, "s")?;
    let t0 = Instant::now();
    let done = sender.wait_for(s.b.timeout);
    let wall = t0.elapsed().as_secs_f64();
    cpu.mark(1);
    let sv = sender.json();
    let start_ns = sv["start_epoch_ns"].as_f64().unwrap_or(0.0);
    let mut o = Outcome::new(
        format!("raw {size}-byte blast"),
        format!("rmcast bench net --raw-role send|recv (datagrams of {size} bytes, no recovery)"),
    );
    o.wall_s = wall;
    o.timed_out = done.is_none();
    if done != Some(true) || start_ns == 0.0 {
        o.error = Some(format!("raw sender failed: {}", sender.stderr_tail()));
    }
    let mut last_max = 0.0f64;
    let mut delivered = Vec::new();
    for mut k in kids {
        k.wait_for(RECEIVER_GRACE);
        let v = k.json();
        let got = v["bytes"].as_u64().unwrap_or(0);
        let last = v["last_epoch_ns"].as_f64().unwrap_or(0.0);
        last_max = last_max.max(last);
        o.per_receiver
            .push((got > 0).then(|| mbit(got, (last - start_ns) / 1e9)));
        o.verified.push(None);
        delivered.push(got as f64 / bytes as f64);
    }
    cpu.mark(2);
    o.cpu = cpu;
    if last_max > start_ns && start_ns > 0.0 {
        o.wall_s = (last_max - start_ns) / 1e9;
    }
    o.extra
        .insert("delivered_fraction".into(), json!(delivered));
    let _ = std::fs::remove_dir_all(&dir);
    Ok(o)
}

/// Copy the standard output and error of a run's processes (`*.out`, `*.err` in `dir`) to
/// `to` (`--logs`).
fn keep_logs(dir: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).map_err(BenchError::io(format!("create {}", to.display())))?;
    let entries =
        std::fs::read_dir(dir).map_err(BenchError::io(format!("read {}", dir.display())))?;
    for e in entries.flatten() {
        let p = e.path();
        if matches!(p.extension().and_then(|x| x.to_str()), Some("out" | "err")) {
            let dest = to.join(e.file_name());
            std::fs::copy(&p, &dest)
                .map_err(BenchError::io(format!("copy to {}", dest.display())))?;
        }
    }
    Ok(())
}

/// `rmcast send`/`recv` with protocol `proto` (`default`: no `--protocol`) to `n` receivers.
fn rmcast_run(
    s: &Setup<'_>,
    n: usize,
    cond: Loss,
    proto: &str,
    group: SocketAddr,
) -> Result<Outcome> {
    let (b, topo) = (s.b, s.topo);
    let dir = s.work.join(format!("rm-{}", group.port()));
    let g = group.to_string();
    let (proto, mut extra) = variant(proto);
    std::fs::create_dir_all(&dir).map_err(BenchError::io(format!("create {}", dir.display())))?;
    let mut recv_key = Vec::new();
    if let Some((send, recv)) = keyed(&extra, &dir.join("bench.key"))? {
        (extra, recv_key) = (send, recv);
    }
    recv_key.extend(socket_flags(&extra));
    let mut kids = Vec::new();
    for r in 1..=n {
        let mut c = recv_command(topo, s.exe, r, &g, &dir.join(format!("r{r}")))?;
        c.args(&recv_key);
        if let Loss::Injected(p) = cond {
            if p > 0.0 {
                c.args(["--drop-rate", &p.to_string()])
                    .args(["--drop-seed", &(r as u64 * 13).to_string()]);
            }
        }
        kids.push(proc::spawn_logged(&mut c, &dir, &format!("r{r}"))?);
    }
    std::thread::sleep(Duration::from_millis(300));
    let mut args: Vec<String> = vec!["send".into(), "--receivers".into(), n.to_string()];
    if proto != "default" {
        args.extend(["--protocol".into(), proto.into()]);
    }
    args.extend(extra.iter().cloned());
    // `--window` goes only to the protocols that read one (`rmcast send` refuses it for others).
    let name = if proto == "default" {
        rmcast_net::agents::DEFAULT_PROTOCOL
    } else {
        proto
    };
    let windowed = rmcast_proto::protocols::lookup(name)
        .is_some_and(|p| p.params.iter().any(|q| q.flag == Some("window")));
    if let Some(w) = b.window.filter(|_| windowed) {
        args.extend(["--window".into(), w.to_string()]);
    }
    if let Some(d) = b.datagram_size {
        args.extend(["--datagram-size".into(), d.to_string()]);
    }
    if let Some(r) = &b.rate {
        args.extend(["--rate".into(), r.clone()]);
    }
    let shown = format!("rmcast {} FILE", args.join(" "));
    let mut c = send_command(topo, s.exe, &args, &g, s.file);
    let mut cpu = CpuMarks::default();
    cpu.mark(0);
    let t0 = Instant::now();
    let mut sender = proc::spawn_logged(&mut c, &dir, "s")?;
    let done = sender.wait_for(b.timeout);
    let wall = t0.elapsed().as_secs_f64();
    cpu.mark(1);
    let mut name = if proto == "default" {
        "rmcast (default)".to_string()
    } else {
        format!("rmcast --protocol {proto}")
    };
    // The key's path is the run's, not the variant's.
    let key_path = extra.iter().position(|f| f == "--key-file").map(|i| i + 1);
    for (i, f) in extra.iter().enumerate() {
        if Some(i) != key_path {
            name.push(' ');
            name.push_str(f);
        }
    }
    let mut o = Outcome::new(name, shown);
    o.wall_s = wall;
    o.timed_out = done.is_none();
    let sv = sender.json();
    if done == Some(false) {
        o.error = Some(format!(
            "sender exit status not 0: {}",
            sender.stderr_tail()
        ));
    }
    // Datagrams the receivers' kernels dropped (a full socket buffer): losses beside the
    // bridge's, where a receiver could not keep up.
    let mut kernel_drops = Vec::new();
    // Repairs the receivers sent (srm, lms: members' repairs; dsp: local re-multicasts).
    let mut receiver_repairs = 0u64;
    for (r, mut k) in kids.into_iter().enumerate() {
        // A sender that was stopped ends nothing: its receivers are stopped too.
        k.wait_for(if o.timed_out {
            Duration::ZERO
        } else {
            RECEIVER_GRACE
        });
        let v = k.json();
        kernel_drops.push(v["driver"]["kernel_drops"].clone());
        receiver_repairs += v["repairs_sent"].as_u64().unwrap_or(0);
        let ok = s.verify(&dir.join(format!("r{}/bench.bin", r + 1)));
        o.verified.push(Some(ok));
        o.per_receiver
            .push(v["goodput_mbit_s"].as_f64().filter(|_| ok));
    }
    cpu.mark(2);
    o.cpu = cpu;
    o.extra.insert("protocol".into(), sv["protocol"].clone());
    o.extra
        .insert("repairs_sent".into(), sv["agent"]["repairs_sent"].clone());
    o.extra.insert(
        "receiver_repairs_sent".into(),
        Value::from(receiver_repairs),
    );
    o.extra
        .insert("sender_seconds".into(), sv["seconds"].clone());
    o.extra
        .insert("receiver_kernel_drops".into(), Value::from(kernel_drops));
    o.extra.insert(
        "per_receiver_basis".into(),
        json!("receiver: first data to last byte"),
    );
    if let Some(logs) = &b.logs {
        let slug: String = (o.contender.chars())
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let run = format!("{n}rcv-{}{}-{slug}-{}", cond.kind(), cond.p(), group.port());
        keep_logs(&dir, &logs.join(run))?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(o)
}

/// `rmcast recv` on host `r` joining `group` on the topology's interface, writing into `out`
/// (created; an existing file is replaced), its JSON summary on standard output.
pub(crate) fn recv_command(
    topo: &Topo,
    exe: &Path,
    r: usize,
    group: &str,
    out: &Path,
) -> Result<Command> {
    std::fs::create_dir_all(out).map_err(BenchError::io(format!("create {}", out.display())))?;
    let mut c = topo.cmd(r, exe);
    c.args(["recv", "--group", group, "--interface", &topo.iface])
        .arg("--dir")
        .arg(out)
        .args(["--json", "--quiet", "--force", "--wait", "30"]);
    Ok(c)
}

/// `rmcast send ARGS` on host 0 to `group` on the topology's interface, sending `file`, its
/// JSON summary on standard output.
pub(crate) fn send_command(
    topo: &Topo,
    exe: &Path,
    args: &[String],
    group: &str,
    file: &Path,
) -> Command {
    let mut c = topo.cmd(0, exe);
    c.args(args)
        .args(["--group", group, "--interface", &topo.iface])
        .args(["--json", "--quiet"])
        .arg(file);
    c
}

/// A fresh work directory for `rmcast bench <what>`.
pub(crate) fn tempfile_dir(what: &str) -> Result<PathBuf> {
    let d = std::env::temp_dir().join(format!("rmcast-bench-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&d).map_err(BenchError::io(format!("create {}", d.display())))?;
    Ok(d)
}

pub(crate) fn write_pseudo_random(p: &Path, len: u64) -> Result<()> {
    let v = rmcast_net::sender::pseudo_random(len, 0x2545_f491_4f6c_dd1d);
    std::fs::write(p, v).map_err(BenchError::io(format!("write {}", p.display())))
}

#[cfg(test)]
mod variant_tests {
    use super::variant;

    #[test]
    fn a_protocol_entry_carries_send_flags_after_slashes() {
        assert_eq!(variant("pgm"), ("pgm", vec![]));
        assert_eq!(
            variant("pgm/fec-k=16/rate=auto"),
            (
                "pgm",
                vec![
                    "--fec-k".into(),
                    "16".into(),
                    "--rate".into(),
                    "auto".into()
                ]
            )
        );
        assert_eq!(
            variant("default/late-join"),
            ("default", vec!["--late-join".to_string()])
        );
    }

    #[test]
    fn socket_buffer_flags_reach_the_receivers_too() {
        let (_, extra) = variant("pgm/rcvbuf=33554432/fec-k=16/sndbuf=1000");
        assert_eq!(
            super::socket_flags(&extra),
            ["--rcvbuf", "33554432", "--sndbuf", "1000"]
        );
        assert!(super::socket_flags(&variant("pgm/fec-k=16").1).is_empty());
    }

    #[test]
    fn a_keyed_entry_gets_a_fresh_key_on_both_sides() {
        let dir = super::tempfile_dir("keyed-variant-test").unwrap();
        let key = dir.join("k");
        let (_, plain) = variant("pgm/fec-k=16");
        assert!(super::keyed(&plain, &key).unwrap().is_none());
        let (_, extra) = variant("pgm/key-file/encrypt");
        let (send, recv) = super::keyed(&extra, &key).unwrap().unwrap();
        let k = key.display().to_string();
        assert_eq!(send, ["--key-file", k.as_str(), "--encrypt"]);
        assert_eq!(recv, ["--key-file", k.as_str(), "--encrypt"]);
        let first = std::fs::read(&key).unwrap();
        assert_eq!(first.len(), rmcast_net::secure::KEY_LEN);
        let (_, auth) = variant("default/key-file");
        let (_, recv) = super::keyed(&auth, &key).unwrap().unwrap();
        assert_eq!(recv, ["--key-file", k.as_str()]);
        assert_ne!(std::fs::read(&key).unwrap(), first, "a fresh key per run");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn bench() -> NetBench {
        NetBench {
            slow_port: None,
            logs: None,
            size_mb: 1,
            receivers: vec![3],
            conditions: vec![Loss::Frame(0.0)],
            datagram_size: None,
            protocols: vec!["default".into()],
            window: None,
            rate: None,
            bridge: true,
            tools: vec![],
            no_install: true,
            timeout: Duration::from_secs(1),
        }
    }

    #[test]
    fn bad_settings_are_refused_before_anything_runs() {
        assert!(check(&bench()).is_ok());
        let mut b = bench();
        b.bridge = false;
        b.conditions = vec![Loss::Frame(0.01)];
        let e = check(&b).unwrap_err().to_string();
        assert!(e.contains("--frame-loss needs --bridge"), "{e}");
        let mut b = bench();
        b.protocols = vec!["nope".into()];
        assert!(check(&b)
            .unwrap_err()
            .to_string()
            .contains("does not run on sockets"));
        let mut b = bench();
        b.receivers = vec![0];
        assert!(check(&b).is_err());
        let mut b = bench();
        b.conditions = vec![Loss::Frame(1.5)];
        assert!(check(&b).is_err());
        let mut b = bench();
        b.tools = vec!["scp".into()];
        let e = check(&b).unwrap_err().to_string();
        assert!(e.contains("uftp, udpcast, norm, norm-cc, norm-lan"), "{e}");
        b.tools = vec!["norm".into(), "norm-cc".into(), "norm-lan".into()];
        assert!(check(&b).is_ok());
    }

    #[test]
    fn the_default_protocols_are_those_that_need_no_relay() {
        let d = default_protocols();
        assert!(!d.contains(&"csp") && !d.contains(&"cp"), "{d:?}");
        assert_eq!(d.len(), socket_protocols().len() - 2, "{d:?}");
    }

    #[test]
    fn every_socket_protocol_is_offered() {
        let p = socket_protocols();
        for name in rmcast_proto::protocols::socket_protocols().map(|d| d.name) {
            assert!(p.contains(&name), "{p:?}");
        }
    }
}
