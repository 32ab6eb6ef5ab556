//! Reading the UDP payloads out of a classic pcap file (what `dumpcap -P` writes), for the
//! tests that check the codecs against captured traffic.

/// The UDP payloads to `port` in a pcap file of Ethernet frames carrying IPv4, in capture
/// order.
pub fn udp_payloads(pcap: &[u8], port: u16) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 24;
    while let Some(rec) = pcap.get(at..at + 16) {
        let incl = u32::from_le_bytes([rec[8], rec[9], rec[10], rec[11]]) as usize;
        let frame = &pcap[at + 16..at + 16 + incl];
        at += 16 + incl;
        if frame.len() < 34 || frame[12..14] != [0x08, 0x00] || frame[23] != 17 {
            continue;
        }
        let udp = 14 + usize::from(frame[14] & 0x0f) * 4;
        let dport = u16::from_be_bytes([frame[udp + 2], frame[udp + 3]]);
        let len = usize::from(u16::from_be_bytes([frame[udp + 4], frame[udp + 5]]));
        if dport == port {
            out.push(frame[udp + 8..udp + len].to_vec());
        }
    }
    out
}
