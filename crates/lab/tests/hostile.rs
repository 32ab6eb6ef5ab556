//! An adversary on the LAN: a live sender and receivers, each on a namespace host of its own
//! on one bridge when run as root (else on the loopback interface; see `peer/mod.rs`), and a
//! hostile peer that sends well-formed but malicious session packets (forged ANNOUNCEs with
//! bad parameters, wrong session ids, forged JOIN/REPORT/END under stolen node ids). In every
//! case the transfer completes byte-exact, no endpoint ends early, nothing is written outside
//! the receiver's directory and the sender's summary is true; the hostile packets are counted
//! as rejected. Nothing here is skipped: without root the parties share loopback.
//! `RMCAST_ADVERSARY_RUNS=N` runs the attacks issue 64 lists (stolen-id JOIN, REPORT and END
//! from the peer's port, a NAK flood) N times each. The peer's toolkit
//! is `peer/mod.rs`; the attacks of issue 64 are in `adversary.rs`.

mod peer;

use peer::*;
use rmcast_net::endpoint::session_packet;
use rmcast_net::sender::{self, Expect, NoObserver, Source};
use rmcast_wire::session::{self, DspEntry, DspParams, DspRole, Phase};
use rmcast_wire::{Family, Message, Packet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// An ANNOUNCE as a sender would send it.
#[allow(clippy::too_many_arguments)]
fn announce(
    session: u32,
    node: u32,
    protocol: Family,
    phase: Phase,
    window: u16,
    members: &[u32],
    params: &[u8],
) -> Vec<u8> {
    raw_announce(
        session,
        node,
        protocol as u8,
        phase,
        window,
        members,
        params,
    )
}

fn raw_announce(
    session: u32,
    node: u32,
    protocol: u8,
    phase: Phase,
    window: u16,
    members: &[u32],
    params: &[u8],
) -> Vec<u8> {
    session_packet(
        session,
        node,
        session::Message::Announce {
            protocol,
            phase,
            security: 0,
            ack_delay_us: 0,
            window,
            ack_timeout_us: 5_000,
            members: &session::encode_members(members),
            params,
        },
    )
    .unwrap()
}

/// A gathering ANNOUNCE of node 7 for `protocol` announcing the receivers' random ACK delay
/// bound and ACK timeout.
fn gathering_with_timers(
    session: u32,
    protocol: Family,
    window: u16,
    ack_delay_us: u32,
    ack_timeout_us: u32,
) -> Vec<u8> {
    session_packet(
        session,
        7,
        session::Message::Announce {
            protocol: protocol as u8,
            phase: Phase::Gathering,
            security: 0,
            ack_delay_us,
            window,
            ack_timeout_us,
            members: &[],
            params: &[],
        },
    )
    .unwrap()
}

/// Valid `dsp` parameters naming `node` in region 0 with `designated` as its designated
/// receiver, with the given status interval bounds (µs).
fn dsp_params(node: u32, designated: Option<u32>, status_us: (u32, u32), port: u16) -> Vec<u8> {
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut entries = vec![DspEntry {
        node,
        region: 0,
        role: DspRole::Member,
        addr,
    }];
    if let Some(d) = designated {
        entries.push(DspEntry {
            node: d,
            region: 0,
            role: DspRole::Designated,
            addr,
        });
    }
    DspParams {
        status_min_us: status_us.0,
        status_max_us: status_us.1,
        local_rtd_us: 1_000,
        r_f_milli: 1_200,
        entries,
    }
    .encode()
    .unwrap()
}

// --------------------------------------------------------------------------- receivers

/// Before the real sender starts, the group carries ANNOUNCEs whose parameters do not
/// validate: an unknown protocol byte, `bap` and `prmp` with window 0, `bap` with a window
/// beyond the spec's, non-UTF-8 `xtp` parameters in a running session, `dsp` parameters that do
/// not decode, a `dsp` status interval of 0 (a status every nanosecond), `dsp` with no
/// designated receiver, a `dsp` status every 2 µs, a huge ACK delay, a `bap` ACK timeout of
/// hours, `rra` and `ff` with window 0, `srm` with a member list that does not decode. Each
/// names the receiver as admitted, so a receiver
/// that trusted it would build its agent from it. Each is counted and ignored; the real
/// session then completes.
#[test]
fn forged_announces_with_bad_parameters_are_ignored() {
    let port = 47301;
    let g = group(port);
    let me = 0x0bad_0001;
    let rx = start_receivers(g, &[me], |_| {});
    let h = hostile_socket(g);
    let bad: Vec<Vec<u8>> = vec![
        raw_announce(11, 7, 99, Phase::Gathering, 16, &[me], &[]),
        announce(12, 7, Family::Bap, Phase::Running, 0, &[me], &[]),
        announce(13, 7, Family::Prmp, Phase::Running, 0, &[me], &[]),
        announce(14, 7, Family::Bap, Phase::Gathering, u16::MAX, &[me], &[]),
        announce(
            15,
            7,
            Family::Xtp,
            Phase::Running,
            64,
            &[],
            &[1, 0xff, 0xfe],
        ),
        announce(16, 7, Family::Tree, Phase::Running, 64, &[me], &[1, 2, 3]),
        announce(
            17,
            7,
            Family::Tree,
            Phase::Running,
            64,
            &[me],
            &dsp_params(me, Some(8), (0, 0), port),
        ),
        announce(
            18,
            7,
            Family::Tree,
            Phase::Running,
            64,
            &[me],
            &dsp_params(me, None, (4_000, 6_000), port),
        ),
        // A status every 2 µs: within the simulator's status bounds, not the sockets'.
        announce(
            20,
            7,
            Family::Tree,
            Phase::Running,
            64,
            &[me],
            &dsp_params(me, Some(me), (1, 3), port),
        ),
        // bap's ACK-delay timer at a quarter of a 4.7-hour retransmission timeout.
        gathering_with_timers(21, Family::Bap, 16, 0, u32::MAX),
        gathering_with_timers(19, Family::Saw, 0, u32::MAX, 5_000),
        // The protocols that joined the socket driver last: rra and ff with window 0, srm
        // with a member list that does not decode.
        announce(22, 7, Family::Rra, Phase::Running, 0, &[me], &[]),
        announce(23, 7, Family::Ff, Phase::Running, 0, &[me], &[]),
        announce(24, 7, Family::Srm, Phase::Running, 0, &[me], &[1, 2, 3]),
    ];
    // The receiver is up when its group socket is; then every forged ANNOUNCE, twice.
    thread::sleep(Duration::from_millis(300));
    for _ in 0..2 {
        for b in &bad {
            h.send_to(b, g).unwrap();
            thread::sleep(Duration::from_millis(20));
        }
    }
    thread::sleep(Duration::from_millis(200));
    let live = finish(rx, send_config(g, 1), 1_000_000, 1);
    check(&live);
    let refused = live.recv[0].driver.rejected_announce;
    assert!(
        refused >= bad.len() as u64,
        "{refused} ANNOUNCEs refused of {} forged",
        bad.len()
    );
}

/// Wrong session ids: a receiver told `--session` ignores a valid gathering ANNOUNCE of
/// another session (which would otherwise capture it), and a forged running ANNOUNCE of its
/// own session that does not admit it (sent before the real sender starts) does not end it
/// as `not-admitted`.
#[test]
fn wrong_session_ids_and_a_forged_running_announce_do_not_capture_or_end_a_receiver() {
    let port = 47302;
    let g = group(port);
    let session = 0x5e55_1001;
    let me = 0x0bad_0002;
    let rx = start_receivers(g, &[me], |c| c.session = Some(session));
    let h = hostile_socket(g);
    thread::sleep(Duration::from_millis(300));
    for _ in 0..3 {
        h.send_to(
            &announce(0x0dd_5e55, 7, Family::Saw, Phase::Gathering, 0, &[], &[]),
            g,
        )
        .unwrap();
        h.send_to(
            &announce(session, 7, Family::Saw, Phase::Running, 0, &[1, 2], &[]),
            g,
        )
        .unwrap();
        thread::sleep(Duration::from_millis(30));
    }
    thread::sleep(Duration::from_millis(100));
    let mut cfg = send_config(g, 1);
    cfg.session = Some(session);
    let live = finish(rx, cfg, 1_000_000, 2);
    check(&live);
    assert!(live.recv[0].driver.rejected_stranger >= 3);
}

/// A forged END under the real sender's node id and session, from another port of the same
/// host, while the transfer runs: the receivers ignore it (it does not come from the sender's
/// socket) and finish.
#[test]
fn a_forged_end_with_the_senders_node_id_does_not_end_receivers() {
    repeat("END from the peer's port", |_| {
        a_forged_end_with_the_senders_node_id_does_not_end_receivers_once()
    });
}

fn a_forged_end_with_the_senders_node_id_does_not_end_receivers_once() {
    let port = 47303;
    let g = group(port);
    let rx = start_receivers(g, &[0x0bad_0003, 0x0bad_0004], |_| {});
    let sniff = sniffer(g);
    let h = hostile_socket(g);
    let learner = thread::spawn(move || learn_session(&sniff));
    let mut cfg = send_config(g, 2);
    cfg.rate_bps = 40_000_000;
    let adversary = thread::spawn(move || {
        let (session, node, _) = learner.join().unwrap().expect("no session seen");
        let end = session_packet(session, node, session::Message::End { outcomes: &[] }).unwrap();
        Adversary::spawn(move || {
            let _ = h.send_to(&end, g);
        })
    });
    let src_dir = tempfile::tempdir().unwrap();
    let src = src_dir.path().join("payload.bin");
    let data = payload(&src, 4_000_000, 3);
    enter(SENDER);
    let send = sender::send(cfg, Source::Files(vec![src]), &mut NoObserver).unwrap();
    let sent = adversary.join().unwrap().stop();
    assert!(sent > 10, "{sent} forged ENDs");
    let live = collect(rx, send, data);
    check(&live);
    assert!(live.recv.iter().all(|r| r.driver.rejected_stranger > 0));
}

// ------------------------------------------------------------------------------ sender

/// Forged JOINs and REPORT(Complete, 0 bytes) under a real receiver's node id, from another
/// port of the same host, throughout the session: the member keeps its address (its data and
/// the summary's are its own), and its outcome comes from its own reports only.
#[test]
fn stolen_node_ids_cannot_redirect_a_member_or_fake_its_outcome() {
    repeat("stolen-id JOIN and REPORT", |_| {
        stolen_node_ids_cannot_redirect_a_member_or_fake_its_outcome_once()
    });
}

fn stolen_node_ids_cannot_redirect_a_member_or_fake_its_outcome_once() {
    let port = 47311;
    let g = group(port);
    let victims = [0x0bad_0011, 0x0bad_0012];
    let rx = start_receivers(g, &victims, |_| {});
    let mut cfg = send_config(g, 2);
    cfg.rate_bps = 40_000_000;
    let (live, hostile, rounds) = under_attack(rx, cfg, 3_000_000, 11, move |h, s, to| {
        for v in victims {
            let _ = h.send_to(&join(s, v), to);
            let _ = h.send_to(&report_complete(s, v, 0), to);
        }
    });
    assert!(rounds > 10, "{rounds} rounds of forged packets");
    check(&live);
    for r in &live.send.receivers {
        assert_ne!(r.addr, hostile.to_string(), "{:#?}", live.send);
    }
    assert!(live.send.driver.rejected_stranger > 0);
}

/// `xtp --unicast` in discover mode: JOINs of further (made-up) receivers while it gathers
/// are ignored, not fatal; the one receiver gets the file.
#[test]
fn a_second_join_under_unicast_is_not_fatal() {
    let port = 47312;
    let g = group(port);
    let rx = start_receivers(g, &[0x0bad_0021], |_| {});
    let mut cfg = send_config(g, 1);
    cfg.protocol = "xtp".into();
    cfg.unicast = true;
    cfg.expect = Expect::Discover(Duration::from_millis(1500));
    let (live, _, rounds) = under_attack(rx, cfg, 1_000_000, 12, |h, s, to| {
        let _ = h.send_to(&join(s, 0x0bad_0f00 + (rand_u32() & 0xff)), to);
    });
    assert!(rounds > 10);
    check(&live);
}

/// A flood of JOINs under made-up node ids in discover mode stops at `--max-receivers`: the
/// member list (and the ANNOUNCE listing it) stays bounded, the real receiver completes, and
/// the summary tells the truth about the others (evicted: they never answered). The JOINs
/// beyond it are refused, at most 200 a second.
#[test]
fn a_join_flood_stops_at_max_receivers() {
    let port = 47313;
    let g = group(port);
    let real = 0x0bad_0031;
    let rx = start_receivers(g, &[real], |_| {});
    let mut cfg = send_config(g, 1);
    cfg.expect = Expect::Discover(Duration::from_millis(1500));
    cfg.max_receivers = 4;
    cfg.evict_after = Duration::from_millis(2500);
    let ends = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counted = ends.clone();
    let began = Instant::now();
    let (live, _, rounds) = under_attack(rx, cfg, 500_000, 13, move |h, s, to| {
        for _ in 0..20 {
            let _ = h.send_to(&join(s, 0x1000_0000 | (rand_u32() >> 4)), to);
        }
        // The refusals that came back (the sender answers a JOIN it does not admit).
        h.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 2048];
        while let Ok(n) = h.recv(&mut buf) {
            if matches!(peek(&buf[..n]), Some((_, Some("end")))) {
                counted.fetch_add(1, Ordering::Relaxed);
            }
        }
        h.set_nonblocking(false).unwrap();
    });
    // Refused, but not one answer per JOIN: at most 20 refusals per 100 ms.
    let (ends, tenths) = (
        ends.load(Ordering::Relaxed),
        began.elapsed().as_millis() / 100 + 1,
    );
    assert!(ends > 0, "no refusal");
    assert!(
        ends <= 20 * tenths as u64 && ends * 5 < rounds * 20,
        "{ends} refusals in {tenths} tenths of a second for {} JOINs",
        rounds * 20
    );
    let s = &live.send;
    assert!(s.receivers.len() <= 4, "{} members", s.receivers.len());
    let mine = s.receivers.iter().find(|r| r.node == real).unwrap();
    assert_eq!(mine.outcome, "completed");
    assert!(s
        .receivers
        .iter()
        .filter(|r| r.node != real)
        .all(|r| r.outcome == "evicted"));
    assert!(!s.all_completed, "the made-up receivers did not complete");
    assert!(live.recv[0].success);
    let got = std::fs::read(out_dir(live.dir.path(), 0).join("payload.bin")).unwrap();
    assert!(got == live.data);
}

/// A member that floods the `pgm` source with valid NAKs for packets it holds (a receiver gone
/// bad, or a spoofed member address without a key): every NAK of one packet within the
/// source's hold-off is answered once, so the flood costs a bounded number of repairs instead
/// of one per NAK. The real receivers complete byte-exact; the flooding member, which never
/// reports, is not counted as complete.
#[test]
fn a_member_s_nak_flood_does_not_become_a_repair_flood() {
    repeat("NAK flood", |_| {
        a_member_s_nak_flood_does_not_become_a_repair_flood_once()
    });
}

fn a_member_s_nak_flood_does_not_become_a_repair_flood_once() {
    let port = 47314;
    let g = group(port);
    let real = [0x0bad_0051, 0x0bad_0052];
    let bad = 0x0bad_0053;
    let rx = start_receivers(g, &real, |_| {});
    let mut cfg = send_config(g, 3);
    cfg.protocol = "pgm".into();
    cfg.rate_bps = 40_000_000;
    let naks = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let sent = naks.clone();
    let (live, _, rounds) = under_attack(rx, cfg, 3_000_000, 14, move |h, s, to| {
        let _ = h.send_to(&join(s, bad), to);
        let env = rmcast_wire::Envelope {
            session: s,
            source: bad,
            flags: 0,
        };
        for seq in 0..25 {
            let nak = Message::Pgm(rmcast_wire::pgm::Message::Nak { seq });
            if h.send_to(&Packet::to_vec(env, &nak).unwrap(), to).is_ok() {
                sent.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    let naks = naks.load(Ordering::Relaxed);
    let s = &live.send;
    assert!(rounds > 100 && naks > 2_500, "{rounds} rounds, {naks} NAKs");
    for (r, rep) in live.recv.iter().enumerate() {
        assert_eq!(rep.outcome, "completed", "{rep:#?}");
        let got = std::fs::read(out_dir(live.dir.path(), r).join("payload.bin")).unwrap();
        assert!(got == live.data, "receiver {r}: the file differs");
    }
    // The flooder is never silent, so it is not evicted: it ends `unconfirmed` when
    // --final-wait runs out after the last data, and the transfer does not count as complete.
    let flooder = s.receivers.iter().find(|r| r.node == bad).unwrap();
    assert_eq!(flooder.outcome, "unconfirmed", "{s:#?}");
    assert!(!s.all_completed);
    // At most one repair per packet per 20-ms hold-off (25 packets: 1,250 per second of flood,
    // plus the real receivers' few), against one per NAK (~12,500 per second) without it.
    assert!(
        s.agent.repairs_sent * 4 < naks,
        "{} repairs for {naks} NAKs",
        s.agent.repairs_sent
    );
}

fn rand_u32() -> u32 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(Instant::now()) as u32
}

// -------------------------------------------------------------------------------- keys

/// With a key, forged JOIN and REPORT(Complete) under stolen node ids and a forged END under
/// the sender's node id carry no valid tag: they are counted as rejected by authentication,
/// and the transfer and its summary are the real ones.
#[test]
fn with_a_key_forged_session_packets_are_counted_as_rejected() {
    repeat("forged JOIN, REPORT, END, --key-file", |_| {
        with_a_key_forged_session_packets_are_counted_as_rejected_once()
    });
}

fn with_a_key_forged_session_packets_are_counted_as_rejected_once() {
    let port = 47321;
    let g = group(port);
    let victims = [0x0bad_0041, 0x0bad_0042];
    let rx = start_receivers(g, &victims, |c| c.keys = Some(test_key()));
    let mut cfg = send_config(g, 2);
    cfg.keys = Some(test_key());
    cfg.rate_bps = 40_000_000;
    let (live, _, rounds) = under_attack(rx, cfg, 2_000_000, 21, move |h, s, to| {
        for v in victims {
            let _ = h.send_to(&join(s, v), to);
            let _ = h.send_to(&report_complete(s, v, 0), to);
        }
        let end = session_packet(s, 1, session::Message::End { outcomes: &[] }).unwrap();
        let _ = h.send_to(&end, g);
    });
    assert!(rounds > 10);
    check(&live);
    assert!(live.send.driver.rejected_auth > 0, "{:?}", live.send.driver);
    assert!(live.recv.iter().all(|r| r.driver.rejected_auth > 0));
}

/// Replays. During a keyed session every packet on the group is captured and sent again
/// once: the receivers refuse the copies (replay window) and finish. After the session, its
/// captured ANNOUNCE replayed to a fresh receiver (freshness window 1 s here, 30 s by
/// default) is refused: the receiver does not join the dead session.
#[test]
fn replayed_packets_are_refused_within_and_across_processes() {
    let port = 47322;
    let g = group(port);
    let rx = start_receivers(g, &[0x0bad_0051], |c| c.keys = Some(test_key()));
    let sniff = sniffer(g);
    let h = hostile_socket(g);
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    let replayer = thread::spawn(move || {
        let mut seen = std::collections::HashSet::new();
        let mut announce: Option<Vec<u8>> = None;
        let mut buf = vec![0u8; 65_536];
        let mut replayed = 0u64;
        while !s2.load(Ordering::Relaxed) {
            let Ok((n, _)) = sniff.recv_from(&mut buf) else {
                continue;
            };
            let d = buf[..n].to_vec();
            if d.len() > 4 && d[3] == Family::Session as u8 && d[4] == 1 && announce.is_none() {
                announce = Some(d.clone());
            }
            if seen.insert(blake3::hash(&d)) {
                let _ = h.send_to(&d, g);
                replayed += 1;
            }
        }
        (announce, replayed, h)
    });
    let mut cfg = send_config(g, 1);
    cfg.keys = Some(test_key());
    let live = finish(rx, cfg, 1_000_000, 22);
    stop.store(true, Ordering::Relaxed);
    let (announce, replayed, h) = replayer.join().unwrap();
    assert!(replayed > 100, "{replayed} packets replayed");
    check(&live);
    assert!(
        live.recv[0].driver.rejected_auth > 0,
        "{:?}",
        live.recv[0].driver
    );
    // Across processes: the dead session's ANNOUNCE, replayed later to a fresh receiver.
    let announce = announce.expect("no ANNOUNCE captured");
    thread::sleep(Duration::from_millis(1200));
    let fresh = start_receivers(g, &[0x0bad_0052], |c| {
        c.keys = Some(test_key());
        c.freshness = Duration::from_secs(1);
        c.wait = Some(Duration::from_secs(3));
        c.sender_timeout = Duration::from_secs(2);
    });
    let until = Instant::now() + Duration::from_millis(2500);
    while Instant::now() < until {
        h.send_to(&announce, g).unwrap();
        thread::sleep(Duration::from_millis(50));
    }
    let rep = fresh.handles.into_iter().next().unwrap().join().unwrap();
    assert_eq!(rep.outcome, "no-session", "{rep:#?}");
    assert_eq!(rep.session, None);
    assert!(rep.driver.rejected_auth > 0);
}
