//! Goodput and CPU time of `rmcast send`/`rmcast recv` processes on loopback or on network
//! namespace hosts on a bridge ([`Segment`]), with loss per Ethernet frame on the bridge
//! ([`Segment::frame_loss`]), beside a raw blast of the same datagrams in the same run.
//!
//! ```sh
//! cargo build --release -p rmcast
//! sudo cargo run --release -p rmcast-lab --example lan_goodput -- \
//!     --bin target/release/rmcast --on bridge --receivers 1,3 --protocols xtp,prmp,saw \
//!     --size-mb 100 --frame-loss 0 --runs 2
//! ```
//!
//! Every run prints one JSON line: the sender's goodput (its summary), each receiver's, the
//! raw blast's per-receiver goodput, and CPU seconds per GB (user + system, from `wait4`'s
//! resource usage of each process) for the sender and the mean receiver. A run counts only if
//! every receiver reports success and holds a byte-exact copy.

use rmcast_lab::netns::{Segment, IFACE};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Opts {
    bin: PathBuf,
    bridge: bool,
    receivers: Vec<usize>,
    protocols: Vec<String>,
    size_mb: u64,
    frame_loss: Vec<f64>,
    runs: usize,
    extra: Vec<String>,
    timeout: Duration,
    /// Also run uftp (`uftp -R -1`, its default 1,300-byte blocks) to uftpd daemons.
    uftp: bool,
}

fn list<T: std::str::FromStr>(s: &str) -> Vec<T> {
    s.split(',')
        .map(|x| x.parse().unwrap_or_else(|_| panic!("bad list item {x:?}")))
        .collect()
}

fn opts() -> Opts {
    let mut o = Opts {
        bin: PathBuf::from("target/release/rmcast"),
        bridge: true,
        receivers: vec![1, 3],
        protocols: vec!["xtp".into(), "prmp".into(), "saw".into()],
        size_mb: 100,
        frame_loss: vec![0.0],
        runs: 1,
        extra: Vec::new(),
        timeout: Duration::from_secs(120),
        uftp: false,
    };
    let mut a = std::env::args().skip(1);
    while let Some(k) = a.next() {
        let mut v = || a.next().unwrap_or_else(|| panic!("{k} needs a value"));
        match k.as_str() {
            "--bin" => o.bin = v().into(),
            "--on" => o.bridge = v() == "bridge",
            "--receivers" => o.receivers = list(&v()),
            "--protocols" => o.protocols = list(&v()),
            "--size-mb" => o.size_mb = v().parse().expect("--size-mb"),
            "--frame-loss" => o.frame_loss = list(&v()),
            "--runs" => o.runs = v().parse().expect("--runs"),
            "--timeout" => o.timeout = Duration::from_secs(v().parse().expect("--timeout")),
            "--uftp" => o.uftp = true,
            // Everything after `--` goes to `rmcast send`.
            "--" => o.extra = a.by_ref().collect(),
            other => panic!("unknown option {other}"),
        }
    }
    o
}

/// Where the endpoints run: namespace hosts on a bridge (host 0 sends) or loopback.
struct Place {
    seg: Option<Segment>,
}

impl Place {
    fn command(&self, bin: &Path, host: usize) -> Command {
        match &self.seg {
            Some(seg) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", &seg.host(host)]).arg(bin);
                c
            }
            None => Command::new(bin),
        }
    }
    fn iface(&self) -> &str {
        if self.seg.is_some() {
            IFACE
        } else {
            "lo"
        }
    }
}

/// A finished child: its standard output and CPU seconds (user + system).
struct Done {
    out: String,
    cpu: f64,
    ok: bool,
}

/// Wait for `c` (killing it after `deadline`), reading its resource usage with `wait4`.
fn finish(mut c: Child, deadline: Instant) -> Done {
    let pid = c.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data the kernel fills; pid is our own child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            break;
        }
        if Instant::now() > deadline {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut out = String::new();
    if let Some(mut s) = c.stdout.take() {
        use std::io::Read;
        let _ = s.read_to_string(&mut out);
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Done {
        out,
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        ok: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
    }
}

fn json_last(s: &str) -> Value {
    s.lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .or_else(|| serde_json::from_str(s).ok())
        .unwrap_or(Value::Null)
}

/// The raw blast: per-receiver goodput in Mbit/s.
fn raw(o: &Opts, place: &Place, group: &str, n: usize, bytes: u64, dgram: usize) -> Vec<f64> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let recvs: Vec<Child> = (1..=n)
        .map(|h| {
            place
                .command(&o.bin, h)
                .args(["bench", "net", "--raw-role", "recv", "--raw-group", group])
                .args(["--raw-iface", place.iface(), "--raw-bytes"])
                .arg(bytes.to_string())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn raw receiver")
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let send = place
        .command(&o.bin, 0)
        .args(["bench", "net", "--raw-role", "send", "--raw-group", group])
        .args(["--raw-iface", place.iface(), "--raw-bytes"])
        .arg(bytes.to_string())
        .args(["--datagram-size", &dgram.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn raw sender");
    let s = finish(send, deadline);
    let start = json_last(&s.out)["start_epoch_ns"].as_f64().unwrap_or(0.0);
    recvs
        .into_iter()
        .map(|c| {
            let r = json_last(&finish(c, deadline).out);
            let (b, last) = (
                r["bytes"].as_f64().unwrap_or(0.0),
                r["last_epoch_ns"].as_f64().unwrap_or(0.0),
            );
            if last > start {
                b * 8.0 / (last - start) * 1e3
            } else {
                0.0
            }
        })
        .collect()
}

/// uftp to `n` uftpd daemons (bridge only): per-receiver Mbit/s from uftp's status file
/// (`RESULT;client;file;size;status;speed KB/s`), the sender's CPU s/GB, byte-exact copies.
fn uftp(o: &Opts, place: &Place, n: usize, port: u16, src: &Path, work: &Path) -> Value {
    let deadline = Instant::now() + o.timeout;
    let mut uids = Vec::new();
    let mut daemons = Vec::new();
    for h in 1..=n {
        let dir = work.join(format!("u{h}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("uftpd directory");
        let uid = format!("0x{:08x}", 0x1000 + h);
        let mut c = match &place.seg {
            Some(seg) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", &seg.host(h), "uftpd"]);
                c
            }
            None => Command::new("uftpd"),
        };
        c.args([
            "-d",
            "-I",
            place.iface(),
            "-p",
            &port.to_string(),
            "-U",
            &uid,
        ])
        .arg("-D")
        .arg(&dir)
        .arg("-L")
        .arg(work.join(format!("uftpd{h}.log")))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        daemons.push(c.spawn().expect("spawn uftpd"));
        uids.push(uid);
    }
    std::thread::sleep(Duration::from_millis(500));
    let status = work.join("uftp.status");
    let _ = std::fs::remove_file(&status);
    let mut c = match &place.seg {
        Some(seg) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", &seg.host(0), "uftp"]);
            c
        }
        None => Command::new("uftp"),
    };
    c.args(["-I", place.iface(), "-p", &port.to_string(), "-R", "-1"])
        .args(["-H", &uids.join(",")])
        .arg("-S")
        .arg(&status)
        .arg("-L")
        .arg(work.join("uftp.log"))
        .arg(src)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let t0 = Instant::now();
    let s = finish(c.spawn().expect("spawn uftp"), deadline);
    let wall = t0.elapsed().as_secs_f64();
    for mut d in daemons {
        let _ = d.kill();
        let _ = d.wait();
    }
    let text = std::fs::read_to_string(&status).unwrap_or_default();
    let speeds: Vec<f64> = text
        .lines()
        .filter(|l| l.starts_with("RESULT;"))
        .filter_map(|l| l.split(';').nth(5)?.trim_end_matches("KB/s").parse().ok())
        .map(|kb: f64| kb * 1024.0 * 8.0 / 1e6)
        .collect();
    let name = src.file_name().unwrap_or_default();
    let size = std::fs::metadata(src).map_or(0, |m| m.len());
    let want = blake3::hash(&std::fs::read(src).unwrap_or_default());
    let exact = (1..=n).all(|h| {
        std::fs::read(work.join(format!("u{h}")).join(name)).is_ok_and(|b| blake3::hash(&b) == want)
    });
    serde_json::json!({
        "ok": s.ok && exact,
        "uftp_mbit_s": speeds,
        "uftp_wall_mbit_s": size as f64 * 8.0 / wall / 1e6,
        "uftp_sender_cpu_s_per_gb": s.cpu / (size as f64 / 1e9),
    })
}

fn main() {
    let o = opts();
    let dir = tempfile::tempdir().expect("temporary directory");
    let src = dir.path().join("payload.bin");
    let bytes = o.size_mb * 1_000_000;
    let data = rmcast_net::sender::pseudo_random(bytes, 0x2545_f491_4f6c_dd1d);
    std::fs::write(&src, &data).expect("write the payload");
    let digest = blake3::hash(&data);
    drop(data);
    let mut port = 48_000u16;
    for &n in &o.receivers {
        let place = Place {
            seg: o
                .bridge
                .then(|| Segment::create(n + 1).expect("namespaces (root, iproute2)")),
        };
        if let Some(seg) = &place.seg {
            // Standard Ethernet everywhere (veth pairs may start with the container's MTU).
            for h in 0..=n {
                let sw = seg.switch();
                let port = seg.port(h);
                let host = seg.host(h);
                for args in [
                    vec![
                        "-n",
                        sw.as_str(),
                        "link",
                        "set",
                        port.as_str(),
                        "mtu",
                        "1500",
                    ],
                    vec!["-n", host.as_str(), "link", "set", IFACE, "mtu", "1500"],
                ] {
                    let ok = Command::new("ip").args(&args).status();
                    assert!(ok.is_ok_and(|s| s.success()), "ip {args:?}");
                }
            }
        }
        for &loss in &o.frame_loss {
            if let Some(seg) = &place.seg {
                seg.frame_loss(loss, Some(0))
                    .expect("frame loss (nftables)");
            }
            for run in 0..o.runs {
                port += 1;
                let group = format!("239.255.{}.{}:{port}", 100 + run % 100, 1 + n);
                // One 1500-byte frame's UDP payload, as `rmcast send` picks by default.
                let dgram = 1472;
                let raw_mbit = raw(&o, &place, &group, n, bytes, dgram);
                if o.uftp {
                    port += 1;
                    let mut u = uftp(&o, &place, n, port, &src, dir.path());
                    u["tool"] = "uftp".into();
                    u["receivers"] = n.into();
                    u["frame_loss"] = loss.into();
                    u["run"] = run.into();
                    u["raw_mbit_s"] = raw_mbit.clone().into();
                    println!("{u}");
                }
                for p in &o.protocols {
                    port += 1;
                    let group = format!("239.255.{}.{}:{port}", 100 + run % 100, 1 + n);
                    let deadline = Instant::now() + o.timeout;
                    let outs: Vec<PathBuf> =
                        (1..=n).map(|h| dir.path().join(format!("r{h}"))).collect();
                    for d in &outs {
                        let _ = std::fs::remove_dir_all(d);
                    }
                    let recvs: Vec<Child> = (1..=n)
                        .map(|h| {
                            place
                                .command(&o.bin, h)
                                .args(["recv", "-g", &group, "-i", place.iface(), "--dir"])
                                .arg(&outs[h - 1])
                                .args(["--json", "-q", "--wait", "30"])
                                .stdout(Stdio::piped())
                                .stderr(Stdio::null())
                                .spawn()
                                .expect("spawn rmcast recv")
                        })
                        .collect();
                    let send = place
                        .command(&o.bin, 0)
                        .args(["send", "-g", &group, "-i", place.iface()])
                        .args(["-n", &n.to_string(), "--protocol", p, "--rate", "0"])
                        .args(["--json", "-q"])
                        .args(&o.extra)
                        .arg(&src)
                        .stdout(Stdio::piped())
                        .stderr(Stdio::null())
                        .spawn()
                        .expect("spawn rmcast send");
                    let s = finish(send, deadline);
                    let r: Vec<Done> = recvs.into_iter().map(|c| finish(c, deadline)).collect();
                    let sj = json_last(&s.out);
                    let rj: Vec<Value> = r.iter().map(|d| json_last(&d.out)).collect();
                    let exact = outs.iter().all(|d| {
                        std::fs::read(d.join("payload.bin"))
                            .is_ok_and(|b| blake3::hash(&b) == digest)
                    });
                    let ok = s.ok && r.iter().all(|d| d.ok) && exact;
                    let gb = bytes as f64 / 1e9;
                    let recv_cpu = r.iter().map(|d| d.cpu).sum::<f64>() / n as f64;
                    let rmbit: Vec<f64> = rj
                        .iter()
                        .map(|v| v["goodput_mbit_s"].as_f64().unwrap_or(0.0))
                        .collect();
                    let line = serde_json::json!({
                        "on": if o.bridge { "bridge" } else { "loopback" },
                        "protocol": p,
                        "receivers": n,
                        "frame_loss": loss,
                        "run": run,
                        "size_mb": o.size_mb,
                        "ok": ok,
                        "sender_goodput_mbit_s": sj["goodput_mbit_s"],
                        "receiver_goodput_mbit_s": rmbit,
                        "raw_mbit_s": raw_mbit,
                        "sender_cpu_s_per_gb": s.cpu / gb,
                        "receiver_cpu_s_per_gb": recv_cpu / gb,
                        "data_sent": sj["agent"]["data_sent"],
                        "repairs_sent": sj["agent"]["repairs_sent"],
                        "kernel_drops": rj.iter().map(|v| v["driver"]["kernel_drops"].clone()).collect::<Vec<_>>(),
                        "frames_dropped": place.seg.as_ref().map(|s| s.frames_dropped()),
                    });
                    println!("{line}");
                }
            }
        }
    }
}
