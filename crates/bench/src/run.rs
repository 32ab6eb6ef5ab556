//! One `rmcast bench net` run: for every receiver count, the raw blast, rmcast at every loss
//! rate, then the tools; the result as JSON.

use crate::raw::{self, Role};
use crate::tools::{ensure_tools, run_udpcast, run_uftp};
use crate::{BenchError, Result, Topo};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const GROUP_IP: &str = "239.255.90.1";

/// What to measure.
#[derive(Debug, Clone)]
pub struct NetBench {
    /// File size in MB (10^6 bytes).
    pub size_mb: u64,
    /// Receiver counts to measure.
    pub receivers: Vec<usize>,
    /// Injected loss rates (at every receiver) for rmcast.
    pub loss: Vec<f64>,
    /// rmcast's datagram size (the raw blast uses the same).
    pub datagram_size: usize,
    /// rmcast protocol to measure.
    pub protocol: String,
    /// Window of windowed protocols.
    pub window: u16,
    /// Every endpoint in its own network namespace on a bridge (root).
    pub bridge: bool,
    /// Do not run uftp and udpcast.
    pub no_tools: bool,
    /// Do not apt-get install missing tools.
    pub no_install: bool,
}

pub(crate) fn mbit(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs / 1e6
    } else {
        0.0
    }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

pub(crate) fn ratio(a: f64, b: f64) -> Value {
    if b > 0.0 {
        json!((a / b * 1000.0).round() / 1000.0)
    } else {
        Value::Null
    }
}

pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::read(a), std::fs::read(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Wait for a child that prints JSON: whether it succeeded, and what it printed.
fn wait_json(c: Child, what: &str) -> Result<(bool, Value)> {
    let out = c
        .wait_with_output()
        .map_err(BenchError::io(format!("wait for {what}")))?;
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    Ok((out.status.success(), v))
}

fn spawn(c: &mut std::process::Command, what: &str) -> Result<Child> {
    c.stdout(Stdio::piped())
        .spawn()
        .map_err(BenchError::io(format!("start {what}")))
}

fn group(port: u16) -> SocketAddr {
    SocketAddr::new(GROUP_IP.parse().expect("a literal IPv4 address"), port)
}

/// Run the benchmark with the `rmcast` binary `exe`; `progress` gets a line per step.
pub fn run(b: &NetBench, exe: &Path, progress: &mut dyn FnMut(String)) -> Result<Value> {
    let maxn = b.receivers.iter().copied().max().unwrap_or(1);
    if b.receivers.contains(&0) {
        return Err(BenchError::Failed(
            "--receivers: counts must be at least 1".into(),
        ));
    }
    let topo = if b.bridge {
        Topo::bridge(maxn + 1)?
    } else {
        Topo::loopback()
    };
    let missing = if b.no_tools {
        vec!["uftp", "udpcast"]
    } else {
        ensure_tools(!b.no_install, progress)
    };
    let work = tempfile_dir()?;
    let file = work.join("bench.bin");
    let size = b.size_mb * 1_000_000;
    write_pseudo_random(&file, size)?;
    let setup = Setup {
        b,
        topo: &topo,
        exe,
        file: &file,
        work: &work,
    };
    let mut port = 47_300u16;
    let mut results = Vec::new();
    for &n in &b.receivers {
        progress(format!("-- {n} receiver(s)"));
        port += 1;
        let (raw, raw_bytes) = raw_blast(b, &topo, exe, n, group(port), size)?;
        let raw_mean = mean(&raw);
        progress(format!("   raw blast: {raw:.0?} Mbit/s per receiver"));
        let mut rm = Vec::new();
        let mut rm_wall0 = 0.0;
        for &loss in &b.loss {
            port += 1;
            let (v, wall_mbit) = rmcast_run(&setup, n, loss, group(port), raw_mean, progress)?;
            if loss == 0.0 {
                rm_wall0 = wall_mbit;
            }
            rm.push(v);
        }
        // The tools, same file, same receivers, no loss injection (they have none).
        let tools_here = b.bridge || n == 1;
        let mut uftp = Value::Null;
        let mut udpcast = Value::Null;
        if !tools_here {
            uftp = json!({"skipped": "uftpd cannot share a port with another uftpd on one host; use --bridge"});
            udpcast =
                json!({"skipped": "udp-receiver cannot share a port on one host; use --bridge"});
        } else {
            if !missing.contains(&"uftp") {
                port += 1;
                uftp = run_uftp(&setup, n, port, rm_wall0)?;
                progress(format!("   uftp: {uftp}"));
            }
            if !missing.contains(&"udpcast") {
                port += 10;
                udpcast = run_udpcast(&setup, n, port, rm_wall0)?;
                progress(format!("   udpcast: {udpcast}"));
            }
        }
        results.push(json!({
            "receivers": n,
            "raw": {
                "per_receiver_mbit_s": raw,
                "per_receiver_bytes": raw_bytes,
                "mean_mbit_s": raw_mean,
            },
            "rmcast": rm,
            "uftp": uftp,
            "udpcast": udpcast,
        }));
    }
    let out = json!({
        "topology": if b.bridge { "bridge (one network namespace per endpoint)" } else { "loopback (one host)" },
        "file_bytes": size,
        "datagram_size": b.datagram_size,
        "protocol": b.protocol,
        "window": if b.protocol == "saw" { Value::Null } else { json!(b.window) },
        "tools_missing": missing,
        "runs": results,
    });
    let _ = std::fs::remove_dir_all(&work);
    Ok(out)
}

/// The raw ceiling to `n` receivers: Mbit/s and bytes per receiver.
fn raw_blast(
    b: &NetBench,
    topo: &Topo,
    exe: &Path,
    n: usize,
    group: SocketAddr,
    size: u64,
) -> Result<(Vec<f64>, Vec<u64>)> {
    let args = |role| raw::child_args(role, group, &topo.iface, size, b.datagram_size);
    let mut kids = Vec::new();
    for r in 1..=n {
        kids.push(spawn(
            topo.cmd(r, exe).args(args(Role::Recv)),
            "a raw receiver",
        )?);
    }
    std::thread::sleep(Duration::from_millis(300));
    let s = spawn(topo.cmd(0, exe).args(args(Role::Send)), "the raw sender")?;
    let (ok, sv) = wait_json(s, "raw sender")?;
    let start_ns = sv["start_epoch_ns"].as_f64().unwrap_or(0.0);
    if !ok || start_ns == 0.0 {
        return Err(BenchError::Failed("raw blast sender failed".into()));
    }
    let mut raw = Vec::new();
    let mut raw_bytes = Vec::new();
    for k in kids {
        let (_, v) = wait_json(k, "raw receiver")?;
        let b = v["bytes"].as_u64().unwrap_or(0);
        let last = v["last_epoch_ns"].as_f64().unwrap_or(0.0);
        raw.push(mbit(b, (last - start_ns) / 1e9));
        raw_bytes.push(b);
    }
    Ok((raw, raw_bytes))
}

/// Where a run's endpoints and files are.
pub(crate) struct Setup<'a> {
    pub b: &'a NetBench,
    pub topo: &'a Topo,
    pub exe: &'a Path,
    /// The file sent and the directory the receivers write under.
    pub file: &'a Path,
    pub work: &'a Path,
}

/// rmcast send/recv to `n` receivers with `loss` at each: the result and the goodput over
/// the sender's wall time.
fn rmcast_run(
    s: &Setup<'_>,
    n: usize,
    loss: f64,
    group: SocketAddr,
    raw_mean: f64,
    progress: &mut dyn FnMut(String),
) -> Result<(Value, f64)> {
    let Setup {
        b,
        topo,
        exe,
        file,
        work,
    } = *s;
    let group = group.to_string();
    let mut kids = Vec::new();
    for r in 1..=n {
        let out = work.join(format!("rm-{n}-{loss}-{r}"));
        let mut c = topo.cmd(r, exe);
        c.args(["recv", "--group", &group, "--interface", &topo.iface])
            .arg("--dir")
            .arg(&out)
            .args(["--json", "--quiet", "--force", "--wait", "30"])
            .args(["--drop-rate", &loss.to_string()])
            .args(["--drop-seed", &(r as u64 * 13).to_string()]);
        kids.push(spawn(&mut c, "rmcast recv")?);
    }
    std::thread::sleep(Duration::from_millis(300));
    let t0 = Instant::now();
    let mut c = topo.cmd(0, exe);
    c.args(["send", "--group", &group, "--interface", &topo.iface])
        .args([
            "--receivers",
            &n.to_string(),
            "--rate",
            "0",
            "--json",
            "--quiet",
        ])
        .args(["--datagram-size", &b.datagram_size.to_string()])
        .args(["--protocol", &b.protocol, "--window", &b.window.to_string()])
        .arg(file);
    let sender = spawn(&mut c, "rmcast send")?;
    let (sok, sv) = wait_json(sender, "rmcast send")?;
    let wall = t0.elapsed().as_secs_f64();
    let mut per = Vec::new();
    let mut all_ok = sok;
    for (r, k) in kids.into_iter().enumerate() {
        let (ok, v) = wait_json(k, "rmcast recv")?;
        let verified = ok
            && same_file(
                file,
                &work.join(format!("rm-{n}-{loss}-{}/bench.bin", r + 1)),
            );
        all_ok &= verified;
        per.push(v["goodput_mbit_s"].as_f64().unwrap_or(0.0));
    }
    let m = mean(&per);
    let size = b.size_mb * 1_000_000;
    let wall_mbit = mbit(size, wall);
    progress(format!(
        "   rmcast loss {loss}: {per:.0?} Mbit/s per receiver ({:.0}% of raw), all verified: {all_ok}",
        m / raw_mean.max(1e-9) * 100.0
    ));
    let v = json!({
        "loss": loss,
        "per_receiver_mbit_s": per,
        "mean_mbit_s": m,
        "ratio_to_raw": ratio(m, raw_mean),
        "wall_mbit_s": wall_mbit,
        "sender_seconds": sv["seconds"],
        "repairs_sent": sv["agent"]["repairs_sent"],
        "all_verified": all_ok,
    });
    Ok((v, wall_mbit))
}

fn tempfile_dir() -> Result<PathBuf> {
    let d = std::env::temp_dir().join(format!("rmcast-bench-net-{}", std::process::id()));
    std::fs::create_dir_all(&d).map_err(BenchError::io(format!("create {}", d.display())))?;
    Ok(d)
}

fn write_pseudo_random(p: &Path, len: u64) -> Result<()> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut v = Vec::with_capacity(len as usize);
    while (v.len() as u64) < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(len as usize);
    std::fs::write(p, v).map_err(BenchError::io(format!("write {}", p.display())))
}
