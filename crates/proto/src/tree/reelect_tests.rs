//! Re-election of a DSP designated endpoint while running ([`Source::replace_reporter`],
//! [`Endpoint::reassign`]): unit tests and a testkit run in which the designated endpoint
//! dies (or stalls and comes back) mid-transfer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::tests::data_packet;
use super::*;
use crate::testkit::{feed_blocks, Harness};
use crate::SenderAgent;
use rmcast_wire::Envelope;

fn status_packet(kind_local: bool, from: u32, lw: u64, l: u32, set: &[usize]) -> Vec<u8> {
    let mut lob = vec![0u8; wire::bitmap_bytes(l)];
    for &i in set {
        wire::set_bit(&mut lob, i);
    }
    let body = wire::Status {
        vc: 1,
        id: from,
        k: 1,
        l,
        lw_r: lw,
        buffer_available: l,
        lob: &lob,
    };
    let msg = if kind_local {
        wire::Message::LocalStatus(body)
    } else {
        wire::Message::Status(body)
    };
    Packet::to_vec(
        Envelope {
            session: 0,
            source: from,
            flags: 0,
        },
        &Message::Tree(msg),
    )
    .unwrap()
}

fn reporter(epi: u32) -> Reporter {
    Reporter {
        epi,
        rtd: Duration::from_millis(10),
        slack: Duration::ZERO,
    }
}

/// Data sequence numbers of the DATA the source sent, and whether each was a repair.
fn sent_data(src: &mut Source) -> Vec<(u64, bool)> {
    core::iter::from_fn(|| src.poll_transmit())
        .filter_map(|t| {
            let p = Packet::decode(&t.payload).unwrap();
            match p.message {
                Message::Tree(wire::Message::Data { seq, .. }) => {
                    Some((seq, p.header.flags & FLAG_RETRANSMISSION != 0))
                }
                _ => None,
            }
        })
        .collect()
}

/// The new reporter waits for the outstanding blocks and for the acknowledged blocks the
/// history keeps; the first status lacking one re-multicasts it; no message is reported
/// done twice; the evicted reporter's status no longer counts.
#[test]
fn a_replaced_reporter_gets_what_it_lacks_from_the_history() {
    let l = 8;
    let mut c = SourceConfig::new(NodeId(0), GroupId(1), vec![reporter(1)], l);
    c.history = 4;
    let mut src = Source::new(c);
    for _ in 0..6 {
        src.send(Time::ZERO, Bytes::from_static(b"abc")).unwrap();
    }
    assert_eq!(sent_data(&mut src).len(), 6);
    // Reporter 1 holds 0..5; 5 is outstanding.
    src.handle_packet(
        Time::from_millis(5),
        NodeId(1),
        &status_packet(false, 1, 5, l, &[]),
    );
    assert_eq!(src.outstanding(), 1);
    let done_before = src.stats().completed;
    assert_eq!(done_before, 5);
    assert!(!src.replace_reporter(Time::from_millis(6), NodeId(1), reporter(1)));
    assert!(src.replace_reporter(Time::from_millis(6), NodeId(1), reporter(2)));
    assert!(
        !src.replace_reporter(Time::from_millis(6), NodeId(1), reporter(2)),
        "2 reports already"
    );
    // History: the 4 newest acknowledged blocks (1..5) plus outstanding 5.
    assert_eq!(src.outstanding(), 5);
    // The old reporter's status is ignored now.
    let ignored = src.stats().ignored;
    src.handle_packet(
        Time::from_millis(30),
        NodeId(1),
        &status_packet(false, 1, 6, l, &[]),
    );
    assert_eq!(src.stats().ignored, ignored + 1);
    assert_eq!(src.outstanding(), 5);
    // The new reporter holds everything below 2 and block 3: 2 and 4 are re-multicast
    // (sent long enough ago), 5 too.
    src.handle_packet(
        Time::from_millis(31),
        NodeId(2),
        &status_packet(false, 2, 2, l, &[1]),
    );
    let again = sent_data(&mut src);
    assert_eq!(again, [(2, true), (4, true), (5, true)]);
    assert_eq!(src.outstanding(), 3);
    src.close(Time::from_millis(40));
    src.handle_packet(
        Time::from_millis(41),
        NodeId(2),
        &status_packet(false, 2, 6, l, &[]),
    );
    assert_eq!(src.outstanding(), 0);
    assert_eq!(src.stats().completed, 6, "each message done once");
    let evs: Vec<Event> = core::iter::from_fn(|| src.poll_event()).collect();
    assert_eq!(evs.last(), Some(&Event::Completed));
}

/// A member keeps `standby` delivered blocks; elected designated, it repairs a member's
/// gap from them and reports to the source at once; stepping down, it reports to the
/// designated endpoint named and keeps only the standby blocks.
#[test]
fn an_elected_member_repairs_from_its_standby_blocks_and_can_step_down() {
    let l = 16;
    let (me, other, old) = (NodeId(2), NodeId(3), NodeId(1));
    let lg = GroupId(7);
    let mut c = EndpointConfig::new(me, NodeId(0), Role::Member { designated: old }, l);
    c.standby = 4;
    let mut e = Endpoint::new(c, AgentRng::from_seed(3));
    for s in 0..10 {
        e.handle_packet(Time::from_micros(10 * s), NodeId(0), &data_packet(s, b"x"));
    }
    assert_eq!(e.lw(), 10);
    assert_eq!(e.gauge(Gauge::Held), Some(4.0), "blocks 6..10 kept");
    assert_eq!(e.buffer_available(), l, "standby blocks take no buffer");
    while e.poll_transmit().is_some() {}
    let t = Time::from_millis(50);
    e.reassign(
        t,
        Role::Designated {
            members: vec![other],
            local_group: lg,
        },
    );
    assert_eq!(e.retx_len(), 4);
    assert_eq!(e.poll_timeout(), Some(t), "reports at once");
    e.handle_timeout(t);
    let st = e.poll_transmit().unwrap();
    assert_eq!(st.dest, Dest::Node(NodeId(0)));
    assert!(matches!(
        Packet::decode(&st.payload).unwrap().message,
        Message::Tree(wire::Message::Status(wire::Status { lw_r: 10, .. }))
    ));
    // The other member lacks 7: repaired on the local group; 5 is gone.
    e.handle_packet(
        Time::from_millis(60),
        other,
        &status_packet(true, 3, 5, l, &[0, 1, 3, 4]),
    );
    let repairs: Vec<(Dest, u64)> = core::iter::from_fn(|| e.poll_transmit())
        .filter_map(|t| match Packet::decode(&t.payload).unwrap().message {
            Message::Tree(wire::Message::LocalData { seq, .. }) => Some((t.dest, seq)),
            _ => None,
        })
        .collect();
    assert_eq!(repairs, [(Dest::Group(lg), 7)]);
    // Step down in favour of 3.
    e.reassign(Time::from_millis(70), Role::Member { designated: other });
    assert_eq!(e.retx_len(), 0);
    e.handle_timeout(Time::from_millis(70));
    let st = e.poll_transmit().unwrap();
    assert_eq!(st.dest, Dest::Node(other));
    assert!(matches!(
        Packet::decode(&st.payload).unwrap().message,
        Message::Tree(wire::Message::LocalStatus(_))
    ));
    assert_eq!(e.gauge(Gauge::Held), Some(4.0));
}

/// An endpoint that can be silenced: dead, it takes no packet and no timer (a crashed or
/// stalled host); it counts what it sends to the source once told to step down.
struct Killable {
    ep: Endpoint,
    dead: bool,
    stepped_down: bool,
    to_source_after: u64,
}

impl Agent for Killable {
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]) {
        if !self.dead {
            self.ep.handle_packet(now, from, packet);
        }
    }
    fn handle_timeout(&mut self, now: Time) {
        if !self.dead {
            self.ep.handle_timeout(now);
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        if self.dead {
            None
        } else {
            self.ep.poll_timeout()
        }
    }
    fn poll_transmit(&mut self) -> Option<crate::Transmit> {
        let t = self.ep.poll_transmit()?;
        if self.stepped_down && t.dest == Dest::Node(NodeId(0)) {
            self.to_source_after += 1;
        }
        Some(t)
    }
    fn poll_event(&mut self) -> Option<Event> {
        self.ep.poll_event()
    }
    fn outbox(&self) -> &Outbox {
        self.ep.outbox()
    }
    fn outbox_mut(&mut self) -> &mut Outbox {
        self.ep.outbox_mut()
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn core::any::Any> {
        Some(self)
    }
}

fn killable(h: &mut Harness, node: NodeId) -> &mut Killable {
    h.agent_mut(node)
        .and_then(|a| a.as_any_mut())
        .and_then(|a| a.downcast_mut::<Killable>())
        .unwrap()
}

/// One region of three on the testkit mesh with 10 % loss of every copy: the designated
/// endpoint (1) dies at 150 ms; 300 ms later the driver elects the lowest remaining id (2):
/// the source replaces its reporter, 2 becomes designated for 3, 3 re-points to 2. Both
/// survivors deliver every block exactly once, in order, and the source completes. With
/// `comes_back`, 1 was only stalled: it returns after the election (its statuses to the
/// source are ignored) and steps down when told (the announce, on sockets), after which it
/// sends nothing to the source and is repaired by 2 like any member.
fn region_of_three(seed: u64, comes_back: bool) {
    let l = 8;
    let n_blocks = 600u64;
    let mut h = Harness::new(Duration::from_millis(2), 0.10, seed);
    let (g, lg) = (GroupId(1), GroupId(2));
    let (d, m2, m3) = (NodeId(1), NodeId(2), NodeId(3));
    let mut sc = SourceConfig::new(NodeId(0), g, vec![reporter(1)], l);
    sc.rate_bps = 8_000_000;
    sc.history = 2 * l;
    assert_eq!(h.add(Box::new(Source::new(sc))), NodeId(0));
    let endpoint = |node: NodeId, role: Role| {
        let mut c = EndpointConfig::new(node, NodeId(0), role, l);
        c.local_rtd = Duration::from_millis(4);
        c.standby = 2 * l;
        Killable {
            ep: Endpoint::new(c, AgentRng::from_seed(seed + u64::from(node.0))),
            dead: false,
            stepped_down: false,
            to_source_after: 0,
        }
    };
    let designated = Role::Designated {
        members: vec![m2, m3],
        local_group: lg,
    };
    assert_eq!(h.add(Box::new(endpoint(d, designated))), d);
    for m in [m2, m3] {
        let e = endpoint(m, Role::Member { designated: d });
        assert_eq!(h.add(Box::new(e)), m);
    }
    h.set_group(g, vec![d, m2, m3]);
    h.set_group(lg, vec![m2, m3]);
    let mut next = 0u64;
    let mut t = Time::ZERO;
    let (kill, elect) = (Time::from_millis(150), Time::from_millis(450));
    let back = Time::from_millis(600);
    let step_down = Time::from_millis(700);
    let (mut killed, mut elected, mut revived, mut stepped) = (false, false, false, false);
    while t < Time::from_secs(20) {
        h.with_sender(NodeId(0), |a, now| feed_blocks(a, now, &mut next, n_blocks));
        t += Duration::from_millis(5);
        h.run_until(t);
        if !killed && t >= kill {
            killed = true;
            killable(&mut h, d).dead = true;
        }
        if !elected && t >= elect {
            elected = true;
            assert!(
                !h.events[0].iter().any(|(_, e)| *e == Event::Completed),
                "the source waits for the dead designated endpoint"
            );
            let done_before = h.done(0).len() as u64;
            assert!(done_before < n_blocks, "killed mid-transfer");
            h.with_agent(NodeId(0), |a, now| {
                let s = a.as_any_mut().unwrap().downcast_mut::<Source>().unwrap();
                assert!(s.replace_reporter(now, d, reporter(2)));
            });
            let now = h.now();
            let new_role = Role::Designated {
                members: vec![m3],
                local_group: lg,
            };
            killable(&mut h, m2).ep.reassign(now, new_role);
            h.drain(m2);
            killable(&mut h, m3)
                .ep
                .reassign(now, Role::Member { designated: m2 });
            h.drain(m3);
        }
        if comes_back && !revived && t >= back {
            revived = true;
            killable(&mut h, d).dead = false;
        }
        if comes_back && !stepped && t >= step_down {
            stepped = true;
            let now = h.now();
            let k = killable(&mut h, d);
            k.ep.reassign(now, Role::Member { designated: m2 });
            k.stepped_down = true;
            h.drain(d);
        }
        if h.events[0].iter().any(|(_, e)| *e == Event::Completed) {
            break;
        }
    }
    h.run_until(t + Duration::from_millis(500));
    assert!(elected);
    if !h.events[0].iter().any(|(_, e)| *e == Event::Completed) {
        for n in [1u32, 2, 3] {
            let k = killable(&mut h, NodeId(n));
            eprintln!(
                "seed {seed}: node {n} lw {} role {:?} held {:?} retx {} buf {}",
                k.ep.lw(),
                k.ep.role(),
                k.ep.gauge(Gauge::Held),
                k.ep.retx_len(),
                k.ep.buffer_available()
            );
        }
        let s = h.agent(NodeId(0)).unwrap();
        eprintln!(
            "source outstanding {:?} done {} ",
            s.gauge(Gauge::Held),
            h.done(0).len()
        );
    }
    assert!(
        h.events[0].iter().any(|(_, e)| *e == Event::Completed),
        "the source completes with the elected reporter"
    );
    let done: Vec<u64> = h.done(0).iter().map(|&(s, _)| s).collect();
    let mut sorted = done.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        (0..n_blocks).collect::<Vec<_>>(),
        "each block done once"
    );
    for node in [2usize, 3] {
        let seqs: Vec<u64> = h
            .delivered(node)
            .iter()
            .map(|(seq, data)| {
                assert_eq!(&data[..8], &seq.to_be_bytes());
                *seq
            })
            .collect();
        assert_eq!(seqs, (0..n_blocks).collect::<Vec<_>>(), "node {node}");
    }
    if comes_back {
        assert!(stepped);
        let k = killable(&mut h, d);
        assert_eq!(*k.ep.role(), Role::Member { designated: m2 });
        assert_eq!(k.to_source_after, 0, "stepped down: nothing to the source");
        let src = h.agent(NodeId(0)).unwrap();
        assert!(
            src.stats().ignored > 0,
            "its statuses after the election were ignored"
        );
    }
}

#[test]
fn dsp_survives_the_death_of_its_designated_endpoint() {
    for seed in [1, 2, 3, 4] {
        region_of_three(seed, false);
    }
}

#[test]
fn a_designated_endpoint_that_stalls_and_returns_steps_down() {
    for seed in [5, 6] {
        region_of_three(seed, true);
    }
}
