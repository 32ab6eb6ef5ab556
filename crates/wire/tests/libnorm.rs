//! `rmcast_wire::rfc5740` against NRL's libnorm 1.5.9 (issue 62): every datagram libnorm
//! sends decodes, and encodes back to the same bytes; the file comes back out of the source
//! segments; and libnorm's Reed–Solomon parity segments equal [`rs8::Rs8`]'s.
//!
//! Two sources of datagrams:
//!
//! * `tests/data/libnorm_cc_loss10.pcap`, committed, made by `tests/data/norm_capture.sh`
//!   (a 100,000-byte file to two receivers under NORM-CC, 10 % of datagrams dropped at the
//!   receivers' input, so NACKs, parity repairs, FLUSH/ACK and CC probes all appear);
//! * the same script run live, when root, `ip`, `nft`, `dumpcap`, `g++`, `perl` and
//!   libnorm-dev are present (CI installs them: there a missing one is a failure).
//!
//! And the other way: libnorm's receiver (`normfile recv`) gets a file transfer the codec
//! wrote, with the first segment of each block replaced by a parity segment [`Rs8`]
//! computed, and must write the file byte for byte (it decodes with our parity).

use rmcast_wire::rfc5740::ext::Ext;
use rmcast_wire::rfc5740::rs8::Rs8;
use rmcast_wire::rfc5740::{ack_type, AckPayload, Body, Form, Message, PayloadId, RepairFlags};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

#[path = "support/pcap.rs"]
mod pcap;

/// The UDP port the capture script uses.
const PORT: u16 = 6003;
/// The file's size and segment size (bench/norm/normfile.cc's 1,400 bytes).
const FILE_LEN: usize = 100_000;
const SEGMENT: usize = 1400;
/// normfile's parity per block.
const PARITY: usize = 16;

/// The file the capture script sends: byte `i` is `(7·i + ⌊i/256⌋) mod 256`.
fn file() -> Vec<u8> {
    (0..FILE_LEN)
        .map(|i| ((i * 7 + i / 256) % 256) as u8)
        .collect()
}

/// What a capture held.
#[derive(Default, Debug)]
struct Seen {
    /// Messages by (type, flavor or ack type).
    kinds: BTreeMap<(u8, u8), usize>,
    /// Source segments by (block, symbol).
    sources: BTreeMap<(u32, u16), Vec<u8>>,
    /// Parity segments by (block, symbol).
    parity: BTreeMap<(u32, u16), Vec<u8>>,
    /// EXT_FTI, EXT_CC and EXT_RATE seen.
    fti: usize,
    ext_cc: usize,
    ext_rate: usize,
    /// Repair requests asking for symbols.
    segment_requests: usize,
}

/// Decode every datagram, check it encodes back to the same bytes, and gather what it says
/// (printed: the kinds seen and how many parity segments).
fn check(datagrams: &[Vec<u8>]) -> Seen {
    let mut seen = Seen::default();
    for (i, d) in datagrams.iter().enumerate() {
        let m = Message::decode(d).unwrap_or_else(|e| panic!("datagram {i}: {e}: {d:02x?}"));
        assert_eq!(
            &m.to_vec().expect("encode"),
            d,
            "datagram {i} re-encoded: {m:?}"
        );
        for e in &m.ext {
            match e {
                Ext::Fti(f) => {
                    assert_eq!(f.object_size, FILE_LEN as u64);
                    assert_eq!(usize::from(f.segment_size), SEGMENT);
                    assert_eq!((f.max_block_len, f.num_parity), (64, PARITY as u8));
                    seen.fti += 1;
                }
                Ext::Cc { .. } => seen.ext_cc += 1,
                Ext::Rate { .. } => seen.ext_rate += 1,
                Ext::Other { het, .. } => panic!("datagram {i}: extension {het}"),
            }
        }
        let sub = match &m.body {
            Body::Cmd { cmd, .. } => cmd.flavor(),
            Body::Ack { ack_type, .. } => *ack_type,
            _ => 0,
        };
        *seen.kinds.entry((m.msg_type(), sub)).or_default() += 1;
        gather(&m, &mut seen);
    }
    eprintln!(
        "{} datagrams: {:?} by (type, flavor or ack type), {} parity segments",
        datagrams.len(),
        seen.kinds,
        seen.parity.len()
    );
    seen
}

fn gather(m: &Message<'_>, seen: &mut Seen) {
    match &m.body {
        Body::Data {
            obj, id, payload, ..
        } => {
            let PayloadId::Rs8 { sbn, esi } = *id else {
                panic!("libnorm's RS8 payload id is fec_id 5's: {id:?}");
            };
            assert_eq!(obj.fec_id, 5);
            let k = block_len(sbn);
            let to = if usize::from(esi) < k {
                &mut seen.sources
            } else {
                &mut seen.parity
            };
            if let Some(old) = to.insert((sbn, u16::from(esi)), payload.to_vec()) {
                assert_eq!(&old, payload, "a segment sent twice is the same");
            }
        }
        Body::Nack { requests, .. } => {
            for q in requests {
                if q.flags.segment {
                    seen.segment_requests += 1;
                    assert_ne!(q.form, Form::Erasures, "libnorm never sends ERASURES");
                }
            }
        }
        Body::Ack {
            ack_type: ack_type::FLUSH,
            payload,
            ..
        } => assert!(matches!(payload, AckPayload::Flush { .. }), "{payload:?}"),
        _ => {}
    }
}

/// The source block length of block `sbn`: RFC 5052's partition of the file's 72 segments
/// into ⌈72 / 64⌉ = 2 blocks of 36 (large blocks first).
fn block_len(sbn: u32) -> usize {
    let segments = FILE_LEN.div_ceil(SEGMENT);
    let blocks = segments.div_ceil(64);
    let large = segments.div_ceil(blocks);
    let n_large = segments - blocks * (large - 1);
    if (sbn as usize) < n_large {
        large
    } else {
        large - 1
    }
}

/// The file rebuilt from the source segments, and libnorm's parity against [`Rs8`]'s.
fn check_content(seen: &Seen) {
    let mut rebuilt = Vec::new();
    for ((sbn, esi), seg) in &seen.sources {
        assert!(usize::from(*esi) < block_len(*sbn));
        rebuilt.extend_from_slice(seg);
    }
    assert_eq!(
        rebuilt,
        file(),
        "the file, from every source segment in order"
    );
    assert!(!seen.parity.is_empty(), "loss made libnorm send parity");
    for ((sbn, esi), got) in &seen.parity {
        let k = block_len(*sbn);
        let sources: Vec<&[u8]> = (0..k as u16)
            .map(|j| seen.sources[&(*sbn, j)].as_slice())
            .collect();
        // normfile's code is k = 64 (BLOCK) whatever the block's length.
        let code = Rs8::new(64, PARITY).expect("code");
        let want = code.parity(&sources).expect("parity");
        let i = usize::from(*esi) - k;
        assert_eq!(
            got.len(),
            SEGMENT,
            "a parity segment is the block's longest source"
        );
        assert_eq!(got, &want[i], "block {sbn} parity {esi}");
        // And libnorm's parity repairs: lose the first source, recover it from this one.
        let mut symbols: Vec<(usize, &[u8])> = vec![(usize::from(*esi), got.as_slice())];
        symbols.extend((1..k).map(|j| (j, sources[j])));
        let back = code.recover(k, &symbols).expect("recover");
        assert_eq!(
            back[0], sources[0],
            "block {sbn}: source 0 from parity {esi}"
        );
    }
}

#[test]
fn committed_libnorm_capture_decodes_and_reencodes_byte_for_byte() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/libnorm_cc_loss10.pcap");
    let datagrams = pcap::udp_payloads(&std::fs::read(path).expect("the capture"), PORT);
    assert!(datagrams.len() > 200, "{} datagrams", datagrams.len());
    let seen = check(&datagrams);
    // Type 1 INFO, 2 DATA, 3 CMD (1 FLUSH, 3 SQUELCH, 4 CC), 4 NACK, 5 ACK (1 CC, 2 FLUSH).
    for kind in [
        (1, 0),
        (2, 0),
        (3, 1),
        (3, 3),
        (3, 4),
        (4, 0),
        (5, 1),
        (5, 2),
    ] {
        assert!(
            seen.kinds.contains_key(&kind),
            "no {kind:?}: {:?}",
            seen.kinds
        );
    }
    assert!(seen.fti > 0 && seen.ext_cc > 0 && seen.ext_rate > 0);
    assert!(seen.segment_requests > 0, "NACKs for symbols");
    check_content(&seen);
}

#[test]
fn a_libnorm_nack_reads_as_the_capture_shows_it() {
    // A NACK of the capture, by hand: receiver 3 to sender 1, instance 0xc0ed... asking for
    // objects 0xff01..0xffff (RANGES, OBJECT) — what a receiver synced with NORM_SYNC_ALL
    // asks for before the first object.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/libnorm_cc_loss10.pcap");
    let datagrams = pcap::udp_payloads(&std::fs::read(path).expect("the capture"), PORT);
    let nack = datagrams
        .iter()
        .filter_map(|d| Message::decode(d).ok())
        .find_map(|m| match m.body {
            Body::Nack { requests, .. } => Some(requests),
            _ => None,
        })
        .expect("a NACK");
    let first = &nack[0];
    assert_eq!(first.form, Form::Ranges);
    assert_eq!(
        first.flags,
        RepairFlags {
            object: true,
            ..RepairFlags::default()
        }
    );
    assert_eq!(
        first.ranges()[0].0.object..=first.ranges()[0].1.object,
        0xff01..=0xffff
    );
}

/// Why the live test cannot run here, if it cannot; under CI a missing tool is a failure.
fn cannot_run() -> Option<&'static str> {
    let ok = |c: &mut Command| c.output().is_ok_and(|o| o.status.success());
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    let why = if !root {
        Some("not root (a network namespace is needed)")
    } else if !ok(Command::new("ip").arg("-V")) || !ok(Command::new("nft").arg("--version")) {
        Some("ip or nft missing (apt-get install iproute2 nftables)")
    } else if !ok(Command::new("dumpcap").arg("-v")) {
        Some("dumpcap missing (apt-get install tshark)")
    } else if !ok(Command::new("g++").arg("--version"))
        || !Path::new("/usr/include/normApi.h").exists()
    {
        Some("g++ or libnorm-dev missing")
    } else if !ok(Command::new("perl").arg("-v")) {
        Some("perl missing")
    } else {
        None
    };
    if let (Some(why), Some(_)) = (why, std::env::var_os("CI")) {
        assert!(why.starts_with("not root"), "under CI: {why}");
    }
    why
}

#[test]
fn live_libnorm_transfer_with_loss_decodes_and_its_parity_matches() {
    if let Some(why) = cannot_run() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = std::env::temp_dir().join(format!("rmcast-libnorm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cap = dir.join("cap.pcap");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/norm_capture.sh");
    let out = Command::new("sh")
        .arg(&script)
        .arg(&cap)
        .arg("10")
        .output()
        .expect("run norm_capture.sh");
    let pcap = std::fs::read(&cap);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "norm_capture.sh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let datagrams = pcap::udp_payloads(&pcap.expect("the capture"), PORT);
    let seen = check(&datagrams);
    check_content(&seen);
}

/// A replayer of datagrams to a multicast group on the loopback, built with g++ beside
/// normfile: `replay GROUP PORT FILE`, FILE holding each datagram as a 2-byte big-endian
/// length and its bytes, sent 1 ms apart.
const REPLAY_C: &str = r#"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc != 4) return 2;
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct in_addr lo;
    lo.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(s, IPPROTO_IP, IP_MULTICAST_IF, &lo, sizeof lo);
    struct sockaddr_in to = {};
    to.sin_family = AF_INET;
    to.sin_port = htons(atoi(argv[2]));
    inet_pton(AF_INET, argv[1], &to.sin_addr);
    FILE *f = fopen(argv[3], "rb");
    static unsigned char buf[65536];
    unsigned char len[2];
    while (f && fread(len, 1, 2, f) == 2) {
        size_t n = (size_t)len[0] << 8 | len[1];
        if (fread(buf, 1, n, f) != n) return 1;
        if (sendto(s, buf, n, 0, (struct sockaddr *)&to, sizeof to) < 0) return 1;
        usleep(1000);
    }
    return f ? 0 : 1;
}
"#;

/// The transfer of [`file`] as a sender would send it, written by the codec: NORM_INFO, the
/// NORM_DATA of every segment but the first of each block, parity ESI 36 of each block
/// (computed by [`Rs8`]) in its place, and three FLUSHes.
fn codec_transfer() -> Vec<Vec<u8>> {
    use rmcast_wire::rfc5740::ext::Fti;
    use rmcast_wire::rfc5740::quant::{quantize_gsize, quantize_rtt};
    use rmcast_wire::rfc5740::{obj_flag, Cmd, ObjectFields, SenderFields};
    let sender = SenderFields {
        instance_id: 0x1234,
        grtt: quantize_rtt(0.01),
        backoff: 4,
        gsize: quantize_gsize(1000.0),
    };
    let obj = ObjectFields {
        flags: obj_flag::INFO | obj_flag::FILE,
        fec_id: 5,
        object: 0,
    };
    let fti = Ext::Fti(Fti {
        object_size: FILE_LEN as u64,
        segment_size: SEGMENT as u16,
        max_block_len: 64,
        num_parity: PARITY as u8,
    });
    let mut seq = 0u16;
    let mut out = Vec::new();
    let mut push = |body: Body<'_>, ext: Vec<Ext<'_>>| {
        let m = Message {
            sequence: seq,
            source_id: 1,
            body,
            ext,
        };
        out.push(m.to_vec().expect("encodes"));
        seq += 1;
    };
    push(
        Body::Info {
            sender,
            obj,
            info: b"bench.bin",
        },
        vec![fti],
    );
    let data = file();
    let code = Rs8::new(64, PARITY).expect("code");
    let mut at = 0;
    for sbn in 0..2u32 {
        let k = block_len(sbn);
        let segs: Vec<&[u8]> = (0..k)
            .map(|j| &data[(at + j) * SEGMENT..((at + j + 1) * SEGMENT).min(FILE_LEN)])
            .collect();
        at += k;
        let parity = code.parity(&segs).expect("parity");
        for (esi, payload) in segs.iter().enumerate().skip(1) {
            let id = PayloadId::Rs8 {
                sbn,
                esi: esi as u8,
            };
            push(
                Body::Data {
                    sender,
                    obj,
                    id,
                    payload,
                },
                vec![fti],
            );
        }
        let id = PayloadId::Rs8 { sbn, esi: k as u8 };
        push(
            Body::Data {
                sender,
                obj,
                id,
                payload: &parity[0],
            },
            vec![fti],
        );
    }
    for _ in 0..3 {
        let cmd = Cmd::Flush {
            object: 0,
            id: PayloadId::Rs8 { sbn: 1, esi: 35 },
            acking_nodes: vec![],
        };
        push(Body::Cmd { sender, cmd }, vec![]);
    }
    out
}

#[test]
fn libnorm_receives_the_codecs_transfer_and_decodes_its_parity() {
    if let Some(why) = cannot_run() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = std::env::temp_dir().join(format!("rmcast-libnorm-rx-{}", std::process::id()));
    let rx_dir = dir.join("rx");
    std::fs::create_dir_all(&rx_dir).expect("temp dir");
    let ok = |c: &mut Command| c.status().is_ok_and(|s| s.success());
    let normfile_cc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/norm/normfile.cc");
    let replay_c = dir.join("replay.cc");
    std::fs::write(&replay_c, REPLAY_C).expect("write replay.cc");
    assert!(ok(Command::new("g++")
        .args(["-O2", "-o"])
        .arg(dir.join("normfile"))
        .arg(&normfile_cc)
        .arg("-lnorm")));
    assert!(ok(Command::new("g++")
        .arg("-o")
        .arg(dir.join("replay"))
        .arg(&replay_c)));
    let mut stream = Vec::new();
    for d in codec_transfer() {
        stream.extend_from_slice(&(d.len() as u16).to_be_bytes());
        stream.extend_from_slice(&d);
    }
    std::fs::write(dir.join("datagrams"), stream).expect("write datagrams");
    let ns = format!("rmcast-norm-rx-{}", std::process::id());
    let ip = |args: &[&str]| ok(Command::new("ip").args(args));
    assert!(ip(&["netns", "add", &ns]));
    assert!(ip(&["-n", &ns, "link", "set", "lo", "up"]));
    assert!(ip(&["-n", &ns, "route", "add", "224.0.0.0/4", "dev", "lo"]));
    let mut rx = Command::new("ip")
        .args(["netns", "exec", &ns])
        .arg(dir.join("normfile"))
        .args(["recv", "239.1.2.3", "6004", "lo", "2"])
        .arg(&rx_dir)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start normfile recv");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let sent = ok(Command::new("ip")
        .args(["netns", "exec", &ns])
        .arg(dir.join("replay"))
        .args(["239.1.2.3", "6004"])
        .arg(dir.join("datagrams")));
    let got = rx_dir.join("bench.bin");
    for _ in 0..100 {
        if got.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let received = std::fs::read(&got);
    let _ = rx.kill();
    let _ = rx.wait();
    ip(&["netns", "del", &ns]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(sent, "the replayer ran");
    let received = received.expect("libnorm wrote the file (it completed the object)");
    assert!(
        received == file(),
        "libnorm's file is the codec's, byte for byte"
    );
}
