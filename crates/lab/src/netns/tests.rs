#![allow(clippy::unwrap_used)]

use super::*;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

/// On `host` (the calling thread enters it): a blocking socket joined to `group` on the
/// bridge's interface, whose reads time out after `timeout`.
fn joined(seg: &Segment, host: usize, group: SocketAddr, timeout: Duration) -> UdpSocket {
    seg.enter(host).unwrap();
    let mut o = rmcast_net::socket::SocketOpts::new(group);
    o.interface = Some(IFACE.into());
    let s = rmcast_net::socket::group_socket(&o).unwrap();
    s.set_nonblocking(false).unwrap();
    s.set_read_timeout(Some(timeout)).unwrap();
    s
}

/// `data` multicast to `group` from host 0 (on a thread of its own, which enters it)
/// `times` times, `gap` apart; returns when the last is sent.
fn multicast_from_host_0(
    seg: &std::sync::Arc<Segment>,
    group: SocketAddr,
    data: Vec<u8>,
    times: usize,
    gap: Duration,
) {
    let s0 = seg.clone();
    let addr0 = seg.addr(0);
    std::thread::spawn(move || {
        s0.enter(0).unwrap();
        let s = UdpSocket::bind((addr0, 0)).unwrap();
        s.set_multicast_ttl_v4(1).unwrap();
        for _ in 0..times {
            s.send_to(&data, group).unwrap();
            std::thread::sleep(gap);
        }
    })
    .join()
    .unwrap();
}

/// The lengths of the datagrams a socket joined to `group` on host 1 receives while host 0
/// multicasts `data` there `times` times, 1 ms apart (its reads end `timeout` after the last).
fn received_on_host_1(
    seg: &std::sync::Arc<Segment>,
    group: SocketAddr,
    data: Vec<u8>,
    times: usize,
    timeout: Duration,
) -> Vec<usize> {
    let (tx, rx) = std::sync::mpsc::channel();
    let s1 = seg.clone();
    let recv = std::thread::spawn(move || {
        let s = joined(&s1, 1, group, timeout);
        tx.send(()).unwrap();
        let mut buf = vec![0u8; 9000];
        std::iter::from_fn(|| s.recv_from(&mut buf).ok().map(|(len, _)| len)).collect()
    });
    rx.recv().unwrap();
    multicast_from_host_0(seg, group, data, times, Duration::from_millis(1));
    recv.join().unwrap()
}

/// Why the frame-loss and bottleneck tests cannot run here (no namespaces, no nft), if so.
fn without_nft() -> Option<String> {
    if let Err(why) = available() {
        return Some(why);
    }
    let nft = Command::new("nft").arg("--version").output();
    (!nft.is_ok_and(|o| o.status.success())).then(|| "nft (nftables) is not installed".to_string())
}

/// A datagram multicast on host 0 reaches a socket joined on host 2 across the bridge.
#[test]
fn multicast_crosses_the_bridge() {
    if let Err(why) = available() {
        eprintln!("skipped: {why}");
        return;
    }
    let seg = std::sync::Arc::new(Segment::create(3).unwrap());
    let group: SocketAddr = "239.255.93.7:47931".parse().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let s2 = seg.clone();
    let recv = std::thread::spawn(move || {
        let s = joined(&s2, 2, group, Duration::from_secs(5));
        tx.send(()).unwrap();
        let mut buf = [0u8; 64];
        let (n, from) = s.recv_from(&mut buf).unwrap();
        (buf[..n].to_vec(), from)
    });
    rx.recv().unwrap();
    multicast_from_host_0(
        &seg,
        group,
        b"across".to_vec(),
        5,
        Duration::from_millis(50),
    );
    let (got, from) = recv.join().unwrap();
    assert_eq!(got, b"across");
    assert_eq!(from.ip(), std::net::IpAddr::V4(seg.addr(0)));
}

/// Frames, not datagrams, are dropped: with 20 % frame loss a 1,000-byte datagram (one
/// frame) mostly arrives, an 8,000-byte one (six fragments) mostly does not (0.8^6 = 26 %).
#[test]
fn frame_loss_drops_fragments_on_the_bridge() {
    if let Some(why) = without_nft() {
        eprintln!("skipped: {why}");
        return;
    }
    let seg = std::sync::Arc::new(Segment::create(2).unwrap());
    seg.frame_loss(0.2, Some(0)).unwrap();
    let mut got = Vec::new();
    for (size, port) in [(1000usize, 47941u16), (8000, 47942)] {
        let group: SocketAddr = format!("239.255.93.8:{port}").parse().unwrap();
        let lens = received_on_host_1(
            &seg,
            group,
            vec![7u8; size],
            400,
            Duration::from_millis(700),
        );
        got.push(lens.iter().filter(|&&len| len == size).count());
    }
    let (small, large) = (got[0], got[1]);
    assert!(seg.frames_dropped() > 0);
    assert!(
        (200..=380).contains(&small),
        "1,000-byte datagrams received: {small} of 400"
    );
    assert!(
        large < small / 2,
        "8,000-byte: {large}, 1,000-byte: {small} of 400"
    );
    seg.frame_loss(0.0, None).unwrap();
    assert_eq!(seg.frames_dropped(), 0);
}

/// A probability of 1 (nft refuses `numgen random mod 10^6 < 10^6`) drops every frame.
#[test]
fn frame_loss_of_one_drops_every_frame() {
    if let Some(why) = without_nft() {
        eprintln!("skipped: {why}");
        return;
    }
    let seg = std::sync::Arc::new(Segment::create(2).unwrap());
    seg.frame_loss(1.0, Some(0)).unwrap();
    let group: SocketAddr = "239.255.93.9:47943".parse().unwrap();
    let lens = received_on_host_1(&seg, group, vec![7u8; 1000], 50, Duration::from_millis(500));
    assert!(
        lens.is_empty(),
        "datagrams received through p = 1: {lens:?}"
    );
    assert!(seg.frames_dropped() >= 50, "{}", seg.frames_dropped());
}

/// A policer of 20 Mbit/s on host 1's port passes about 20 Mbit/s of a faster UDP
/// blast, counts the flow before and after it and the frames it dropped.
#[test]
fn a_bottleneck_passes_its_rate() {
    if let Some(why) = without_nft() {
        eprintln!("skipped: {why}");
        return;
    }
    let seg = std::sync::Arc::new(Segment::create(2).unwrap());
    let p = seg
        .bottleneck(
            1,
            20_000_000,
            Duration::from_millis(5),
            &[("udp", "udp dport 47951")],
        )
        .unwrap();
    assert_eq!((p.frames_per_s, p.burst_frames), (1666, 8));
    let group: SocketAddr = "239.255.93.9:47951".parse().unwrap();
    let s0 = seg.clone();
    let addr0 = seg.addr(0);
    let secs = std::thread::spawn(move || {
        s0.enter(0).unwrap();
        let s = UdpSocket::bind((addr0, 0)).unwrap();
        s.set_multicast_ttl_v4(1).unwrap();
        let (data, t0) = (vec![7u8; 1472], std::time::Instant::now());
        // About 60 Mbit/s: a frame every 200 µs.
        while t0.elapsed() < Duration::from_secs(1) {
            let _ = s.send_to(&data, group);
            std::thread::sleep(Duration::from_micros(200));
        }
        t0.elapsed().as_secs_f64()
    })
    .join()
    .unwrap();
    let c = seg.bottleneck_counts().unwrap();
    let (offered, passed) = (c["udp_offered"], c["udp_passed"]);
    let mbit = passed.bytes as f64 * 8.0 / secs / 1e6;
    assert!((14.0..=26.0).contains(&mbit), "{mbit} Mbit/s passed: {c:?}");
    assert_eq!(passed.bytes % FRAME_BYTES, 0, "{c:?}");
    assert!(offered.packets > passed.packets + 500, "{c:?}");
    // The policer drops other frames to the port too (IGMP, ARP).
    assert!(c["dropped"].packets >= offered.packets - passed.packets);
    assert!(c["all_passed"].packets >= passed.packets);
    assert!(seg.bottleneck(2, 20_000_000, Duration::ZERO, &[]).is_err());
    assert!(seg.bottleneck(1, 1000, Duration::ZERO, &[]).is_err());
    assert!(seg
        .bottleneck(1, 20_000_000, Duration::ZERO, &[("a b", "")])
        .is_err());
}

#[test]
fn nft_counters_are_read_from_its_listing() {
    let text = "table bridge rmcast_cc {\n\tcounter dropped {\n\t\tpackets 3 bytes 4500\n\t}\n\n\tcounter tcp_passed {\n\t\tpackets 0 bytes 0\n\t}\n}\n";
    let c = parse_nft_counters(text).unwrap();
    assert_eq!(c.len(), 2);
    assert_eq!(
        c["dropped"],
        Count {
            packets: 3,
            bytes: 4500
        }
    );
    assert_eq!(c["tcp_passed"], Count::default());
    assert!(parse_nft_counters("").unwrap().is_empty());
    assert!(parse_nft_counters("table bridge t {\n}\n")
        .unwrap()
        .is_empty());
    assert!(parse_nft_counters("counter x {\n packets 1\n}").is_err());
    assert!(parse_nft_counters("counter x {\n packets -1 bytes 2\n}").is_err());
    assert!(parse_nft_counters("counter x {").is_err());
}

#[test]
fn a_policer_counts_full_frames() {
    let p = Policer::new(100_000_000, Duration::from_millis(5)).unwrap();
    assert_eq!((p.frames_per_s, p.burst_frames), (8333, 42));
    assert_eq!(
        Policer::new(100_000_000, Duration::ZERO)
            .unwrap()
            .burst_frames,
        2
    );
    assert!(Policer::new(11_999, Duration::ZERO).is_err());
}

#[test]
fn the_qdisc_s_drops_are_read_from_tc_s_statistics() {
    let text = "qdisc tbf 8001: root refcnt 2 rate 100Mbit burst 12500b lat 9.6ms \n \
                Sent 31024 bytes 22 pkt (dropped 7, overlimits 3 requeues 0) \n \
                backlog 0b 0p requeues 0\n";
    assert_eq!(parse_tc_dropped(text), 7);
    assert_eq!(parse_tc_dropped(""), 0);
    assert_eq!(parse_tc_dropped("dropped x"), 0);
    let s = parse_tc_stats(text).unwrap();
    assert_eq!(
        s,
        QueueStats {
            sent_frames: 22,
            sent_bytes: 31024,
            dropped: 7
        }
    );
    let later = QueueStats {
        sent_frames: 30,
        sent_bytes: 40000,
        dropped: 9,
    };
    assert_eq!(later.since(&s).sent_frames, 8);
    assert_eq!(later.since(&s).dropped, 2);
    assert_eq!(parse_tc_stats(""), None);
    assert_eq!(parse_tc_stats("Sent x bytes 1 pkt"), None);
}

#[test]
fn host_out_of_range_is_an_error() {
    let seg = Segment {
        prefix: "none".into(),
        subnet: 0,
        hosts: 0,
        queued: std::sync::Mutex::new(None),
    };
    assert!(seg.enter(0).is_err());
    assert!(Segment::create(251).is_err());
}
