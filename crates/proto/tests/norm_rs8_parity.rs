//! Is rmcast's Reed–Solomon parity (`rmcast_proto::fec`, the `reed-solomon-erasure` crate)
//! libnorm's? Computed on the segments libnorm 1.5.9 sent in
//! `crates/wire/tests/data/libnorm_cc_loss10.pcap` (issue 62): it is not, for two reasons,
//! each alone enough, and `rmcast_wire::rfc5740::rs8` is what equals libnorm's.
//!
//! 1. rmcast's source symbols carry a 2-byte length prefix (1,402 bytes for 1,400-byte
//!    segments); libnorm's are the segments zero-padded, parity as long as the longest.
//! 2. Without the prefix, over the same zero-padded segments, the crate's code is another
//!    code: its Vandermonde points are 0, 1, 2, 3, … where libnorm's (Rizzo's) are
//!    0, 1, α, α², …; and libnorm codes a short block (36 segments) with its k = 64 code and
//!    zeros for the missing sources.

use reed_solomon_erasure::galois_8::ReedSolomon;
use rmcast_wire::rfc5740::rs8::Rs8;
use rmcast_wire::rfc5740::{Body, Message, PayloadId};
use std::collections::BTreeMap;
use std::path::Path;

#[path = "../../wire/tests/support/pcap.rs"]
mod pcap;

/// Block 0's 36 source segments and the parity segments libnorm sent for it, by ESI.
fn block0() -> (Vec<Vec<u8>>, BTreeMap<usize, Vec<u8>>) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../wire/tests/data/libnorm_cc_loss10.pcap");
    let mut sources = BTreeMap::new();
    let mut parity = BTreeMap::new();
    for d in pcap::udp_payloads(&std::fs::read(path).expect("the capture"), 6003) {
        let m = Message::decode(&d).expect("decodes");
        if let Body::Data {
            id: PayloadId::Rs8 { sbn: 0, esi },
            payload,
            ..
        } = m.body
        {
            let to = if esi < 36 { &mut sources } else { &mut parity };
            to.insert(usize::from(esi), payload.to_vec());
        }
    }
    assert_eq!(sources.len(), 36, "block 0 has 36 source segments");
    (sources.into_values().collect(), parity)
}

#[test]
fn rmcast_fec_parity_is_not_libnorms_and_rs8_is() {
    let (sources, parity) = block0();
    assert!(!parity.is_empty(), "the capture holds parity for block 0");
    let (&esi, libnorm) = parity.iter().next().expect("a parity segment");
    let i = esi - 36;
    // 1. rmcast's fec: a 2-byte length prefix makes every symbol 1,402 bytes.
    let ours = rmcast_proto::fec::parity(&sources, i, 1).expect("rmcast parity");
    assert_eq!((ours[0].len(), libnorm.len()), (1402, 1400));
    // 2. The crate without the prefix, over the zero-padded segments: k = 36 as rmcast would
    //    build it, and k = 64 with zero sources as libnorm does. Neither is libnorm's.
    for k in [36usize, 64] {
        let rs = ReedSolomon::new(k, i + 1).expect("codec");
        let mut shards: Vec<Vec<u8>> = sources.clone();
        shards.resize(k, vec![0; 1400]);
        let mut out = vec![vec![0u8; 1400]; i + 1];
        rs.encode_sep(&shards, &mut out).expect("encode");
        assert_ne!(&out[i], libnorm, "reed-solomon-erasure k = {k}, parity {i}");
    }
    // libnorm's construction is rmcast_wire's rs8.
    let rs8 = Rs8::new(64, 16)
        .expect("code")
        .parity(&sources)
        .expect("parity");
    for (&esi, bytes) in &parity {
        assert_eq!(&rs8[esi - 36], bytes, "rs8 parity {esi}");
    }
}
