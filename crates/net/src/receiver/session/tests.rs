//! Tests of the receiver's session layer: ANNOUNCE checks and the gathering of a dense stream.

use super::*;
use crate::receiver::announce::check_announce;
use rmcast_wire::session::Phase;

fn announce(protocol: u8, security: u8, window: u16, params: &[u8]) -> Result<(), String> {
    let m = session::Message::Announce {
        protocol,
        phase: Phase::Gathering,
        security,
        ack_delay_us: 0,
        window,
        ack_timeout_us: 5_000,
        members: &[],
        params,
    };
    check_announce(&m, 0)
}

/// A steady stream of `per_ms` datagrams a millisecond, read after each gathering plus
/// 50 us of work: the gathering time it settles on, and the datagrams a read then finds.
fn settled(per_ms: f64, from: Duration) -> (Duration, f64) {
    let mut wait = from;
    let mut n = 0.0;
    for _ in 0..50 {
        let elapsed = wait + Duration::from_micros(50);
        n = elapsed.as_secs_f64() * 1e3 * per_ms;
        wait = next_coalesce(wait, n.round() as u64, elapsed);
    }
    (wait, n)
}

#[test]
fn a_dense_stream_gathers_about_the_aim_per_read_within_the_bounds() {
    // 8 datagrams a millisecond (about 95 Mbit/s of 1472-byte datagrams): 32 take 4 ms.
    let (w, n) = settled(8.0, COALESCE_MIN);
    assert!(w == COALESCE_MAX && (30.0..=34.0).contains(&n), "{w:?} {n}");
    // 40 a millisecond (about 470 Mbit/s): 32 take 0.8 ms.
    let (w, n) = settled(40.0, COALESCE_MIN);
    assert!((30.0..=34.0).contains(&n), "{w:?} {n}");
    // Slow streams stop at the most the feedback may wait; floods at the least; one
    // datagram a read is not a dense stream (stop-and-wait's: gathering would delay it).
    assert_eq!(settled(2.0, Duration::from_millis(1)).0, COALESCE_MAX);
    assert_eq!(settled(2.0, COALESCE_MIN).0, COALESCE_MIN);
    assert_eq!(settled(1000.0, COALESCE_MAX).0, COALESCE_MIN);
    // A sparse read leaves it alone; one burst moves it only halfway.
    let ms = Duration::from_millis;
    assert_eq!(next_coalesce(ms(1), 1, ms(1)), ms(1));
    assert_eq!(next_coalesce(ms(2), 64, ms(2)), Duration::from_micros(1500));
}

#[test]
fn announces_are_checked_against_the_spec_and_our_security_mode() {
    let saw = rmcast_wire::Family::Saw as u8;
    let bap = rmcast_wire::Family::Bap as u8;
    assert!(announce(saw, 0, 0, &[]).is_ok());
    assert!(announce(bap, 0, 16, &[]).is_ok());
    let e = announce(saw, session::SECURITY_AUTH, 0, &[]).unwrap_err();
    assert!(e.contains("--key-file"), "{e}");
    assert!(announce(99, 0, 0, &[])
        .unwrap_err()
        .contains("unknown protocol"));
    assert!(announce(bap, 0, 0, &[]).unwrap_err().contains("window"));
    assert!(announce(bap, 0, u16::MAX, &[]).is_err());
    let dsp = rmcast_wire::Family::Tree as u8;
    let params = |min: u32, max: u32| {
        session::DspParams {
            status_min_us: min,
            status_max_us: max,
            local_rtd_us: 1_000,
            r_f_milli: 1_200,
            entries: Vec::new(),
        }
        .encode()
        .unwrap()
    };
    assert!(announce(dsp, 0, 64, &params(4_000, 6_000)).is_ok());
    assert!(
        announce(dsp, 0, 64, &params(0, 0)).is_err(),
        "a status every nanosecond"
    );
    assert!(announce(dsp, 0, 64, &params(6_000, 4_000)).is_err());
    assert!(announce(dsp, 0, 64, &[1, 2, 3]).is_err());
    // Parameter bytes a protocol does not define are malformed (issue 59: an ANNOUNCE that
    // nobody serves must not capture a receiver by them).
    let e = announce(saw, 0, 0, &[0]).unwrap_err();
    assert!(e.contains("defines none"), "{e}");
    let pgm = rmcast_wire::Family::Pgm as u8;
    assert!(announce(pgm, 0, 0, &[]).is_ok());
    assert!(
        announce(pgm, 0, 0, &[0, 0, 1, 0, 2, 9]).is_err(),
        "a 6th pgm byte"
    );
}

/// When the session is found (inside the read that found it), stalls `stall` as a
/// descheduled receiver would, then has the sender's next datagram sent and notes when,
/// on the receiver's clock; it waits `settle` for the datagram to reach the socket.
struct Stall<'a> {
    tx: &'a std::net::UdpSocket,
    to: SocketAddr,
    next: &'a [u8],
    clock: Clock,
    stall: Duration,
    settle: Duration,
    sent_at: Option<Time>,
}

impl RecvObserver for Stall<'_> {
    fn session(&mut self, _session: u32, _sender: SocketAddr) {
        std::thread::sleep(self.stall);
        self.tx.send_to(self.next, self.to).unwrap();
        self.sent_at = Some(self.clock.now());
        std::thread::sleep(self.settle);
    }
}

/// A datagram that arrives while a read is running is handled at a time after it arrived,
/// not at the time the read began. With the read's start time an srm member measured its
/// distance to the source from a SESSION echo that arrived late in a long read (descheduled
/// on a loaded host) as `now − echo − delay` = 0; its request timers (`C1·d`) then fired
/// back to back: 700,000 requests in 15 s from one member in the relay test
/// (`netns_relay.rs`, srm through a relay), whose sender evicted the members.
#[test]
fn a_datagram_arriving_during_a_read_is_handled_at_a_time_after_it_arrived() {
    const ME: u32 = 0x1111;
    let group: SocketAddr = "239.255.91.9:28931".parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = RecvConfig::new(
        group,
        super::super::Output::Dir {
            path: dir.path().to_path_buf(),
            force: false,
        },
    );
    cfg.sock.interface = Some("lo".into());
    cfg.node_id = Some(ME);
    let mut r = Receiving::open(cfg).unwrap();
    let srm = agents::PROTOCOLS
        .iter()
        .find(|p| p.name() == "srm")
        .unwrap();
    let joined = [(ME, None, "127.0.0.2:28933".parse().unwrap())];
    let (_, announce) =
        super::super::Fuzzing::session(srm, 0x5e55_0003, 0x42, group, &joined, None).unwrap();
    let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let to: SocketAddr = ([127, 0, 0, 1], r.usock.local_addr().unwrap().port()).into();
    // The running ANNOUNCE, queued before the read: the read finds the session with it.
    tx.send_to(&announce, to).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let mut obs = Stall {
        tx: &tx,
        to,
        // The sender's next datagram (the ANNOUNCE repeated), sent during the read.
        next: &announce,
        clock: r.st.clock,
        stall: Duration::from_millis(30),
        settle: Duration::from_millis(50),
        sent_at: None,
    };
    let mut batch = RecvBatch::new();
    r.read(&mut batch, &mut obs).unwrap();
    let sent_at = obs.sent_at.expect("the session was found");
    assert_eq!(
        batch.datagrams, 2,
        "both datagrams were read in the one read"
    );
    let j = r.st.joined.as_ref().unwrap();
    assert!(
        j.last_from_sender >= sent_at,
        "the sender's second datagram, sent at {sent_at:?} during the read, was handled at \
         {:?}",
        j.last_from_sender
    );
}
