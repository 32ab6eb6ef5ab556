//! The real-network half of the `xtp` study: the same `rmcast_proto::xtp` agent driven by
//! `rmcast-net` over real UDP multicast sockets, one thread per endpoint, 1,448-byte packets,
//! loss injected on receive at one receiver. No per-call cost is modelled: a call costs what
//! this machine takes. Every number here is wall-clock and varies from run to run.
//!
//! Two places, reported as separate series:
//!
//! * **loopback** (`net.*`): every endpoint on this host's `lo`;
//! * **namespace hosts** (`ns.*`): the sender and each receiver in its own Linux network
//!   namespace, their ports one emulated 10 Mb/s shared medium (the thesis's Ethernet: one
//!   host's frame occupies it for all; no collisions) — separate IP stacks and interfaces on
//!   one machine, the network, not its CPU, the limit. Needs root and `ip`; without them the
//!   cells are reported as skipped with the reason.
//!
//! This crate links no socket code: the cells run through a [`NetLab`], which the `rmcast`
//! binary installs at start-up ([`install`]; `rmcast_lab::xtp::Sockets`). Here are the grid,
//! the order of the runs and what is recorded of them. Without a lab installed (the Python
//! package) both places are reported as skipped, with the reason.

use super::xtp_grid::{msg_key, throughput_and_success, Mode, Setting};
use crate::stats::Estimate;
use crate::study::{RunCtx, StudyError};
use crate::Measures;
use std::collections::BTreeMap;

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

/// Runs the real-network cells: the lab beside this crate (`rmcast_lab::xtp::Sockets`).
pub trait NetLab: Sync {
    /// Run one cell with every endpoint on this host's loopback interface; `index` picks a
    /// distinct group and port.
    fn loopback(&self, c: &NetCell, index: usize) -> NetOut;
    /// Whether namespace hosts can be made here (Linux, root, `ip`), or why not.
    fn namespaces(&self) -> Result<(), String>;
    /// `hosts` namespace hosts on one 10 Mb/s segment (the sender on host 0, receiver `r` on host
    /// `r + 1`), or why they cannot be made here.
    fn hosts(&self, hosts: usize) -> Result<Box<dyn NetHosts + '_>, String>;
}

/// Namespace hosts made by a [`NetLab`], deleted when dropped.
pub trait NetHosts {
    /// How many hosts there are.
    fn count(&self) -> usize;
    /// Run one cell on them; `index` picks a distinct group and port.
    fn run(&self, c: &NetCell, index: usize) -> NetOut;
}

static LAB: std::sync::OnceLock<&'static dyn NetLab> = std::sync::OnceLock::new();

/// Make `lab` run this study's real-network cells, for the rest of the process; `false` if
/// one was installed already (it stays).
pub fn install(lab: &'static dyn NetLab) -> bool {
    LAB.set(lab).is_ok()
}

/// Why the real-network cells cannot run in this process, if they cannot.
const NO_LAB: &str = "no socket lab in this build (the `rmcast` binary installs one: \
                      rmcast_repro::studies::xtp_net::install)";

/// What the real-network part ran, for the study's setup table.
#[derive(Debug, Clone, Default)]
pub struct NetSummary {
    /// Runs on loopback.
    pub loopback_runs: usize,
    /// Why the loopback cells did not run.
    pub loopback_skipped: Option<String>,
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

/// Where a grid runs: its label in notes, and how one cell runs there.
#[derive(Clone, Copy)]
struct Place<'a> {
    label: &'static str,
    run: &'a dyn Fn(&NetCell, usize) -> NetOut,
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
        let o = (place.run)(c, base + i);
        ctx.progress().inc(1);
        if o.ok {
            ok_all += 1;
        } else {
            notes.push(format!(
                "{prefix} ({}): {} B in {} B writes, {}, loss {}: failed — {}",
                place.label,
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
            place.label,
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
    run_with(LAB.get().copied(), ctx, m, notes)
}

/// [`run`] through `lab` (`None`: none installed).
fn run_with(
    lab: Option<&dyn NetLab>,
    ctx: &RunCtx<'_>,
    m: &mut Measures,
    notes: &mut Vec<String>,
) -> Result<NetSummary, StudyError> {
    let cells = grid(ctx.quick());
    let scale = scale_cells(ctx.quick());
    let Some(lab) = lab else {
        notes.push(format!(
            "real network (net.*, ns.*): skipped: {NO_LAB}; {} runs not made",
            2 * cells.len() + scale.len()
        ));
        return Ok(NetSummary {
            loopback_skipped: Some(NO_LAB.into()),
            ns_skipped: Some(NO_LAB.into()),
            ..NetSummary::default()
        });
    };
    let ns_avail = lab.namespaces();
    let ns_total = if ns_avail.is_ok() {
        cells.len() + scale.len()
    } else {
        0
    };
    ctx.progress().add_total((cells.len() + ns_total) as u64);
    let loopback = Place {
        label: "loopback",
        run: &|c, i| lab.loopback(c, i),
    };
    run_grid(ctx, m, notes, "net", &cells, loopback, 0);
    let mut sum = NetSummary {
        loopback_runs: cells.len(),
        ..NetSummary::default()
    };
    let seg = ns_avail
        .and_then(|()| lab.hosts(scale.iter().map(|c| c.mode.receivers()).max().unwrap_or(3) + 1));
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
    let on_hosts = Place {
        label: "namespace hosts",
        run: &|c, i| seg.run(c, i),
    };
    let outs = run_grid(ctx, m, notes, "ns", &all, on_hosts, 100);
    let outs = &outs[cells.len()..];
    sum.ns_runs = cells.len() + scale.len();
    sum.ns_max_receivers = seg.count() - 1;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::Claims;
    use crate::study::NoProgress;
    use crate::Sweeps;

    /// Runs nothing: every cell "completes" at 10 Mbit/s divided by its receivers, on either
    /// place, and the hosts say how many were asked for.
    struct Fake;
    struct FakeHosts(usize);

    fn out(c: &NetCell) -> NetOut {
        NetOut {
            ok: true,
            seconds: 1.0,
            mbps: 10.0 / c.mode.receivers() as f64,
            calls: 1,
            repairs: 0,
            why: None,
        }
    }

    impl NetLab for Fake {
        fn loopback(&self, c: &NetCell, _: usize) -> NetOut {
            out(c)
        }
        fn namespaces(&self) -> Result<(), String> {
            Ok(())
        }
        fn hosts(&self, hosts: usize) -> Result<Box<dyn NetHosts + '_>, String> {
            Ok(Box::new(FakeHosts(hosts)))
        }
    }

    impl NetHosts for FakeHosts {
        fn count(&self) -> usize {
            self.0
        }
        fn run(&self, c: &NetCell, _: usize) -> NetOut {
            out(c)
        }
    }

    fn run_quick(lab: Option<&dyn NetLab>) -> (NetSummary, Measures, Vec<String>) {
        let claims = Claims::default();
        let ctx = RunCtx::new(Sweeps::Quick, &NoProgress, &claims);
        let (mut m, mut notes) = (Measures::new(), Vec::new());
        let sum = run_with(lab, &ctx, &mut m, &mut notes).unwrap();
        (sum, m, notes)
    }

    #[test]
    fn without_a_lab_both_places_are_skipped_with_the_reason() {
        let (sum, m, notes) = run_quick(None);
        assert_eq!((sum.loopback_runs, sum.ns_runs), (0, 0));
        assert_eq!(sum.loopback_skipped.as_deref(), Some(NO_LAB));
        assert_eq!(sum.ns_skipped.as_deref(), Some(NO_LAB));
        assert!(m.is_empty());
        assert!(notes
            .iter()
            .any(|n| n.contains("skipped") && n.contains(NO_LAB)));
    }

    #[test]
    fn a_lab_s_runs_are_recorded_on_both_places() {
        let (sum, m, _) = run_quick(Some(&Fake));
        let (cells, scale) = (grid(true).len(), scale_cells(true).len());
        assert_eq!((sum.loopback_runs, sum.ns_runs), (cells, cells + scale));
        assert_eq!(sum.ns_max_receivers, 10);
        assert!(sum.loopback_skipped.is_none() && sum.ns_skipped.is_none());
        for k in ["net.success_all", "ns.success_all"] {
            assert_eq!(m.get(k).and_then(|v| v.at(None)).map(|e| e.mean), Some(1.0));
        }
        // 10 receivers at a tenth of one receiver's rate.
        let ratio = m.get("ns.scale.n10_over_n1").and_then(|v| v.at(None));
        assert!((ratio.unwrap().mean - 0.1).abs() < 1e-12);
    }
}
