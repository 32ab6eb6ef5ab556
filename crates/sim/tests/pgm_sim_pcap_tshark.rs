//! `rmcast sim --pcap` writes `pgm` as RFC 3208 (issue 62): a `pgm` run with bursty loss on
//! the access links both ways (data, NAKs and NCFs lost), FEC with proactive parity, NAK
//! lists and TFMCC, behind a network element, written by the simulator's pcap writer and
//! read back with `tshark -d udp.port==7002,pgm`. Every `pgm` packet with an RFC 3208
//! packet must dissect as PGM, none malformed, with a good checksum, the type and the
//! sequence numbers (NAK lists too) the agent set; TFMCC's datagrams stay off the PGM ports.
//!
//! Skipped (with a note) when tshark is not installed. `RMCAST_PGM_PCAP=FILE` keeps the
//! capture.

#[path = "../../../tools/wireshark/tshark.rs"]
mod tshark;

use rmcast_proto::Dest;
use rmcast_sim::pcap;
use rmcast_sim::scenario::{run_sweep, RunOptions, Scenario};
use rmcast_sim::PacketRecord;
use rmcast_wire::pgm::Message as Pgm;
use rmcast_wire::{Message, Packet};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const SCENARIO: &str = r#"
name = "pgm with FEC, NAK lists and TFMCC under bursty loss both ways"
seed = 7

[topology]
kind = "local_exchanges"
rtds_ms = [20]
destinations = 8
access_delay_ms = 5
bandwidth_bps = 100000000

[protocol]
name = "pgm"
nak_list = 63
tfmcc = true
PROTOCOL

[traffic]
messages = 400
size = 700
interval_ms = 0.5

[[loss]]
model = "gilbert_elliott"
p_gb = 0.02
p_bg = 0.3
at = "link"
links = "access"
cause = "access"
"#;

/// The first run's packet records, with `protocol` added to the scenario's protocol table.
fn records(protocol: &str) -> Vec<PacketRecord> {
    let text = SCENARIO.replace("PROTOCOL", protocol);
    let sc = Scenario::parse(&text, "pgm-pcap.toml", PathBuf::from(".")).expect("scenario");
    let opts = RunOptions {
        trace_all: false,
        trace_first: true,
    };
    let mut runs = run_sweep(&sc, opts, &|| {}).expect("runs");
    runs.remove(0).trace.expect("trace").packets
}

/// What tshark must show for a `pgm` message: its PGM type, the sequence number (data,
/// NAK, SPM) and, for an SPM, its lead; `None`: no RFC 3208 packet (TFMCC).
fn expected(m: &Pgm<'_>, k: u64) -> Option<(u8, u32, Option<u32>)> {
    let tg = |block: u64, h: u16| (block * k + u64::from(h) % k) as u32;
    Some(match *m {
        Pgm::Odata { seq, .. } => (0x04, seq as u32, None),
        Pgm::Rdata { seq, .. } => (0x05, seq as u32, None),
        Pgm::Nak { seq } => (0x08, seq as u32, None),
        Pgm::Ncf { seq } => (0x0a, seq as u32, None),
        Pgm::NakList { seqs } => (0x08, seqs.iter().next()? as u32, None),
        Pgm::NcfList { seqs } => (0x0a, seqs.iter().next()? as u32, None),
        Pgm::Spm { spm_seq, lead, .. } => {
            (0x00, spm_seq as u32, Some((lead as u32).wrapping_sub(1)))
        }
        Pgm::Parity { block, index, .. } => (0x05, tg(block, index), None),
        Pgm::BlockNak { block, total } => (0x08, tg(block, total), None),
        Pgm::BlockNcf { block, total } => (0x0a, tg(block, total), None),
        Pgm::Status { .. } | Pgm::Feedback { .. } => return None,
    })
}

const FIELDS: [&str; 10] = [
    "frame.protocols",
    "_ws.malformed",
    "_ws.expert.severity",
    "pgm.hdr.cksum.status",
    "pgm.hdr.type",
    "pgm.hdr.gsi",
    "pgm.spm.sqn",
    "pgm.spm.lead",
    "pgm.nak.sqn",
    "udp.dstport",
];

fn tshark(file: &Path, verbose: bool) -> String {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(file);
    cmd.args(["-d", &format!("udp.port=={},pgm", pcap::STANDARD_PORT)]);
    cmd.args(["-o", "pgm.check_checksum:TRUE"]);
    if verbose {
        cmd.arg("-V");
    } else {
        cmd.args(["-T", "fields", "-E", "separator=|", "-E", "occurrence=a"]);
        cmd.args(["-E", "aggregator=,"]);
        for f in FIELDS {
            cmd.args(["-e", f]);
        }
    }
    let out = cmd.output().expect("tshark runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn wireshark_reads_every_pgm_packet_of_a_simulated_run_as_rfc3208() {
    if !tshark::available() {
        return;
    }
    let mut counts = BTreeMap::<&str, u64>::new();
    // Repair by RDATA, then by parity (blocks of 4, the first parity packet proactive).
    for (i, protocol) in ["", "fec_k = 4\nfec_proactive = 1"].into_iter().enumerate() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("pgm.pcap");
        let packets = records(protocol);
        pcap::write(std::fs::File::create(&file).expect("create"), &packets).expect("write");
        if let Some(keep) = std::env::var_os("RMCAST_PGM_PCAP") {
            let mut keep = PathBuf::from(keep);
            keep.set_extension(format!("{i}.pcap"));
            std::fs::copy(&file, keep).expect("copy the capture");
        }
        for (kind, n) in check(&file, &packets) {
            *counts.entry(kind).or_default() += n;
        }
    }
    let kinds = [
        "spm", "odata", "rdata", "nak", "ncf", "nakl", "ncfl", "parity", "bnak", "bncf", "tfmcc",
    ];
    for kind in kinds {
        assert!(
            counts.get(kind).is_some_and(|&n| n > 0),
            "no {kind}: {counts:?}"
        );
    }
}

/// Every frame of the capture `file` of `packets` as the module's doc says; the count of
/// each kind.
fn check(file: &Path, packets: &[PacketRecord]) -> BTreeMap<&'static str, u64> {
    let text = tshark(file, false);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('|').collect()).collect();
    assert_eq!(rows.len(), packets.len(), "a line per frame");
    let verbose = tshark(file, true);
    let frames: Vec<&str> = verbose.split("\nFrame ").collect();
    let mut counts = BTreeMap::new();
    let mut gsi = None;
    for (i, (r, row)) in packets.iter().zip(&rows).enumerate() {
        let get = |name: &str| {
            let k = FIELDS.iter().position(|x| *x == name).expect("field");
            row.get(k).copied().unwrap_or_default()
        };
        let ctx = format!("frame {}: {row:?}", i + 1);
        assert_eq!(get("_ws.malformed"), "", "{ctx}");
        let p = Packet::decode(&r.payload).expect("an rmcast datagram");
        let Message::Pgm(m) = p.message else {
            panic!("{ctx}: not pgm")
        };
        let Some((ty, sqn, lead)) = expected(&m, 4) else {
            *counts.entry("tfmcc").or_default() += 1;
            assert!(!get("frame.protocols").contains(":pgm"), "{ctx}");
            if let Dest::Group(_) = r.dest {
                assert_eq!(get("udp.dstport"), pcap::UDP_PORT.to_string(), "{ctx}");
            }
            continue;
        };
        assert!(get("frame.protocols").contains(":udp:pgm"), "{ctx}");
        assert_eq!(get("_ws.expert.severity"), "", "{ctx}");
        assert!(
            get("pgm.hdr.cksum.status").ends_with(",1"),
            "checksum good: {ctx}"
        );
        assert_eq!(get("pgm.hdr.type"), format!("0x{ty:02x}"), "{ctx}");
        assert_eq!(
            *gsi.get_or_insert(get("pgm.hdr.gsi")),
            get("pgm.hdr.gsi"),
            "one TSI: {ctx}"
        );
        let hex = format!("0x{sqn:08x}");
        let field = if matches!(ty, 0x08 | 0x0a) {
            "pgm.nak.sqn"
        } else {
            "pgm.spm.sqn"
        };
        assert_eq!(get(field), hex, "{ctx}");
        if let Some(lead) = lead {
            assert_eq!(get("pgm.spm.lead"), format!("0x{lead:08x}"), "{ctx}");
        }
        if let Pgm::NakList { seqs } | Pgm::NcfList { seqs } = m {
            // OPT_NAK_LIST: the numbers after the body's, on tshark's "List" lines (it
            // breaks a long list in two).
            let more: Vec<String> = seqs.iter().skip(1).map(|s| format!("0x{s:x}")).collect();
            let v = frames.get(i).copied().unwrap_or_default();
            let shown: Vec<&str> = v
                .lines()
                .filter(|l| l.trim_start().starts_with("List"))
                .flat_map(|l| l.split_whitespace().filter(|w| w.starts_with("0x")))
                .collect();
            assert_eq!(shown, more, "frame {}:\n{v}", i + 1);
        }
        *counts.entry(kind_name(&m)).or_default() += 1;
    }
    eprintln!("{} frames: {counts:?}", packets.len());
    counts
}

fn kind_name(m: &Pgm<'_>) -> &'static str {
    match m {
        Pgm::Odata { .. } => "odata",
        Pgm::Rdata { .. } => "rdata",
        Pgm::Nak { .. } => "nak",
        Pgm::Ncf { .. } => "ncf",
        Pgm::NakList { .. } => "nakl",
        Pgm::NcfList { .. } => "ncfl",
        Pgm::Spm { .. } => "spm",
        Pgm::Parity { .. } => "parity",
        Pgm::BlockNak { .. } => "bnak",
        Pgm::BlockNcf { .. } => "bncf",
        Pgm::Status { .. } | Pgm::Feedback { .. } => "tfmcc",
    }
}
