//! The sockets of the `xtp` study's real-network cells (`rmcast_repro::studies::xtp_net`):
//! the same `rmcast_proto::xtp` agent driven by `rmcast-net` over real UDP multicast sockets,
//! one thread per endpoint, on this host's loopback or on namespace hosts whose ports are one
//! emulated 10 Mb/s shared medium ([`LAN_BPS`], the thesis's Ethernet; `rmcast bench xtp`
//! runs them on the bridge at its own speed). [`Sockets`] is the study's [`NetLab`], which the
//! `rmcast` binary installs; [`run_cell`] is also what `rmcast bench xtp` runs.

use crate::emu::bed::shared_medium;
use crate::emu::Emulator;
use crate::netns::{self, Segment};
use rmcast_net::loss::{Direction, LossConfig};
use rmcast_net::receiver::{self, Output, RecvConfig};
use rmcast_net::sender::pseudo_random as payload;
use rmcast_net::sender::{self, Expect, NoObserver, SendConfig, Source};
use rmcast_repro::studies::xtp::{Mode, Setting};
use rmcast_repro::studies::xtp_net::{NetCell, NetHosts, NetLab, NetOut};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The study's real-network cells on this machine's sockets: loopback, and namespace hosts
/// when this process may make them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sockets;

/// The [`Sockets`] the `rmcast` binary installs.
pub static SOCKETS: Sockets = Sockets;

impl NetLab for Sockets {
    fn loopback(&self, c: &NetCell, index: usize) -> NetOut {
        run_cell(c, index, Place::Loopback)
    }

    fn namespaces(&self) -> Result<(), String> {
        netns::available()
    }

    fn hosts(&self, hosts: usize) -> Result<Box<dyn NetHosts + '_>, String> {
        let seg = Segment::create(hosts).map_err(|e| e.to_string())?;
        let medium = shared_medium(&seg, LAN_BPS).map_err(|e| e.to_string())?;
        Ok(Box::new(Lan {
            _medium: medium,
            seg,
        }))
    }
}

/// The thesis's LAN: a 10 Mb/s Ethernet segment (seed 002, chapter 3).
pub const LAN_BPS: u64 = 10_000_000;

/// Namespace hosts whose ports are one emulated shared medium of [`LAN_BPS`]: one host's
/// frame occupies the medium for all, as on the thesis's Ethernet (no collisions: a frame
/// waits for the medium instead of backing off; `crate::emu::bed::shared_medium`).
struct Lan {
    /// Dropped first: the emulator stops before the segment's namespaces go.
    _medium: Emulator,
    seg: Segment,
}

impl NetHosts for Lan {
    fn count(&self) -> usize {
        self.seg.hosts()
    }

    fn run(&self, c: &NetCell, index: usize) -> NetOut {
        run_cell(c, index, Place::Hosts(&self.seg))
    }
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
