use super::*;
use rmcast_wire::norm::{Message as Norm, Request, Requests};
use rmcast_wire::rfc5740::Body;
use rmcast_wire::{Envelope, Message as Agent, Packet};

const SESSION: u32 = 0x7e57_0001;
const SENDER: u32 = 42;
const RECEIVER: u32 = 1001;

fn group() -> SocketAddr {
    "239.1.2.3:5000".parse().unwrap()
}

fn framing(session: u32) -> Framing {
    Framing {
        session,
        sender: SENDER,
    }
}

fn agent(source: u32, m: Norm<'_>) -> Vec<u8> {
    let env = Envelope {
        session: SESSION,
        source,
        flags: 0,
    };
    Packet::to_vec(env, &Agent::Norm(m)).unwrap()
}

/// The sender's and a receiver's translation.
fn pair() -> (NormWire, NormWire) {
    let s = NormWire::new(framing(SESSION), group(), SENDER).unwrap();
    let r = NormWire::new(framing(SESSION), group(), RECEIVER).unwrap();
    (s, r)
}

#[test]
fn data_goes_to_the_data_port_as_rfc5740_and_comes_back_the_agent_s() {
    let (mut s, mut r) = pair();
    let d = agent(
        SENDER,
        Norm::Data {
            object: 1,
            block: 2,
            symbol: 5,
            block_len: 64,
            payload: b"segment",
        },
    );
    let (to, wire) = s.outgoing(group(), &d).unwrap();
    assert_eq!(to, "239.1.2.3:5001".parse().unwrap());
    let m = Message::decode(&wire).unwrap();
    assert_eq!(m.source_id, SENDER);
    let Body::Data { sender, obj, .. } = &m.body else {
        panic!("{m:?}")
    };
    assert_eq!(sender.instance_id, instance_of(SESSION));
    assert_eq!(obj.object, 1);
    // The sender's own multicast looped back is its echo; the receiver reads it.
    assert!(s.echo(&wire) && !r.echo(&wire));
    let back = r.incoming(&wire).unwrap();
    assert_eq!(Packet::decode(&back).unwrap(), Packet::decode(&d).unwrap());
}

#[test]
fn the_largest_parity_symbol_fits_the_datagram_norm_sizes_messages_for() {
    let (mut s, _) = pair();
    // A parity symbol of a full segment: the message, the application framing and the
    // symbol's length prefix (`agents::norm`'s data fields).
    let symbol = vec![0xa5; 1_400 + crate::frame::DATA_OVERHEAD + rmcast_proto::fec::LEN_PREFIX];
    let d = agent(
        SENDER,
        Norm::Data {
            object: 1,
            block: 2,
            symbol: 64 + 15,
            block_len: 64,
            payload: &symbol,
        },
    );
    let (_, wire) = s.outgoing(group(), &d).unwrap();
    eprintln!("agent's {} bytes, RFC 5740's {}", d.len(), wire.len());
    assert!(wire.len() <= 1_472, "{}", wire.len());
}

#[test]
fn a_nack_goes_to_the_group_s_data_port_and_names_its_receiver() {
    let (mut s, mut r) = pair();
    let mut raw = Vec::new();
    let one = Request {
        object: 1,
        block: 2,
        first: 3,
        count: 1,
    };
    Requests::encode([one], &mut raw);
    let d = agent(
        RECEIVER,
        Norm::Nack {
            server: SENDER,
            grtt_response_us: 1_000,
            requests: Requests::from_raw(&raw).unwrap(),
        },
    );
    let (to, wire) = r.outgoing(group(), &d).unwrap();
    assert_eq!(to, "239.1.2.3:5001".parse().unwrap());
    let m = Message::decode(&wire).unwrap();
    assert!(
        matches!(
            m.body,
            Body::Nack {
                server_id: SENDER,
                ..
            }
        ),
        "{m:?}"
    );
    assert!(r.echo(&wire) && !s.echo(&wire));
    let back = s.incoming(&wire).unwrap();
    let back = Packet::decode(&back).unwrap();
    assert_eq!(back.header.source, RECEIVER);
    assert!(matches!(back.message, Agent::Norm(Norm::Nack { .. })));
}

#[test]
fn the_session_layer_and_unicasts_go_unchanged_and_other_sessions_are_not_read() {
    let (mut s, mut r) = pair();
    let session = Packet::to_vec(
        Envelope {
            session: SESSION,
            source: SENDER,
            flags: 0,
        },
        &Agent::Session(rmcast_wire::session::Message::End { outcomes: &[] }),
    )
    .unwrap();
    assert_eq!(
        s.outgoing(group(), &session),
        Some((group(), session.clone()))
    );
    let d = agent(
        SENDER,
        Norm::Squelch {
            object: 1,
            block: 0,
            symbol: 0,
        },
    );
    let one: SocketAddr = "10.0.0.2:41000".parse().unwrap();
    assert_eq!(s.outgoing(one, &d), Some((one, d.clone())));
    // rmcast's own bytes on the data port are no RFC 5740 message of the session.
    assert!(r.incoming(&d).is_none());
    // Another session's instance.
    let mut other = NormWire::new(framing(SESSION + 1), group(), SENDER).unwrap();
    let (_, wire) = other.outgoing(group(), &d).unwrap();
    assert!(Message::decode(&wire).is_ok());
    assert!(r.incoming(&wire).is_none());
    assert!(r.incoming(&s.outgoing(group(), &d).unwrap().1).is_some());
}

#[test]
fn the_announce_flag_is_read_from_the_first_parameter_byte() {
    assert!(announced(&[PARAM_RFC5740]));
    assert!(!announced(&[]) && !announced(&[0]));
}

/// A running (or gathering) ANNOUNCE of norm with `params`.
fn announce(params: &[u8], running: bool) -> crate::agents::Announced<'_> {
    crate::agents::Announced {
        protocol: rmcast_wire::Family::Norm as u8,
        window: 0,
        ack_delay_us: 0,
        ack_timeout_us: 0,
        params,
        running,
    }
}

#[test]
fn the_norm_adapter_announces_rfc5740_and_its_receivers_read_it_on_the_data_port() {
    let norm = crate::agents::protocol("norm").unwrap();
    let mut st = crate::agents::tests::settings();
    st.session = SESSION;
    st.node = SENDER;
    st.norm_rfc5740 = true;
    let start = crate::agents::Start {
        joined: &[],
        group: group(),
        stream: "",
    };
    assert_eq!(
        norm.start(&st, &start).unwrap().side.params().unwrap(),
        vec![PARAM_RFC5740]
    );
    assert_eq!(
        norm.framing(&st),
        Some(crate::framing::Framing::Rfc5740(framing(SESSION)))
    );
    let data: SocketAddr = "239.1.2.3:5001".parse().unwrap();
    assert_eq!(norm.early_group(group(), false), Some(data));
    assert_eq!(norm.early_group(group(), true), None, "keyed: sealed whole");
    let me = crate::agents::Me {
        node: RECEIVER,
        session: SESSION,
        sender: SENDER,
        group: group(),
    };
    let flag = [PARAM_RFC5740];
    // Built from the running ANNOUNCE only: the gathering one carries no parameters.
    assert!(norm
        .receiver(announce(&flag, false), &me)
        .unwrap()
        .is_none());
    let r = norm.receiver(announce(&flag, true), &me).unwrap().unwrap();
    assert_eq!(r.side.join(), Some(data));
    assert_eq!(
        r.side.framing(),
        Some(crate::framing::Framing::Rfc5740(framing(SESSION)))
    );
    let plain = norm.receiver(announce(&[], true), &me).unwrap().unwrap();
    assert!(plain.side.join().is_none() && plain.side.framing().is_none());
    // Keyed (or `--rmcast-header`): nothing announced, nothing translated.
    st.norm_rfc5740 = false;
    assert!(norm.framing(&st).is_none());
    assert!(norm
        .start(&st, &start)
        .unwrap()
        .side
        .params()
        .unwrap()
        .is_empty());
    assert!(norm.check_params(&flag).is_ok() && norm.check_params(&[]).is_ok());
    assert!(norm.check_params(&[0x01]).is_err() && norm.check_params(&[2, 0]).is_err());
}
