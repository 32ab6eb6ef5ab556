//! `rmcast relay` between network namespaces: a sender on one bridge, receivers on two
//! others, and a namespace with an interface on each bridge running `rmcast relay` (this
//! build's binary) — or two levels of relays — with loss per Ethernet frame on every bridge
//! (nftables in the bridge's namespace, `netns::Segment::frame_loss`).
//!
//! * pgm through one relay hosting its network element: every receiver byte-exact, the
//!   relay confirmed NAKs (NCFs originated), held back duplicate NAKs and sent repairs only
//!   down the interfaces that asked;
//! * pgm through two levels of relays (a relay below a relay's downstream interface);
//! * a protocol without a network agent (`xtp`, acknowledged) forwarded unexamined.
//!
//! Needs Linux, root, iproute2 and nftables; otherwise each test prints why it did not run.

mod common;
mod relays;

use common::{explain, in_netns, json_of as json, strings};
use relays::*;

use rmcast_lab::netns::{self, Router, Segment};
use rmcast_proto::rng::AgentRng;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());

macro_rules! need_netns {
    () => {
        if let Some(why) = common::cannot_run_netns_nft() {
            eprintln!("skipped: relay tests: {why} (CI runs them as root)");
            return;
        }
    };
}

/// pgm through one relay with two downstream bridges of two receivers each; 5 % frame loss
/// upstream (every receiver then misses the packet: one NAK upstream is enough), 10 % on
/// each downstream bridge.
#[test]
fn pgm_through_a_network_element_relay() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let f = Fan::create(1);
    let group = "239.77.9.1:6400";
    let relays = vec![relay(&f.r, group, 2)];
    std::thread::sleep(Duration::from_millis(300));
    let (sent, rel) = transfer(&f.top, &f.leaves(), relays, group, 3_000_000, &[]);
    let s = session(&rel[0]);
    eprintln!("relay: {s}");
    eprintln!(
        "sender: {} repairs; frames dropped {} / {} / {}",
        sent["agent"]["repairs_sent"],
        f.top.frames_dropped(),
        f.d1.frames_dropped(),
        f.d2.frames_dropped()
    );
    assert_eq!(s["protocol"], "pgm");
    assert_eq!(s["agent"], true);
    assert_eq!(s["receivers"], 4);
    assert_eq!(s["ended"], "end");
    assert!(count(&rel[0], "originated") > 0, "NCFs confirm NAKs: {s}");
    assert!(
        count(&rel[0], "up_consumed") > 0,
        "duplicate NAKs held back: {s}"
    );
    assert!(
        count(&rel[0], "down_subcast") > 0,
        "repairs sent only where asked: {s}"
    );
}

/// pgm through two levels of relays: top bridge (sender) → relay A → middle bridge (one
/// receiver and relay B) → relay B → bottom bridge (two receivers); 5 % frame loss on every
/// bridge.
#[test]
fn pgm_through_two_levels_of_relays() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let c = Chain::create();
    let group = "239.77.9.2:6410";
    let relays = c.relays(group);
    let (_, rel) = transfer(&c.top, &c.leaves(), relays, group, 2_000_000, &[]);
    eprintln!(
        "relay A: {}\nrelay B: {}",
        session(&rel[0]),
        session(&rel[1])
    );
    // A serves the middle receiver and relay B (which stands for the bottom two).
    assert_eq!(session(&rel[0])["receivers"], 3);
    assert_eq!(session(&rel[1])["receivers"], 2);
    for r in &rel {
        assert_eq!(session(r)["agent"], true);
        assert!(count(r, "originated") > 0, "{}", session(r));
    }
}

/// pgm through two levels of relays, the link of the receiver below the first relay down
/// for 200 ms early in the transfer (hundreds of its 1,389 packets lost at once): it NAKs
/// them together, and the NAK waits that run out together while the repairs come back must
/// not drive its timers to their 1-s cap (the NAK back-off is per loss). With one back-off
/// per expired loss the outage cost 2.3-4.4 s of the sender's 5-s final wait and sometimes
/// all of it. Every receiver byte-exact.
#[test]
fn pgm_receiver_link_down_behind_relays_recovers() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let c = Chain::create();
    let group = "239.77.9.12:6510";
    let relays = c.relays(group);
    let (sent, rel) = std::thread::scope(|sc| {
        sc.spawn(|| {
            // Once data flows through the middle bridge (its loss rule dropped 10 frames,
            // about 200 forwarded), however long the start took.
            let until = Instant::now() + DEADLINE;
            while c.mid.frames_dropped() < 10 && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            c.mid.link_down(0, true).unwrap();
            std::thread::sleep(Duration::from_millis(200));
            c.mid.link_down(0, false).unwrap();
        });
        transfer(&c.top, &c.leaves(), relays, group, 2_000_000, &[])
    });
    eprintln!("sender: {} s; {}", sent["seconds"], sent["receivers"]);
    for r in &rel {
        eprintln!("relay: {}", session(r));
    }
}

/// csp through one relay hosting region 0's local exchange, four receivers on two downstream
/// bridges; 5 % frame loss upstream, 10 % on each downstream bridge. The endpoints' statuses
/// stop at the relay (consumed), the exchange's consolidated status goes up (originated),
/// the source repairs, every file byte-exact.
#[test]
fn csp_through_a_local_exchange_relay() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let f = Fan::create(1);
    let group = "239.77.9.8:6470";
    let relays = vec![relay_with(&f.r, group, 2, &["--region", "0"])];
    std::thread::sleep(Duration::from_millis(300));
    let (sent, rel) = transfer_in(
        &f.top,
        &f.leaves(),
        Recv {
            regions: &[0, 0, 0, 0],
            ..Recv::default()
        },
        relays,
        group,
        2_000_000,
        &["--protocol", "csp"],
    );
    let s = session(&rel[0]);
    eprintln!("relay: {s}\nsender: {}", sent["agent"]);
    assert_eq!(s["protocol"], "csp");
    assert_eq!(s["agent"], true);
    assert_eq!(s["receivers"], 4);
    assert_eq!(s["ended"], "end");
    assert!(
        count(&rel[0], "up_consumed") > 0,
        "statuses consolidated: {s}"
    );
    assert!(
        count(&rel[0], "originated") > 0,
        "consolidated statuses: {s}"
    );
    assert!(
        sent["agent"]["repairs_sent"].as_u64().unwrap_or(0) > 0,
        "the source repairs: {}",
        sent["agent"]
    );
}

/// dsp with `--designated relay`: the relay is region 0's designated receiver, a separate
/// host, between the sender and 4 receivers on two bridges (5 % frame loss upstream, 10 % on
/// each downstream bridge). The members' statuses stop at the relay; the relay reports to
/// the sender and re-multicasts what its members lack on the region's local group, down
/// both bridges.
#[test]
fn dsp_with_a_designated_relay() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let f = Fan::create(1);
    let group = "239.77.9.12:6510";
    let relays = vec![relay_with(&f.r, group, 2, &["--region", "0"])];
    std::thread::sleep(Duration::from_millis(300));
    let (sent, rel) = transfer_in(
        &f.top,
        &f.leaves(),
        Recv {
            regions: &[0, 0, 0, 0],
            ..Recv::default()
        },
        relays,
        group,
        2_000_000,
        &["--protocol", "dsp", "--designated", "relay"],
    );
    let s = session(&rel[0]);
    eprintln!("relay: {s}\nsender: {}", sent["agent"]);
    assert_eq!(s["protocol"], "dsp");
    assert_eq!(s["agent"], true);
    assert_eq!(s["receivers"], 4);
    assert_eq!(s["local_group"], "239.77.9.12:6511");
    assert!(count(&rel[0], "up_consumed") > 0, "members' statuses: {s}");
    assert!(
        count(&rel[0], "originated") > count(&rel[0], "repairs_originated"),
        "its status: {s}"
    );
    assert!(
        count(&rel[0], "repairs_originated") > 0,
        "local re-multicasts: {s}"
    );
    for r in sent["receivers"].as_array().into_iter().flatten() {
        assert_eq!(r["role"], "member", "{r}");
    }
}

/// cp through two levels: top bridge (sender) → relay A (no region: forwards) → middle
/// bridge → relays B (region 1) and C (region 2), each with two downstream bridges of one
/// receiver; 5 % frame loss on every bridge. The exchanges assign local re-multicasts,
/// which B and C carry between their downstream bridges.
#[test]
fn cp_through_two_levels_of_relays() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t = TwoLevels::create(1);
    let group = "239.77.9.9:6480";
    let relays = t.relays(group);
    std::thread::sleep(Duration::from_millis(300));
    let (sent, rel) = transfer_in(
        &t.top,
        &t.leaves(),
        Recv {
            regions: &[1, 1, 2, 2],
            ..Recv::default()
        },
        relays,
        group,
        2_000_000,
        &["--protocol", "cp"],
    );
    for r in &rel {
        eprintln!("relay: {}", session(r));
    }
    eprintln!("sender: {}", sent["agent"]);
    for r in sent["receivers"].as_array().into_iter().flatten() {
        eprintln!("receiver: {r}");
        // An endpoint's own local re-multicast, looped back, is not a stranger's datagram.
        assert_eq!(r["rejected"], 0, "{r}");
    }
    assert_eq!(session(&rel[0])["agent"], false, "A forwards");
    for r in &rel[1..] {
        let s = session(r);
        assert_eq!(s["protocol"], "cp");
        assert_eq!(s["agent"], true);
        assert_eq!(s["receivers"], 2);
        assert!(count(r, "local_carried") > 0, "local repairs carried: {s}");
    }
}

/// Multi-level prmp through two levels: top bridge (sender and one receiver without a region,
/// which the sender polls itself) → relay A (no region: forwards) → middle bridge → relays B
/// (region 1) and C (region 2), each with two downstream bridges of one receiver; 5 % frame
/// loss on every bridge. B and C are their regions' polling parents: they take the sender's
/// data and polls (nothing of them goes down), answer the sender, and send their children
/// their own data, polls and repairs.
#[test]
fn prmp_through_two_levels_of_relays() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t = TwoLevels::create(2);
    let group = "239.77.9.11:6500";
    let relays = t.relays(group);
    std::thread::sleep(Duration::from_millis(300));
    let mut leaves = t.leaves();
    leaves.push((&t.top, 1));
    let (sent, rel) = transfer_in(
        &t.top,
        &leaves,
        Recv {
            regions: &[1, 1, 2, 2],
            ..Recv::default()
        },
        relays,
        group,
        2_000_000,
        &["--protocol", "prmp"],
    );
    for r in &rel {
        eprintln!("relay: {}", session(r));
    }
    eprintln!("sender: {}", sent["agent"]);
    // A relay whose backlog is full holds its parent's data unconsumed rather than dropping
    // it, so the sender repairs what the bridges lost (5 % a bridge; 270 repairs for 1,426
    // packets seen), not the windows a full relay refused (2,418 before).
    let agent = &sent["agent"];
    let (data, repairs) = (agent["data_sent"].as_u64(), agent["repairs_sent"].as_u64());
    assert!(
        repairs.unwrap() <= data.unwrap() / 2,
        "sender repairs: {agent}"
    );
    let role = |node: u64| {
        sent["receivers"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["node"] == node))
            .map(|r| r["role"].clone())
    };
    for node in 1001..=1004 {
        assert_eq!(role(node), Some("child of a relay".into()), "{sent}");
    }
    assert_eq!(
        role(1005),
        Some(Value::Null),
        "polled by the sender: {sent}"
    );
    assert_eq!(session(&rel[0])["agent"], false, "A forwards");
    for r in &rel[1..] {
        let s = session(r);
        assert_eq!(s["protocol"], "prmp");
        assert_eq!(s["agent"], true, "{s}");
        assert_eq!(s["receivers"], 2);
        // The sender's data and polls stop at the relay; its own go down.
        assert!(count(r, "down_consumed") > 1000, "{s}");
        assert!(count(r, "originated") > 1000, "{s}");
        assert!(count(r, "up_consumed") > 0, "its children's responses: {s}");
        assert!(
            count(r, "repairs_originated") > 0,
            "it repairs its children: {s}"
        );
    }
}

/// csp behind a relay whose region's receiver 1001 is killed (SIGKILL) halfway: the sender
/// evicts it and announces it evicted, the local exchange stops waiting for it (its stale
/// status would hold the pessimistic merge, and the whole transfer, back for good), the
/// sender exits 1 and the other two receivers complete byte-exact.
#[test]
fn a_killed_csp_receiver_is_dropped_by_its_local_exchange() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let v =
        killed_receiver_behind_a_relay("csp", "239.77.9.10:6490", &["--region", "3"], Some(3), 13);
    assert_eq!(session(&v)["agent"], true);
}

/// xtp (no network agent) through a relay: forwarded unexamined, every receiver byte-exact.
#[test]
fn a_protocol_without_a_network_agent_is_forwarded() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let top = Segment::create(1).unwrap();
    let d1 = Segment::create(2).unwrap();
    let r = Router::create(&[&top, &d1], 254).unwrap();
    d1.frame_loss(0.05, None).unwrap();
    let group = "239.77.9.3:6420";
    let relays = vec![relay(&r, group, 1)];
    std::thread::sleep(Duration::from_millis(300));
    let leaves = [(&d1, 0), (&d1, 1)];
    let (_, rel) = transfer(
        &top,
        &leaves,
        relays,
        group,
        1_000_000,
        &["--protocol", "xtp"],
    );
    let s = session(&rel[0]);
    assert_eq!(s["protocol"], "xtp");
    assert_eq!(s["agent"], false);
    assert_eq!(count(&rel[0], "originated"), 0);
    assert_eq!(count(&rel[0], "up_consumed"), 0);
}

/// lms through two levels of relays, each hosting LMS's router (links are receivers: the
/// replier link leads to one receiver): top bridge (sender) → relay A → middle bridge (one
/// receiver and relay B) → relay B → bottom bridge (two receivers); 5 % frame loss on every
/// bridge. Requests turn at the relays (DREQs originated) and every file is byte-exact.
#[test]
fn lms_through_two_levels_of_relays() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let c = Chain::create();
    let group = "239.77.9.4:6430";
    let relays = c.relays(group);
    let (sent, rel) = transfer(
        &c.top,
        &c.leaves(),
        relays,
        group,
        2_000_000,
        &["--protocol", "lms"],
    );
    eprintln!(
        "relay A: {}\nrelay B: {}\nsender repairs {}",
        session(&rel[0]),
        session(&rel[1]),
        sent["agent"]["repairs_sent"]
    );
    assert_eq!(session(&rel[0])["receivers"], 3);
    assert_eq!(session(&rel[1])["receivers"], 2);
    for r in &rel {
        assert_eq!(session(r)["protocol"], "lms");
        assert_eq!(session(r)["agent"], true);
    }
    // Requests from the bottom receivers other than B's replier turn at B; the middle
    // receiver's and B's replier's turn at A (its replier link is the first to join).
    let dreqs = count(&rel[0], "originated") + count(&rel[1], "originated");
    assert!(dreqs > 0, "requests turned at a relay (DREQs): {rel:?}");
    assert!(count(&rel[0], "up_consumed") + count(&rel[1], "up_consumed") > 0);
}

/// Random datagrams (half with an rmcast-looking header) flooded from a stranger on the
/// sender's bridge at the group and at every UDP port of the relay during a pgm transfer
/// through it: every receiver byte-exact, the relay counts what it refused.
#[test]
fn a_flood_at_the_relay_is_refused() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let top = Segment::create(2).unwrap();
    let d1 = Segment::create(2).unwrap();
    let r = Router::create(&[&top, &d1], 254).unwrap();
    d1.frame_loss(0.05, None).unwrap();
    let group: std::net::SocketAddr = "239.77.9.5:6440".parse().unwrap();
    let relays = vec![relay(&r, &group.to_string(), 1)];
    std::thread::sleep(Duration::from_millis(300));
    let ports = common::udp_ports_in(r.name());
    assert!(ports.len() >= 2, "the relay's sockets: {ports:?}");
    let relay_at = std::net::Ipv4Addr::new(10, 93, top.addr(0).octets()[2], 254);
    let stop = AtomicBool::new(false);
    let flooded = AtomicU64::new(0);
    let leaves = [(&d1, 0), (&d1, 1)];
    let (_, rel) = std::thread::scope(|sc| {
        sc.spawn(|| {
            top.enter(1).unwrap();
            let sock = std::net::UdpSocket::bind((top.addr(1), 0)).unwrap();
            let mut dests: Vec<std::net::SocketAddr> = ports
                .iter()
                .map(|p| std::net::SocketAddr::from((relay_at, *p)))
                .collect();
            dests.push(group);
            let mut rng = AgentRng::from_seed(9);
            let header = [b'R', b'M', 1, 1, 1, 0, 0, 0];
            while !stop.load(Ordering::Relaxed) {
                for d in &dests {
                    let len = rng.range_inclusive(1, 1472) as usize;
                    let mut dgram = common::pseudo_random(len, rng.range_inclusive(0, 1 << 40));
                    if rng.chance(0.5) && len >= header.len() {
                        dgram[..header.len()].copy_from_slice(&header);
                    }
                    if sock.send_to(&dgram, d).is_ok() {
                        flooded.fetch_add(1, Ordering::Relaxed);
                    }
                }
                std::thread::sleep(Duration::from_micros(300));
            }
        });
        let out = transfer(&top, &leaves, relays, &group.to_string(), 1_000_000, &[]);
        stop.store(true, Ordering::Relaxed);
        out
    });
    let rejected = rel[0]["rejected"].as_u64().unwrap_or(0);
    eprintln!(
        "flooded {} datagrams; the relay rejected {rejected}",
        flooded.into_inner()
    );
    assert!(rejected > 0, "{}", rel[0]);
    assert_eq!(session(&rel[0])["receivers"], 2, "{}", rel[0]);
}

/// A protocol a relay cannot carry (dsp: its regions repair on local groups) is refused at
/// its first ANNOUNCE, said on stderr and in the report; `--once` then ends with status 1.
#[test]
fn a_relay_refuses_dsp_and_says_why() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let top = Segment::create(1).unwrap();
    let d1 = Segment::create(1).unwrap();
    let r = Router::create(&[&top, &d1], 254).unwrap();
    let group = "239.77.9.6:6450";
    let mut rel = relay(&r, group, 1);
    std::thread::sleep(Duration::from_millis(300));
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("s.bin");
    std::fs::write(&file, common::pseudo_random(10_000, 3)).unwrap();
    let mut args = strings(&["send", "--group", group, "--interface", netns::IFACE]);
    args.extend(strings(&[
        "--receivers",
        "1",
        "--protocol",
        "dsp",
        "--quiet",
    ]));
    args.push(file.display().to_string());
    let _sender = in_netns(&top.host(0), &args);
    let o = rel
        .finish(Instant::now() + Duration::from_secs(30))
        .expect("the relay did not end after refusing");
    assert_eq!(o.status.code(), Some(1), "{}", explain(&o));
    let v = json(&o);
    assert_eq!(session(&v)["ended"], "refused", "{v}");
    assert_eq!(session(&v)["protocol"], "dsp", "{v}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("dsp cannot pass a relay"), "{err}");
}

/// lms behind a relay whose replier (the receiver with the lowest node id) is killed
/// (SIGKILL) halfway: the relay moves the replier link to a live receiver once the dead one
/// has been silent for a second, the sender evicts it and exits 1, and the other receivers
/// complete byte-exact (without the move every request turned at the relay would go to the
/// dead replier).
#[test]
fn a_killed_lms_replier_is_replaced_at_the_relay() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let v = killed_receiver_behind_a_relay("lms", "239.77.9.7:6460", &[], None, 11);
    assert!(count(&v, "role_moves") >= 1, "{}", session(&v));
}

/// srm through a relay: members on the sender's bridge, on two downstream bridges, 5 % frame
/// loss everywhere. The relay carries the members' own multicast (requests, repairs, session
/// messages) between its interfaces: up from the member's proxy, down from its own sockets.
#[test]
fn srm_members_on_three_bridges_through_a_relay() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let top = Segment::create(2).unwrap();
    let (d1, d2) = (Segment::create(2).unwrap(), Segment::create(1).unwrap());
    let r = Router::create(&[&top, &d1, &d2], 254).unwrap();
    for s in [&top, &d1, &d2] {
        s.frame_loss(0.05, None).unwrap();
    }
    let group = "239.77.9.8:6470";
    let relays = vec![relay(&r, group, 2)];
    std::thread::sleep(Duration::from_millis(300));
    let leaves = [(&top, 1), (&d1, 0), (&d1, 1), (&d2, 0)];
    let (sent, rel) = transfer(
        &top,
        &leaves,
        relays,
        group,
        2_000_000,
        &["--protocol", "srm"],
    );
    let s = session(&rel[0]);
    eprintln!(
        "relay: {s}\nsender repairs {}",
        sent["agent"]["repairs_sent"]
    );
    assert_eq!(s["protocol"], "srm");
    assert_eq!(s["receivers"], 3);
    assert!(count(&rel[0], "up_forwarded") > 0, "{s}");
}

/// A key file (32 random bytes, owner-only) in `dir`.
fn key_file(dir: &std::path::Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("rmcast.key");
    std::fs::write(&path, common::pseudo_random(32, 0x6b6579)).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path.display().to_string()
}

/// An encrypted pgm session through two levels of relays holding the key: the relays open
/// what comes in for their network elements, forward it sealed as it came and seal the NCFs
/// they originate; the receivers open everything they are sent (none refused) and every
/// file is byte-exact.
#[test]
fn an_encrypted_pgm_session_through_two_levels_of_keyed_relays() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let keys = tempfile::tempdir().unwrap();
    let key = key_file(keys.path());
    let keyed = ["--key-file", key.as_str(), "--encrypt"];
    let c = Chain::create();
    let group = "239.77.9.9:6480";
    let relays = vec![
        relay_with(&c.a, group, 1, &keyed),
        relay_with(&c.b, group, 1, &keyed),
    ];
    std::thread::sleep(Duration::from_millis(300));
    let recv = Recv {
        extra: &keyed,
        ..Recv::default()
    };
    let t = transfer_all(&c.top, &c.leaves(), recv, relays, group, 2_000_000, &keyed);
    for r in &t.relays {
        let s = session(r);
        assert_eq!(s["protocol"], "pgm", "{r}");
        assert_eq!(s["agent"], true, "{r}");
        assert!(count(r, "originated") > 0, "NCFs sealed and sent: {r}");
        assert_eq!(r["rejected_sealed"], 0, "{r}");
    }
    few_refused(&t);
}

/// Next to nothing refused by the receivers' keys: a datagram overtaken by a few newer ones
/// of its source opens (a relay reads its sockets in turn). With a window of counter values
/// (64 µs of sealing time) the receivers below two relays refused 2.5-5.5 % of what they
/// received; with the newest 1,024 counters, 0-0.6 % in 10 runs: exact copies of datagrams
/// the wire carried once (dumpcap on every port of the middle bridge), refused rightly as
/// replays; where the second copy arises was not found (none on one bridge without relays).
fn few_refused(t: &Transfer) {
    let sum = |vs: &[Value], k: &str| -> u64 {
        vs.iter()
            .map(|v| v["driver"][k].as_u64().unwrap_or(0))
            .sum()
    };
    let (refused, got) = (
        sum(&t.receivers, "rejected_auth"),
        sum(&t.receivers, "datagrams_received"),
    );
    let drivers: Vec<&Value> = t.receivers.iter().map(|v| &v["driver"]).collect();
    assert!(
        got > 0 && refused * 50 < got,
        "{refused} of {got}: {drivers:#?}"
    );
    for r in &t.relays {
        assert!(r["rejected_auth"].as_u64().unwrap_or(0) * 50 < got, "{r}");
    }
}

/// srm, authenticated, through a relay holding the key: members on the sender's bridge and
/// on two downstream bridges, 5 % frame loss everywhere. A member's multicast reaches its
/// siblings twice, directly (refused: they know it by its proxy's address) and from the
/// relay; the direct copy must not make the relay's, the same sealed bytes, a replay.
#[test]
fn authenticated_srm_members_through_a_keyed_relay() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let keys = tempfile::tempdir().unwrap();
    let key = key_file(keys.path());
    let keyed = ["--key-file", key.as_str()];
    let top = Segment::create(2).unwrap();
    let (d1, d2) = (Segment::create(2).unwrap(), Segment::create(1).unwrap());
    let r = Router::create(&[&top, &d1, &d2], 254).unwrap();
    for s in [&top, &d1, &d2] {
        s.frame_loss(0.05, None).unwrap();
    }
    let group = "239.77.9.10:6490";
    let relays = vec![relay_with(&r, group, 2, &keyed)];
    std::thread::sleep(Duration::from_millis(300));
    let leaves = [(&top, 1), (&d1, 0), (&d1, 1), (&d2, 0)];
    let recv = Recv {
        extra: &keyed,
        ..Recv::default()
    };
    let mut send = vec!["--protocol", "srm"];
    send.extend(keyed);
    let t = transfer_all(&top, &leaves, recv, relays, group, 2_000_000, &send);
    let rel = &t.relays[0];
    assert_eq!(session(rel)["protocol"], "srm", "{rel}");
    assert!(count(rel, "up_forwarded") > 0, "{rel}");
    // Taking the direct copy (and a member's own multicast looped back) for a replay of the
    // relay's cost the receivers below it 7-8 % of what they received.
    few_refused(&t);
}

/// A keyed relay does not serve a session whose ANNOUNCE was sealed far from its own clock,
/// as a receiver would not join it (a dead session's ANNOUNCE replayed, or clocks apart):
/// the same pgm ANNOUNCE, sealed with the relay's key, is refused and counted when sealed
/// two minutes ahead (its `--wait` then ends saying why) and served when sealed now.
#[test]
fn a_keyed_relay_refuses_a_stale_announce() {
    use rmcast_net::secure::{unix_micros, Keys, Sealer};
    use rmcast_wire::session::{self, Phase};
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let top = Segment::create(1).unwrap();
    let d1 = Segment::create(1).unwrap();
    let r = Router::create(&[&top, &d1], 254).unwrap();
    let group = "239.77.9.7:6452";
    let dir = tempfile::tempdir().unwrap();
    let key = key_file(dir.path());
    let keys = Keys::from_file(std::path::Path::new(&key), false).unwrap();
    let announce = rmcast_net::endpoint::session_packet(
        0x5ea1_0001,
        0x0bad_0061,
        session::Message::Announce {
            protocol: rmcast_wire::Family::Pgm as u8,
            phase: Phase::Gathering,
            security: Keys::announced_security(Some(&keys)),
            ack_delay_us: 0,
            window: 64,
            ack_timeout_us: 20_000,
            members: &[],
            params: &[],
        },
    )
    .unwrap();
    for (ahead_s, served) in [(120u64, false), (0, true)] {
        let mut args = strings(&["relay", "--group", group, "--upstream", "eth0"]);
        args.extend(strings(&["--downstream", "eth1", "--key-file", &key]));
        args.extend(strings(&["--once", "--json", "--wait", "3", "--idle", "1"]));
        let mut rel = in_netns(r.name(), &args);
        std::thread::sleep(Duration::from_millis(300));
        let mut sealer = Sealer::new(keys.clone(), unix_micros() + ahead_s * 1_000_000);
        let g: std::net::SocketAddr = group.parse().unwrap();
        std::thread::scope(|sc| {
            sc.spawn(|| {
                top.enter(0).unwrap();
                let sock = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
                for _ in 0..20 {
                    let mut sealed = Vec::new();
                    sealer.seal(&announce, &mut sealed);
                    sock.send_to(&sealed, g).unwrap();
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
        });
        let o = rel
            .finish(Instant::now() + Duration::from_secs(20))
            .expect("the relay did not end");
        let err = String::from_utf8_lossy(&o.stderr);
        if served {
            let v = json(&o);
            assert_eq!(session(&v)["sender"], 0x0bad_0061, "{v}\n{err}");
            assert_eq!(v["rejected_stale"], 0, "{v}");
            assert_eq!(v["rejected_auth"], 0, "{v}");
        } else {
            assert_eq!(o.status.code(), Some(1), "{}", explain(&o));
            assert!(err.contains("ANNOUNCE refused: sealed 120 s away"), "{err}");
            assert!(err.contains("no session announced"), "{err}");
            assert!(err.contains("too far from this host's clock"), "{err}");
        }
    }
}

/// What every test of a relay killed mid-transfer checks: the standby took over, every
/// receiver followed the session to it once and the sender took each back there.
fn fell_back(t: &relays::Transfer, after_kill: f64) {
    let s = session(&t.relays[0]);
    eprintln!(
        "standby: {s}\nsender: {}\n{after_kill:.1}s from the kill to the sender's end",
        t.sender["agent"]
    );
    assert!(s["took_over_after_s"].as_f64().is_some(), "{s}");
    assert!(count(&t.relays[0], "standby_held") > 0, "{s}");
    assert_eq!(s["ended"], "end");
    for r in &t.receivers {
        assert_eq!(r["moves"], 1, "{r}");
    }
    for r in t.sender["receivers"].as_array().into_iter().flatten() {
        eprintln!("receiver: {r}");
        assert_eq!(r["outcome"], "completed", "{r}");
        assert_eq!(r["moves"], 1, "{r}");
    }
}

/// pgm through a relay hosting its network element, killed (SIGKILL) a third of the way
/// into a 6-MB transfer; a standby relay on a second router between the same bridges takes
/// over after 1 s of its silence, the receivers follow the session there and JOIN again,
/// the sender takes them back at the standby's proxies: every receiver byte-exact, the
/// sender exits 0.
#[test]
fn a_relay_killed_mid_transfer_pgm() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (t, after) = relays::relay_killed_midway("239.77.9.20:6600", &[], None, &[], &[], 21);
    fell_back(&t, after);
    assert_eq!(session(&t.relays[0])["agent"], true);
}

/// csp through a relay hosting region 0's local exchange, killed a third of the way in; a
/// standby hosting the same region's exchange takes over (the sender takes the exchange's
/// consolidated status from its new address), every receiver byte-exact.
#[test]
fn a_relay_killed_mid_transfer_csp() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (t, after) = relays::relay_killed_midway(
        "239.77.9.21:6610",
        &["--region", "0"],
        Some(0),
        &["--protocol", "csp"],
        &[],
        22,
    );
    fell_back(&t, after);
    assert_eq!(session(&t.relays[0])["agent"], true);
}

/// cp, as [`a_relay_killed_mid_transfer_csp`].
#[test]
fn a_relay_killed_mid_transfer_cp() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (t, after) = relays::relay_killed_midway(
        "239.77.9.22:6620",
        &["--region", "0"],
        Some(0),
        &["--protocol", "cp"],
        &[],
        23,
    );
    fell_back(&t, after);
    assert_eq!(session(&t.relays[0])["agent"], true);
}

/// Multi-level prmp: region 0's relay killed a third of the way in. The relays give custody
/// up (they acknowledge what their children hold, the sender keeps the rest), so the standby
/// hosting region 0's relay takes over: it asks the region's receivers where they are,
/// resumes them there and gets what they lack from the sender; every receiver byte-exact.
#[test]
fn a_relay_killed_mid_transfer_prmp() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (t, after) = relays::relay_killed_midway(
        "239.77.9.24:6640",
        &["--region", "0"],
        Some(0),
        &["--protocol", "prmp"],
        &[],
        25,
    );
    fell_back(&t, after);
    assert_eq!(session(&t.relays[0])["agent"], true);
}

/// dsp with `--designated relay`: region 0's designated relay killed a third of the way in.
/// The designated relays give custody up (they report to the sender no more than their
/// members hold, the sender keeps the rest), so the standby hosting the region's designated
/// receiver takes over: it waits for the members' statuses, starts where the lowest is and
/// gets what they lack from the sender; every receiver byte-exact.
#[test]
fn a_relay_killed_mid_transfer_dsp() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (t, after) = relays::relay_killed_midway(
        "239.77.9.26:6660",
        &["--region", "0"],
        Some(0),
        &["--protocol", "dsp", "--designated", "relay"],
        &[],
        27,
    );
    fell_back(&t, after);
    assert_eq!(session(&t.relays[0])["agent"], true);
}

/// An encrypted pgm session whose relay is killed a third of the way in: the standby (with
/// the key) takes over, the receivers follow the sender's sealed running ANNOUNCE, fresh and
/// authenticated, to it, and the sender takes each back from its sealed JOIN or REPORT;
/// every receiver byte-exact, next to nothing refused.
#[test]
fn a_relay_killed_mid_transfer_keyed() {
    need_netns!();
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let keys = tempfile::tempdir().unwrap();
    let key = key_file(keys.path());
    let keyed = ["--key-file", key.as_str(), "--encrypt"];
    let (t, after) = relays::relay_killed_midway("239.77.9.25:6650", &[], None, &[], &keyed, 26);
    fell_back(&t, after);
    assert_eq!(t.relays[0]["rejected_sealed"], 0, "{}", t.relays[0]);
    assert_eq!(t.relays[0]["rejected_auth"], 0, "{}", t.relays[0]);
}
