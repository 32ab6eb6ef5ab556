//! What every `rmcast-wire` fuzz target checks, written once: a datagram the decoder accepts
//! re-encodes to exactly its bytes and decodes again to the same packet, and the helpers that
//! read inside a body (member and outcome lists, `dsp` parameters, `xtp` records, `prmp`
//! child lists, `srm` session entries) never panic on what the decoder let through.
//!
//! A per-family target gives the fuzzer a valid header for its family (kind, flags and body
//! from the input, the length field computed) so its mutations land in that family's body
//! decoder instead of being spent on finding the magic bytes and a matching length.

use rmcast_wire::{
    prmp, session, srm, xtp, Envelope, Family, Message, Packet, HEADER_LEN, KNOWN_FLAGS, MAGIC,
    MAX_PAYLOAD, VERSION,
};

/// A datagram of `family`: input byte 0 is the kind, byte 1 the flags (unknown bits
/// cleared), the rest the body; `None` if the body is larger than a datagram can carry.
pub fn datagram(family: Family, data: &[u8]) -> Option<Vec<u8>> {
    let (&kind, rest) = data.split_first()?;
    let (&flags, body) = rest.split_first()?;
    if body.len() > MAX_PAYLOAD {
        return None;
    }
    let mut d = Vec::with_capacity(HEADER_LEN + body.len());
    d.extend_from_slice(&MAGIC.to_be_bytes());
    d.push(VERSION);
    d.push(family as u8);
    d.push(kind);
    d.push(flags & KNOWN_FLAGS);
    d.extend_from_slice(&[0, 0]);
    d.extend_from_slice(&0x5e55_1017u32.to_be_bytes());
    d.extend_from_slice(&0x0000_0042u32.to_be_bytes());
    d.extend_from_slice(&(body.len() as u32).to_be_bytes());
    d.extend_from_slice(body);
    Some(d)
}

/// Fuzz one family's decoder with `data` (see [`datagram`]).
pub fn family(family: Family, data: &[u8]) {
    if let Some(d) = datagram(family, data) {
        let accepted = check(&d);
        if let Some(f) = accepted {
            assert_eq!(f, family, "decoded as another family");
        }
    }
    if family == Family::Session {
        // The `dsp` parameters an ANNOUNCE carries have their own decoder: fuzz it directly.
        dsp_params(data);
    }
}

/// Decode `datagram`; if accepted, check the round trip and read inside the body. Returns the
/// family of an accepted datagram.
pub fn check(datagram: &[u8]) -> Option<Family> {
    let p = Packet::decode(datagram).ok()?;
    let env = Envelope {
        session: p.header.session,
        source: p.header.source,
        flags: p.header.flags,
    };
    let again = Packet::to_vec(env, &p.message).expect("an accepted packet re-encodes");
    assert_eq!(again, datagram, "encode(decode(x)) != x");
    let back = Packet::decode(&again).expect("a re-encoded packet decodes");
    assert_eq!(back, p, "decode(encode(p)) != p");
    inside(&p.message);
    Some(p.header.family)
}

/// The helpers that read inside an accepted body.
fn inside(m: &Message<'_>) {
    match m {
        Message::Session(session::Message::Announce {
            members, params, ..
        }) => {
            assert_eq!(session::members(members).count(), members.len() / 4);
            dsp_params(params);
        }
        Message::Session(session::Message::End { outcomes }) => {
            assert_eq!(session::outcomes(outcomes).count(), outcomes.len() / 5);
        }
        Message::Xtp(xtp::Message::Data { payload, .. }) => {
            let _ = xtp::records(payload).count();
        }
        Message::Xtp(xtp::Message::Cntl(s) | xtp::Message::Fastnak(s)) => {
            assert_eq!(s.spans.iter().count(), s.spans.len());
        }
        Message::Prmp(prmp::Message::Poll { cld, .. } | prmp::Message::DataPoll { cld, .. }) => {
            assert_eq!(cld.iter().count(), cld.len());
        }
        Message::Srm(srm::Message::Session { entries, .. }) => {
            assert_eq!(entries.iter().count(), entries.len());
        }
        _ => {}
    }
}

/// `DspParams::decode`: whatever it accepts encodes back to the same bytes.
fn dsp_params(raw: &[u8]) {
    if let Ok(d) = session::DspParams::decode(raw) {
        let again = d.encode().expect("accepted dsp parameters re-encode");
        assert_eq!(again, raw, "dsp parameters: encode(decode(x)) != x");
        assert_eq!(session::DspParams::decode(&again).as_ref(), Ok(&d));
    }
}
