//! The fixed fields and the content of each message type (RFC 5740 §4.2, §4.3), as libnorm's
//! `normMessage.h` lays them out.
//!
//! ```text
//! NORM_INFO / NORM_DATA (after the common header)
//! |          instance_id          |     grtt      |backoff| gsize |
//! |     flags     |    fec_id     |     object_transport_id       |
//! |           fec_payload_id (NORM_DATA only)  ...                |
//! |                header_extensions (if any)  ...                |
//! |                 payload / info content  ...                   |
//!
//! NORM_CMD: instance_id, grtt, backoff|gsize, flavor, then by flavor:
//!   FLUSH, SQUELCH  fec_id, object_transport_id, fec_payload_id; after the extensions
//!                   the acking node ids (32 bits each) / invalid object ids (16 bits each)
//!   EOT, APPLICATION 3 reserved bytes; APPLICATION's content after the extensions
//!   CC              reserved (libnorm: SYN 0x01), cc_sequence, send_time (sec, usec);
//!                   after the extensions 8-byte node entries (id, flags, rtt, rate)
//!   REPAIR_ADV      flags, 2 reserved bytes; repair requests after the extensions
//!   ACK_REQ         reserved, ack_type, ack_id; acking node ids after the extensions
//!
//! NORM_NACK: server_id, instance_id, reserved (16), grtt_response (sec, usec); extensions;
//!            repair requests
//! NORM_ACK:  server_id, instance_id, ack_type, ack_id, grtt_response; extensions; payload
//!            (ACK(FLUSH): fec_id, reserved, object_transport_id, fec_payload_id)
//! ```

use super::{
    ack_type, flavor, msg_type, put_timestamp, read_timestamp, read_u32s, repair, zero, AckPayload,
    Body, CcNode, Cmd, Error, ObjectFields, PayloadId, SenderFields,
};
use crate::Reader;

/// Read the body of a message of type `ty` from its fixed bytes (after the common header,
/// without the extensions) and its content (after `hdr_len`).
pub(super) fn read<'a>(ty: u8, fixed: &'a [u8], content: &'a [u8]) -> Result<Body<'a>, Error> {
    let mut r = Reader::new(fixed);
    let body = match ty {
        msg_type::INFO | msg_type::DATA => {
            let sender = SenderFields::read(&mut r)?;
            let obj = ObjectFields {
                flags: r.u8()?,
                fec_id: r.u8()?,
                object: r.u16()?,
            };
            if ty == msg_type::INFO {
                Body::Info {
                    sender,
                    obj,
                    info: content,
                }
            } else {
                Body::Data {
                    sender,
                    obj,
                    id: PayloadId::read(obj.fec_id, &mut r)?,
                    payload: content,
                }
            }
        }
        msg_type::CMD => {
            let sender = SenderFields::read(&mut r)?;
            let fl = r.u8()?;
            Body::Cmd {
                sender,
                cmd: read_cmd(fl, &mut r, content)?,
            }
        }
        msg_type::NACK => {
            let server_id = r.u32()?;
            let instance_id = r.u16()?;
            zero(u32::from(r.u16()?), "NACK field")?;
            Body::Nack {
                server_id,
                instance_id,
                grtt_response: read_timestamp(&mut r)?,
                requests: repair::read_all(content)?,
            }
        }
        msg_type::ACK => {
            let server_id = r.u32()?;
            let instance_id = r.u16()?;
            let ty = r.u8()?;
            Body::Ack {
                server_id,
                instance_id,
                ack_type: ty,
                ack_id: r.u8()?,
                grtt_response: read_timestamp(&mut r)?,
                payload: read_ack_payload(ty, content)?,
            }
        }
        msg_type::REPORT => Body::Report(content),
        other => return Err(Error::Type(other)),
    };
    Ok(body)
}

fn read_cmd<'a>(fl: u8, r: &mut Reader<'a>, content: &'a [u8]) -> Result<Cmd<'a>, Error> {
    Ok(match fl {
        flavor::FLUSH | flavor::SQUELCH => {
            let fec = r.u8()?;
            let object = r.u16()?;
            let id = PayloadId::read(fec, r)?;
            if fl == flavor::FLUSH {
                Cmd::Flush {
                    object,
                    id,
                    acking_nodes: read_u32s(content, "FLUSH acking node list")?,
                }
            } else {
                if !content.len().is_multiple_of(2) {
                    return Err(Error::Malformed("SQUELCH invalid object list"));
                }
                Cmd::Squelch {
                    object,
                    id,
                    invalid_objects: content
                        .chunks_exact(2)
                        .map(|c| u16::from_be_bytes(<[u8; 2]>::try_from(c).unwrap_or_default()))
                        .collect(),
                }
            }
        }
        flavor::EOT | flavor::APPLICATION => {
            let res = r.bytes(3)?;
            zero(
                u32::from(res.iter().any(|&b| b != 0)),
                "EOT/APPLICATION field",
            )?;
            if fl == flavor::EOT {
                if !content.is_empty() {
                    return Err(Error::Malformed("EOT content"));
                }
                Cmd::Eot
            } else {
                Cmd::Application { content }
            }
        }
        flavor::CC => {
            let res = r.u8()?;
            zero(u32::from(res & !1), "CC field")?;
            Cmd::Cc {
                syn: res & 1 != 0,
                cc_sequence: r.u16()?,
                send_time: read_timestamp(r)?,
                nodes: read_cc_nodes(content)?,
            }
        }
        flavor::REPAIR_ADV => {
            let flags = r.u8()?;
            zero(u32::from(r.u16()?), "REPAIR_ADV field")?;
            Cmd::RepairAdv {
                flags,
                requests: repair::read_all(content)?,
            }
        }
        flavor::ACK_REQ => {
            zero(u32::from(r.u8()?), "ACK_REQ field")?;
            Cmd::AckReq {
                ack_type: r.u8()?,
                ack_id: r.u8()?,
                acking_nodes: read_u32s(content, "ACK_REQ acking node list")?,
            }
        }
        other => return Err(Error::Flavor(other)),
    })
}

fn read_cc_nodes(content: &[u8]) -> Result<Vec<CcNode>, Error> {
    if !content.len().is_multiple_of(8) {
        return Err(Error::Malformed("CC node list"));
    }
    let mut r = Reader::new(content);
    let mut v = Vec::with_capacity(content.len() / 8);
    while r.remaining() > 0 {
        v.push(CcNode {
            node_id: r.u32()?,
            flags: r.u8()?,
            rtt: r.u8()?,
            rate: r.u16()?,
        });
    }
    Ok(v)
}

fn read_ack_payload(ty: u8, content: &[u8]) -> Result<AckPayload<'_>, Error> {
    if ty != ack_type::FLUSH {
        return Ok(AckPayload::Raw(content));
    }
    let mut r = Reader::new(content);
    let fec = r.u8()?;
    zero(u32::from(r.u8()?), "ACK(FLUSH) field")?;
    let object = r.u16()?;
    let id = PayloadId::read(fec, &mut r)?;
    if r.remaining() != 0 {
        return Err(Error::Malformed("ACK(FLUSH) payload"));
    }
    Ok(AckPayload::Flush { object, id })
}

/// Write the fixed fields after the common header.
pub(super) fn write_fixed(body: &Body<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
    match body {
        Body::Info { sender, obj, .. } | Body::Data { sender, obj, .. } => {
            sender.write(out)?;
            out.push(obj.flags);
            out.push(obj.fec_id);
            out.extend_from_slice(&obj.object.to_be_bytes());
            if let Body::Data { id, .. } = body {
                if id.fec_id() != obj.fec_id {
                    return Err(Error::Encode("a payload id of another fec_id"));
                }
                id.write(out)?;
            }
        }
        Body::Cmd { sender, cmd } => {
            sender.write(out)?;
            out.push(cmd.flavor());
            write_cmd_fixed(cmd, out)?;
        }
        Body::Nack {
            server_id,
            instance_id,
            grtt_response,
            ..
        } => {
            out.extend_from_slice(&server_id.to_be_bytes());
            out.extend_from_slice(&instance_id.to_be_bytes());
            out.extend_from_slice(&[0, 0]);
            put_timestamp(out, *grtt_response);
        }
        Body::Ack {
            server_id,
            instance_id,
            ack_type,
            ack_id,
            grtt_response,
            payload,
        } => {
            if matches!(payload, AckPayload::Flush { .. }) != (*ack_type == ack_type::FLUSH) {
                return Err(Error::Encode(
                    "an ACK(FLUSH) payload goes with ack_type FLUSH only",
                ));
            }
            out.extend_from_slice(&server_id.to_be_bytes());
            out.extend_from_slice(&instance_id.to_be_bytes());
            out.push(*ack_type);
            out.push(*ack_id);
            put_timestamp(out, *grtt_response);
        }
        Body::Report(_) => {}
    }
    Ok(())
}

fn write_cmd_fixed(cmd: &Cmd<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
    match cmd {
        Cmd::Flush { object, id, .. } | Cmd::Squelch { object, id, .. } => {
            out.push(id.fec_id());
            out.extend_from_slice(&object.to_be_bytes());
            id.write(out)?;
        }
        Cmd::Eot | Cmd::Application { .. } => out.extend_from_slice(&[0, 0, 0]),
        Cmd::Cc {
            syn,
            cc_sequence,
            send_time,
            ..
        } => {
            out.push(u8::from(*syn));
            out.extend_from_slice(&cc_sequence.to_be_bytes());
            put_timestamp(out, *send_time);
        }
        Cmd::RepairAdv { flags, .. } => {
            out.push(*flags);
            out.extend_from_slice(&[0, 0]);
        }
        Cmd::AckReq {
            ack_type, ack_id, ..
        } => {
            out.extend_from_slice(&[0, *ack_type, *ack_id]);
        }
    }
    Ok(())
}

/// Write the content after the header extensions.
pub(super) fn write_content(body: &Body<'_>, out: &mut Vec<u8>) -> Result<(), Error> {
    match body {
        Body::Info { info: b, .. } | Body::Data { payload: b, .. } | Body::Report(b) => {
            out.extend_from_slice(b)
        }
        Body::Cmd { cmd, .. } => match cmd {
            Cmd::Flush {
                acking_nodes: n, ..
            }
            | Cmd::AckReq {
                acking_nodes: n, ..
            } => {
                for id in n {
                    out.extend_from_slice(&id.to_be_bytes());
                }
            }
            Cmd::Squelch {
                invalid_objects, ..
            } => {
                for o in invalid_objects {
                    out.extend_from_slice(&o.to_be_bytes());
                }
            }
            Cmd::Eot => {}
            Cmd::Application { content } => out.extend_from_slice(content),
            Cmd::Cc { nodes, .. } => {
                for n in nodes {
                    out.extend_from_slice(&n.node_id.to_be_bytes());
                    out.push(n.flags);
                    out.push(n.rtt);
                    out.extend_from_slice(&n.rate.to_be_bytes());
                }
            }
            Cmd::RepairAdv { requests, .. } => repair::write_all(requests, out)?,
        },
        Body::Nack { requests, .. } => repair::write_all(requests, out)?,
        Body::Ack { payload, .. } => match payload {
            AckPayload::Flush { object, id } => {
                out.push(id.fec_id());
                out.push(0);
                out.extend_from_slice(&object.to_be_bytes());
                id.write(out)?;
            }
            AckPayload::Raw(b) => out.extend_from_slice(b),
        },
    }
    Ok(())
}
