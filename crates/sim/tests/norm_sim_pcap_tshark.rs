//! `rmcast sim --pcap` writes `norm` as RFC 5740 (issue 62): a `norm` run to 8 receivers with
//! 5 % loss on the access links both ways (DATA, NACKs and ACKs lost; a short last block),
//! written by the simulator's pcap writer and read back with
//! `tshark --enable-heuristic rmt_norm_udp --disable-protocol rx` (tshark 4.0's heuristic;
//! AFS RX owns the group's port + 1, 7002). Every `norm` frame must dissect as NORM, none
//! malformed, no expert message, with the type, flavor, source id, instance id and object id
//! the agent's message implies, a NORM_DATA's fec_id 5 payload id (the first 4 bytes of
//! what tshark 4.0 leaves as `data`) the agent's block and symbol, and a NACK's request forms
//! (ITEMS for one symbol, RANGES for more).
//!
//! Skipped (with a note) when tshark is not installed. `RMCAST_NORM_SIM_PCAP=FILE` keeps the
//! capture.

#[path = "../../../tools/wireshark/tshark.rs"]
mod tshark;

use rmcast_sim::pcap;
use rmcast_sim::scenario::{run_sweep, RunOptions, Scenario};
use rmcast_sim::PacketRecord;
use rmcast_wire::norm::Message as Norm;
use rmcast_wire::{Message, Packet};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::PathBuf;

const SCENARIO: &str = r#"
name = "norm under 5 % loss both ways"
seed = 3

[topology]
kind = "local_exchanges"
rtds_ms = [20]
destinations = 8
access_delay_ms = 5
bandwidth_bps = 100000000

[protocol]
name = "norm"

[traffic]
messages = 400
size = 700
interval_ms = 0.5

[[loss]]
model = "bernoulli"
p = 0.05
at = "link"
links = "access"
cause = "access"
"#;

fn records() -> Vec<PacketRecord> {
    let sc = Scenario::parse(SCENARIO, "norm-pcap.toml", PathBuf::from(".")).expect("scenario");
    let opts = RunOptions {
        trace_all: false,
        trace_first: true,
    };
    let mut runs = run_sweep(&sc, opts, &|| {}).expect("runs");
    runs.remove(0).trace.expect("trace").packets
}

const FIELDS: [&str; 9] = [
    "frame.protocols",
    "_ws.malformed",
    "_ws.expert.message",
    "norm.type",
    "norm.source_id",
    "norm.instance_id",
    "norm.object_transport_id",
    "norm.flavor",
    "data.data",
];
const NACK_FORM: &str = "norm.nack.form";

/// What tshark must show of an agent's message: its kind's name, type, flavor, object id
/// and, for DATA, the start of `data` (fec_id 5's payload id).
fn expected(m: &Norm<'_>) -> (&'static str, u8, Option<u8>, Option<u16>, Option<String>) {
    let id = |block: u32, symbol: u16| format!("{:08x}", (block << 8) | u32::from(symbol));
    match *m {
        Norm::Data {
            object,
            block,
            symbol,
            ..
        } => ("data", 2, None, Some(object), Some(id(block, symbol))),
        Norm::Flush { .. } => ("flush", 3, Some(1), None, None),
        Norm::AckReq { .. } => ("ackreq", 3, Some(1), None, None),
        Norm::Squelch { .. } => ("squelch", 3, Some(3), None, None),
        Norm::Cc { .. } => ("cc", 3, Some(4), None, None),
        Norm::Nack { .. } => ("nack", 4, None, None, None),
        Norm::Ack { .. } => ("ack", 5, None, None, None),
        Norm::CcRate { .. } => ("cc rate", 3, Some(4), None, None),
        Norm::CcAck { .. } => ("cc ack", 5, None, None, None),
    }
}

#[test]
fn wireshark_reads_every_norm_message_of_a_simulated_run_as_rfc5740() {
    if !tshark::available() {
        return;
    }
    let packets = records();
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("norm.pcap");
    pcap::write(std::fs::File::create(&file).expect("create"), &packets).expect("write");
    if let Some(keep) = std::env::var_os("RMCAST_NORM_SIM_PCAP") {
        std::fs::copy(&file, keep).expect("copy the capture");
    }
    let args = [
        "--enable-heuristic",
        "rmt_norm_udp",
        "--disable-protocol",
        "rx",
    ];
    let mut fields = FIELDS.to_vec();
    fields.push(NACK_FORM);
    let rows = tshark::fields(&file, &args.map(str::to_owned), &fields);
    assert_eq!(rows.len(), packets.len(), "one row per frame");
    let mut counts = BTreeMap::<&str, u64>::new();
    for (i, (r, row)) in packets.iter().zip(&rows).enumerate() {
        let p = Packet::decode(&r.payload).expect("the agents' datagram");
        let Message::Norm(m) = p.message else {
            continue;
        };
        let get = |name: &str| {
            let k = fields.iter().position(|f| *f == name).expect("field");
            row.get(k).cloned().unwrap_or_default()
        };
        let ctx = format!(
            "frame {}: {:.200}\n  {:.300}",
            i + 1,
            format!("{m:?}"),
            format!("{row:?}")
        );
        let (kind, ty, flavor, object, data) = expected(&m);
        *counts.entry(kind).or_default() += 1;
        assert!(get("frame.protocols").contains(":udp:norm"), "{ctx}");
        assert_eq!(get("_ws.malformed"), "", "{ctx}");
        assert_eq!(get("_ws.expert.message"), "", "{ctx}");
        assert_eq!(get("norm.type"), ty.to_string(), "{ctx}");
        let src = Ipv4Addr::from(p.header.source).to_string();
        assert_eq!(get("norm.source_id"), src, "{ctx}");
        if let Some(fl) = flavor {
            assert_eq!(get("norm.flavor"), fl.to_string(), "{ctx}");
        }
        if ty < 4 {
            let instance = (p.header.session as u16).to_string();
            assert_eq!(get("norm.instance_id"), instance, "{ctx}");
        }
        if let Some(o) = object {
            assert_eq!(
                get("norm.object_transport_id"),
                format!("0x{o:04x}"),
                "{ctx}"
            );
        }
        if let Some(d) = data {
            assert!(get("data.data").starts_with(&d), "{ctx}");
        }
        if let Norm::Nack { requests, .. } = m {
            let forms: Vec<&str> = requests
                .iter()
                .map(|q| if q.count == 1 { "1" } else { "2" })
                .collect();
            assert_eq!(get(NACK_FORM), forms.join(","), "{ctx}");
        }
    }
    eprintln!("norm frames by kind: {counts:?}");
    for kind in ["data", "flush", "ackreq", "cc", "nack", "ack"] {
        assert!(
            counts.get(kind).is_some_and(|&n| n > 0),
            "no {kind}: {counts:?}"
        );
    }
}
