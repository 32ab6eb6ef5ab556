//! NAK lists (NAKL, NCFL): a receiver asks for the losses of one instant in one NAK, the
//! source and network elements confirm them in one NCF.

use super::tests::{harness_with, ne, odata, pkt, rdata, up, G};
use super::*;
use crate::SenderAgent;
use crate::{IfaceId, RouteDecision, RouterAgent};
use rmcast_wire::Packet;

/// What `out` queued since the last call: each NAK or NCF as its kind and numbers, repairs
/// as ("rdata", [seq]).
fn kinds(poll: impl FnMut() -> Option<crate::Transmit>) -> Vec<(&'static str, Vec<u64>)> {
    std::iter::from_fn(poll)
        .filter_map(|t| match Packet::decode(&t.payload).unwrap().message {
            Message::Pgm(m) => Some(match m {
                wire::Message::Nak { seq } => ("nak", vec![seq]),
                wire::Message::Ncf { seq } => ("ncf", vec![seq]),
                wire::Message::NakList { seqs } => ("nakl", seqs.iter().collect()),
                wire::Message::NcfList { seqs } => ("ncfl", seqs.iter().collect()),
                wire::Message::Rdata { seq, .. } => ("rdata", vec![seq]),
                _ => return None,
            }),
            _ => None,
        })
        .collect()
}

fn list(seqs: &[u64], ncf: bool) -> Vec<u8> {
    let mut raw = Vec::new();
    wire::SeqList::encode_seqs(seqs.iter().copied(), &mut raw);
    let seqs = wire::SeqList::from_raw(&raw).unwrap();
    pkt(
        7,
        if ncf {
            wire::Message::NcfList { seqs }
        } else {
            wire::Message::NakList { seqs }
        },
    )
}

/// A receiver (no back-off) naming up to `most` losses per NAK.
fn receiver(most: u16) -> Receiver {
    let mut c = ReceiverConfig::new(NodeId(7), NodeId(0));
    c.nak_list = most;
    Receiver::new(c, AgentRng::derive(1, NodeId(7), 0))
}

#[test]
fn losses_found_together_go_in_one_nak_list_and_one_ncf_list_answers_them() {
    let t = Time::from_millis(1);
    let mut r = receiver(63);
    r.handle_packet(t, NodeId(0), &odata(0, b"a"));
    r.handle_packet(t, NodeId(0), &odata(5, b"f"));
    assert!(
        r.poll_transmit().is_none(),
        "the instant's NAKs wait for its end"
    );
    assert_eq!(r.poll_timeout(), Some(t));
    r.handle_timeout(t);
    assert_eq!(kinds(|| r.poll_transmit()), [("nakl", vec![1, 2, 3, 4])]);
    // One NCF list moves every loss it names to waiting for its data.
    r.handle_packet(t, NodeId(0), &list(&[1, 2, 3, 4], true));
    for seq in 1..5 {
        assert_eq!(r.lost.get(seq), Some(&Phase::WaitData), "{seq}");
    }
    for seq in 1..5 {
        r.handle_packet(t, NodeId(0), &rdata(seq, b"x"));
    }
    assert!(r.lost.is_empty());
    // Without lists, the same gap costs a NAK per loss.
    let mut one = receiver(1);
    one.handle_packet(t, NodeId(0), &odata(0, b"a"));
    one.handle_packet(t, NodeId(0), &odata(5, b"f"));
    let naks = kinds(|| one.poll_transmit());
    assert_eq!(naks.len(), 4);
    assert!(naks.iter().all(|(k, _)| *k == "nak"));
}

/// A list holds at most `nak_list` numbers: a full one leaves at once, the rest at the end
/// of the instant, one loss as a plain NAK; a loss repaired before the instant ends is not
/// asked for.
#[test]
fn more_losses_than_a_list_holds_go_in_several_and_a_repaired_one_in_none() {
    let t = Time::from_millis(1);
    let mut r = receiver(3);
    r.handle_packet(t, NodeId(0), &odata(0, b"a"));
    r.handle_packet(t, NodeId(0), &odata(9, b"j"));
    assert_eq!(
        kinds(|| r.poll_transmit()),
        [("nakl", vec![1, 2, 3]), ("nakl", vec![4, 5, 6])]
    );
    r.handle_packet(t, NodeId(0), &odata(8, b"i"));
    r.handle_timeout(t);
    assert_eq!(kinds(|| r.poll_transmit()), [("nak", vec![7])]);
}

#[test]
fn the_source_answers_a_nak_list_with_one_ncf_list_and_a_repair_each_outside_its_hold_off() {
    let mut c = SourceConfig::new(NodeId(0), G);
    c.spm_interval = None;
    c.rdata_holdoff = Duration::from_millis(20);
    let mut s = Source::new(c);
    for b in [b"a", b"b", b"c", b"d"] {
        s.send(Time::ZERO, Bytes::from_static(b)).unwrap();
    }
    while s.poll_transmit().is_some() {}
    let at = |ms| Time::from_millis(ms);
    s.handle_packet(at(1), NodeId(7), &list(&[0, 2, 3], false));
    assert_eq!(
        kinds(|| s.poll_transmit()),
        [
            ("ncfl", vec![0, 2, 3]),
            ("rdata", vec![0]),
            ("rdata", vec![2]),
            ("rdata", vec![3])
        ]
    );
    // Within the hold-off only 1 is new: a plain NCF and its repair.
    s.handle_packet(at(2), NodeId(7), &list(&[0, 1, 2], false));
    assert_eq!(
        kinds(|| s.poll_transmit()),
        [("ncf", vec![1]), ("rdata", vec![1])]
    );
    s.handle_packet(at(3), NodeId(7), &list(&[0, 2], false));
    assert!(s.poll_transmit().is_none());
    assert_eq!((s.naks_received, s.naks_held_off), (8, 4));
    // Numbers the source never sent are ignored.
    s.handle_packet(at(30), NodeId(7), &list(&[9, 10], false));
    assert!(s.poll_transmit().is_none());
}

/// A network element confirms every number of a NAK list down the asking interface, and
/// sends upstream only those it has no fresh repair state for: the whole list when all are
/// new, a shorter list (in the asker's name) when some are, nothing when none is.
#[test]
fn a_network_element_forwards_only_the_new_part_of_a_nak_list() {
    let mut r = ne();
    assert_eq!(
        up(&mut r, 1, 7, &list(&[3, 6], false)),
        RouteDecision::Forward
    );
    assert_eq!(
        kinds(|| r.poll_transmit().map(|t| t.transmit)),
        [("ncfl", vec![3, 6])]
    );
    assert_eq!(
        up(&mut r, 2, 8, &list(&[2, 3, 4], false)),
        RouteDecision::Consume
    );
    let sent: Vec<_> = std::iter::from_fn(|| r.poll_transmit()).collect();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].via, Some(vec![IfaceId(2)]));
    assert_eq!(sent[1].transmit.dest, Dest::Node(NodeId(0)));
    let p = Packet::decode(&sent[1].transmit.payload).unwrap();
    assert_eq!(p.header.source, NodeId(8).0);
    match p.message {
        Message::Pgm(wire::Message::NakList { seqs }) => {
            assert_eq!(seqs.iter().collect::<Vec<_>>(), [2, 4])
        }
        m => panic!("{m:?}"),
    }
    assert_eq!(r.interfaces(3), [IfaceId(1), IfaceId(2)]);
    assert_eq!(
        up(&mut r, 3, 9, &list(&[2, 4], false)),
        RouteDecision::Consume
    );
    assert_eq!(
        kinds(|| r.poll_transmit().map(|t| t.transmit)),
        [("ncfl", vec![2, 4])]
    );
}

/// End to end over 10 % loss: with lists every receiver still gets every message, with fewer
/// NAK datagrams than a NAK per loss.
#[test]
fn harness_end_to_end_with_nak_lists_delivers_everything_with_fewer_naks() {
    let (_, one) = harness_with(0, 0, 1, 300, 1, "pgm, a NAK per loss");
    let (_, lists) = harness_with(0, 0, 63, 300, 1, "pgm with NAK lists");
    assert!(
        lists < one,
        "{lists} NAK datagrams with lists, {one} without"
    );
}

/// With `nak_overtaken`, the repair of a loss confirmed later arriving first means the
/// earlier ones' repairs were lost: they are asked for again at once, the later-confirmed
/// one still awaited is not; without it, only their waits would ask again. When no awaited
/// repair comes for a tail probe's time, the rest are asked for again.
#[test]
fn a_repair_that_overtakes_awaited_ones_asks_for_them_again_at_once() {
    let t = Time::from_millis(1);
    let t2 = Time::from_millis(3);
    for overtaken in [true, false] {
        let mut c = ReceiverConfig::new(NodeId(7), NodeId(0));
        c.nak_list = 63;
        c.nak_overtaken = overtaken;
        let mut r = Receiver::new(c, AgentRng::derive(1, NodeId(7), 0));
        r.handle_packet(t, NodeId(0), &odata(0, b"a"));
        r.handle_packet(t, NodeId(0), &odata(5, b"f"));
        r.handle_timeout(t);
        assert_eq!(kinds(|| r.poll_transmit()), [("nakl", vec![1, 2, 3, 4])]);
        r.handle_packet(t, NodeId(0), &list(&[1, 2, 3, 4], true));
        r.handle_packet(t2, NodeId(0), &rdata(3, b"x"));
        if r.poll_timeout() == Some(t2) {
            r.handle_timeout(t2);
        }
        let sent = kinds(|| r.poll_transmit());
        if !overtaken {
            assert!(sent.is_empty(), "{sent:?}");
            continue;
        }
        assert_eq!(
            sent,
            [("nakl", vec![1, 2])],
            "1 and 2 were overtaken, 4 was not"
        );
        assert_eq!(r.lost.get(4), Some(&Phase::WaitData));
        // Confirmed again, 1 and 2 queue behind 4; nothing more comes: at the tail probe
        // (the fixed NAK repeat interval, no round trip measured) all three are asked for.
        r.handle_packet(t2, NodeId(0), &list(&[1, 2], true));
        let probe = t2 + r.cfg.nak_repeat;
        assert!(r.cfg.nak_repeat < r.cfg.nak_rdata, "the probe comes first");
        let mut now = t2;
        while now < probe {
            now = r.poll_timeout().unwrap();
            r.handle_timeout(now);
        }
        assert_eq!(now, probe);
        while r.poll_timeout() == Some(probe) {
            r.handle_timeout(probe);
        }
        assert_eq!(kinds(|| r.poll_transmit()), [("nakl", vec![1, 2, 4])]);
    }
}
