#[cfg(target_os = "linux")]
use super::batch::{gso_groups, send_groups};
use super::*;

#[test]
fn non_multicast_groups_are_refused_with_a_hint() {
    let e = check_group("10.0.0.1:5000".parse().unwrap()).unwrap_err();
    assert!(e.to_string().contains("not a multicast address"), "{e}");
    assert!(check_group("239.1.2.3:5000".parse().unwrap()).is_ok());
    assert!(check_group("[ff15::1]:5000".parse().unwrap()).is_ok());
    assert!(check_group("239.1.2.3:0".parse().unwrap()).is_err());
}

#[test]
fn missing_interface_is_a_clear_error() {
    let e = resolve_interface("rmcast-no-such-if0").unwrap_err();
    assert!(e.to_string().contains("no interface named"), "{e}");
    let lo = resolve_interface("lo").unwrap();
    assert_eq!(lo.v4, Some(Ipv4Addr::LOCALHOST));
}

/// IPv6 source-specific join: in a private network namespace (root; this thread only)
/// with a veth interface, a receiver joined for our source gets our datagram, one joined
/// for another source on the same group and port does not. (Linux's `lo` carries no IPv6
/// multicast, hence the namespace.)
#[cfg(target_os = "linux")]
#[test]
fn ipv6_source_specific_join_filters_by_source() {
    use std::process::Command;
    use std::time::Duration;
    let t = std::thread::spawn(|| {
        // SAFETY: unshare(2) with CLONE_NEWNET moves only this thread into a new network
        // namespace; it touches no memory of ours.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            let e = io::Error::last_os_error();
            eprintln!("skipped: cannot create a network namespace (needs root): {e}");
            return;
        }
        let ip = |args: &str| {
            Command::new("ip")
                .args(args.split(' '))
                .status()
                .is_ok_and(|s| s.success())
        };
        if !(ip("link add rmv0 type veth peer name rmv1")
            && ip("link set rmv0 up")
            && ip("link set rmv1 up")
            && ip("-6 addr add fd00:7e5d::1/64 dev rmv0 nodad"))
        {
            eprintln!("skipped: cannot set up a veth pair with `ip`");
            return;
        }
        let me: IpAddr = "fd00:7e5d::1".parse().unwrap();
        let group: SocketAddr = "[ff15::7e5d:1]:28561".parse().unwrap();
        let mut o = SocketOpts::new(group);
        o.interface = Some("rmv0".into());
        o.source = Some(me);
        let ours = group_socket(&o).unwrap();
        o.source = Some("2001:db8::1".parse().unwrap());
        let theirs = group_socket(&o).unwrap();
        let tx = unicast_socket(&o).unwrap();
        tx.send_to(b"from us", group).unwrap();
        ours.set_nonblocking(false).unwrap();
        ours.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 64];
        let (n, from) = ours.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"from us");
        assert_eq!(from.ip(), me);
        // Both sockets' copies are queued at once; the other source's join got none.
        let e = theirs.recv_from(&mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    });
    t.join().unwrap();
}

#[test]
fn the_datagram_size_follows_the_link_and_refuses_fragmentation() {
    let eth = |mtu| Link {
        name: "eth0".into(),
        mtu,
        ethernet: true,
    };
    let lo = Link {
        name: "lo".into(),
        mtu: 65_536,
        ethernet: false,
    };
    assert_eq!(datagram_size(&eth(1500), false, None, false).unwrap(), 1472);
    assert_eq!(datagram_size(&eth(1500), true, None, false).unwrap(), 1452);
    assert_eq!(datagram_size(&eth(9000), false, None, false).unwrap(), 8972);
    // Loopback's 65,536 does not make 65k the default: links other than Ethernet count
    // as 1500-byte Ethernet, so loopback runs what a LAN runs.
    assert_eq!(datagram_size(&lo, false, None, false).unwrap(), 1472);
    // ... but nothing fragments there, so a large size is not refused.
    assert_eq!(
        datagram_size(&lo, false, Some(60_000), false).unwrap(),
        60_000
    );
    assert_eq!(
        datagram_size(&eth(1500), false, Some(1472), false).unwrap(),
        1472
    );
    let e = datagram_size(&eth(1500), false, Some(60_000), false)
        .unwrap_err()
        .to_string();
    assert!(!e.contains('\n'), "one line: {e}");
    assert!(
        e.contains("--allow-fragmentation") && e.contains("1472"),
        "{e}"
    );
    assert!(e.contains("about 41 fragments"), "{e}");
    assert!(datagram_size(&eth(1500), true, Some(1453), false).is_err());
    assert_eq!(
        datagram_size(&eth(1500), false, Some(60_000), true).unwrap(),
        60_000
    );
}

#[test]
fn loopback_is_found_by_name_and_by_address() {
    let mut o = SocketOpts::new("239.255.78.9:28569".parse().unwrap());
    o.interface = Some("lo".into());
    let by_name = group_link(&o).expect("lo in /sys/class/net");
    assert!(!by_name.ethernet && by_name.mtu >= 1500, "{by_name:?}");
    o.interface = Some("127.0.0.1".into());
    assert_eq!(group_link(&o), Some(by_name));
    o.interface = Some("no-such-if0".into());
    assert_eq!(group_link(&o), None);
}

/// A group on the loopback interface, its options and a socket joined to it.
fn loopback_group(addr: &str) -> (SocketAddr, SocketOpts, mio::net::UdpSocket) {
    let group: SocketAddr = addr.parse().unwrap();
    let mut o = SocketOpts::new(group);
    o.interface = Some("lo".into());
    let rx = mio::net::UdpSocket::from_std(group_socket(&o).unwrap());
    (group, o, rx)
}

#[test]
fn gso_groups_are_runs_of_one_size_to_one_destination() {
    let a: SocketAddr = "239.255.78.12:28572".parse().unwrap();
    let b: SocketAddr = "127.0.0.1:28573".parse().unwrap();
    let (big, small) = ([1u8; 1472], [2u8; 100]);
    let msgs: Vec<(SocketAddr, &[u8])> = vec![
        (a, &big),
        (a, &big),
        (a, &small), // a shorter datagram ends its group
        (a, &big),
        (b, &big), // another destination starts one
        (b, &big),
        (a, &small),
        (a, &big), // a longer one than the first does not join
    ];
    let groups = gso_groups(&msgs, true);
    assert_eq!(groups, vec![(0, 3), (3, 1), (4, 2), (6, 1), (7, 1)]);
    assert_eq!(gso_groups(&msgs, false).len(), msgs.len());
    // At most 64 datagrams and 65,507 bytes a group.
    let many: Vec<(SocketAddr, &[u8])> = vec![(a, &small); 130];
    assert_eq!(gso_groups(&many, true), vec![(0, 64), (64, 64), (128, 2)]);
    let full: Vec<(SocketAddr, &[u8])> = vec![(a, &big); 64];
    assert_eq!(gso_groups(&full, true), vec![(0, 44), (44, 20)]);
}

#[test]
fn segmented_sends_arrive_as_the_datagrams_they_were() {
    let (group, o, rx) = loopback_group("239.255.78.13:28574");
    coalesce_reads(&rx);
    let tx = mio::net::UdpSocket::from_std(unicast_socket(&o).unwrap());
    // 50 full datagrams (two GSO groups), a short one, and 3 more full ones.
    let data: Vec<Vec<u8>> = (0..54u8)
        .map(|i| vec![i; if i == 50 { 300 } else { 1472 }])
        .collect();
    let msgs: Vec<(SocketAddr, &[u8])> = data.iter().map(|d| (group, d.as_slice())).collect();
    // Segmented for certain (no fallback): loopback takes UDP_SEGMENT.
    let mut sent = 0;
    while sent < msgs.len() {
        sent += send_groups(&tx, msgs.get(sent..).unwrap(), true).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    let mut batch = RecvBatch::new();
    let mut got = Vec::new();
    while let Some((d, _)) = batch.next(&rx) {
        got.push(d.to_vec());
    }
    assert_eq!(got, data);
    // Loopback hands a segmented send whole to a socket that asked for it (UDP_GRO), and
    // the batch split it again: 54 datagrams, most of them from coalesced buffers.
    assert_eq!(batch.datagrams, 54);
    assert!(batch.coalesced >= 50, "{} coalesced", batch.coalesced);
}

#[test]
fn a_batch_reads_many_datagrams_per_call_and_counts_kernel_drops() {
    let (group, mut o, rx) = loopback_group("239.255.78.10:28570");
    let tx = unicast_socket(&o).unwrap();
    tx.set_nonblocking(false).unwrap();
    let mut batch = RecvBatch::new();
    for i in 0..40u8 {
        tx.send_to(&[i; 100], group).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    let mut got = Vec::new();
    while let Some((d, from)) = batch.next(&rx) {
        assert_eq!(from.ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));
        got.push((d[0], d.len()));
    }
    assert_eq!(got, (0..40u8).map(|i| (i, 100)).collect::<Vec<_>>());
    assert_eq!((batch.calls, batch.datagrams), (2, 40), "32 + 8");
    // Nothing was dropped: the counter is absent or zero.
    assert!(batch.take_drops().unwrap_or(0) == 0);
    // A tiny receive buffer overflows; the kernel says how many it dropped.
    o.group = "239.255.78.11:28571".parse().unwrap();
    o.recv_buffer = Some(4096);
    let small = mio::net::UdpSocket::from_std(group_socket(&o).unwrap());
    for _ in 0..200 {
        tx.send_to(&[7u8; 1000], o.group).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    let mut n = 0u32;
    while batch.next(&small).is_some() {
        n += 1;
    }
    // A datagram carries the count as of its own arrival: the next one tells all.
    tx.send_to(&[8u8; 10], o.group).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(batch.next(&small).is_some());
    let drops = batch.take_drops().unwrap_or(0);
    assert!(n > 0 && drops > 0, "{n} read, {drops} dropped");
    assert_eq!(n + drops, 200);
}

#[test]
fn mismatched_source_family_is_refused() {
    let mut o = SocketOpts::new("[ff15::7e5d:2]:28562".parse().unwrap());
    o.source = Some("10.0.0.1".parse().unwrap());
    let e = group_socket(&o).unwrap_err();
    assert!(e.to_string().contains("give an IPv6 source"), "{e}");
}

/// A receive buffer capped by `net.core.rmem_max` is told (the kernel's own cap: plain
/// `SO_RCVBUF`, which root is held to as well, read back as Linux reports it); one granted
/// in full is not.
#[cfg(target_os = "linux")]
#[test]
fn a_capped_receive_buffer_is_reported() {
    let Some(max) = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .ok()
        .and_then(|t| t.trim().parse::<usize>().ok())
    else {
        eprintln!("skipped: /proc/sys/net/core/rmem_max is not readable");
        return;
    };
    let s = new_socket(false).unwrap();
    let asked = max * 4;
    s.set_recv_buffer_size(asked).unwrap();
    let why = short_buffer(asked, s.recv_buffer_size().unwrap()).expect("not reported");
    assert!(
        why.contains(&format!("is {max} bytes, not the {asked}")),
        "{why}"
    );
    assert!(
        why.contains(&format!("sysctl -w net.core.rmem_max={asked}")),
        "{why}"
    );
    s.set_recv_buffer_size(max / 2).unwrap();
    assert_eq!(short_buffer(max / 2, s.recv_buffer_size().unwrap()), None);
}
