//! `rmcast bench net`: goodput of `rmcast send`/`recv` on real sockets, beside the raw ceiling
//! (an unreliable blast of the same datagram size to the same receivers, measured in the same
//! run) and beside uftp/uftpd and udp-sender/udp-receiver moving the same file.
//!
//! Every endpoint is a separate process. On loopback (the default) all processes share one
//! host; uftpd and udp-receiver cannot share a port on one host, so the tools are measured
//! there with one receiver only. With `--bridge` (root) every endpoint runs in its own network
//! namespace on a Linux bridge, and the tools are measured for every receiver count.

use anyhow::{bail, Context, Result};
use rmcast_net::socket::{group_socket, unicast_socket, SocketOpts};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
#[command(after_help = "Examples:
  rmcast bench net                      loopback, 20 MB, 1/2/4 receivers, 0% and 1% loss
  rmcast bench net --size-mb 5 --receivers 1,2 --no-tools
  sudo rmcast bench net --bridge        every endpoint in its own network namespace

Goodput is application bytes per second at each receiver, from its first data packet to
its last byte (rmcast and the raw blast), or file size over the sender's wall time (the
tools, and rmcast beside them, `wall_mbit_s`). uftp runs with -R -1 (no rate limit) and its
largest block size; udp-sender with --nopointopoint and no bitrate cap. Missing tools are
installed with apt-get (Debian packages uftp, udpcast) unless --no-install.")]
pub struct Args {
    /// File size in MB (10^6 bytes)
    #[arg(long, default_value_t = 20)]
    pub size_mb: u64,
    /// Receiver counts to measure
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    pub receivers: Vec<usize>,
    /// Injected loss rates (at every receiver) for rmcast
    #[arg(long, value_delimiter = ',', default_value = "0,0.01")]
    pub loss: Vec<f64>,
    /// rmcast's datagram size (the raw blast uses the same)
    #[arg(long, default_value_t = 60_000)]
    pub datagram_size: usize,
    /// rmcast protocol to measure: saw, bap, xtp, prmp or dsp (dsp: all receivers in one
    /// region, the lowest node id designated)
    #[arg(long, default_value = "saw")]
    pub protocol: String,
    /// Window (bap, xtp; prmp: the receive window S; dsp: L outstanding blocks)
    #[arg(long, default_value_t = 16)]
    pub window: u16,
    /// Run every endpoint in its own network namespace on a bridge (root)
    #[arg(long)]
    pub bridge: bool,
    /// Do not run uftp and udpcast
    #[arg(long)]
    pub no_tools: bool,
    /// Do not apt-get install missing tools
    #[arg(long)]
    pub no_install: bool,
    /// Internal: raw-blast role (send|recv) of a child process
    #[arg(long, hide = true)]
    pub raw_role: Option<String>,
    #[arg(long, hide = true)]
    pub raw_group: Option<SocketAddr>,
    #[arg(long, hide = true)]
    pub raw_iface: Option<String>,
    #[arg(long, hide = true, default_value_t = 0)]
    pub raw_bytes: u64,
}

const GROUP_IP: &str = "239.255.90.1";
/// udpcast rendezvous group (its default, 224.0.0.1, does not cross our bridge setups).
const RDV: &str = "239.255.90.250";
/// A tool run that takes longer is stopped and reported as failed.
const TOOL_TIMEOUT: Duration = Duration::from_secs(90);

/// Where endpoints run.
struct Topo {
    prefix: Option<String>,
    iface: String,
}

impl Topo {
    fn loopback() -> Self {
        Topo {
            prefix: None,
            iface: "lo".into(),
        }
    }

    fn bridge(hosts: usize) -> Result<Self> {
        let p = format!("rmb{}", std::process::id() % 100_000);
        let t = Topo {
            prefix: Some(p.clone()),
            iface: "eth0".into(),
        };
        let ip = |args: &[&str]| -> Result<()> {
            let st = Command::new("ip").args(args).status().context("run ip")?;
            if !st.success() {
                bail!(
                    "`ip {}` failed (root and iproute2 are needed for --bridge)",
                    args.join(" ")
                );
            }
            Ok(())
        };
        let br = format!("br{p}");
        ip(&["link", "add", &br, "type", "bridge"])?;
        let _ = Command::new("ip")
            .args(["link", "set", &br, "type", "bridge", "mcast_snooping", "0"])
            .status();
        ip(&["link", "set", &br, "up"])?;
        for h in 0..hosts {
            let ns = format!("{p}h{h}");
            let v = format!("v{p}h{h}");
            ip(&["netns", "add", &ns])?;
            ip(&[
                "link", "add", &v, "type", "veth", "peer", "name", "eth0", "netns", &ns,
            ])?;
            ip(&["link", "set", &v, "master", &br, "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
            ip(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("10.78.0.{}/24", h + 1),
                "dev",
                "eth0",
            ])?;
            ip(&["-n", &ns, "link", "set", "eth0", "up"])?;
            ip(&["-n", &ns, "route", "add", "224.0.0.0/4", "dev", "eth0"])?;
        }
        Ok(t)
    }

    /// A command on host `h` (0 = sender, 1.. = receivers).
    fn cmd(&self, h: usize, prog: &Path) -> Command {
        match &self.prefix {
            None => Command::new(prog),
            Some(p) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", &format!("{p}h{h}")]).arg(prog);
                c
            }
        }
    }
}

impl Drop for Topo {
    fn drop(&mut self) {
        if let Some(p) = &self.prefix {
            for h in 0..64 {
                let ns = format!("{p}h{h}");
                if !Path::new("/run/netns").join(&ns).exists() {
                    continue;
                }
                let _ = Command::new("ip").args(["netns", "del", &ns]).status();
            }
            let _ = Command::new("ip")
                .args(["link", "del", &format!("br{p}")])
                .status();
        }
    }
}

fn mbit(bytes: u64, secs: f64) -> f64 {
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

fn ratio(a: f64, b: f64) -> Value {
    if b > 0.0 {
        json!((a / b * 1000.0).round() / 1000.0)
    } else {
        Value::Null
    }
}

fn wait_json(c: Child, what: &str) -> Result<(bool, Value)> {
    let out = c
        .wait_with_output()
        .with_context(|| format!("wait for {what}"))?;
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    Ok((out.status.success(), v))
}

/// Child role: receive the raw blast and report bytes and first-to-last seconds.
fn raw_recv(group: SocketAddr, iface: &str, expect: u64) -> Result<ExitCode> {
    let mut o = SocketOpts::new(group);
    o.interface = Some(iface.into());
    o.recv_buffer = Some(32 << 20);
    let s = group_socket(&o)?;
    s.set_nonblocking(false)?;
    s.set_read_timeout(Some(Duration::from_millis(500)))?;
    let mut buf = vec![0u8; 65_536];
    let (mut bytes, mut n) = (0u64, 0u64);
    let (mut first, mut last) = (None::<Instant>, Instant::now());
    let start = Instant::now();
    loop {
        match s.recv_from(&mut buf) {
            Ok((k, _)) => {
                let now = Instant::now();
                first.get_or_insert(now);
                last = now;
                bytes += k as u64;
                n += 1;
                if bytes >= expect {
                    break;
                }
            }
            Err(_) => {
                if first.is_some() || start.elapsed() > Duration::from_secs(30) {
                    break;
                }
            }
        }
    }
    let _ = first;
    let last_ns = epoch_ns() - last.elapsed().as_nanos() as f64;
    println!(
        "{}",
        json!({"bytes": bytes, "datagrams": n, "last_epoch_ns": last_ns})
    );
    Ok(ExitCode::SUCCESS)
}

/// Child role: blast `bytes` in datagrams of `size` as fast as the socket takes them.
fn raw_send(group: SocketAddr, iface: &str, bytes: u64, size: usize) -> Result<ExitCode> {
    let mut o = SocketOpts::new(group);
    o.interface = Some(iface.into());
    let s = unicast_socket(&o)?;
    s.set_nonblocking(false)?;
    let d = vec![0xA5u8; size];
    let mut sent = 0u64;
    println!("{}", json!({"start_epoch_ns": epoch_ns()}));
    while sent < bytes {
        if s.send_to(&d, group).is_ok() {
            sent += size as u64;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Wall-clock time shared by every process on the host (and its network namespaces).
fn epoch_ns() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_nanos() as f64)
}

fn ensure_tools(install: bool) -> Vec<&'static str> {
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
        eprintln!("installing {} with apt-get", missing.join(", "));
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

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::read(a), std::fs::read(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

pub fn run(a: Args) -> Result<ExitCode> {
    let exe = std::env::current_exe().context("find the rmcast binary")?;
    if let Some(role) = &a.raw_role {
        let g = a.raw_group.context("--raw-group")?;
        let i = a.raw_iface.clone().unwrap_or_else(|| "lo".into());
        return match role.as_str() {
            "recv" => raw_recv(g, &i, a.raw_bytes),
            _ => raw_send(g, &i, a.raw_bytes, a.datagram_size),
        };
    }
    let maxn = a.receivers.iter().copied().max().unwrap_or(1);
    if a.receivers.contains(&0) {
        bail!("--receivers: counts must be at least 1");
    }
    let topo = if a.bridge {
        Topo::bridge(maxn + 1)?
    } else {
        Topo::loopback()
    };
    let missing = if a.no_tools {
        vec!["uftp", "udpcast"]
    } else {
        ensure_tools(!a.no_install)
    };
    let work = tempfile_dir()?;
    let file = work.join("bench.bin");
    let size = a.size_mb * 1_000_000;
    write_pseudo_random(&file, size)?;
    let mut port = 47_300u16;
    let mut results = Vec::new();
    for &n in &a.receivers {
        eprintln!("-- {n} receiver(s)");
        // Raw ceiling.
        port += 1;
        let group: SocketAddr = format!("{GROUP_IP}:{port}").parse()?;
        let mut kids = Vec::new();
        for r in 1..=n {
            kids.push(
                topo.cmd(r, &exe)
                    .args(["bench", "net", "--raw-role", "recv", "--raw-group"])
                    .arg(group.to_string())
                    .args(["--raw-iface", &topo.iface, "--raw-bytes", &size.to_string()])
                    .stdout(Stdio::piped())
                    .spawn()?,
            );
        }
        std::thread::sleep(Duration::from_millis(300));
        let s = topo
            .cmd(0, &exe)
            .args(["bench", "net", "--raw-role", "send", "--raw-group"])
            .arg(group.to_string())
            .args(["--raw-iface", &topo.iface, "--raw-bytes", &size.to_string()])
            .args(["--datagram-size", &a.datagram_size.to_string()])
            .stdout(Stdio::piped())
            .spawn()?;
        let (ok, sv) = wait_json(s, "raw sender")?;
        let start_ns = sv["start_epoch_ns"].as_f64().unwrap_or(0.0);
        if !ok || start_ns == 0.0 {
            bail!("raw blast sender failed");
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
        let raw_mean = mean(&raw);
        eprintln!("   raw blast: {raw:.0?} Mbit/s per receiver");

        // rmcast at each loss rate.
        let mut rm = Vec::new();
        let mut rm_wall0 = 0.0;
        for &loss in &a.loss {
            port += 1;
            let group = format!("{GROUP_IP}:{port}");
            let mut kids = Vec::new();
            for r in 1..=n {
                let out = work.join(format!("rm-{n}-{loss}-{r}"));
                kids.push(
                    topo.cmd(r, &exe)
                        .args(["recv", "--group", &group, "--interface", &topo.iface])
                        .arg("--dir")
                        .arg(&out)
                        .args(["--json", "--quiet", "--force", "--wait", "30"])
                        .args(["--drop-rate", &loss.to_string()])
                        .args(["--drop-seed", &(r as u64 * 13).to_string()])
                        .stdout(Stdio::piped())
                        .spawn()?,
                );
            }
            std::thread::sleep(Duration::from_millis(300));
            let t0 = Instant::now();
            let s = topo
                .cmd(0, &exe)
                .args(["send", "--group", &group, "--interface", &topo.iface])
                .args([
                    "--receivers",
                    &n.to_string(),
                    "--rate",
                    "0",
                    "--json",
                    "--quiet",
                ])
                .args(["--datagram-size", &a.datagram_size.to_string()])
                .args(["--protocol", &a.protocol, "--window", &a.window.to_string()])
                .arg(&file)
                .stdout(Stdio::piped())
                .spawn()?;
            let (sok, sv) = wait_json(s, "rmcast send")?;
            let wall = t0.elapsed().as_secs_f64();
            let mut per = Vec::new();
            let mut all_ok = sok;
            for (r, k) in kids.into_iter().enumerate() {
                let (ok, v) = wait_json(k, "rmcast recv")?;
                let verified = ok
                    && same_file(
                        &file,
                        &work.join(format!("rm-{n}-{loss}-{}/bench.bin", r + 1)),
                    );
                all_ok &= verified;
                per.push(v["goodput_mbit_s"].as_f64().unwrap_or(0.0));
            }
            let m = mean(&per);
            let wall_mbit = mbit(size, wall);
            if loss == 0.0 {
                rm_wall0 = wall_mbit;
            }
            eprintln!(
                "   rmcast loss {loss}: {per:.0?} Mbit/s per receiver ({:.0}% of raw), all verified: {all_ok}",
                m / raw_mean.max(1e-9) * 100.0
            );
            rm.push(json!({
                "loss": loss,
                "per_receiver_mbit_s": per,
                "mean_mbit_s": m,
                "ratio_to_raw": ratio(m, raw_mean),
                "wall_mbit_s": wall_mbit,
                "sender_seconds": sv["seconds"],
                "repairs_sent": sv["agent"]["repairs_sent"],
                "all_verified": all_ok,
            }));
        }

        // The tools, same file, same receivers, no loss injection (they have none).
        let tools_here = a.bridge || n == 1;
        let mut uftp = Value::Null;
        let mut udpcast = Value::Null;
        if !tools_here {
            uftp = json!({"skipped": "uftpd cannot share a port with another uftpd on one host; use --bridge"});
            udpcast =
                json!({"skipped": "udp-receiver cannot share a port on one host; use --bridge"});
        } else {
            if !missing.contains(&"uftp") {
                port += 1;
                uftp = run_uftp(&topo, n, &file, &work, port, size, rm_wall0)?;
                eprintln!("   uftp: {uftp}");
            }
            if !missing.contains(&"udpcast") {
                port += 10;
                udpcast = run_udpcast(&topo, n, &file, &work, port, size, rm_wall0)?;
                eprintln!("   udpcast: {udpcast}");
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
        "topology": if a.bridge { "bridge (one network namespace per endpoint)" } else { "loopback (one host)" },
        "file_bytes": size,
        "datagram_size": a.datagram_size,
        "protocol": a.protocol,
        "window": if a.protocol == "saw" { Value::Null } else { json!(a.window) },
        "tools_missing": missing,
        "runs": results,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    let _ = std::fs::remove_dir_all(&work);
    Ok(ExitCode::SUCCESS)
}

fn run_uftp(
    topo: &Topo,
    n: usize,
    file: &Path,
    work: &Path,
    port: u16,
    size: u64,
    rm_wall: f64,
) -> Result<Value> {
    let mut daemons = Vec::new();
    let mut uids = Vec::new();
    for r in 1..=n {
        let dir = work.join(format!("uftp-{n}-{r}"));
        std::fs::create_dir_all(&dir)?;
        let uid = format!("0x{:08x}", 0x1000 + r);
        uids.push(uid.clone());
        daemons.push(
            topo.cmd(r, Path::new("uftpd"))
                .args(["-d", "-I", &topo.iface, "-p", &port.to_string(), "-U", &uid])
                .arg("-D")
                .arg(&dir)
                .arg("-L")
                .arg(work.join(format!("uftpd-{n}-{r}.log")))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?,
        );
    }
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    let mut sender = topo
        .cmd(0, Path::new("uftp"))
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
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .stdin(Stdio::null())
        .spawn()?;
    let finished = wait_timeout(&mut sender, TOOL_TIMEOUT);
    let wall = t0.elapsed().as_secs_f64();
    for mut d in daemons {
        let _ = d.kill();
        let _ = d.wait();
    }
    let ok =
        finished && (1..=n).all(|r| same_file(file, &work.join(format!("uftp-{n}-{r}/bench.bin"))));
    let w = mbit(size, wall);
    Ok(json!({
        "command": "uftp -R -1 -b 8800 -H <uids>; uftpd -d",
        "note": if !ok && topo.prefix.is_none() {
            json!("on one host uftpd never answered uftp's ANNOUNCE in our runs (uftp: \"Announce timed out\"); measure it with --bridge")
        } else {
            Value::Null
        },
        "wall_mbit_s": if ok { json!(w) } else { Value::Null },
        "all_verified": ok,
        "rmcast_over_tool": if ok { ratio(rm_wall, w) } else { Value::Null },
    }))
}

fn run_udpcast(
    topo: &Topo,
    n: usize,
    file: &Path,
    work: &Path,
    port: u16,
    size: u64,
    rm_wall: f64,
) -> Result<Value> {
    let mut kids = Vec::new();
    for r in 1..=n {
        kids.push(
            topo.cmd(r, Path::new("udp-receiver"))
                .args([
                    "--interface",
                    &topo.iface,
                    "--nokbd",
                    "--mcast-rdv-address",
                    RDV,
                    "--portbase",
                    &port.to_string(),
                ])
                .arg("--file")
                .arg(work.join(format!("udpcast-{n}-{r}.bin")))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?,
        );
    }
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    let mut sender = topo
        .cmd(0, Path::new("udp-sender"))
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
        .arg(file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .stdin(Stdio::null())
        .spawn()?;
    let finished = wait_timeout(&mut sender, TOOL_TIMEOUT);
    let wall = t0.elapsed().as_secs_f64();
    let mut ok = finished;
    for (r, mut k) in kids.into_iter().enumerate() {
        let done = wait_timeout(&mut k, Duration::from_secs(10));
        ok &= done && same_file(file, &work.join(format!("udpcast-{n}-{}.bin", r + 1)));
    }
    let w = mbit(size, wall);
    Ok(json!({
        "command": "udp-sender --nopointopoint --min-receivers N --mcast-rdv-address G; udp-receiver --mcast-rdv-address G",
        "wall_mbit_s": if ok { json!(w) } else { Value::Null },
        "all_verified": ok,
        "rmcast_over_tool": if ok { ratio(rm_wall, w) } else { Value::Null },
    }))
}

fn wait_timeout(c: &mut Child, t: Duration) -> bool {
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

fn tempfile_dir() -> Result<PathBuf> {
    let d = std::env::temp_dir().join(format!("rmcast-bench-net-{}", std::process::id()));
    std::fs::create_dir_all(&d)?;
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
    std::fs::write(p, v)?;
    Ok(())
}
