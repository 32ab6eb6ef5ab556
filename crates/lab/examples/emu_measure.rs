//! Measure the link emulator against its settings (root): a chain of `--hops` emulated links
//! between two hosts, each `--delay-ms` and `--rate` bit/s with a drop-tail queue of
//! `--queue` frames and `--loss` Bernoulli loss per direction. Prints the UDP round trip
//! against 2 x hops x (delay + transmission), the rate a stream faster than the link gets
//! through (wire bytes: frame + 24), the loss against its binomial 95 % interval, and the
//! emulators' CPU time per GB forwarded.
//!
//! `sudo cargo run --release -p rmcast-lab --example emu_measure -- --hops 4` (also
//! `--delay-ms`, `--rate`, `--queue`, `--loss P` or `--every-nth N`, `--count`, `--pings`,
//! `--iperf3`: a 3 s TCP transfer by iperf3 too)

use rmcast_lab::emu::chain::Chain;
use rmcast_lab::emu::{measure, wire_bytes, MediumSpec};
use rmcast_sim::loss::LossModel;
use std::time::Duration;

fn arg(name: &str, default: f64) -> f64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let hops = arg("--hops", 1.0) as usize;
    let delay_ms = arg("--delay-ms", 0.5);
    let rate = arg("--rate", 100e6) as u64;
    let queue = arg("--queue", 100.0) as usize;
    let loss = arg("--loss", 0.0);
    let count = arg("--count", 20_000.0) as u64;
    let pings = arg("--pings", 200.0) as usize;
    let spec = MediumSpec {
        rate_bps: rate,
        delay_ns: (delay_ms * 1e6) as u64,
        jitter_ns: None,
        reorder: false,
        queue: Some(queue),
    };
    let nth = arg("--every-nth", 0.0) as u64;
    // The fraction of frames the model loses in the long run, per link direction.
    let (model, loss) = match nth {
        0 => (
            (loss > 0.0).then_some(LossModel::Bernoulli { p: loss }),
            loss,
        ),
        n => (Some(LossModel::EveryNth { n }), 1.0 / n as f64),
    };
    let chain = Chain::create(hops, &spec, model.as_ref(), 1)?;
    println!("{hops} hops of {delay_ms} ms, {rate} bit/s, queue {queue}, loss {loss}");
    // Round trips of 56-byte UDP payloads (a 98-byte frame, as ping's): per hop each way the
    // delay and the frame's transmission.
    let rtts = measure::round_trips(&chain, pings, 56, Duration::from_millis(5))?;
    let mut sorted = rtts.clone();
    sorted.sort_by(f64::total_cmp);
    let tx = spec.tx_ns(wire_bytes(14 + 20 + 8 + 56)) as f64 / 1e9;
    let expect = 2.0 * hops as f64 * (delay_ms / 1e3 + tx);
    let mean = rtts.iter().sum::<f64>() / rtts.len().max(1) as f64;
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN);
    println!(
        "rtt: {} of {pings} echoed, mean {:.4} ms, median {:.4} ms, min {:.4} ms, max {:.4} ms; \
         configured {:.4} ms, bound 5 % + 0.1 ms = {:.4} ms",
        rtts.len(),
        mean * 1e3,
        median * 1e3,
        sorted.first().copied().unwrap_or(f64::NAN) * 1e3,
        sorted.last().copied().unwrap_or(f64::NAN) * 1e3,
        expect * 1e3,
        (0.05 * expect + 1e-4) * 1e3
    );
    // The same with ping (the kernel echoes: no user-space echo's wake-up on the way back).
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", &chain.a_ns(), "ping", "-q", "-c"])
        .arg(pings.to_string())
        .args(["-i", "0.005", &chain.b_addr().to_string()])
        .output();
    match out {
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout);
            let line = text
                .lines()
                .find(|l| l.contains("min/avg"))
                .unwrap_or("no rtt line");
            println!("ping -c {pings} -i 0.005: {line}");
        }
        Err(e) => println!("ping: {e}"),
    }
    // The rate: 1,472-byte datagrams (1,514-byte frames) offered at twice the rate.
    let wire = wire_bytes(1514);
    let gap = Duration::from_nanos(spec.tx_ns(wire) / 2);
    let n = (rate / (wire * 8)).clamp(2_000, 40_000);
    let cpu0: u64 = chain.emulators.iter().map(|e| e.stats().cpu_ns).sum();
    let bytes0: u64 = chain
        .emulators
        .iter()
        .map(|e| e.stats().wire_bytes_in)
        .sum();
    let s = measure::stream(&chain, n, 1472, gap)?;
    let got = (s.received.saturating_sub(1) * wire * 8) as f64 / s.span_s;
    println!(
        "rate: {} of {} datagrams through, {:.4} Mbit/s on the wire ({:+.2} % of the set {:.4})",
        s.received,
        s.sent,
        got / 1e6,
        (got / rate as f64 - 1.0) * 100.0,
        rate as f64 / 1e6
    );
    // TCP through the link (checksum offload kept across the emulator): iperf3 for 3 s, its
    // receiver's goodput against the payload share of the rate (1,448 bytes of TCP payload
    // with timestamps per 1,538 wire bytes).
    if std::env::args().any(|a| a == "--iperf3") {
        let b = chain.b_addr().to_string();
        let server = std::process::Command::new("ip")
            .args([
                "netns",
                "exec",
                &chain.b_ns(),
                "iperf3",
                "-s",
                "-1",
                "-B",
                &b,
            ])
            .stdout(std::process::Stdio::null())
            .spawn();
        std::thread::sleep(Duration::from_millis(500));
        let out = std::process::Command::new("ip")
            .args([
                "netns",
                "exec",
                &chain.a_ns(),
                "iperf3",
                "-c",
                &b,
                "-t",
                "3",
                "-J",
            ])
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let bps = text
            .split("\"sum_received\"")
            .nth(1)
            .and_then(|t| t.split("\"bits_per_second\":").nth(1))
            .and_then(|t| {
                t.split(|c: char| c == ',' || c.is_whitespace())
                    .find(|w| !w.is_empty())
            })
            .and_then(|w| w.parse::<f64>().ok());
        let share = rate as f64 * 1448.0 / wire as f64;
        match bps {
            Some(b) => println!(
                "iperf3 tcp: {:.4} Mbit/s received, {:+.2} % of the payload share {:.4} Mbit/s",
                b / 1e6,
                (b / share - 1.0) * 100.0,
                share / 1e6
            ),
            None => println!(
                "iperf3 tcp: no result ({})",
                text.lines().take(3).collect::<Vec<_>>().join(" ")
            ),
        }
        if let Ok(mut s) = server {
            let _ = s.kill();
            let _ = s.wait();
        }
    }
    // The loss: a stream at half the rate (no queue drops), each datagram one frame.
    let s = measure::stream(
        &chain,
        count,
        1000,
        Duration::from_nanos(2 * spec.tx_ns(wire)),
    )?;
    let p_path = 1.0 - (1.0 - loss).powi(hops as i32);
    let lost = (s.sent - s.received) as f64 / s.sent as f64;
    let half = 1.96 * (p_path * (1.0 - p_path) / s.sent as f64).sqrt();
    println!(
        "loss: {} of {} lost = {:.5}; path {:.5}, binomial 95 % interval [{:.5}, {:.5}]",
        s.sent - s.received,
        s.sent,
        lost,
        p_path,
        p_path - half,
        p_path + half
    );
    std::thread::sleep(Duration::from_millis(200));
    let cpu: u64 = chain
        .emulators
        .iter()
        .map(|e| e.stats().cpu_ns)
        .sum::<u64>()
        - cpu0;
    let bytes: u64 = chain
        .emulators
        .iter()
        .map(|e| e.stats().wire_bytes_in)
        .sum::<u64>()
        - bytes0;
    println!(
        "cpu: {:.3} s for {:.1} MB of wire bytes in over {hops} emulators = {:.2} CPU s per GB",
        cpu as f64 / 1e9,
        bytes as f64 / 1e6,
        cpu as f64 / bytes.max(1) as f64
    );
    for e in &chain.emulators {
        println!("  {}: {:?}", e.name(), e.stats());
    }
    Ok(())
}
