//! `rmcast bench cc`: rmcast's rate against a bottleneck on the namespace bridge, alone and
//! beside a competing TCP flow.
//!
//! Hosts on a [`Topo::bridge`](crate::topo::Topo::bridge): 0 runs `rmcast send`, 1 is the receiver
//! behind the bottleneck (a policer on its bridge port,
//! [`rmcast_lab::netns::Segment::bottleneck`]), 2..=n further receivers without one, and host n + 1
//! the TCP source, whose flow goes to a TCP sink on host 1 through the same port. The transfer runs
//! alone for [`CcBench::alone`], then the TCP flow joins it for [`CcBench::shared`]. Every
//! [`CcBench::sample`] the bottleneck's counters are read: the bytes of each flow offered to the
//! policer and passed by it, so the time series is what went through the bottleneck. The TCP roles
//! are child processes of the `rmcast` binary ([`tcp_child_args`], answered by [`tcp_sink`] and
//! [`tcp_source`]), as the raw blast's are.

mod output;
mod session;

pub use output::{csv, svg};
pub use session::run;

use crate::proc::mbit;
use crate::{BenchError, Result};
use rmcast_lab::netns::Count;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

const GROUP_IP: &str = "239.255.91.1";
const GROUP_PORT: u16 = 47_500;
const TCP_PORT: u16 = 47_600;
/// How long receivers get to finish after their sender ended before they are stopped.
const RECEIVER_GRACE: Duration = Duration::from_secs(15);

/// What to measure.
#[derive(Debug, Clone)]
pub struct CcBench {
    /// The bottleneck's rate in bit/s (of IP packets).
    pub bottleneck_bps: u64,
    /// The burst the policer lets through at once, as time at its rate.
    pub burst: Duration,
    /// `Some`: the bottleneck is a link with a drop-tail queue of this long at its rate
    /// (tbf, [`rmcast_lab::netns::Segment::queue_bottleneck`]) instead of a policer.
    pub queue: Option<Duration>,
    /// `rmcast send --rate`, passed through as given (`auto`: congestion control).
    pub rate: String,
    /// `rmcast send --protocol` (None: send's default).
    pub protocol: Option<String>,
    /// Receivers: host 1 behind the bottleneck, the others without one.
    pub receivers: usize,
    /// How long the transfer runs alone before the TCP flow starts.
    pub alone: Duration,
    /// How long the TCP flow runs beside it.
    pub shared: Duration,
    /// Time between two readings of the counters.
    pub sample: Duration,
    /// The rate whose settling is judged is averaged over this trailing window (a 100-ms
    /// sample's rate carries the reading's timing jitter: single samples above the link's
    /// rate are seen).
    pub window: Duration,
    /// Loss per Ethernet frame on the bridge, to every host but the sender (0: none).
    pub frame_loss: f64,
    /// File size in MB (None: enough for both phases at 1.25 × the bottleneck's rate).
    pub size_mb: Option<u64>,
    /// The band around the bottleneck the multicast rate must settle in (0.15: ±15 %).
    pub tolerance: f64,
    /// How soon it must settle there.
    pub settle_within: Duration,
    /// The share of the bottleneck TCP must keep in the shared phase (1/3).
    pub min_share: f64,
    /// After both phases, how long the transfer may take to finish before it is stopped.
    pub timeout: Duration,
    /// The TCP source's congestion control, set on its socket (`TCP_CONGESTION`; None: the
    /// namespace's default, which new namespaces take from the host).
    pub tcp_cc: Option<String>,
}

impl CcBench {
    /// The defaults of `rmcast bench cc`: 100 Mbit/s, 5 ms burst, `--rate auto`, one
    /// receiver, 10 s alone and 10 s shared, a sample every 100 ms, ±15 % within 5 s, TCP
    /// at least 1/3.
    pub fn new() -> CcBench {
        CcBench {
            bottleneck_bps: 100_000_000,
            burst: Duration::from_millis(5),
            queue: None,
            rate: "auto".into(),
            protocol: None,
            receivers: 1,
            alone: Duration::from_secs(10),
            shared: Duration::from_secs(10),
            sample: Duration::from_millis(100),
            window: Duration::from_secs(1),
            frame_loss: 0.0,
            size_mb: None,
            tolerance: 0.15,
            settle_within: Duration::from_secs(5),
            min_share: 1.0 / 3.0,
            timeout: Duration::from_secs(120),
            tcp_cc: Some("cubic".into()),
        }
    }

    fn size_bytes(&self) -> u64 {
        match self.size_mb {
            Some(mb) => mb * 1_000_000,
            None => {
                let secs = (self.alone + self.shared).as_secs_f64();
                let b = self.bottleneck_bps as f64 / 8.0 * secs * 1.25;
                (b / 1e6).ceil().max(1.0) as u64 * 1_000_000
            }
        }
    }

    fn check(&self) -> Result<()> {
        let fail = |m: &str| Err(BenchError::Failed(m.into()));
        if self.receivers == 0 || self.receivers > 200 {
            return fail("--receivers: give 1 to 200");
        }
        if !(0.0..=1.0).contains(&self.frame_loss) {
            return fail("--frame-loss: give a probability in [0, 1]");
        }
        if self.sample < Duration::from_millis(20) {
            return fail("--sample-ms: give at least 20");
        }
        if self.alone < self.sample || self.shared < self.sample {
            return fail("--alone-s and --shared-s: give at least one sample's time each");
        }
        if !(self.tolerance > 0.0 && self.tolerance < 1.0) {
            return fail("--tolerance: give a fraction in (0, 1)");
        }
        if self.size_mb == Some(0) {
            return fail("--size-mb: give at least 1");
        }
        if self.rate.trim().is_empty() || self.rate.starts_with('-') {
            return fail("--rate: give a rate (auto, 80M, ...)");
        }
        Ok(())
    }
}

impl Default for CcBench {
    fn default() -> Self {
        CcBench::new()
    }
}

/// A TCP role of a child process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpRole {
    /// Accept one connection and count the bytes it brings.
    Sink,
    /// Connect and write as fast as the connection takes it.
    Source,
}

/// The `rmcast` arguments that run `role` in a child: `rmcast bench cc --tcp-role ...`; the
/// sink listens on `addr` and waits `secs` for its connection, the source connects to it
/// (with congestion control `cc`, if given) and writes for `secs`.
pub fn tcp_child_args(role: TcpRole, addr: SocketAddr, secs: f64, cc: Option<&str>) -> Vec<String> {
    let role = match role {
        TcpRole::Sink => "sink",
        TcpRole::Source => "source",
    };
    ["bench", "cc", "--tcp-role", role, "--tcp-addr"]
        .map(String::from)
        .into_iter()
        .chain([addr.to_string(), "--tcp-secs".into(), format!("{secs:.3}")])
        .chain(
            cc.into_iter()
                .flat_map(|c| ["--tcp-cc".to_string(), c.to_string()]),
        )
        .collect()
}

/// Listen on `addr`, accept one connection within `wait` and read it to its end; reports
/// the bytes and the seconds from accept to end of stream.
pub fn tcp_sink(addr: SocketAddr, wait: Duration) -> Result<Value> {
    let l = TcpListener::bind(addr).map_err(BenchError::io(format!("listen on {addr}")))?;
    l.set_nonblocking(true)
        .map_err(BenchError::io("set the listener non-blocking"))?;
    let start = Instant::now();
    let mut s = loop {
        match l.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if start.elapsed() > wait {
                    return Ok(json!({"bytes": 0, "seconds": 0.0, "note": "no connection"}));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(BenchError::io("accept")(e)),
        }
    };
    s.set_nonblocking(false)
        .map_err(BenchError::io("set the connection blocking"))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(BenchError::io("set the read timeout"))?;
    let t0 = Instant::now();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => bytes += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    Ok(json!({"bytes": bytes, "seconds": t0.elapsed().as_secs_f64()}))
}

/// Connect to `to` with congestion control `cc` (None: the host's default) and write as fast
/// as the connection takes it until `dur` has passed since the call; reports the bytes
/// written, the congestion control the socket used, and how long connecting took.
///
/// A SYN crosses the same bottleneck as everything else, and a policer the multicast keeps
/// full drops most of them, so each attempt waits `CONNECT_ATTEMPT` (a LAN answers in well
/// under that) and attempts go on until `dur` is spent. A flow that never got its
/// connection is a measurement (TCP moved nothing), reported with `bytes` 0 and a `note`;
/// only an error other than a time-out or a refusal is an error.
pub fn tcp_source(to: SocketAddr, dur: Duration, cc: Option<&str>) -> Result<Value> {
    let connect = |timeout: Duration| -> std::io::Result<TcpStream> {
        let s = socket2::Socket::new(
            socket2::Domain::for_address(to),
            socket2::Type::STREAM,
            Some(socket2::Protocol::TCP),
        )?;
        if let Some(cc) = cc {
            s.set_tcp_congestion(cc.as_bytes()).map_err(|e| {
                std::io::Error::new(e.kind(), format!("congestion control {cc:?}: {e}"))
            })?;
        }
        s.connect_timeout(&to.into(), timeout)?;
        Ok(s.into())
    };
    let start = Instant::now();
    let mut attempts = 0u32;
    let mut s = loop {
        let left = dur.saturating_sub(start.elapsed());
        attempts += 1;
        match connect(CONNECT_ATTEMPT.min(left).max(Duration::from_millis(1))) {
            Ok(s) => break s,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::ConnectionRefused
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                if start.elapsed() >= dur {
                    return Ok(json!({
                        "bytes": 0,
                        "seconds": 0.0,
                        "congestion_control": cc,
                        "connect_attempts": attempts,
                        "note": format!("no connection to {to} in {attempts} attempts over {:.1} s: {e}", dur.as_secs_f64()),
                    }));
                }
                if e.kind() == std::io::ErrorKind::ConnectionRefused {
                    // The sink is not listening yet: do not spin.
                    std::thread::sleep(Duration::from_millis(50).min(left));
                }
            }
            Err(e) => return Err(BenchError::io(format!("connect to {to}"))(e)),
        }
    };
    let connected_after = start.elapsed().as_secs_f64();
    // A short write timeout, so a stalled connection still stops on time.
    s.set_write_timeout(Some(Duration::from_millis(100)))
        .map_err(BenchError::io("set the write timeout"))?;
    let buf = vec![0x5Au8; 1 << 16];
    let t0 = Instant::now();
    let mut bytes = 0u64;
    while start.elapsed() < dur {
        match s.write(&buf) {
            Ok(n) => bytes += n as u64,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(BenchError::io("write")(e)),
        }
    }
    let _ = s.shutdown(std::net::Shutdown::Write);
    let cc = socket2::SockRef::from(&s)
        .tcp_congestion()
        .map_or(Value::Null, |c| {
            json!(String::from_utf8_lossy(&c).trim_end_matches('\0'))
        });
    Ok(json!({
        "bytes": bytes,
        "seconds": t0.elapsed().as_secs_f64(),
        "congestion_control": cc,
        "connect_attempts": attempts,
        "connected_after_s": connected_after,
    }))
}

/// How long one TCP connection attempt of [`tcp_source`] waits for its SYN's answer.
const CONNECT_ATTEMPT: Duration = Duration::from_millis(200);

/// The run's work directory (the file sent, the receivers' copies, the logs), removed on
/// every way out of [`run`].
struct WorkDir(std::path::PathBuf);

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One reading of the bottleneck's counters, `t` seconds after the sender started.
struct Sample {
    t: f64,
    c: BTreeMap<String, Count>,
}

impl Sample {
    fn get(&self, name: &str) -> Count {
        self.c.get(name).copied().unwrap_or_default()
    }
}

/// Mbit/s of counter `name` between samples `a` and `b`.
fn rate(a: &Sample, b: &Sample, name: &str) -> f64 {
    mbit(
        b.get(name).bytes.saturating_sub(a.get(name).bytes),
        b.t - a.t,
    )
}

/// Frames per second of counter `name` between samples `a` and `b` (0 over no time).
fn frames_per_s(a: &Sample, b: &Sample, name: &str) -> f64 {
    let n = b.get(name).packets.saturating_sub(a.get(name).packets);
    if b.t > a.t {
        n as f64 / (b.t - a.t)
    } else {
        0.0
    }
}

fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The sample closest to `t` seconds.
fn at(samples: &[Sample], t: f64) -> usize {
    samples
        .iter()
        .enumerate()
        .min_by(|a, b| (a.1.t - t).abs().total_cmp(&(b.1.t - t).abs()))
        .map_or(0, |(i, _)| i)
}

/// The time series: one row per interval between two samples, at its end.
fn series(samples: &[Sample]) -> Vec<Value> {
    samples
        .windows(2)
        .map(|w| {
            let (a, b) = (&w[0], &w[1]);
            json!({
                "t_s": (b.t * 1000.0).round() / 1000.0,
                "multicast_mbps": r2(rate(a, b, "multicast_passed")),
                "tcp_mbps": r2(rate(a, b, "tcp_passed")),
                "multicast_offered_mbps": r2(rate(a, b, "multicast_offered")),
                "tcp_offered_mbps": r2(rate(a, b, "tcp_offered")),
                "dropped_frames": b.get("dropped").packets.saturating_sub(a.get("dropped").packets),
            })
        })
        .collect()
}

/// When the multicast rate entered `band` (Mbit/s) and stayed there until `until` seconds:
/// the end of the first interval of the last unbroken run of intervals in the band.
pub fn settled_at(points: &[(f64, f64)], band: (f64, f64), until: f64) -> Option<f64> {
    let inside = |y: f64| y >= band.0 && y <= band.1;
    let upto: Vec<&(f64, f64)> = points.iter().filter(|p| p.0 <= until + 1e-9).collect();
    let last = upto.last()?;
    if !inside(last.1) {
        return None;
    }
    let first_in = upto.iter().rposition(|p| !inside(p.1)).map_or(0, |i| i + 1);
    upto.get(first_in).map(|p| p.0)
}

/// The readable summary and a per-second table of a `rmcast bench cc` JSON result.
pub fn table(v: &Value) -> String {
    let s = &v["summary"];
    let f = |k: &str| s[k].as_f64().unwrap_or(f64::NAN);
    let yes = |k: &str| match s[k].as_bool() {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    };
    let mut o = String::new();
    match s["queue_bytes"].as_u64() {
        Some(q) => o.push_str(&format!(
            "bottleneck     {:.1} Mbit/s at host 1's bridge port (a link with a drop-tail queue of {q} bytes = {:.1} ms)\n",
            f("bottleneck_mbps"),
            f("queue_ms")
        )),
        None => o.push_str(&format!(
            "bottleneck     {:.1} Mbit/s at host 1's bridge port (policer {} frames/s, burst {} frames = {:.1} ms)\n",
            f("bottleneck_mbps"),
            s["policer_frames_per_s"],
            s["policer_burst_frames"],
            f("burst_ms")
        )),
    }
    o.push_str(&format!(
        "transfer       {} ({} receiver(s), {} MB, frame loss {})\n",
        v["command"].as_str().unwrap_or("?"),
        v["receivers"],
        v["file_bytes"].as_u64().unwrap_or(0) / 1_000_000,
        v["frame_loss"]
    ));
    let settled = s["settled_at_s"]
        .as_f64()
        .map_or("never settled".to_string(), |t| {
            format!("settled at {t:.1} s")
        });
    o.push_str(&format!(
        "alone  0-{:.0} s  multicast {:.1} Mbit/s, {:.0} frames/s (second half); band {:.1}-{:.1}: {settled}; within {:.0} s: {}\n",
        v["alone_s"].as_f64().unwrap_or(0.0),
        f("alone_second_half_multicast_mbps"),
        f("alone_second_half_multicast_frames_per_s"),
        s["band_mbps"][0].as_f64().unwrap_or(0.0),
        s["band_mbps"][1].as_f64().unwrap_or(0.0),
        f("settle_within_s"),
        yes("settled_in_time")
    ));
    o.push_str(&format!(
        "shared {:.1}-{:.1} s  multicast {:.1} Mbit/s, TCP {:.1} Mbit/s: TCP's share {:.1} % (at least {:.1} %: {})\n",
        f("shared_from_s"),
        f("shared_to_s"),
        f("shared_multicast_mbps"),
        f("shared_tcp_mbps"),
        f("tcp_share") * 100.0,
        f("min_share") * 100.0,
        yes("tcp_fair")
    ));
    o.push_str(&format!(
        "bottleneck     dropped {} frames by the measurement's end\n",
        s["dropped_frames"]
    ));
    if s["dropped_frames_whole_run"].is_u64() {
        o.push_str(&format!(
            "               {} by the transfer's end, the queue drained: {} multicast, {} TCP\n",
            s["dropped_frames_whole_run"], s["dropped_multicast_frames"], s["dropped_tcp_frames"]
        ));
    }
    let ok = s["verified"].as_array().map_or(0, |a| {
        a.iter().filter(|x| x.as_bool() == Some(true)).count()
    });
    let status = if s["transfer_finished"].as_bool() == Some(true) {
        format!("exit status {}", s["transfer_exit_status"])
    } else {
        "stopped: did not finish".into()
    };
    o.push_str(&format!(
        "result         {status} after {:.1} s; file intact at {ok}/{} receivers{}\n",
        f("transfer_s"),
        v["receivers"],
        s["transfer_error"]
            .as_str()
            .map_or(String::new(), |e| format!(" ({e})"))
    ));
    o.push_str(&format!(
        "TCP            {} bytes sent, {} received ({})\n",
        s["tcp_source_bytes"], s["tcp_sink_bytes"], s["tcp_congestion_control"]
    ));
    if let Some(after) = s["tcp_connected_after_s"].as_f64() {
        o.push_str(&format!(
            "               connected after {after:.2} s (attempts: {})\n",
            s["tcp_connect_attempts"]
        ));
    }
    for why in [&s["tcp_note"], &s["tcp_source_error"]] {
        if let Some(w) = why.as_str() {
            o.push_str(&format!("               {w}\n"));
        }
    }
    // One line a second: the mean of the intervals ending in it.
    o.push_str("\n   t s  multicast Mbit/s  TCP Mbit/s  dropped frames\n");
    let mut acc: BTreeMap<u64, (f64, f64, u64, u32)> = BTreeMap::new();
    for r in v["series"].as_array().map_or(&[][..], Vec::as_slice) {
        let t = r["t_s"].as_f64().unwrap_or(0.0);
        let e = acc.entry((t - 1e-9).max(0.0).ceil() as u64).or_default();
        e.0 += r["multicast_mbps"].as_f64().unwrap_or(0.0);
        e.1 += r["tcp_mbps"].as_f64().unwrap_or(0.0);
        e.2 += r["dropped_frames"].as_u64().unwrap_or(0);
        e.3 += 1;
    }
    for (t, (m, tcp, d, n)) in acc {
        let n = f64::from(n.max(1));
        o.push_str(&format!(
            "{t:>6}  {:>16.1}  {:>10.1}  {d:>14}\n",
            m / n,
            tcp / n
        ));
    }
    o
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sample(t: f64, mc: u64, tcp: u64) -> Sample {
        let mut c = BTreeMap::new();
        c.insert(
            "multicast_passed".into(),
            Count {
                packets: mc / 1500,
                bytes: mc,
            },
        );
        c.insert(
            "tcp_passed".into(),
            Count {
                packets: tcp / 1500,
                bytes: tcp,
            },
        );
        Sample { t, c }
    }

    #[test]
    fn settling_needs_the_rate_to_stay_in_the_band() {
        let band = (85.0, 115.0);
        let p = [
            (0.5, 20.0),
            (1.0, 90.0),
            (1.5, 140.0),
            (2.0, 100.0),
            (2.5, 95.0),
            (3.0, 10.0),
        ];
        assert_eq!(settled_at(&p, band, 2.5), Some(2.0));
        assert_eq!(
            settled_at(&p, band, 3.0),
            None,
            "it left the band at the end"
        );
        assert_eq!(settled_at(&p[..2], band, 9.0), Some(1.0));
        assert_eq!(settled_at(&[(0.1, 100.0)], band, 1.0), Some(0.1));
        assert_eq!(settled_at(&[], band, 1.0), None);
    }

    #[test]
    fn the_series_is_the_rate_between_readings() {
        let s = [
            sample(0.0, 0, 0),
            sample(0.5, 6_250_000, 0),
            sample(1.0, 12_500_000, 1_250_000),
        ];
        let rows = series(&s);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0]["t_s"], 0.5);
        assert_eq!(rows[0]["multicast_mbps"], 100.0);
        assert_eq!(rows[1]["tcp_mbps"], 20.0);
        assert_eq!(
            rows[1]["tcp_offered_mbps"], 0.0,
            "a counter missing reads as 0"
        );
        assert_eq!(at(&s, 0.7), 1);
    }

    #[test]
    fn tcp_child_args_round_trip_the_address() {
        let addr = "10.93.0.2:47600".parse().unwrap();
        let a = tcp_child_args(TcpRole::Source, addr, 9.5, Some("cubic"));
        assert_eq!(
            a.join(" "),
            "bench cc --tcp-role source --tcp-addr 10.93.0.2:47600 --tcp-secs 9.500 --tcp-cc cubic"
        );
        let a = tcp_child_args(TcpRole::Sink, addr, 1.0, None);
        assert_eq!(
            a.join(" "),
            "bench cc --tcp-role sink --tcp-addr 10.93.0.2:47600 --tcp-secs 1.000"
        );
    }

    #[test]
    fn bad_settings_are_refused() {
        assert!(CcBench::new().check().is_ok());
        let mut b = CcBench::new();
        b.receivers = 0;
        assert!(b.check().is_err());
        let mut b = CcBench::new();
        b.tolerance = 1.5;
        assert!(b.check().is_err());
        let mut b = CcBench::new();
        b.rate = "--protocol".into();
        assert!(b.check().is_err());
        assert_eq!(CcBench::new().size_bytes(), 313_000_000);
    }

    #[test]
    fn the_table_shows_the_verdicts_and_one_line_a_second() {
        let s = [
            sample(0.0, 0, 0),
            sample(0.5, 6_250_000, 0),
            sample(1.0, 12_500_000, 0),
        ];
        let v = json!({
            "command": "rmcast send --receivers 1 --rate 300M FILE",
            "receivers": 1, "file_bytes": 1_000_000, "frame_loss": 0.0, "alone_s": 10.0,
            "summary": {"bottleneck_mbps": 100.0, "settle_within_s": 5.0, "settled_at_s": 0.5, "settled_in_time": true,
                        "tcp_fair": false, "tcp_share": 0.05, "min_share": 0.333,
                        "band_mbps": [85.0, 115.0], "verified": [true], "transfer_finished": true,
                        "transfer_exit_status": 0},
            "series": series(&s),
        });
        let t = table(&v);
        assert!(t.contains("settled at 0.5 s"), "{t}");
        assert!(t.contains("within 5 s: yes"), "{t}");
        assert!(t.contains("TCP's share 5.0 %"), "{t}");
        assert!(t.contains("file intact at 1/1"), "{t}");
        assert!(
            t.lines()
                .any(|l| l.trim_start().starts_with("1 ") && l.contains("100.0")),
            "{t}"
        );
    }
}
