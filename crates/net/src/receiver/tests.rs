//! [`Fuzzing::reset`]: a reset receiver is a fresh one.

use super::*;
use crate::agents::PROTOCOLS;
use crate::frame::Frame;
use rmcast_proto::Time;
use rmcast_wire::session::{encode_outcomes, Message, Outcome};

const ME: u32 = 0x1111;
const SENDER: u32 = 0x42;

fn group() -> SocketAddr {
    "239.255.91.7:47611".parse().unwrap()
}

fn sender_addr() -> SocketAddr {
    "127.0.0.1:47612".parse().unwrap()
}

fn open(dir: &std::path::Path, keys: Option<Keys>) -> Fuzzing {
    let mut cfg = RecvConfig::new(
        group(),
        Output::Dir {
            path: dir.to_path_buf(),
            force: false,
        },
    );
    cfg.sock.interface = Some("lo".into());
    cfg.node_id = Some(ME);
    cfg.keys = keys;
    Fuzzing::open(cfg).unwrap()
}

/// The datagrams, with their times, of a whole session of `protocol`: the running
/// ANNOUNCE, what the sender's agent sends for one file `name` of `len` bytes (in messages of
/// 1,000 bytes), then a datagram
/// from a stranger and the END that names this receiver completed.
fn transfer(protocol: &str, session: u32, name: &str, len: u64) -> Vec<(Duration, Vec<u8>)> {
    let proto = PROTOCOLS.iter().find(|p| p.name() == protocol).unwrap();
    let joined = [(ME, None, "127.0.0.2:47613".parse().unwrap())];
    let (mut agent, announce) =
        Fuzzing::session(proto, session, SENDER, group(), &joined, None).unwrap();
    let data = crate::sender::pseudo_random(len, u64::from(session));
    let digest = *blake3::hash(&data).as_bytes();
    let mut out = vec![(Duration::ZERO, announce)];
    let mut frames = vec![Frame::File {
        size: len,
        digest,
        name,
    }];
    frames.extend(data.chunks(1_000).map(Frame::Data));
    frames.push(Frame::Finish { files: 1 });
    let mut at = Duration::from_millis(1);
    for f in frames {
        agent
            .as_sender()
            .unwrap()
            .send(Time::ZERO + at, f.encode())
            .unwrap();
        while let Some(t) = agent.poll_transmit() {
            out.push((at, t.payload.to_vec()));
            at += Duration::from_micros(100);
        }
    }
    out.push((at, b"not a datagram".to_vec()));
    let outcomes = encode_outcomes(&[(ME, Outcome::Completed)]);
    let end = crate::endpoint::session_packet(
        session,
        SENDER,
        Message::End {
            outcomes: &outcomes,
        },
    )
    .unwrap();
    out.push((at + Duration::from_millis(10), end));
    out
}

/// Feed `datagrams` (all from the sender), then the summary and a reset.
fn run(r: &mut Fuzzing, datagrams: &[(Duration, Vec<u8>)]) -> RecvReport {
    for (at, d) in datagrams {
        r.datagram(*at, sender_addr(), &mut d.clone()).unwrap();
    }
    r.reset()
}

/// A summary as text (every field, including the driver's counters and the times).
fn text(r: &RecvReport) -> String {
    format!("{r:?}")
}

fn remove_files(r: &RecvReport) {
    for f in &r.files {
        std::fs::remove_file(f.path.as_ref().unwrap()).unwrap();
    }
}

#[test]
fn a_reset_receiver_gives_the_summary_a_fresh_one_gives() {
    let dir = tempfile::tempdir().unwrap();
    let second = transfer("pgm", 0x5e55_0002, "second.bin", 5_000);
    let fresh = run(&mut open(dir.path(), None), &second);
    assert_eq!(fresh.outcome, "completed", "{fresh:?}");
    assert_eq!(fresh.session, Some(0x5e55_0002));
    assert_eq!(fresh.bytes, 5_000);
    assert!(
        fresh.driver.rejected() > 0,
        "the stranger's datagram is counted"
    );
    remove_files(&fresh);

    // The same datagrams on a receiver that had another session before (another session,
    // file and length, its last data lost: it ended with an unfinished file).
    let mut r = open(dir.path(), None);
    let mut first = transfer("pgm", 0x5e55_0001, "first.bin", 9_000);
    first.truncate(first.len() - 4);
    let had = run(&mut r, &first);
    assert_eq!(had.session, Some(0x5e55_0001));
    assert_ne!(had.outcome, "completed", "{had:?}");
    assert!(had.bytes > 0, "{had:?}");
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(
        left[0].starts_with(".first.bin.rmcast-")
            && left[0].ends_with(".meta")
            && left[1].ends_with(".part"),
        "the unfinished file is kept hidden, with its sidecar, for a restart: {left:?}"
    );
    // Removed, or the next receive tells its sender about it (a HAVE: two more datagrams).
    for f in left {
        std::fs::remove_file(dir.path().join(f)).unwrap();
    }
    let again = run(&mut r, &second);
    assert_eq!(text(&again), text(&fresh));
    remove_files(&again);
    // And once more, after a completed session.
    assert_eq!(text(&run(&mut r, &second)), text(&fresh));
}

#[test]
fn a_reset_receiver_joins_the_next_session() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::from_secret(&[7; 32], true).unwrap();
    let mut r = open(dir.path(), Some(keys.clone()));
    let mut sealer = crate::secure::Sealer::new(keys.clone(), 0);
    for (session, proto) in [(1, "xtp"), (2, "xtp"), (3, "pgm")] {
        let (_, announce) = Fuzzing::session(
            PROTOCOLS.iter().find(|p| p.name() == proto).unwrap(),
            session,
            SENDER,
            group(),
            &[(ME, None, sender_addr())],
            Some(&keys),
        )
        .unwrap();
        let mut sealed = Vec::new();
        sealer.seal(&announce, &mut sealed);
        r.datagram(Duration::from_millis(5), sender_addr(), &mut sealed)
            .unwrap();
        assert!(!r.ended());
        let report = r.reset();
        assert_eq!(report.session, Some(session), "{report:?}");
        assert_eq!(report.driver.rejected(), 0, "{report:?}");
    }
}

/// With a key, a receiver stays with the address its session started with: a copy of the
/// sender's ANNOUNCE sealed later, from another address, does not move it (a peer that
/// re-multicast a running ANNOUNCE the sender sealed for it took keyed receivers over). Its
/// first ANNOUNCE being a copy a host re-sent from its own address (the original missed),
/// the session from there never admits it: it gives the session up after `UNANSWERED`,
/// ignores that address's copies, and joins the sender at the sender's next ANNOUNCE.
#[test]
fn a_receiver_stays_with_its_first_address_and_gives_up_one_that_never_answers() {
    use super::session::UNANSWERED;
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::from_secret(&[9; 32], false).unwrap();
    let mut r = open(dir.path(), Some(keys.clone()));
    let mut sealer = crate::secure::Sealer::new(keys.clone(), 0);
    let (_, running) = Fuzzing::session(
        PROTOCOLS.iter().find(|p| p.name() == "pgm").unwrap(),
        7,
        SENDER,
        group(),
        &[(ME, None, sender_addr())],
        Some(&keys),
    )
    .unwrap();
    let gathering = gathering_of(&running);
    let mut seal = |d: &[u8]| {
        let mut sealed = Vec::new();
        sealer.seal(d, &mut sealed);
        sealed
    };
    let copier: SocketAddr = "127.0.0.9:40000".parse().unwrap();
    let ms = Duration::from_millis;
    let mut start = |r: &mut Fuzzing| {
        r.datagram(ms(1), copier, &mut seal(&gathering)).unwrap();
        // Newer, and from the sender's address: the receiver stays where its session
        // started.
        r.datagram(ms(2), sender_addr(), &mut seal(&gathering))
            .unwrap();
        r.datagram(ms(3), sender_addr(), &mut seal(&running))
            .unwrap();
        assert!(!r.ended());
    };
    start(&mut r);
    let stayed = r.reset();
    assert_eq!(
        stayed.sender.as_deref(),
        Some(copier.to_string().as_str()),
        "{stayed:?}"
    );
    start(&mut r);
    // Nobody at the copier's address admits it: given up after UNANSWERED...
    r.datagram(UNANSWERED + ms(1), copier, &mut seal(&gathering))
        .unwrap();
    // ...the copier's next copy is ignored, the sender's next ANNOUNCE is joined.
    r.datagram(UNANSWERED + ms(2), copier, &mut seal(&running))
        .unwrap();
    r.datagram(UNANSWERED + ms(3), sender_addr(), &mut seal(&running))
        .unwrap();
    assert!(!r.ended());
    let report = r.reset();
    assert_eq!(report.session, Some(7), "{report:?}");
    assert_eq!(
        report.sender.as_deref(),
        Some(sender_addr().to_string().as_str()),
        "{report:?}"
    );
}

/// A session found running without this receiver (started before it, or an old session
/// replayed) neither captures nor ends it, however long it announces: the receiver asks its
/// sender (a JOIN) and ends `not-admitted` only on that sender's refusal, an END naming it
/// from the address it asked. An END naming another receiver, or naming it from elsewhere,
/// changes nothing.
#[test]
fn a_running_session_without_this_receiver_ends_it_only_by_its_senders_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let (sender, from) = sender_socket();
    let mut r = open(dir.path(), None);
    let pgm = PROTOCOLS.iter().find(|p| p.name() == "pgm").unwrap();
    let (_, running) =
        Fuzzing::session(pgm, 21, SENDER, group(), &[(0x2222, None, from)], None).unwrap();
    for k in 0..12 {
        r.datagram(Duration::from_millis(250 * k), from, &mut running.clone())
            .unwrap();
    }
    assert!(!r.ended(), "3 s of a running session without it");
    assert!(
        joins_at(&sender) >= 2,
        "it asked the running session's sender"
    );
    let end = |node: u32| {
        let outcomes = encode_outcomes(&[(node, Outcome::Failed)]);
        crate::endpoint::session_packet(
            21,
            SENDER,
            Message::End {
                outcomes: &outcomes,
            },
        )
        .unwrap()
    };
    let at = Duration::from_secs(3);
    r.datagram(at, from, &mut end(0x2222)).unwrap();
    r.datagram(at, "127.0.0.9:40001".parse().unwrap(), &mut end(ME))
        .unwrap();
    assert!(!r.ended());
    r.datagram(at, from, &mut end(ME)).unwrap();
    assert!(r.ended());
    let report = r.reset();
    assert_eq!(report.outcome, "not-admitted", "{report:?}");
    assert_eq!(report.session, None, "{report:?}");
}

/// A whole session replayed to a receiver that joins it at its gathering ANNOUNCE (it never
/// admits the receiver: nobody serves it) writes nothing: no data reaches the agent before
/// the sender admitted the receiver, and the receiver gives the session up after
/// `UNANSWERED`.
#[test]
fn a_replayed_session_that_never_admits_the_receiver_writes_nothing() {
    use super::session::UNANSWERED;
    let dir = tempfile::tempdir().unwrap();
    let mut r = open(dir.path(), None);
    let pgm = PROTOCOLS.iter().find(|p| p.name() == "pgm").unwrap();
    let other = [(0x2222, None, sender_addr())];
    let (_, running) = Fuzzing::session(pgm, 31, SENDER, group(), &other, None).unwrap();
    let datagrams = transfer("pgm", 31, "old.bin", 5_000);
    r.datagram(Duration::ZERO, sender_addr(), &mut gathering_of(&running))
        .unwrap();
    for (at, d) in &datagrams[1..datagrams.len() - 1] {
        r.datagram(*at, sender_addr(), &mut d.clone()).unwrap();
    }
    r.datagram(UNANSWERED, sender_addr(), &mut running.clone())
        .unwrap();
    assert!(!r.ended());
    let report = r.reset();
    assert_eq!(report.session, None, "gave the session up: {report:?}");
    assert_eq!(report.bytes, 0, "{report:?}");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

/// A socket standing for the sender (its JOINs are counted with [`joins_at`]), and its
/// address.
fn sender_socket() -> (std::net::UdpSocket, SocketAddr) {
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sender
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let from = sender.local_addr().unwrap();
    (sender, from)
}

/// The JOINs that reached `sock` (the sender's socket) so far.
fn joins_at(sock: &std::net::UdpSocket) -> usize {
    let mut buf = [0u8; 2048];
    let mut n = 0;
    while let Ok(len) = sock.recv(&mut buf) {
        if let Ok(rmcast_wire::Packet {
            message: rmcast_wire::Message::Session(Message::Join { .. }),
            ..
        }) = rmcast_wire::Packet::decode(&buf[..len])
        {
            n += 1;
        }
    }
    n
}

/// The gathering ANNOUNCE (nobody admitted yet) of the session whose running ANNOUNCE is
/// `running`.
fn gathering_of(running: &[u8]) -> Vec<u8> {
    let running = rmcast_wire::Packet::decode(running).unwrap();
    let rmcast_wire::Message::Session(Message::Announce {
        protocol,
        security,
        ack_delay_us,
        window,
        ack_timeout_us,
        params,
        ..
    }) = running.message
    else {
        panic!("not an ANNOUNCE")
    };
    let nobody = rmcast_wire::session::encode_members(&[]);
    crate::endpoint::session_packet(
        running.header.session,
        SENDER,
        Message::Announce {
            protocol,
            phase: rmcast_wire::session::Phase::Gathering,
            security,
            ack_delay_us,
            window,
            ack_timeout_us,
            members: &nobody,
            params,
        },
    )
    .unwrap()
}

/// A receiver whose running ANNOUNCE came only after the sender's data (lost on the way, and
/// repeated when the receiver asked) holds that data for the agent the ANNOUNCE builds: the
/// file completes from it, with no repair asked for or received.
#[test]
fn data_before_the_running_announce_is_held_for_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = open(dir.path(), None);
    let datagrams = transfer("pgm", 11, "f.bin", 20_000);
    let (running, rest) = datagrams.split_first().unwrap();
    r.datagram(Duration::ZERO, sender_addr(), &mut gathering_of(&running.1))
        .unwrap();
    // the data, the stranger's datagram and the END's place: the data first, then the
    // running ANNOUNCE (the answer to the JOIN the data prompted), then the END
    let (end, data) = rest.split_last().unwrap();
    for (at, d) in data {
        r.datagram(*at, sender_addr(), &mut d.clone()).unwrap();
    }
    let after = end.0;
    r.datagram(after, sender_addr(), &mut running.1.clone())
        .unwrap();
    r.datagram(
        after + Duration::from_millis(1),
        sender_addr(),
        &mut end.1.clone(),
    )
    .unwrap();
    let report = r.reset();
    assert_eq!(report.outcome, "completed", "{report:?}");
    assert_eq!(report.bytes, 20_000);
    assert_eq!(report.repairs_received, 0, "{report:?}");
    remove_files(&report);
}

/// A receiver that heard only the gathering ANNOUNCE (its JOIN went out, the running
/// ANNOUNCE that admits it and builds its agent was lost) and then hears the sender's data
/// JOINs again at once — the sender answers with the running ANNOUNCE — instead of after its
/// 200-ms repeat, and at most every 20 ms. (Behind three 5 %-loss bridges one receiver in
/// seven missed the running ANNOUNCE and NAKed about 850 packets, all it had thrown away.)
#[test]
fn data_before_the_running_announce_asks_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let (sender, from) = sender_socket();
    let mut r = open(dir.path(), None);
    let datagrams = transfer("pgm", 9, "f.bin", 20_000);
    let mut gathering = gathering_of(&datagrams[0].1);
    r.datagram(Duration::ZERO, from, &mut gathering).unwrap();
    assert_eq!(
        joins_at(&sender),
        1,
        "the JOIN answering the gathering ANNOUNCE"
    );
    // ODATA (no running ANNOUNCE came): one JOIN at once, none for the next 20 ms
    let data: Vec<&Vec<u8>> = datagrams[1..6].iter().map(|(_, d)| d).collect();
    for (k, d) in data.iter().enumerate() {
        let at = Duration::from_millis(5 + 4 * k as u64);
        r.datagram(at, from, &mut (*d).clone()).unwrap();
    }
    assert_eq!(joins_at(&sender), 1, "asked once within 20 ms");
    r.datagram(Duration::from_millis(26), from, &mut data[0].clone())
        .unwrap();
    assert_eq!(joins_at(&sender), 1, "and again after 20 ms");
    remove_files(&r.reset());
}

/// A receiver admitted to its session follows the session's running ANNOUNCE to another
/// address only once the one it had has been silent for FOLLOW_AFTER (its relay died and a
/// standby relay took over), and JOINs there again; before that, or on a gathering
/// ANNOUNCE, or on another sender's, it stays.
#[test]
fn a_receiver_follows_its_session_elsewhere_only_after_its_address_fell_silent() {
    use super::session::FOLLOW_AFTER;
    let dir = tempfile::tempdir().unwrap();
    let mut r = open(dir.path(), None);
    let pgm = PROTOCOLS.iter().find(|p| p.name() == "pgm").unwrap();
    let (_, running) =
        Fuzzing::session(pgm, 9, SENDER, group(), &[(ME, None, sender_addr())], None).unwrap();
    let (_, other_sender) = Fuzzing::session(
        pgm,
        9,
        SENDER + 1,
        group(),
        &[(ME, None, sender_addr())],
        None,
    )
    .unwrap();
    let gathering = gathering_of(&running);
    let (joins, standby) = sender_socket();
    let ms = Duration::from_millis;
    let feed = |r: &mut Fuzzing, at: Duration, from: SocketAddr, d: &[u8]| {
        r.datagram(at, from, &mut d.to_vec()).unwrap();
        assert!(!r.ended());
    };
    feed(&mut r, ms(1), sender_addr(), &running);
    feed(&mut r, ms(1) + FOLLOW_AFTER - ms(1), standby, &running);
    let early = r.reset();
    assert_eq!(early.sender, Some(sender_addr().to_string()), "too soon");
    assert_eq!(early.moves, 0);
    feed(&mut r, ms(1), sender_addr(), &running);
    let silent = ms(1) + FOLLOW_AFTER;
    feed(&mut r, silent, standby, &gathering);
    feed(&mut r, silent, standby, &other_sender);
    let stayed = r.reset();
    assert_eq!(stayed.sender, Some(sender_addr().to_string()), "{stayed:?}");
    feed(&mut r, ms(1), sender_addr(), &running);
    feed(&mut r, silent, standby, &running);
    assert!(joins_at(&joins) > 0, "it JOINs at the new address");
    let moved = r.reset();
    assert_eq!(moved.sender, Some(standby.to_string()), "{moved:?}");
    assert_eq!(moved.moves, 1);
}

/// A receiver's own datagram that comes back to it — a cp endpoint's local re-multicast,
/// which the relay hosting its exchange carries down every downstream interface, the
/// endpoint's own too, from the address the receiver knows its sender by — never reaches its
/// agent: a node does not hear its own multicast (nor does it in the simulator). Before, each
/// such echo was one more duplicate: on the testbed's cp tree at 1.5 Mb/s, one per local
/// re-multicast (docs/results/agreement.md).
#[test]
fn a_receivers_own_datagram_echoed_from_the_senders_address_is_not_the_agents() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = open(dir.path(), None);
    let mut datagrams = transfer("pgm", 12, "f.bin", 20_000);
    // Every data datagram again, stamped as this receiver's (its node id in the header's
    // source field, bytes 12..16), just before the END, from the sender's address.
    let at = datagrams[datagrams.len() - 2].0;
    let echoes: Vec<(Duration, Vec<u8>)> = datagrams
        .iter()
        .filter(|(_, d)| {
            rmcast_wire::Header::parse(d).is_ok_and(|h| h.class().is_data() && h.source == SENDER)
        })
        .map(|(_, d)| {
            let mut d = d.clone();
            d[12..16].copy_from_slice(&ME.to_be_bytes());
            assert_eq!(rmcast_wire::Header::parse(&d).unwrap().source, ME);
            (at, d)
        })
        .collect();
    assert!(echoes.len() >= 20, "{} data datagrams", echoes.len());
    let end = datagrams.pop().unwrap();
    datagrams.extend(echoes);
    datagrams.push(end);
    let report = run(&mut r, &datagrams);
    assert_eq!(report.outcome, "completed", "{report:?}");
    assert_eq!(report.bytes, 20_000);
    assert_eq!(report.duplicates, 0, "{report:?}");
    assert_eq!(report.driver.rejected_stranger, 0, "{report:?}");
    remove_files(&report);
}
