//! One `rmcast bench cc` run, phase by phase: the rig (bridge, bottleneck, file), the flows
//! started (TCP sink, receivers, sender), the samples of the bottleneck's counters while the
//! transfer runs alone and then beside TCP, the end of every flow, and the summary.

use super::{
    at, frames_per_s, r2, rate, series, settled_at, tcp_child_args, CcBench, Sample, TcpRole,
    WorkDir, GROUP_IP, GROUP_PORT, RECEIVER_GRACE, TCP_PORT,
};
use crate::proc::{self, loadavg, Logged};
use crate::run::{recv_command, send_command, tempfile_dir, write_pseudo_random};
use crate::{BenchError, Result, Topo};
use rmcast_lab::netns::Policer;
use rmcast_net::interrupt::Interrupt;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The bridge with its bottleneck, the file to send and where the TCP sink listens.
struct Rig {
    /// Declared first so that the files go before the namespaces do.
    work: WorkDir,
    topo: Topo,
    policer: Policer,
    file: PathBuf,
    digest: blake3::Hash,
    sink_addr: SocketAddr,
}

impl Rig {
    /// The bridge of `b.receivers + 2` hosts, the bottleneck at host 1's port, and the file.
    fn build(b: &CcBench, progress: &mut dyn FnMut(String)) -> Result<Rig> {
        let topo = Topo::bridge(b.receivers + 2)?;
        topo.frame_loss(b.frame_loss)?;
        let flows = [
            ("multicast", format!("ip daddr {GROUP_IP}")),
            ("tcp", "ip protocol tcp".to_string()),
        ];
        let flows: Vec<(&str, &str)> = flows.iter().map(|(n, m)| (*n, m.as_str())).collect();
        let policer = match b.queue {
            Some(q) => topo.queue_bottleneck(1, b.bottleneck_bps, q, &flows)?,
            None => topo.bottleneck(1, b.bottleneck_bps, b.burst, &flows)?,
        };
        let work = WorkDir(tempfile_dir("cc")?);
        let size = b.size_bytes();
        let file = work.0.join("cc.bin");
        let shape = match policer.queue_bytes {
            Some(q) => format!("a drop-tail queue of {q} bytes"),
            None => format!(
                "policer {} frames/s, burst {} frames",
                policer.frames_per_s, policer.burst_frames
            ),
        };
        progress(format!(
            "bottleneck {:.1} Mbit/s at host 1's port ({shape}); writing {} MB",
            b.bottleneck_bps as f64 / 1e6,
            size / 1_000_000
        ));
        write_pseudo_random(&file, size)?;
        let digest = proc::digest(&file)?;
        let host1 = topo
            .addr(1)
            .ok_or_else(|| BenchError::Failed("no address for host 1".into()))?;
        Ok(Rig {
            work,
            topo,
            policer,
            file,
            digest,
            sink_addr: SocketAddr::new(host1.into(), TCP_PORT),
        })
    }

    fn work(&self) -> &Path {
        self.work.0.as_path()
    }
}

/// The flows of a run: the TCP sink, the receivers and the sender, with the sender's command
/// line and when it started.
struct Flows {
    /// Declared in the reverse order of their start, so that they are dropped in it.
    sender: Logged,
    kids: Vec<Logged>,
    sink: Logged,
    shown: String,
    t0: Instant,
}

/// What sampling the bottleneck saw: the samples, the TCP source (once started) and the
/// sample it started at, and when (and how) the transfer ended during the measurement.
struct Sampled {
    samples: Vec<Sample>,
    source: Option<Logged>,
    tcp_started: Option<usize>,
    sender_ended: Option<(f64, Option<i32>)>,
}

/// How every flow ended: the TCP source's and sink's reports, the transfer's exit status
/// (`None`: stopped after the timeout) and time, each receiver's copy checked, the
/// counters once drained, and the sender's report and error.
struct Ended {
    source_v: Value,
    source_error: Option<String>,
    sink_v: Value,
    code: Option<Option<i32>>,
    transfer_s: f64,
    verified: Vec<bool>,
    drained: Sample,
    sv: Value,
    sender_error: Value,
}

/// Start the TCP sink, the receivers and then the sender; returns them with the first sample.
fn start(
    b: &CcBench,
    rig: &Rig,
    exe: &Path,
    progress: &mut dyn FnMut(String),
) -> Result<(Flows, Sample)> {
    let (topo, work, sink_addr) = (&rig.topo, rig.work(), rig.sink_addr);
    let alone = b.alone.as_secs_f64();
    let mut c = topo.cmd(1, exe);
    c.args(tcp_child_args(TcpRole::Sink, sink_addr, alone + 30.0, None));
    let sink = proc::spawn_logged(&mut c, work, "tcp-sink")?;
    let group = format!("{GROUP_IP}:{GROUP_PORT}");
    let mut kids = Vec::new();
    for r in 1..=b.receivers {
        let mut c = recv_command(topo, exe, r, &group, &work.join(format!("r{r}")))?;
        kids.push(proc::spawn_logged(&mut c, work, &format!("r{r}"))?);
    }
    std::thread::sleep(Duration::from_millis(300));
    let mut args: Vec<String> = ["send", "--receivers"].map(String::from).to_vec();
    args.push(b.receivers.to_string());
    args.extend(["--rate".into(), b.rate.clone()]);
    if let Some(p) = &b.protocol {
        args.extend(["--protocol".into(), p.clone()]);
    }
    let shown = format!("rmcast {} FILE", args.join(" "));
    progress(format!("starting {shown}"));
    let first = Sample {
        t: 0.0,
        c: topo.bottleneck_counts()?,
    };
    let sender = proc::spawn_logged(
        &mut send_command(topo, exe, &args, &group, &rig.file),
        work,
        "send",
    )?;
    let flows = Flows {
        sender,
        kids,
        sink,
        shown,
        t0: Instant::now(),
    };
    Ok((flows, first))
}

impl Flows {
    /// Read the bottleneck's counters every `b.sample` until the measurement's end, starting
    /// the TCP flow after `b.alone`; a progress line each second.
    fn sample(
        &mut self,
        b: &CcBench,
        rig: &Rig,
        (exe, interrupt): (&Path, &Interrupt),
        first: Sample,
        progress: &mut dyn FnMut(String),
    ) -> Result<Sampled> {
        let (topo, work, sink_addr) = (&rig.topo, rig.work(), rig.sink_addr);
        let (t0, shown, tcp_host) = (self.t0, &self.shown, b.receivers + 1);
        let (alone, end) = (b.alone.as_secs_f64(), (b.alone + b.shared).as_secs_f64());
        let mut samples = vec![first];
        let mut source: Option<Logged> = None;
        let mut tcp_started = None;
        let mut sender_ended = None;
        let mut k = 1u32;
        // Samples a second, for a progress line each second.
        let per_second = (1.0 / b.sample.as_secs_f64()).round().max(1.0) as u32;
        loop {
            let due = b.sample * k;
            if let Some(wait) = due.checked_sub(t0.elapsed()) {
                std::thread::sleep(wait);
            }
            let before = t0.elapsed().as_secs_f64();
            let c = topo.bottleneck_counts()?;
            let t = (before + t0.elapsed().as_secs_f64()) / 2.0;
            samples.push(Sample { t, c });
            if interrupt.raised() {
                return Err(BenchError::Failed("interrupted".into()));
            }
            if sender_ended.is_none() {
                if let Some(code) = self.sender.ended() {
                    sender_ended = Some((t, code));
                    if code == Some(2) {
                        let why = self.sender.stderr_error();
                        let hint = if b.rate == "auto" {
                            " — this rmcast send has no congestion control (`--rate auto`) yet; give a fixed --rate to exercise the harness"
                        } else {
                            ""
                        };
                        return Err(BenchError::Failed(format!(
                            "rmcast send refused its arguments ({shown}): {why}{hint}"
                        )));
                    }
                    progress(format!(
                        "   the transfer ended at {t:.1} s (exit status {}), before the measurement's end",
                        code.map_or("signal".into(), |c| c.to_string())
                    ));
                }
            }
            if source.is_none() && t >= alone {
                let mut c = topo.cmd(tcp_host, exe);
                c.args(tcp_child_args(
                    TcpRole::Source,
                    sink_addr,
                    end - t,
                    b.tcp_cc.as_deref(),
                ));
                source = Some(proc::spawn_logged(&mut c, work, "tcp-source")?);
                tcp_started = Some(samples.len() - 1);
                progress(format!(
                    "   {t:.1} s: TCP flow from host {tcp_host} to host 1 starts"
                ));
            }
            if k.is_multiple_of(per_second) || t >= end {
                let n = samples.len();
                let (a, z) = (
                    &samples[n.saturating_sub(1 + per_second as usize)],
                    &samples[n - 1],
                );
                progress(format!(
                    "   {t:5.1} s  multicast {:6.1} Mbit/s  tcp {:6.1} Mbit/s  dropped {} frames",
                    rate(a, z, "multicast_passed"),
                    rate(a, z, "tcp_passed"),
                    z.get("dropped").packets
                ));
            }
            if t >= end {
                break;
            }
            k += 1;
        }
        Ok(Sampled {
            samples,
            source,
            tcp_started,
            sender_ended,
        })
    }

    /// Collect the TCP reports, wait for the transfer (at most `b.timeout`), check every
    /// receiver's copy and read the drained counters.
    fn finish(
        mut self,
        b: &CcBench,
        rig: &Rig,
        (interrupt, source): (&Interrupt, Option<&mut Logged>),
        progress: &mut dyn FnMut(String),
    ) -> Result<Ended> {
        let (work, digest) = (rig.work(), rig.digest);
        let sender = &mut self.sender;
        // The source's report, or why there is none (its error, else that it never started).
        let (source_v, source_error) = match source {
            Some(s) => {
                s.wait_for(Duration::from_secs(5));
                let v = s.json();
                let why = v.is_null().then(|| s.stderr_error());
                (v, why)
            }
            None => (
                Value::Null,
                Some("the TCP source never started".to_string()),
            ),
        };
        // The sink reads until the end of the stream or 10 s without data: through a policer
        // the multicast fills, TCP's last segments and FIN can wait out several retransmission
        // timeouts, so give it that long to report what arrived.
        self.sink.wait_for(Duration::from_secs(12));
        let sink_v = self.sink.json();
        progress("waiting for the transfer to finish".into());
        let wait_start = Instant::now();
        let code = loop {
            if let Some(code) = sender.ended() {
                break Some(code);
            }
            if interrupt.raised() {
                return Err(BenchError::Failed("interrupted".into()));
            }
            if wait_start.elapsed() > b.timeout {
                sender.stop();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let transfer_s = self.t0.elapsed().as_secs_f64();
        let mut verified = Vec::new();
        for (r, mut k) in self.kids.into_iter().enumerate() {
            k.wait_for(if code.is_none() {
                Duration::ZERO
            } else {
                RECEIVER_GRACE
            });
            let p = work.join(format!("r{}/cc.bin", r + 1));
            verified.push(proc::digest(&p).is_ok_and(|d| d == digest));
        }
        // Every flow has stopped and the queue has drained: offered − passed per flow is now
        // what the bottleneck dropped of it (during the run, frames waiting in the queue
        // would count as not passed too).
        let drained = rig.topo.bottleneck_counts()?;
        let sv = sender.json();
        let sender_error = match code {
            Some(Some(0)) => Value::Null,
            None => json!(format!(
                "did not finish within {:.0} s after the measurement",
                b.timeout.as_secs_f64()
            )),
            _ => {
                let why: Vec<String> = sv["receivers"]
                    .as_array()
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .filter(|r| r["outcome"] != "completed")
                    .map(|r| {
                        format!(
                            "{}: {}",
                            r["outcome"].as_str().unwrap_or("?"),
                            r["reason"].as_str().unwrap_or("")
                        )
                    })
                    .collect();
                json!(if why.is_empty() {
                    sender.stderr_error()
                } else {
                    why.join("; ")
                })
            }
        };

        Ok(Ended {
            source_v,
            source_error,
            sink_v,
            code,
            transfer_s,
            verified,
            drained: Sample {
                t: transfer_s,
                c: drained,
            },
            sv,
            sender_error,
        })
    }
}

/// The run's summary: settling into the band, the rates alone and shared, TCP's share, the
/// drops, and how the transfer and the TCP flow ended.
fn summary(b: &CcBench, policer: &Policer, s: &Sampled, e: &Ended) -> Value {
    let (samples, alone) = (&s.samples, b.alone.as_secs_f64());
    let (tcp_started, sender_ended) = (s.tcp_started, s.sender_ended);
    let (code, transfer_s, drained) = (e.code, e.transfer_s, &e.drained);
    let (source_v, source_error) = (&e.source_v, &e.source_error);
    let (sink_v, verified, sender_error) = (&e.sink_v, &e.verified, &e.sender_error);
    let mbps = b.bottleneck_bps as f64 / 1e6;
    let band = (mbps * (1.0 - b.tolerance), mbps * (1.0 + b.tolerance));
    let win = b.window.as_secs_f64().max(1e-3);
    let pts: Vec<(f64, f64)> = (1..samples.len())
        .filter(|&i| samples[i].t >= win)
        .map(|i| {
            let j = at(samples, samples[i].t - win).min(i - 1);
            (
                samples[i].t,
                rate(&samples[j], &samples[i], "multicast_passed"),
            )
        })
        .collect();
    let settle = settled_at(&pts, band, alone);
    let (h, a_end) = (at(samples, alone / 2.0), at(samples, alone));
    let alone_mean = rate(&samples[h], &samples[a_end], "multicast_passed");
    // Frames, as the policer counts them: a small control frame (an NCF) costs it as much as
    // a full data frame but adds little to the Mbit/s.
    let alone_frames = frames_per_s(&samples[h], &samples[a_end], "multicast_passed");
    let last = samples.len() - 1;
    let shared_from = tcp_started.unwrap_or(last);
    let (mc_shared, tcp_shared) = (
        rate(&samples[shared_from], &samples[last], "multicast_passed"),
        rate(&samples[shared_from], &samples[last], "tcp_passed"),
    );
    let share = tcp_shared / mbps;
    let dropped = |flow: &str| {
        drained
            .get(&format!("{flow}_offered"))
            .packets
            .saturating_sub(drained.get(&format!("{flow}_passed")).packets)
    };
    json!({
        "bottleneck_mbps": mbps,
        "policer_frames_per_s": policer.frames_per_s,
        "policer_burst_frames": policer.burst_frames,
        "queue_bytes": policer.queue_bytes,
        "queue_ms": b.queue.map(|q| q.as_secs_f64() * 1e3),
        "burst_ms": b.burst.as_secs_f64() * 1e3,
        "band_mbps": [r2(band.0), r2(band.1)],
        "rate_window_s": win,
        "settled_at_s": settle.map(r2),
        "settle_within_s": b.settle_within.as_secs_f64(),
        "settled_in_time": settle.is_some_and(|s| s <= b.settle_within.as_secs_f64() + 1e-9),
        "alone_second_half_multicast_mbps": r2(alone_mean),
        "alone_second_half_multicast_frames_per_s": alone_frames.round(),
        "shared_from_s": r2(samples[shared_from].t),
        "shared_to_s": r2(samples[last].t),
        "shared_multicast_mbps": r2(mc_shared),
        "shared_tcp_mbps": r2(tcp_shared),
        "tcp_share": (share * 1000.0).round() / 1000.0,
        "min_share": (b.min_share * 1000.0).round() / 1000.0,
        "tcp_fair": share >= b.min_share,
        "dropped_frames": samples[last].get("dropped").packets,
        "dropped_frames_whole_run": drained.get("dropped").packets,
        "dropped_multicast_frames": dropped("multicast"),
        "dropped_tcp_frames": dropped("tcp"),
        "transfer_exit_status": code.flatten(),
        "transfer_finished": code.is_some(),
        "transfer_s": r2(transfer_s),
        "transfer_ended_during_measurement_s": sender_ended.map(|(t, _)| r2(t)),
        "transfer_error": sender_error,
        "verified": verified,
        "all_verified": verified.iter().all(|v| *v),
        "tcp_source_bytes": source_v["bytes"],
        "tcp_sink_bytes": sink_v["bytes"],
        "tcp_congestion_control": source_v["congestion_control"],
        "tcp_connect_attempts": source_v["connect_attempts"],
        "tcp_connected_after_s": source_v["connected_after_s"].as_f64().map(r2),
        "tcp_note": source_v["note"],
        "tcp_source_error": source_error,
    })
}

/// Run the measurement with the `rmcast` binary `exe`; `progress` gets a line per step and
/// one per second of the run.
pub fn run(b: &CcBench, exe: &Path, progress: &mut dyn FnMut(String)) -> Result<Value> {
    b.check()?;
    let interrupt = Interrupt::install();
    let rig = Rig::build(b, progress)?;
    let (mut flows, first) = start(b, &rig, exe, progress)?;
    let mut sampled = flows.sample(b, &rig, (exe, &interrupt), first, progress)?;
    let shown = flows.shown.clone();
    let ended = flows.finish(b, &rig, (&interrupt, sampled.source.as_mut()), progress)?;
    let summary = summary(b, &rig.policer, &sampled, &ended);
    let (size, alone, tcp_host) = (b.size_bytes(), b.alone.as_secs_f64(), b.receivers + 1);
    let (sv, samples) = (ended.sv, &sampled.samples);
    Ok(json!({
        "command": shown,
        "rate": b.rate,
        "protocol": b.protocol.as_deref().map_or(json!("rmcast send's default"), |p| json!(p)),
        "receivers": b.receivers,
        "file_bytes": size,
        "frame_loss": b.frame_loss,
        "alone_s": alone,
        "shared_s": b.shared.as_secs_f64(),
        "sample_ms": b.sample.as_secs_f64() * 1e3,
        "tolerance": b.tolerance,
        "hosts": format!("0 sender, 1 receiver behind the bottleneck, 2..={} receivers without one, {tcp_host} TCP source (to a sink on host 1)", b.receivers),
        "topology": "bridge (one network namespace per host, rmcast_lab::netns::Segment)",
        "cpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "loadavg_end": loadavg(),
        "summary": summary,
        "sender": sv,
        "series": series(samples),
    }))
}
