//! The other tools, moving the same file to the same receivers: uftp/uftpd (`-R -1`, its
//! largest block size) and udp-sender/udp-receiver (`--nopointopoint`, no bitrate cap).
//! Missing tools are installed with apt-get (Debian packages uftp, udpcast) when allowed.

use crate::run::{mbit, ratio, same_file, Setup};
use crate::{BenchError, Result};
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// udpcast rendezvous group (its default, 224.0.0.1, does not cross our bridge setups).
const RDV: &str = "239.255.90.250";
/// A tool run that takes longer is stopped and reported as failed.
const TOOL_TIMEOUT: Duration = Duration::from_secs(90);

/// The packages of tools that are missing (after installing them if `install`).
pub(crate) fn ensure_tools(install: bool, progress: &mut dyn FnMut(String)) -> Vec<&'static str> {
    let have = |b: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {b}")])
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let mut missing = Vec::new();
    for (bins, pkg) in [
        (["uftp", "uftpd"], "uftp"),
        (["udp-sender", "udp-receiver"], "udpcast"),
    ] {
        if !bins.iter().all(|b| have(b)) {
            missing.push(pkg);
        }
    }
    if !missing.is_empty() && install {
        progress(format!("installing {} with apt-get", missing.join(", ")));
        let _ = Command::new("apt-get")
            .args(["update", "-qq"])
            .stdout(Stdio::null())
            .status();
        let _ = Command::new("apt-get")
            .args(["install", "-y", "-qq"])
            .args(&missing)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status();
        missing.retain(|p| match *p {
            "uftp" => !have("uftp"),
            _ => !have("udp-sender"),
        });
    }
    missing
}

/// Wait for `c` at most `t`; kill it after that. Whether it finished successfully.
pub(crate) fn wait_timeout(c: &mut Child, t: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < t {
        if let Ok(Some(s)) = c.try_wait() {
            return s.success();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = c.kill();
    let _ = c.wait();
    false
}

/// Start a tool with its output discarded.
fn quiet(cmd: &mut Command, what: &str) -> Result<Child> {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(BenchError::io(format!("start {what}")))
}

/// Give the receivers half a second, then run a tool's sender `cmd` to its end (or
/// [`TOOL_TIMEOUT`]): whether it finished, and its wall time in seconds.
fn time_sender(mut cmd: Command) -> Result<(bool, f64)> {
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    let mut sender = quiet(cmd.stdin(Stdio::null()), "the tool's sender")?;
    let finished = wait_timeout(&mut sender, TOOL_TIMEOUT);
    Ok((finished, t0.elapsed().as_secs_f64()))
}

/// A tool's result: its command line, goodput over the sender's wall time and rmcast's
/// ratio to it (both only when every receiver got the file).
fn result(command: &str, ok: bool, size: u64, wall: f64, rm_wall: f64) -> Value {
    let w = mbit(size, wall);
    json!({
        "command": command,
        "wall_mbit_s": if ok { json!(w) } else { Value::Null },
        "all_verified": ok,
        "rmcast_over_tool": if ok { ratio(rm_wall, w) } else { Value::Null },
    })
}

/// uftp to `n` uftpd daemons.
pub(crate) fn run_uftp(s: &Setup<'_>, n: usize, port: u16, rm_wall: f64) -> Result<Value> {
    let (topo, file, work, size) = (s.topo, s.file, s.work, s.b.size_mb * 1_000_000);
    let mut daemons = Vec::new();
    let mut uids = Vec::new();
    for r in 1..=n {
        let dir = work.join(format!("uftp-{n}-{r}"));
        std::fs::create_dir_all(&dir)
            .map_err(BenchError::io(format!("create {}", dir.display())))?;
        let uid = format!("0x{:08x}", 0x1000 + r);
        uids.push(uid.clone());
        let mut d = topo.cmd(r, Path::new("uftpd"));
        d.args(["-d", "-I", &topo.iface, "-p", &port.to_string(), "-U", &uid])
            .arg("-D")
            .arg(&dir)
            .arg("-L")
            .arg(work.join(format!("uftpd-{n}-{r}.log")));
        daemons.push(quiet(&mut d, "uftpd")?);
    }
    let mut sender = topo.cmd(0, Path::new("uftp"));
    sender
        .args([
            "-I",
            &topo.iface,
            "-p",
            &port.to_string(),
            "-R",
            "-1",
            "-b",
            "8800",
        ])
        .args(["-H", &uids.join(",")])
        .arg(file);
    let (finished, wall) = time_sender(sender)?;
    for mut d in daemons {
        let _ = d.kill();
        let _ = d.wait();
    }
    let ok =
        finished && (1..=n).all(|r| same_file(file, &work.join(format!("uftp-{n}-{r}/bench.bin"))));
    let mut v = result(
        "uftp -R -1 -b 8800 -H <uids>; uftpd -d",
        ok,
        size,
        wall,
        rm_wall,
    );
    v["note"] = if !ok && topo.is_loopback() {
        json!("on one host uftpd never answered uftp's ANNOUNCE in our runs (uftp: \"Announce timed out\"); measure it with --bridge")
    } else {
        Value::Null
    };
    Ok(v)
}

/// udp-sender to `n` udp-receivers.
pub(crate) fn run_udpcast(s: &Setup<'_>, n: usize, port: u16, rm_wall: f64) -> Result<Value> {
    let (topo, file, work, size) = (s.topo, s.file, s.work, s.b.size_mb * 1_000_000);
    let mut kids = Vec::new();
    for r in 1..=n {
        let mut k = topo.cmd(r, Path::new("udp-receiver"));
        k.args([
            "--interface",
            &topo.iface,
            "--nokbd",
            "--mcast-rdv-address",
            RDV,
        ])
        .args(["--portbase", &port.to_string(), "--file"])
        .arg(work.join(format!("udpcast-{n}-{r}.bin")));
        kids.push(quiet(&mut k, "udp-receiver")?);
    }
    let mut sender = topo.cmd(0, Path::new("udp-sender"));
    sender
        .args([
            "--interface",
            &topo.iface,
            "--nokbd",
            "--mcast-rdv-address",
            RDV,
            "--nopointopoint",
        ])
        .args([
            "--min-receivers",
            &n.to_string(),
            "--portbase",
            &port.to_string(),
        ])
        .arg("--file")
        .arg(file);
    let (finished, wall) = time_sender(sender)?;
    let mut ok = finished;
    for (r, mut k) in kids.into_iter().enumerate() {
        let done = wait_timeout(&mut k, Duration::from_secs(10));
        ok &= done && same_file(file, &work.join(format!("udpcast-{n}-{}.bin", r + 1)));
    }
    Ok(result(
        "udp-sender --nopointopoint --min-receivers N --mcast-rdv-address G; udp-receiver --mcast-rdv-address G",
        ok,
        size,
        wall,
        rm_wall,
    ))
}
