//! One message of every kind of every family, for tests: the wire crate's golden-bytes and
//! mutation tests (`tests/samples.rs`, `tests/fuzz.rs`) and, through the `samples` feature,
//! the Wireshark dissector's test in `rmcast`, so the two check the same messages.

use crate::FLAG_RETRANSMISSION;
use crate::{bap, ff, lms, pgm, prmp, rra, saw, session, srm, tree, xtp, Envelope, Message};

/// The application data of the samples that carry some.
pub const P: &[u8] = &[0xaa, 0xbb, 0xcc];

/// The envelope of the samples sent for the first time.
pub const ENV: Envelope = Envelope {
    session: 0x0102_0304,
    source: 0x0a0b_0c0d,
    flags: 0,
};

/// The envelope of the samples that are retransmissions.
pub const RX: Envelope = Envelope {
    flags: FLAG_RETRANSMISSION,
    ..ENV
};

/// One message of every kind of every family (two or three of the kinds whose layout
/// varies), with the envelope it is sent with.
pub fn every_kind() -> Vec<(Envelope, Message<'static>)> {
    [
        saw_samples(),
        bap_samples(),
        rra_samples(),
        tree_samples(),
        prmp_samples(),
        xtp_samples(),
        srm_samples(),
        pgm_samples(),
        lms_samples(),
        ff_samples(),
        session_samples(),
    ]
    .concat()
}

/// Stop-and-wait: DATA (sent for the first time, and an empty retransmission) and ACK.
fn saw_samples() -> Vec<(Envelope, Message<'static>)> {
    let (env, rx) = (ENV, RX);
    vec![
        (env, Message::Saw(saw::Message::Data { seq: 1, payload: P })),
        (
            rx,
            Message::Saw(saw::Message::Data {
                seq: 0,
                payload: &[],
            }),
        ),
        (env, Message::Saw(saw::Message::Ack { seq: 1 })),
    ]
}

/// One message of each BAP (block acknowledgment) kind.
fn bap_samples() -> Vec<(Envelope, Message<'static>)> {
    let env = ENV;
    vec![
        (
            env,
            Message::Bap(bap::Message::Data {
                seq: 0x1234,
                first: 0xfedc,
                payload: P,
            }),
        ),
        (env, Message::Bap(bap::Message::Ack { seq: 0xabcd })),
    ]
}

/// One message of each RRA (round-robin acknowledgment) kind, the ACK with a bitmap and
/// without one.
fn rra_samples() -> Vec<(Envelope, Message<'static>)> {
    let env = ENV;
    vec![
        (
            env,
            Message::Rra(rra::Message::Data {
                seq: 0x0102_0304_0506_0708,
                low: 3,
                acker: rra::NO_ACKER,
                payload: P,
            }),
        ),
        (env, rra_ack(57, &[0x5a, 0x01, 0x01])),
        (env, rra_ack(39, &[])),
        (env, Message::Rra(rra::Message::Poll { upto: 9, low: 2 })),
    ]
}

/// One message of each kind of the tree protocols (DSP, CSP, CP).
fn tree_samples() -> Vec<(Envelope, Message<'static>)> {
    let (env, rx) = (ENV, RX);
    vec![
        (
            env,
            Message::Tree(tree::Message::Status(tree::Status {
                vc: 1,
                id: 2,
                k: 3,
                l: 21,
                lw_r: 400,
                buffer_available: 12,
                lob: &[0xff, 0x0f, 0x10],
            })),
        ),
        (
            env,
            Message::Tree(tree::Message::LocalStatus(tree::Status {
                vc: 5,
                id: 6,
                k: 7,
                l: 8,
                lw_r: 9,
                buffer_available: 10,
                lob: &[0x81],
            })),
        ),
        (
            rx,
            Message::Tree(tree::Message::LocalData {
                lmvci: 4,
                seq: 8,
                payload: P,
            }),
        ),
        (
            env,
            Message::Tree(tree::Message::Data {
                mvci: 4,
                seq: 8,
                payload: P,
            }),
        ),
        (
            env,
            Message::Tree(tree::Message::Assign {
                lmvci: 4,
                lepi: 5,
                l: 9,
                base: 77,
                bits: &[0xff, 0x01],
            }),
        ),
    ]
}

/// One message of each PRMP kind, the RESP with a bitmap and without one.
fn prmp_samples() -> Vec<(Envelope, Message<'static>)> {
    let env = ENV;
    let mut raw = Vec::new();
    prmp::ChildList::encode_ids([1u32, 0xdead_beef, 7], &mut raw);
    let cld = prmp::ChildList::from_raw(Vec::leak(raw)).unwrap();
    vec![
        (
            env,
            Message::Prmp(prmp::Message::Data {
                seq: 77,
                payload: P,
            }),
        ),
        (
            env,
            Message::Prmp(prmp::Message::Poll { ts: 9, seq: 3, cld }),
        ),
        (
            env,
            Message::Prmp(prmp::Message::DataPoll {
                seq: 77,
                ts: 123_456_789,
                poll_seq: 79,
                cld,
                payload: P,
            }),
        ),
        (env, prmp_resp((70, 90), &[0xf0, 0x0f, 0x01])),
        (env, prmp_resp((0, prmp::NO_HR), &[])),
    ]
}

/// One message of each XTP kind.
fn xtp_samples() -> Vec<(Envelope, Message<'static>)> {
    let env = ENV;
    let mut raw = Vec::new();
    xtp::Spans::encode(
        [
            xtp::Span { left: 5, right: 9 },
            xtp::Span {
                left: 11,
                right: 300,
            },
        ],
        &mut raw,
    );
    let spans = xtp::Spans::from_raw(Vec::leak(raw)).unwrap();
    vec![
        (
            env,
            Message::Xtp(xtp::Message::First {
                seq: 0,
                sync: 1,
                options: xtp::opt::SREQ | xtp::opt::MULTI,
                spec: xtp::TrafficSpec {
                    service: xtp::Service::ReliableMulticast,
                    retx: xtp::Retx::Selective,
                    maxdata: 1448,
                    rate: 0x0102_0304,
                    window: 64,
                },
            }),
        ),
        (
            env,
            Message::Xtp(xtp::Message::Data {
                seq: 41,
                sync: 3,
                options: xtp::opt::EOM,
                payload: P,
            }),
        ),
        (
            env,
            Message::Xtp(xtp::Message::Cntl(xtp::Status {
                rseq: 4,
                echo: 3,
                options: 0,
                alloc: 104,
                spans,
            })),
        ),
        (
            env,
            Message::Xtp(xtp::Message::Fastnak(xtp::Status {
                rseq: 4,
                echo: 0,
                options: xtp::opt::FASTNAK,
                alloc: 104,
                spans: xtp::Spans::EMPTY,
            })),
        ),
    ]
}

/// One message of each SRM kind.
fn srm_samples() -> Vec<(Envelope, Message<'static>)> {
    let (env, rx) = (ENV, RX);
    let mut raw = Vec::new();
    srm::SessionEntries::encode(
        [
            srm::SessionEntry {
                node: 3,
                echo_ts: 0x1122_3344_5566_7788,
                delay_us: 9,
            },
            srm::SessionEntry {
                node: 4,
                echo_ts: 5,
                delay_us: 6,
            },
        ],
        &mut raw,
    );
    let entries = srm::SessionEntries::from_raw(Vec::leak(raw)).unwrap();
    vec![
        (env, Message::Srm(srm::Message::Data { seq: 5, payload: P })),
        (
            env,
            Message::Srm(srm::Message::Request {
                sender: 0x0102_0304,
                round: 2,
                seq: 44,
                dist_ns: 1_000_000,
            }),
        ),
        (
            rx,
            Message::Srm(srm::Message::Repair {
                sender: 1,
                requester: 5,
                round: 1,
                seq: 44,
                dist_ns: 7,
                payload: P,
            }),
        ),
        (
            env,
            Message::Srm(srm::Message::Session {
                ts: 77,
                next_seq: 12,
                entries,
            }),
        ),
    ]
}

/// One message of each PGM kind.
fn pgm_samples() -> Vec<(Envelope, Message<'static>)> {
    let (env, rx) = (ENV, RX);
    vec![
        (
            env,
            Message::Pgm(pgm::Message::Odata { seq: 5, payload: P }),
        ),
        (rx, Message::Pgm(pgm::Message::Rdata { seq: 5, payload: P })),
        (env, Message::Pgm(pgm::Message::Nak { seq: 9 })),
        (env, Message::Pgm(pgm::Message::Ncf { seq: 10 })),
        (
            env,
            Message::Pgm(pgm::Message::Spm {
                spm_seq: 3,
                trail: 10,
                lead: 20,
            }),
        ),
        (
            rx,
            Message::Pgm(pgm::Message::Parity {
                block: 7,
                index: 2,
                k: 16,
                payload: P,
            }),
        ),
        (
            env,
            Message::Pgm(pgm::Message::BlockNak { block: 7, total: 3 }),
        ),
        (
            env,
            Message::Pgm(pgm::Message::BlockNcf { block: 7, total: 4 }),
        ),
        (
            env,
            Message::Pgm(pgm::Message::Status {
                round: 3,
                rate: 12_500_000,
                suppress: u64::MAX,
                clr: 0x0a0b_0c0e,
                r_max_us: 2_000,
                echo_node: 0x0a0b_0c0e,
                echo_ts_us: 1_000_000,
                echo_delay_us: 50,
                flags: 1,
            }),
        ),
        (
            env,
            Message::Pgm(pgm::Message::Feedback {
                round: 3,
                ts_us: 1_000_000,
                rtt_us: 1_500,
                rate: 11_000_000,
                recv_rate: 12_000_000,
                loss_ppm: 10_000,
                flags: 3,
            }),
        ),
        (
            env,
            Message::Pgm(pgm::Message::NakList {
                seqs: seq_list(&[9, 12, 40]),
            }),
        ),
        (
            env,
            Message::Pgm(pgm::Message::NcfList {
                seqs: seq_list(&[9, 40]),
            }),
        ),
    ]
}

/// A NAK list of `seqs` (increasing) that lives as long as the samples.
fn seq_list(seqs: &[u64]) -> pgm::SeqList<'static> {
    let mut raw = Vec::new();
    pgm::SeqList::encode_seqs(seqs.iter().copied(), &mut raw);
    pgm::SeqList::from_raw(Vec::leak(raw)).unwrap()
}

/// One message of each LMS kind.
fn lms_samples() -> Vec<(Envelope, Message<'static>)> {
    let (env, rx) = (ENV, RX);
    vec![
        (env, Message::Lms(lms::Message::Data { seq: 1, payload: P })),
        (
            env,
            Message::Lms(lms::Message::Request {
                seq: 8,
                attempt: 0x0102,
            }),
        ),
        (
            env,
            Message::Lms(lms::Message::Dreq {
                seq: 8,
                requester: 4,
                tp: 2,
                tp_iface: 1,
                attempt: 3,
            }),
        ),
        (
            rx,
            Message::Lms(lms::Message::Repair {
                seq: 8,
                tp: lms::NO_TP,
                tp_iface: 1,
                payload: P,
            }),
        ),
        (env, Message::Lms(lms::Message::Heartbeat { lead: 99 })),
        (env, Message::Lms(lms::Message::Refresh { cost: 0x0a0b })),
    ]
}

/// One message of each FF kind.
fn ff_samples() -> Vec<(Envelope, Message<'static>)> {
    let env = ENV;
    vec![
        (
            env,
            Message::Ff(ff::Message::Data {
                seq: 1,
                ts: 2,
                payload: P,
            }),
        ),
        (env, Message::Ff(ff::Message::Ack { seq: 12, ts: 34 })),
        (
            env,
            Message::Ff(ff::Message::CumAck {
                seq: 12,
                ts: 34,
                cum: 9,
            }),
        ),
    ]
}

/// One message of each kind of the session layer every protocol shares.
fn session_samples() -> Vec<(Envelope, Message<'static>)> {
    let env = ENV;
    let members = Vec::leak(session::encode_members(&[1, 2, 0xffff_ffff]));
    let held = Vec::leak(session::encode_held(&[session::Held {
        size: 1000,
        held: 600,
        name_key: 0x0102_0304_0506_0708,
        digest: [7; 32],
    }]));
    let outcomes = Vec::leak(session::encode_outcomes(&[
        (1, session::Outcome::Completed),
        (9, session::Outcome::Failed),
    ]));
    vec![
        (
            env,
            Message::Session(session::Message::Announce {
                protocol: 2,
                phase: session::Phase::Running,
                security: 3,
                ack_delay_us: 1000,
                window: 16,
                ack_timeout_us: 5000,
                members,
                params: &P[..2],
            }),
        ),
        (
            env,
            Message::Session(session::Message::Join { region: None }),
        ),
        (
            env,
            Message::Session(session::Message::Join {
                region: Some(0x0304),
            }),
        ),
        (
            env,
            Message::Session(session::Message::Report {
                state: session::ReportState::Failed,
                reason: 4,
                bytes: 1,
                messages: 2,
                repairs: 3,
                duplicates: 4,
                rejected: 5,
            }),
        ),
        (env, Message::Session(session::Message::End { outcomes })),
        (
            env,
            Message::Session(session::Message::Have { files: held }),
        ),
    ]
}

/// An RRA ACK of a receiver holding everything below 40, reporting up to `upto`.
fn rra_ack(upto: u64, bitmap: &'static [u8]) -> Message<'static> {
    Message::Rra(rra::Message::Ack {
        cum: 40,
        upto,
        bitmap,
    })
}

/// A PRMP RESP to the poll sent at 5,000 ns with `HS` 80, reporting the window `le ..= hr`.
fn prmp_resp((le, hr): (u64, u64), bitmap: &'static [u8]) -> Message<'static> {
    Message::Prmp(prmp::Message::Resp {
        ts: 5_000,
        seq: 80,
        le,
        hr,
        bitmap,
    })
}
