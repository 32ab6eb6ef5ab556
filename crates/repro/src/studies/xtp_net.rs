//! The real-network half of the `xtp` study: the same `rmcast_proto::xtp` agent driven by
//! `rmcast-net` over real UDP multicast sockets, one thread per endpoint, 1,448-byte packets,
//! loss injected on receive at one receiver. No per-call cost is modelled: a call costs what
//! this machine takes. Every number here is wall-clock and varies from run to run.
//!
//! Two places, reported as separate series:
//!
//! * **loopback** (`net.*`): every endpoint on this host's `lo`;
//! * **namespace hosts** (`ns.*`): the sender and each receiver in its own Linux network
//!   namespace, veth pairs on one bridge ([`rmcast_lab::netns::Segment`]), multicast crossing
//!   the bridge — separate IP stacks and interfaces on one machine (and its two cores). Needs
//!   root and `ip`; without them the cells are reported as skipped with the reason.

use super::xtp_grid::{msg_key, throughput_and_success, Mode, Setting};
use crate::stats::Estimate;
use crate::study::{RunCtx, StudyError};
use crate::Measures;
use rmcast_lab::netns::{self, Segment};
use rmcast_net::loss::{Direction, LossConfig};
use rmcast_net::receiver::{self, Output, RecvConfig};
use rmcast_net::sender::{self, Expect, NoObserver, SendConfig, Source};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// One real-network run.
#[derive(Debug, Clone, Copy)]
pub struct NetCell {
    /// Message bytes.
    pub message: u64,
    /// Bytes per write call.
    pub write: usize,
    /// Unicast or multicast to how many receivers.
    pub mode: Mode,
    /// Loss key (0, 4, 10, 20) and probability at receiver 1.
    pub loss: (u32, f64),
    /// `Thesis`: block on acknowledgment per write, go-back-N, uncapped back-off (the net
    /// driver's `--xtp-thesis`); `Improved`: the driver's default xtp (selective repeat, capped
    /// back-off, an SREQ every 8 packets, a sliding window, writes do not block).
    pub setting: Setting,
}

/// Where the endpoints run.
#[derive(Debug, Clone, Copy)]
pub enum Place<'a> {
    /// Every endpoint on this host's loopback interface.
    Loopback,
    /// Sender on host 0, receiver `r` on host `r + 1` of the segment.
    Hosts(&'a Segment),
}

impl Place<'_> {
    fn iface(&self) -> &'static str {
        match self {
            Place::Loopback => "lo",
            Place::Hosts(_) => netns::IFACE,
        }
    }
    fn enter(&self, h: usize) -> Result<(), String> {
        match self {
            Place::Loopback => Ok(()),
            Place::Hosts(s) => s.enter(h).map_err(|e| e.to_string()),
        }
    }
    /// Label for notes and reports.
    pub fn label(&self) -> &'static str {
        match self {
            Place::Loopback => "loopback",
            Place::Hosts(_) => "namespace hosts",
        }
    }
}

/// Outcome of one real-network run.
#[derive(Debug, Clone)]
pub struct NetOut {
    /// Every write acknowledged, every receiver completed with identical contents.
    pub ok: bool,
    /// The sender's transfer time (first data to the last write's completion), seconds.
    pub seconds: f64,
    /// Message bytes × 8 / seconds, 10^6 bit/s.
    pub mbps: f64,
    /// Writes (agent messages) the sender made: the message's, plus the file-header and
    /// finish frames of `rmcast-net`'s framing.
    pub calls: u64,
    /// Repairs the sender sent.
    pub repairs: u64,
    /// Why the run failed, if it did.
    pub why: Option<String>,
}

/// The test data the real-network cells and the CLI's loopback tests send.
pub use rmcast_net::sender::pseudo_random as payload;

/// Run one cell at `place`; `index` picks a distinct group and port. Unicast cells run the
/// sender with `SendConfig::unicast` (the session found on the group, xtp by unicast).
pub fn run_cell(c: &NetCell, index: usize, place: Place<'_>) -> NetOut {
    let fail = |why: String| NetOut {
        ok: false,
        seconds: 0.0,
        mbps: 0.0,
        calls: 0,
        repairs: 0,
        why: Some(why),
    };
    let n = c.mode.receivers();
    if let Place::Hosts(s) = place {
        if s.hosts() < n + 1 {
            return fail(format!(
                "{n} receivers need {} hosts, the segment has {}",
                n + 1,
                s.hosts()
            ));
        }
    }
    let dir: PathBuf =
        std::env::temp_dir().join(format!("rmcast-repro-xtp-{}-{index}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return fail(format!("temporary directory: {e}"));
    }
    let out = run_in(c, index, place, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    out.unwrap_or_else(fail)
}

/// Silence the transfer's log on this thread: the study's senders and receivers are parts of
/// a measurement whose outcome comes back as a `Result`, and they fragment on purpose (the
/// thesis's 1,480-byte datagrams are two frames), so each receiver's one-time warning about
/// fragments would only bury the report's lines (378 warnings in a full run).
fn quiet() -> tracing::subscriber::DefaultGuard {
    tracing::subscriber::set_default(tracing::subscriber::NoSubscriber::default())
}

fn run_in(
    c: &NetCell,
    index: usize,
    place: Place<'_>,
    dir: &std::path::Path,
) -> Result<NetOut, String> {
    let data = payload(c.message, 0x5eed ^ index as u64);
    let src = dir.join("message.bin");
    std::fs::write(&src, &data).map_err(|e| format!("writing the message: {e}"))?;
    let port = 48_100 + (std::process::id() % 500) as u16 * 20 + (index % 20) as u16;
    let group: SocketAddr = format!("239.255.92.{}:{port}", 1 + index % 250)
        .parse()
        .map_err(|e| format!("group address: {e}"))?;
    let n = c.mode.receivers();
    let iface = place.iface();
    let mut rcs = Vec::new();
    for r in 0..n {
        let out = dir.join(format!("out{r}"));
        std::fs::create_dir_all(&out).map_err(|e| format!("output directory: {e}"))?;
        let mut rc = RecvConfig::new(
            group,
            Output::Dir {
                path: out,
                force: true,
            },
        );
        rc.sock.interface = Some(iface.into());
        rc.wait = Some(Duration::from_secs(30));
        rc.sender_timeout = Duration::from_secs(90);
        if r == 0 && c.loss.1 > 0.0 {
            rc.loss = LossConfig {
                rate: c.loss.1,
                one_in: None,
                direction: Direction::Rx,
                seed: 7 + index as u64,
            };
        }
        rcs.push(rc);
    }
    let mut sc = SendConfig::new(group);
    sc.sock.interface = Some(iface.into());
    sc.protocol = "xtp".into();
    sc.expect = Expect::Count(n);
    sc.join_wait = Duration::from_secs(20);
    sc.evict_after = Duration::from_secs(120);
    // The thesis's 1,448 data bytes and 32-byte header: 1,480 bytes, 8 more than one
    // 1500-byte frame carries over UDP, so on the bridge each datagram is two fragments.
    sc.datagram_size =
        Some(rmcast_proto::xtp::MAX_DATA_ETHERNET + rmcast_proto::xtp::XTP_HEADER_LEN);
    sc.allow_fragmentation = true;
    sc.rate_bps = 0;
    sc.write_size = Some(c.write);
    sc.xtp_thesis = c.setting == Setting::Thesis;
    sc.unicast = c.mode == Mode::Unicast;
    sc.window = 64;
    sc.final_wait = Duration::from_secs(5);
    let (sent, all_rx) = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (r, rc) in rcs.into_iter().enumerate() {
            handles.push(s.spawn(move || -> Result<bool, String> {
                let _quiet = quiet();
                place.enter(r + 1)?;
                receiver::receive(rc, &mut receiver::NoObserver)
                    .map(|rep| rep.success)
                    .map_err(|e| e.to_string())
            }));
        }
        let sent = s
            .spawn(move || {
                let _quiet = quiet();
                place.enter(0)?;
                sender::send(sc, Source::Files(vec![src]), &mut NoObserver)
                    .map_err(|e| e.to_string())
            })
            .join()
            .unwrap_or_else(|_| Err("the sender thread panicked".into()));
        let mut all_rx = Ok(true);
        for h in handles {
            match h.join() {
                Ok(Ok(ok)) => {
                    if let Ok(a) = &mut all_rx {
                        *a &= ok;
                    }
                }
                Ok(Err(e)) => all_rx = Err(e),
                Err(_) => all_rx = Err("a receiver thread panicked".into()),
            }
        }
        (sent, all_rx)
    });
    let rep = sent?;
    let all_rx = all_rx?;
    let mut same = true;
    for r in 0..n {
        let got = std::fs::read(dir.join(format!("out{r}")).join("message.bin"));
        same &= got.map(|g| g == data).unwrap_or(false);
    }
    let ok = rep.all_completed && all_rx && same && rep.seconds > 0.0;
    Ok(NetOut {
        ok,
        seconds: rep.seconds,
        mbps: if rep.seconds > 0.0 {
            c.message as f64 * 8.0 / rep.seconds / 1e6
        } else {
            0.0
        },
        calls: rep.agent.messages_completed + rep.agent.messages_failed,
        repairs: rep.agent.repairs_sent,
        why: (!ok).then(|| {
            format!(
                "completed {}, receivers ok {all_rx}, contents equal {same}, {} failed writes",
                rep.all_completed, rep.agent.messages_failed
            )
        }),
    })
}

/// What the real-network part ran, for the study's setup table.
#[derive(Debug, Clone, Default)]
pub struct NetSummary {
    /// Runs on loopback.
    pub loopback_runs: usize,
    /// Runs on network-namespace hosts.
    pub ns_runs: usize,
    /// Why the namespace cells did not run.
    pub ns_skipped: Option<String>,
    /// The most receivers a namespace run had.
    pub ns_max_receivers: usize,
}

fn grid(quick: bool) -> Vec<NetCell> {
    let mut v = Vec::new();
    let msgs: &[u64] = if quick {
        &[51_200]
    } else {
        &[51_200, 1_024_000]
    };
    let writes: &[usize] = &[1024, 8192];
    let modes: &[Mode] = if quick {
        &[Mode::Multi(3)]
    } else {
        &[Mode::Multi(1), Mode::Multi(3)]
    };
    let losses: &[(u32, f64)] = &[(0, 0.0), (10, 0.1)];
    for &message in msgs {
        for &mode in modes {
            for &loss in losses {
                for &write in writes {
                    v.push(NetCell {
                        message,
                        write,
                        mode,
                        loss,
                        setting: Setting::Thesis,
                    });
                }
            }
        }
    }
    v
}

/// Receiver counts measured on namespace hosts beyond the thesis's three.
fn scale_ns(quick: bool) -> Vec<usize> {
    if quick {
        vec![1, 3, 10]
    } else {
        vec![1, 2, 3, 5, 10, 20, 40, 100]
    }
}

fn scale_cells(quick: bool) -> Vec<NetCell> {
    let losses: &[(u32, f64)] = if quick {
        &[(0, 0.0)]
    } else {
        &[(0, 0.0), (10, 0.1)]
    };
    let mut v = Vec::new();
    for &loss in losses {
        for n in scale_ns(quick) {
            v.push(NetCell {
                message: 1_024_000,
                write: 8192,
                mode: Mode::Multi(n),
                loss,
                setting: Setting::Thesis,
            });
        }
    }
    v
}

/// Run `cells` at `place` one after another (they share the machine), record
/// `<prefix>.thesis.<msg>.<mode>.l<loss>.{mbps,success}` and `<prefix>.success_all`.
fn run_grid(
    ctx: &RunCtx<'_>,
    m: &mut Measures,
    notes: &mut Vec<String>,
    prefix: &str,
    cells: &[NetCell],
    place: Place<'_>,
    base: usize,
) -> Vec<NetOut> {
    type Runs = BTreeMap<usize, Vec<NetOut>>;
    let mut by: BTreeMap<(u64, Mode, u32), Runs> = BTreeMap::new();
    let mut outs = Vec::new();
    let mut ok_all = 0usize;
    for (i, c) in cells.iter().enumerate() {
        let o = run_cell(c, base + i, place);
        ctx.progress().inc(1);
        if o.ok {
            ok_all += 1;
        } else {
            notes.push(format!(
                "{prefix} ({}): {} B in {} B writes, {}, loss {}: failed — {}",
                place.label(),
                c.message,
                c.write,
                c.mode.key(),
                c.loss.1,
                o.why.clone().unwrap_or_default()
            ));
        }
        by.entry((c.message, c.mode, c.loss.0))
            .or_default()
            .entry(c.write)
            .or_default()
            .push(o.clone());
        outs.push(o);
    }
    for (&(msg, mode, loss), runs) in &by {
        let k = format!("{prefix}.thesis.{}.{}.l{loss}", msg_key(msg), mode.key());
        let (thr, succ) = throughput_and_success(runs, |o| (o.ok, o.mbps));
        let cells: Vec<String> = runs
            .iter()
            .map(|(w, rs)| {
                let v: Vec<String> = rs
                    .iter()
                    .map(|o| {
                        if o.ok {
                            format!("{:.2}", o.mbps)
                        } else {
                            "failed".into()
                        }
                    })
                    .collect();
                format!("{w} B: {}", v.join(" / "))
            })
            .collect();
        notes.push(format!(
            "{prefix} ({}), {} to {}, loss {}: {} (Mbit/s per run)",
            place.label(),
            if msg < 100_000 { "50 KB" } else { "1 MB" },
            if mode == Mode::Unicast {
                "unicast".to_string()
            } else {
                format!("{} receiver(s)", mode.receivers())
            },
            match loss {
                0 => "none",
                4 => "1/25",
                10 => "1/10",
                _ => "1/5",
            },
            cells.join(", ")
        ));
        m.series(format!("{k}.mbps"), "Mbit/s", "write bytes", thr);
        m.series(format!("{k}.success"), "fraction", "write bytes", succ);
    }
    m.scalar(
        format!("{prefix}.success_all"),
        "fraction",
        Estimate::exact(ok_all as f64 / cells.len().max(1) as f64),
    );
    outs
}

/// The real-network part of the study: the grid on loopback (`net.*`), then on namespace
/// hosts (`ns.*`: the same grid, plus 1 MB in 8192-B writes to up to 10 receivers (quick) or
/// 100 (full),
/// `ns.scale.l<loss>.mbps` over the receiver count and `ns.scale.n10_over_n1`).
pub fn run(
    ctx: &RunCtx<'_>,
    m: &mut Measures,
    notes: &mut Vec<String>,
) -> Result<NetSummary, StudyError> {
    let cells = grid(ctx.quick());
    let scale = scale_cells(ctx.quick());
    let ns_avail = netns::available();
    let ns_total = if ns_avail.is_ok() {
        cells.len() + scale.len()
    } else {
        0
    };
    ctx.progress().add_total((cells.len() + ns_total) as u64);
    run_grid(ctx, m, notes, "net", &cells, Place::Loopback, 0);
    let mut sum = NetSummary {
        loopback_runs: cells.len(),
        ..NetSummary::default()
    };
    let seg = match ns_avail {
        Ok(()) => {
            let hosts = scale.iter().map(|c| c.mode.receivers()).max().unwrap_or(3) + 1;
            Segment::create(hosts).map_err(|e| e.to_string())
        }
        Err(why) => Err(why),
    };
    let seg = match seg {
        Ok(s) => s,
        Err(why) => {
            notes.push(format!(
                "namespace hosts (ns.*): skipped: {why}; {} runs not made",
                cells.len() + scale.len()
            ));
            sum.ns_skipped = Some(why);
            return Ok(sum);
        }
    };
    let all: Vec<NetCell> = cells.iter().chain(&scale).copied().collect();
    let outs = run_grid(ctx, m, notes, "ns", &all, Place::Hosts(&seg), 100);
    let outs = &outs[cells.len()..];
    sum.ns_runs = cells.len() + scale.len();
    sum.ns_max_receivers = seg.hosts() - 1;
    let mut series: BTreeMap<u32, Vec<(f64, Estimate)>> = BTreeMap::new();
    for (c, o) in scale.iter().zip(outs) {
        series.entry(c.loss.0).or_default().push((
            c.mode.receivers() as f64,
            Estimate::from_samples(&[if o.ok { o.mbps } else { 0.0 }])
                .unwrap_or(Estimate::exact(0.0)),
        ));
    }
    for (l, pts) in &series {
        m.series(
            format!("ns.scale.l{l}.mbps"),
            "Mbit/s",
            "receivers",
            pts.clone(),
        );
    }
    let at = |n: usize| {
        series
            .get(&0)?
            .iter()
            .find(|(x, _)| *x == n as f64)
            .map(|(_, e)| e.mean)
    };
    if let (Some(a), Some(b)) = (at(10), at(1)) {
        if b > 0.0 {
            m.scalar("ns.scale.n10_over_n1", "ratio", Estimate::exact(a / b));
        }
    }
    Ok(sum)
}
