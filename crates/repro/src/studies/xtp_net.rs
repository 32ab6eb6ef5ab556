//! The real-network half of the `xtp` study: the same `rmcast_proto::xtp` agent driven by
//! `rmcast-net` over this machine's loopback interface (real UDP multicast sockets, one thread
//! per endpoint), the thesis's setting (block on acknowledgment per write, go-back-N, uncapped
//! WTIMER back-off, CTIMEOUT 60 s), 1,448-byte packets, loss injected on receive at one
//! receiver. No per-call cost is modelled: a call costs what this machine takes. Measures are
//! named `net.*`; every number here is wall-clock and varies from run to run.

use super::xtp::{msg_key, Mode};
use crate::stats::Estimate;
use crate::study::{RunCtx, StudyError};
use crate::Measures;
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
    pub message: u64,
    pub write: usize,
    pub mode: Mode,
    pub loss: (u32, f64),
}

/// Outcome of one real-network run.
#[derive(Debug, Clone)]
pub struct NetOut {
    pub ok: bool,
    pub seconds: f64,
    pub mbps: f64,
    pub why: Option<String>,
}

fn cells(quick: bool) -> Vec<NetCell> {
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
                    });
                }
            }
        }
    }
    v
}

fn payload(len: u64, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Run one cell on loopback; `index` picks a distinct group and port.
pub fn run_cell(c: &NetCell, index: usize) -> NetOut {
    let fail = |why: String| NetOut {
        ok: false,
        seconds: 0.0,
        mbps: 0.0,
        why: Some(why),
    };
    let dir: PathBuf =
        std::env::temp_dir().join(format!("rmcast-repro-xtp-{}-{index}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return fail(format!("temporary directory: {e}"));
    }
    let data = payload(c.message, 0x5eed ^ index as u64);
    let src = dir.join("message.bin");
    if let Err(e) = std::fs::write(&src, &data) {
        return fail(format!("writing the message: {e}"));
    }
    let port = 48_100 + (std::process::id() % 500) as u16 * 20 + (index % 20) as u16;
    let group: SocketAddr = match format!("239.255.92.{}:{port}", 1 + index % 250).parse() {
        Ok(g) => g,
        Err(e) => return fail(format!("group address: {e}")),
    };
    let n = c.mode.receivers();
    let mut handles = Vec::new();
    for r in 0..n {
        let out = dir.join(format!("out{r}"));
        if let Err(e) = std::fs::create_dir_all(&out) {
            return fail(format!("output directory: {e}"));
        }
        let mut rc = RecvConfig::new(
            group,
            Output::Dir {
                path: out,
                force: true,
            },
        );
        rc.sock.interface = Some("lo".into());
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
        handles.push(std::thread::spawn(move || {
            receiver::receive(rc, &mut receiver::NoObserver)
        }));
    }
    let mut sc = SendConfig::new(group);
    sc.sock.interface = Some("lo".into());
    sc.protocol = "xtp".into();
    sc.expect = Expect::Count(n);
    sc.join_wait = Duration::from_secs(20);
    sc.evict_after = Duration::from_secs(120);
    sc.datagram_size = rmcast_proto::xtp::MAX_DATA_ETHERNET + rmcast_wire_header();
    sc.rate_bps = 0;
    sc.write_size = Some(c.write);
    sc.xtp_thesis = true;
    sc.final_wait = Duration::from_secs(5);
    let sent = sender::send(sc, Source::Files(vec![src]), &mut NoObserver);
    let mut all_rx = true;
    for h in handles {
        match h.join() {
            Ok(Ok(rep)) => all_rx &= rep.success,
            _ => all_rx = false,
        }
    }
    let mut same = true;
    for r in 0..n {
        let got = std::fs::read(dir.join(format!("out{r}")).join("message.bin"));
        same &= got.map(|g| g == data).unwrap_or(false);
    }
    let _ = std::fs::remove_dir_all(&dir);
    match sent {
        Ok(rep) => {
            let ok = rep.all_completed && all_rx && same && rep.seconds > 0.0;
            NetOut {
                ok,
                seconds: rep.seconds,
                mbps: if rep.seconds > 0.0 {
                    c.message as f64 * 8.0 / rep.seconds / 1e6
                } else {
                    0.0
                },
                why: (!ok).then(|| {
                    format!(
                        "completed {}, receivers ok {all_rx}, contents equal {same}, {} failed writes",
                        rep.all_completed, rep.agent.messages_failed
                    )
                }),
            }
        }
        Err(e) => fail(e.to_string()),
    }
}

fn rmcast_wire_header() -> usize {
    rmcast_proto::xtp::XTP_HEADER_LEN
}

/// Run the real-network cells one after another (they share the machine) and record
/// `net.thesis.<msg>.<mode>.l<loss>.{mbps,success}` and `net.success_all`.
pub fn run(
    ctx: &RunCtx<'_>,
    m: &mut Measures,
    notes: &mut Vec<String>,
) -> Result<usize, StudyError> {
    let cells = cells(ctx.quick);
    ctx.progress().add_total(cells.len() as u64);
    let mut by: BTreeMap<(u64, Mode, u32), Vec<(usize, NetOut)>> = BTreeMap::new();
    let mut ok_all = 0usize;
    for (i, c) in cells.iter().enumerate() {
        let o = run_cell(c, i);
        ctx.progress().inc(1);
        if o.ok {
            ok_all += 1;
        } else {
            notes.push(format!(
                "net (loopback): {} B in {} B writes, {}, loss {}: failed — {}",
                c.message,
                c.write,
                c.mode.key(),
                c.loss.1,
                o.why.clone().unwrap_or_default()
            ));
        }
        by.entry((c.message, c.mode, c.loss.0))
            .or_default()
            .push((c.write, o));
    }
    for (&(msg, mode, loss), runs) in &by {
        let k = format!("net.thesis.{}.{}.l{loss}", msg_key(msg), mode.key());
        let thr: Vec<(f64, Estimate)> = runs
            .iter()
            .filter(|(_, o)| o.ok)
            .map(|(w, o)| (*w as f64, Estimate::exact(o.mbps)))
            .collect();
        let succ: Vec<(f64, Estimate)> = runs
            .iter()
            .map(|(w, o)| (*w as f64, Estimate::exact(if o.ok { 1.0 } else { 0.0 })))
            .collect();
        m.series(format!("{k}.mbps"), "Mbit/s", "write bytes", thr);
        m.series(format!("{k}.success"), "fraction", "write bytes", succ);
    }
    m.scalar(
        "net.success_all",
        "fraction",
        Estimate::exact(ok_all as f64 / cells.len().max(1) as f64),
    );
    Ok(cells.len())
}
