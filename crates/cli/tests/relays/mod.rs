//! The relay tests' topologies and transfers (`netns_relay`): namespaces with bridges,
//! `rmcast relay` in router namespaces, receivers on the leaves and a sender on top.

use crate::common::{self, explain, in_netns, json_of as json, strings, Proc};
use rmcast_lab::netns::{self, Router, Segment};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a transfer's sender may take.
pub const DEADLINE: Duration = Duration::from_secs(180);

/// `rmcast relay --once` in router `r` from `eth0` to `eth1..=ethN`.
pub fn relay(r: &Router, group: &str, downstream: usize) -> Proc {
    relay_with(r, group, downstream, &[])
}

/// [`relay`] with more arguments (`--region R`).
pub fn relay_with(r: &Router, group: &str, downstream: usize, extra: &[&str]) -> Proc {
    let mut args = strings(&["relay", "--group", group, "--upstream", "eth0"]);
    args.extend(strings(extra));
    for k in 1..=downstream {
        args.extend(strings(&["--downstream", &format!("eth{k}")]));
    }
    args.extend(strings(&[
        "--once", "--json", "--wait", "60", "--idle", "10",
    ]));
    in_netns(r.name(), &args)
}

/// One relay router between the sender's bridge (`top_hosts` hosts, 5 % frame loss) and two
/// downstream bridges of two hosts each (10 % frame loss on each).
pub struct Fan {
    // Fields drop in order: the router's namespace goes before the bridges it joins.
    pub r: Router,
    pub top: Segment,
    pub d1: Segment,
    pub d2: Segment,
}

impl Fan {
    pub fn create(top_hosts: usize) -> Self {
        let top = Segment::create(top_hosts).unwrap();
        let (d1, d2) = (Segment::create(2).unwrap(), Segment::create(2).unwrap());
        let r = Router::create(&[&top, &d1, &d2], 254).unwrap();
        top.frame_loss(0.05, None).unwrap();
        d1.frame_loss(0.10, None).unwrap();
        d2.frame_loss(0.10, None).unwrap();
        Fan { top, d1, d2, r }
    }

    /// The four downstream hosts.
    pub fn leaves(&self) -> [(&Segment, usize); 4] {
        [(&self.d1, 0), (&self.d1, 1), (&self.d2, 0), (&self.d2, 1)]
    }
}

/// Two levels of routers: the sender's bridge (`top_hosts` hosts) → router A → a middle
/// bridge → routers B and C, each above two bridges of one host; 5 % frame loss on every
/// bridge.
pub struct TwoLevels {
    // Fields drop in order: the routers' namespaces go before the bridges they join.
    pub routers: [Router; 3],
    pub top: Segment,
    pub leaves: Vec<Segment>,
    _mid: Segment,
}

impl TwoLevels {
    pub fn create(top_hosts: usize) -> Self {
        let top = Segment::create(top_hosts).unwrap();
        let mid = Segment::create(0).unwrap();
        let leaves: Vec<Segment> = (0..4).map(|_| Segment::create(1).unwrap()).collect();
        let a = Router::create(&[&top, &mid], 254).unwrap();
        let b = Router::create(&[&mid, &leaves[0], &leaves[1]], 253).unwrap();
        let c = Router::create(&[&mid, &leaves[2], &leaves[3]], 252).unwrap();
        for s in [&top, &mid].into_iter().chain(leaves.iter()) {
            s.frame_loss(0.05, None).unwrap();
        }
        TwoLevels {
            top,
            leaves,
            routers: [a, b, c],
            _mid: mid,
        }
    }

    /// Relay A forwarding unexamined, B and C the relays of regions 1 and 2.
    pub fn relays(&self, group: &str) -> Vec<Proc> {
        let [a, b, c] = &self.routers;
        vec![
            relay(a, group, 1),
            relay_with(b, group, 2, &["--region", "1"]),
            relay_with(c, group, 2, &["--region", "2"]),
        ]
    }

    /// The host on each bottom bridge: regions 1, 1, 2, 2.
    pub fn leaves(&self) -> Vec<(&Segment, usize)> {
        self.leaves.iter().map(|s| (s, 0)).collect()
    }
}

/// A chain of two relays: the sender's bridge (one host) → router A → the middle bridge (one
/// receiver, and router B) → router B → the bottom bridge (two receivers); 5 % frame loss on
/// every bridge.
pub struct Chain {
    // Fields drop in order: the routers' namespaces go before the bridges they join.
    pub a: Router,
    pub b: Router,
    pub top: Segment,
    pub mid: Segment,
    pub bottom: Segment,
}

impl Chain {
    pub fn create() -> Self {
        let top = Segment::create(1).unwrap();
        let mid = Segment::create(1).unwrap();
        let bottom = Segment::create(2).unwrap();
        let a = Router::create(&[&top, &mid], 254).unwrap();
        let b = Router::create(&[&mid, &bottom], 253).unwrap();
        for s in [&top, &mid, &bottom] {
            s.frame_loss(0.05, None).unwrap();
        }
        Chain {
            a,
            b,
            top,
            mid,
            bottom,
        }
    }

    /// Relays A and B (each with one downstream interface), given time to start.
    pub fn relays(&self, group: &str) -> Vec<Proc> {
        let r = vec![relay(&self.a, group, 1), relay(&self.b, group, 1)];
        std::thread::sleep(Duration::from_millis(300));
        r
    }

    /// The receiver on the middle bridge, then the two on the bottom one.
    pub fn leaves(&self) -> [(&Segment, usize); 3] {
        [(&self.mid, 0), (&self.bottom, 0), (&self.bottom, 1)]
    }
}

/// A receiver on host `h` of `seg` writing into `dir`, of region `region` (`--region`: dsp,
/// csp, cp), with more arguments `extra`.
pub fn receiver_in(
    seg: &Segment,
    h: usize,
    node: u32,
    group: &str,
    dir: &Path,
    region: Option<u16>,
    extra: &[&str],
) -> Proc {
    std::fs::create_dir_all(dir).unwrap();
    let mut args = strings(&["recv", "--group", group, "--interface", netns::IFACE]);
    if let Some(r) = region {
        args.extend(strings(&["--region", &r.to_string()]));
    }
    args.extend(strings(extra));
    args.extend(strings(&[
        "--node-id",
        &node.to_string(),
        "--json",
        "--quiet",
    ]));
    args.extend(strings(&[
        "--wait",
        "60",
        "--dir",
        &dir.display().to_string(),
    ]));
    in_netns(&seg.host(h), &args)
}

/// Receivers on hosts of `leaves` (segment, host) and a sender on host 0 of `top`, with
/// `relays` already running; every receiver must hold `len` bytes byte-exact. Returns the
/// sender's and every relay's JSON.
pub fn transfer(
    top: &Segment,
    leaves: &[(&Segment, usize)],
    relays: Vec<Proc>,
    group: &str,
    len: usize,
    send_extra: &[&str],
) -> (Value, Vec<Value>) {
    transfer_in(top, leaves, Recv::default(), relays, group, len, send_extra)
}

/// What the receivers of [`transfer_in`] are started with besides the defaults.
#[derive(Default, Clone, Copy)]
pub struct Recv<'a> {
    /// Leaf `i`'s region (`--region`; none past the end).
    pub regions: &'a [u16],
    /// More arguments for every receiver (`--key-file`).
    pub extra: &'a [&'a str],
}

/// [`transfer`] with the receivers started as `recv` says.
pub fn transfer_in(
    top: &Segment,
    leaves: &[(&Segment, usize)],
    recv: Recv<'_>,
    relays: Vec<Proc>,
    group: &str,
    len: usize,
    send_extra: &[&str],
) -> (Value, Vec<Value>) {
    let t = transfer_all(top, leaves, recv, relays, group, len, send_extra);
    (t.sender, t.relays)
}

/// Every side's JSON report of a transfer.
pub struct Transfer {
    pub sender: Value,
    pub relays: Vec<Value>,
    /// Leaf `i`'s receiver's.
    pub receivers: Vec<Value>,
}

/// [`transfer_in`], with the receivers' reports too.
pub fn transfer_all(
    top: &Segment,
    leaves: &[(&Segment, usize)],
    recv: Recv<'_>,
    relays: Vec<Proc>,
    group: &str,
    len: usize,
    send_extra: &[&str],
) -> Transfer {
    let work = tempfile::tempdir().unwrap();
    let data = common::pseudo_random(len, 7);
    let file = work.path().join("r.bin");
    std::fs::write(&file, &data).unwrap();
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut rx = Vec::new();
    for (i, (seg, h)) in leaves.iter().enumerate() {
        let dir = work.path().join(format!("r{i}"));
        let region = recv.regions.get(i).copied();
        rx.push(receiver_in(
            seg,
            *h,
            1001 + i as u32,
            group,
            &dir,
            region,
            recv.extra,
        ));
        dirs.push(dir);
    }
    std::thread::sleep(Duration::from_millis(500));
    let n = leaves.len().to_string();
    let mut args = strings(&["send", "--group", group, "--interface", netns::IFACE]);
    args.extend(strings(&["--receivers", &n, "--json", "--quiet"]));
    args.extend(strings(&["--datagram-size", "1472", "--rate", "40M"]));
    args.extend(strings(send_extra));
    through_relays(&mut args, send_extra);
    args.push(file.display().to_string());
    let s = in_netns(&top.host(0), &args)
        .finish(Instant::now() + DEADLINE)
        .expect("the sender did not finish");
    let outs: Vec<_> = relays
        .into_iter()
        .map(|mut r| {
            r.finish(Instant::now() + Duration::from_secs(30))
                .expect("the relay did not end after the session's END")
        })
        .collect();
    // Every receiver's own account, whatever the sender said: a failure names what each
    // side saw.
    let rx_outs: Vec<Option<std::process::Output>> = rx
        .into_iter()
        .map(|mut p| p.finish(Instant::now() + Duration::from_secs(30)))
        .collect();
    let receivers_said = || -> Vec<String> {
        rx_outs
            .iter()
            .enumerate()
            .map(|(i, o)| match o {
                Some(o) => format!(
                    "receiver {i}: {}; stdout {}",
                    explain(o),
                    String::from_utf8_lossy(&o.stdout)
                ),
                None => format!("receiver {i}: did not end"),
            })
            .collect()
    };
    let mut relays_said = Vec::new();
    for o in &outs {
        let all: Vec<String> = outs.iter().map(explain).collect();
        assert!(
            o.status.success(),
            "relay: {}; sender: {}; every relay: {all:#?}; receivers: {:#?}",
            explain(o),
            explain(&s),
            receivers_said()
        );
        relays_said.push(json(o));
    }
    assert!(
        s.status.success(),
        "sender: {}; stdout {}; relays {relays_said:?}; receivers: {:#?}",
        explain(&s),
        String::from_utf8_lossy(&s.stdout),
        receivers_said()
    );
    let receivers = byte_exact(&rx_outs, &dirs, "r.bin", &data);
    Transfer {
        sender: json(&s),
        relays: relays_said,
        receivers,
    }
}

/// Every receiver's JSON, once each ended successfully with `name` in its folder of `dirs`
/// byte-exact `data`.
fn byte_exact(
    outs: &[Option<std::process::Output>],
    dirs: &[PathBuf],
    name: &str,
    data: &[u8],
) -> Vec<Value> {
    let mut receivers = Vec::new();
    for (i, o) in outs.iter().enumerate() {
        let o = o
            .as_ref()
            .unwrap_or_else(|| panic!("receiver {i} did not end"));
        assert!(o.status.success(), "receiver {i}: {}", explain(o));
        let got = std::fs::read(dirs[i].join(name)).unwrap();
        assert!(got == data, "receiver {i}: not byte-exact");
        receivers.push(json(o));
    }
    receivers
}

pub fn session(v: &Value) -> &Value {
    &v["sessions"][0]
}

pub fn count(v: &Value, key: &str) -> u64 {
    session(v)[key].as_u64().unwrap_or(0)
}

/// Three receivers on hosts 0-2 of `seg` (region `region`, node ids 1001-1003) waiting for
/// `f.bin`, `len` pseudo-random bytes from `seed`, given time to start.
pub struct Three {
    pub work: tempfile::TempDir,
    pub data: Vec<u8>,
    pub file: PathBuf,
    pub dirs: Vec<PathBuf>,
    pub rx: Vec<Proc>,
}

impl Three {
    pub fn start(
        seg: &Segment,
        group: &str,
        region: Option<u16>,
        extra: &[&str],
        len: usize,
        seed: u64,
    ) -> Self {
        let work = tempfile::tempdir().unwrap();
        let data = common::pseudo_random(len, seed);
        let file = work.path().join("f.bin");
        std::fs::write(&file, &data).unwrap();
        let dirs: Vec<PathBuf> = (0..3).map(|i| work.path().join(format!("r{i}"))).collect();
        let rx: Vec<Proc> = (0..3)
            .map(|i| receiver_in(seg, i, 1001 + i as u32, group, &dirs[i], region, extra))
            .collect();
        std::thread::sleep(Duration::from_millis(500));
        Three {
            work,
            data,
            file,
            dirs,
            rx,
        }
    }
}

/// `rmcast send`'s arguments for `file` to [`Three`] receivers at 20 Mbit/s, with `extra`.
fn send_to_three(group: &str, file: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = strings(&["send", "--group", group, "--interface", netns::IFACE]);
    args.extend(strings(&["--receivers", "3", "--json", "--quiet"]));
    args.extend(strings(&["--datagram-size", "1472", "--rate", "20M"]));
    args.extend(strings(extra));
    through_relays(&mut args, extra);
    args.push(file.display().to_string());
    args
}

/// pgm's RFC 3208 packets (its default on sockets) go on the group's port + 1, which no
/// relay carries: through relays a pgm sender (`extra` names no other protocol) runs in
/// rmcast's header.
fn through_relays(args: &mut Vec<String>, extra: &[&str]) {
    let protocol = extra
        .windows(2)
        .find(|w| w[0] == "--protocol")
        .map_or("pgm", |w| w[1]);
    if protocol == "pgm" {
        args.push("--rmcast-header".into());
    }
}

/// A 4-MB `protocol` transfer through one relay router (`relay_extra`: `--region R`) to three
/// receivers on one downstream bridge (10 % frame loss; receivers of region `region`),
/// receiver 1001 killed (SIGKILL) once it holds 2 MB: the sender must evict it and exit 1,
/// the other two must complete byte-exact. Returns the relay's JSON.
pub fn killed_receiver_behind_a_relay(
    protocol: &str,
    group: &str,
    relay_extra: &[&str],
    region: Option<u16>,
    seed: u64,
) -> Value {
    let top = Segment::create(1).unwrap();
    let d1 = Segment::create(3).unwrap();
    let r = Router::create(&[&top, &d1], 254).unwrap();
    d1.frame_loss(0.10, None).unwrap();
    let mut rel = relay_with(&r, group, 1, relay_extra);
    std::thread::sleep(Duration::from_millis(300));
    let Three {
        work: _work,
        data,
        file,
        dirs,
        mut rx,
    } = Three::start(&d1, group, region, &[], 4_000_000, seed);
    let args = send_to_three(
        group,
        &file,
        &["--protocol", protocol, "--evict-after", "2"],
    );
    let victim_pid = rx[0].id().unwrap();
    let (held, s) = std::thread::scope(|sc| {
        let watch =
            sc.spawn(|| common::kill_when_holding(&dirs[0], victim_pid, 2_000_000, DEADLINE));
        let s = in_netns(&top.host(0), &args).finish(Instant::now() + DEADLINE);
        (watch.join().unwrap(), s)
    });
    let s = s.expect("the sender did not finish");
    assert!(
        held.is_some_and(|h| h < 4_000_000),
        "the victim was not killed midway"
    );
    let o = rel
        .finish(Instant::now() + Duration::from_secs(30))
        .expect("the relay did not end");
    let v = json(&o);
    eprintln!("relay: {}", session(&v));
    assert_eq!(s.status.code(), Some(1), "sender: {}", explain(&s));
    let sent = json(&s);
    let outcome = |node: u64| {
        sent["receivers"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["node"] == node))
            .map(|r| r["outcome"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(outcome(1001).as_deref(), Some("evicted"), "{sent}");
    for i in 1..3 {
        assert_eq!(
            outcome(1001 + i as u64).as_deref(),
            Some("completed"),
            "{sent}"
        );
        let o = rx[i]
            .finish(Instant::now() + Duration::from_secs(30))
            .unwrap_or_else(|| panic!("receiver {i} did not end"));
        assert!(o.status.success(), "receiver {i}: {}", explain(&o));
        assert!(std::fs::read(dirs[i].join("f.bin")).unwrap() == data);
    }
    v
}

/// Every side's end after [`relay_killed_midway_raw`].
pub struct Killed {
    pub sender: std::process::Output,
    pub standby: std::process::Output,
    pub receivers: Vec<Option<std::process::Output>>,
    pub dirs: Vec<PathBuf>,
    pub data: Vec<u8>,
    /// Seconds from the kill to the sender's end.
    pub after_kill: f64,
    _work: tempfile::TempDir,
}

/// Two relay routers between the sender's bridge and one bridge of three receivers (5 %
/// frame loss on it): A (`.254`) runs `rmcast relay` with `relay_extra`, B (`.253`) the same
/// with `--standby 1`. A 6-MB transfer at 20 Mbit/s (`send_extra`: the protocol) to
/// receivers of region `region`, every side started with `keyed` too (`--key-file`); A is
/// killed (SIGKILL) once receiver 0 holds 2 MB. Returns how every side ended.
pub fn relay_killed_midway_raw(
    group: &str,
    relay_extra: &[&str],
    region: Option<u16>,
    send_extra: &[&str],
    keyed: &[&str],
    seed: u64,
) -> Killed {
    let top = Segment::create(1).unwrap();
    let d = Segment::create(3).unwrap();
    let a = Router::create(&[&top, &d], 254).unwrap();
    let b = Router::create(&[&top, &d], 253).unwrap();
    d.frame_loss(0.05, None).unwrap();
    let relay_args = [relay_extra, keyed].concat();
    let active = relay_with(&a, group, 1, &relay_args);
    let mut standby_args = relay_args.clone();
    standby_args.extend(["--standby", "1"]);
    let mut standby = relay_with(&b, group, 1, &standby_args);
    std::thread::sleep(Duration::from_millis(300));
    let Three {
        work,
        data,
        file,
        dirs,
        mut rx,
    } = Three::start(&d, group, region, keyed, 6_000_000, seed);
    let args = send_to_three(group, &file, &[send_extra, keyed].concat());
    let victim = active.id().unwrap();
    let (held, s, killed_at) = std::thread::scope(|sc| {
        let watch = sc.spawn(|| {
            let held = common::kill_when_holding(&dirs[0], victim, 2_000_000, DEADLINE);
            (held, Instant::now())
        });
        let s = in_netns(&top.host(0), &args).finish(Instant::now() + DEADLINE);
        let (held, at) = watch.join().unwrap();
        (held, s, at)
    });
    let s = s.expect("the sender did not finish");
    let after_kill = killed_at.elapsed().as_secs_f64();
    assert!(
        held.is_some_and(|h| h < 6_000_000),
        "the active relay was not killed midway"
    );
    drop(active);
    let b_out = standby
        .finish(Instant::now() + Duration::from_secs(30))
        .expect("the standby relay did not end after the session's END");
    let receivers: Vec<_> = rx
        .iter_mut()
        .map(|p| p.finish(Instant::now() + Duration::from_secs(30)))
        .collect();
    Killed {
        sender: s,
        standby: b_out,
        receivers,
        dirs,
        data,
        after_kill,
        _work: work,
    }
}

/// [`relay_killed_midway_raw`], where every receiver must complete byte-exact and the sender
/// exit 0. Returns every side's JSON (B's as the only relay) and the seconds from the kill to
/// the end of the transfer.
pub fn relay_killed_midway(
    group: &str,
    relay_extra: &[&str],
    region: Option<u16>,
    send_extra: &[&str],
    keyed: &[&str],
    seed: u64,
) -> (Transfer, f64) {
    let k = relay_killed_midway_raw(group, relay_extra, region, send_extra, keyed, seed);
    let said: Vec<String> = k
        .receivers
        .iter()
        .map(|o| {
            o.as_ref().map_or("did not end".into(), |o| {
                format!(
                    "{}; stdout {}",
                    explain(o),
                    String::from_utf8_lossy(&o.stdout)
                )
            })
        })
        .collect();
    assert!(
        k.sender.status.success(),
        "sender: {}; stdout {}; standby: {}; receivers: {said:#?}",
        explain(&k.sender),
        String::from_utf8_lossy(&k.sender.stdout),
        explain(&k.standby)
    );
    assert!(
        k.standby.status.success(),
        "standby: {}",
        explain(&k.standby)
    );
    let receivers = byte_exact(&k.receivers, &k.dirs, "f.bin", &k.data);
    let t = Transfer {
        sender: json(&k.sender),
        relays: vec![json(&k.standby)],
        receivers,
    };
    (t, k.after_kill)
}
