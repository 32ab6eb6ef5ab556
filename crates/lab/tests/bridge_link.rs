//! A namespace host on a bridge (moved from `rmcast-net`'s loopback tests with the namespace
//! code): the group's link, found through the host's routing table, sets the datagram size.

use rmcast_net::sender::{self, NoObserver, SendConfig, Source};
use std::thread;
use std::time::Duration;

/// On a namespace host of a bridge (root), the group's link is found through the routing
/// table (`224.0.0.0/4 dev eth0`, no `--interface`): an Ethernet link, so the default
/// datagram is its MTU less 28 bytes and a 60,000-byte one is refused unless fragmentation
/// is allowed.
#[test]
fn the_bridge_link_sets_the_datagram_size() {
    use rmcast_lab::netns::{self, Segment};
    use rmcast_net::socket::{datagram_size, group_link, SocketOpts};
    if let Err(why) = netns::available() {
        eprintln!("skipped: {why}");
        return;
    }
    let seg = std::sync::Arc::new(Segment::create(1).unwrap());
    let s = seg.clone();
    let link = thread::spawn(move || {
        s.enter(0).unwrap();
        group_link(&SocketOpts::new("239.255.93.9:47951".parse().unwrap()))
    })
    .join()
    .unwrap()
    .expect("the route's interface");
    // The veth's MTU is the kernel's choice (1500, or 1400 in some containers).
    assert_eq!((link.name.as_str(), link.ethernet), (netns::IFACE, true));
    assert!((1280..=9216).contains(&link.mtu), "{link:?}");
    assert_eq!(
        datagram_size(&link, false, None, false).unwrap(),
        link.mtu as usize - 28
    );
    assert!(datagram_size(&link, false, Some(60_000), false).is_err());
    // Through the sender: refused before anyone is awaited.
    let s = seg.clone();
    let err = thread::spawn(move || {
        s.enter(0).unwrap();
        let mut cfg = SendConfig::new("239.255.93.9:47951".parse().unwrap());
        cfg.datagram_size = Some(60_000);
        cfg.join_wait = Duration::from_secs(1);
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x");
        std::fs::write(&f, b"x").unwrap();
        sender::send(cfg, Source::Files(vec![f]), &mut NoObserver).unwrap_err()
    })
    .join()
    .unwrap();
    assert!(
        matches!(err, rmcast_net::NetError::Setup(ref m) if m.contains("--allow-fragmentation")),
        "{err}"
    );
}
