//! The emulator's timing, without sockets: a medium (one direction of a link, or a whole bus)
//! that serialises frames at its rate through a drop-tail queue, then holds each for the
//! propagation delay plus jitter — the simulator's link rule (`rmcast_sim`'s `sim/link.rs`,
//! `Links::offer`), on wire bytes of Ethernet frames instead of datagram bytes.

use rmcast_sim::SimRng;
use rmcast_wire::{Family, Header, PacketClass};
use std::collections::VecDeque;

/// Bytes a frame occupies the wire beyond what a packet socket hands over (destination,
/// source, type and payload): the 4-byte FCS, the 8-byte preamble and start delimiter, and the
/// 12-byte inter-frame gap (IEEE 802.3).
pub const WIRE_OVERHEAD: u64 = 4 + 8 + 12;

/// The smallest Ethernet frame, FCS included (payloads below 46 bytes are padded).
pub const MIN_FRAME: u64 = 64;

/// The bytes a frame of `len` bytes (as a packet socket reads it: header and payload, no FCS)
/// occupies the wire: padded to [`MIN_FRAME`] with its FCS, plus preamble and gap.
pub fn wire_bytes(len: u64) -> u64 {
    (len + 4).max(MIN_FRAME) + 8 + 12
}

/// How a medium carries frames.
#[derive(Debug, Clone, PartialEq)]
pub struct MediumSpec {
    /// Bits per second; 0: infinitely fast (no transmission time).
    pub rate_bps: u64,
    /// Propagation delay, ns.
    pub delay_ns: u64,
    /// Normal jitter (mean, standard deviation), ns: each frame's draw is added when positive.
    pub jitter_ns: Option<(f64, f64)>,
    /// Frames may overtake one another (independent jitter); otherwise an arrival is never
    /// earlier than the one before it.
    pub reorder: bool,
    /// Frames that may wait behind the one on the wire (drop-tail); `None`: unbounded.
    pub queue: Option<usize>,
}

impl MediumSpec {
    /// Transmission time of `wire` bytes, ns (rounded up, as the simulator's `tx_ns`).
    pub fn tx_ns(&self, wire: u64) -> u64 {
        if self.rate_bps == 0 {
            0
        } else {
            (u128::from(wire) * 8 * 1_000_000_000).div_ceil(u128::from(self.rate_bps)) as u64
        }
    }
}

/// One medium's state.
#[derive(Debug, Clone)]
pub struct Medium {
    /// Its settings.
    pub spec: MediumSpec,
    busy_until: u64,
    last_arrival: u64,
    /// When each frame waiting behind the one on the wire starts its transmission.
    waiting: VecDeque<u64>,
    jitter: SimRng,
}

impl Medium {
    /// An idle medium; `jitter` is its stream of jitter draws.
    pub fn new(spec: MediumSpec, jitter: SimRng) -> Medium {
        Medium {
            spec,
            busy_until: 0,
            last_arrival: 0,
            waiting: VecDeque::new(),
            jitter,
        }
    }

    /// A frame of `wire` bytes offered at `now` (ns): `None` when the queue is full (dropped
    /// on arrival), else when its last bit arrives at the far end.
    pub fn offer(&mut self, now: u64, wire: u64) -> Option<u64> {
        if let Some(cap) = self.spec.queue {
            while self.waiting.front().is_some_and(|&s| s <= now) {
                self.waiting.pop_front();
            }
            if self.waiting.len() >= cap && self.busy_until > now {
                return None;
            }
        }
        let start = now.max(self.busy_until);
        if start > now && self.spec.queue.is_some() {
            self.waiting.push_back(start);
        }
        self.busy_until = start + self.spec.tx_ns(wire);
        let mut arrival = self.busy_until + self.spec.delay_ns;
        if let Some((mean, sd)) = self.spec.jitter_ns {
            let v = self.jitter.normal(mean, sd);
            if v > 0.0 {
                arrival += v as u64;
            }
        }
        if !self.spec.reorder {
            arrival = arrival.max(self.last_arrival);
            self.last_arrival = arrival;
        }
        Some(arrival)
    }
}

/// The rmcast packet class of an Ethernet frame (header and payload): an unfragmented IPv4
/// UDP datagram, or the first fragment of one, whose payload parses as an rmcast header; else
/// `None` (ARP, IGMP, later fragments), which only the `all` filter matches.
pub fn frame_class(frame: &[u8]) -> Option<PacketClass> {
    frame_header(frame).map(|h| h.class())
}

/// The rmcast header of an Ethernet frame, as [`frame_class`] finds it.
pub fn frame_header(frame: &[u8]) -> Option<Header> {
    if frame.get(12..14)? != [0x08, 0x00] {
        return None;
    }
    let ip = frame.get(14..)?;
    let ihl = usize::from(ip.first()? & 0x0f) * 4;
    let first_fragment = ip.get(6)? & 0x1f == 0 && *ip.get(7)? == 0;
    if *ip.get(9)? != 17 || !first_fragment || ihl < 20 {
        return None;
    }
    let payload = ip.get(ihl + 8..)?;
    Header::parse(payload).ok()
}

/// What a frame carried, for the counts of its drops: the agents' data (original or
/// repair), the agents' control, the sockets' session layer (`rmcast send`'s and `rmcast
/// recv`'s JOIN, ANNOUNCE, reports, END: no simulated node sends these), or no rmcast
/// datagram (ARP, IGMP, a later fragment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carried {
    /// Original or repair data.
    Data,
    /// An agent's control packet.
    Control,
    /// The driver's session layer.
    Session,
    /// Not an rmcast datagram.
    Other,
}

impl Carried {
    /// What a frame whose rmcast header is `h` carries.
    pub fn of(h: Option<Header>) -> Carried {
        match h {
            None => Carried::Other,
            Some(h) if h.family == Family::Session => Carried::Session,
            Some(h) if h.class().is_data() => Carried::Data,
            Some(_) => Carried::Control,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn medium(rate_bps: u64, delay_ns: u64, queue: Option<usize>) -> Medium {
        let spec = MediumSpec {
            rate_bps,
            delay_ns,
            jitter_ns: None,
            reorder: false,
            queue,
        };
        Medium::new(spec, SimRng::new(1, 2, 3, 4))
    }

    #[test]
    fn wire_bytes_add_fcs_preamble_gap_and_padding() {
        assert_eq!(wire_bytes(1514), 1538);
        assert_eq!(wire_bytes(42), 84);
    }

    #[test]
    fn frames_serialise_then_propagate() {
        // 10 Mb/s: a 1,538-byte wire frame takes 1,230.4 us; 500 us of delay.
        let mut m = medium(10_000_000, 500_000, None);
        assert_eq!(m.offer(0, 1538), Some(1_230_400 + 500_000));
        // Offered at once behind it: starts when the first ends.
        assert_eq!(m.offer(0, 1538), Some(2 * 1_230_400 + 500_000));
        // After an idle spell: from its own arrival.
        assert_eq!(m.offer(10_000_000, 84), Some(10_000_000 + 67_200 + 500_000));
    }

    #[test]
    fn a_full_queue_drops_on_arrival() {
        let mut m = medium(10_000_000, 0, Some(2));
        assert!(m.offer(0, 1538).is_some()); // on the wire
        assert!(m.offer(0, 1538).is_some()); // waits
        assert!(m.offer(0, 1538).is_some()); // waits
        assert_eq!(m.offer(0, 1538), None);
        // When the first has left, one place is free again.
        assert!(m.offer(1_230_400, 1538).is_some());
        assert_eq!(m.offer(1_230_400, 1538), None);
    }

    #[test]
    fn jitter_never_reorders_unless_asked() {
        let spec = MediumSpec {
            rate_bps: 0,
            delay_ns: 1_000,
            jitter_ns: Some((0.0, 100_000.0)),
            reorder: false,
            queue: None,
        };
        let mut m = Medium::new(spec.clone(), SimRng::new(1, 2, 3, 4));
        let a: Vec<u64> = (0..1000).map(|i| m.offer(i * 10, 100).unwrap()).collect();
        assert!(a.windows(2).all(|w| w[0] <= w[1]));
        let mut m = Medium::new(
            MediumSpec {
                reorder: true,
                ..spec
            },
            SimRng::new(1, 2, 3, 4),
        );
        let a: Vec<u64> = (0..1000).map(|i| m.offer(i * 10, 100).unwrap()).collect();
        assert!(a.windows(2).any(|w| w[0] > w[1]));
    }

    /// An Ethernet frame of an IPv4 UDP datagram carrying `payload`, with the IP header's
    /// fragment field `frag`.
    fn udp_frame(payload: &[u8], frag: [u8; 2]) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20 + 8];
        f[12] = 0x08;
        f[14] = 0x45;
        f[14 + 6..14 + 8].copy_from_slice(&frag);
        f[14 + 9] = 17;
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn every_kind_of_rmcast_packet_is_classified_from_its_frame() {
        for (env, msg) in rmcast_wire::samples::every_kind() {
            let d = rmcast_wire::Packet::to_vec(env, &msg).unwrap();
            let class = Header::parse(&d).unwrap().class();
            assert_eq!(frame_class(&udp_frame(&d, [0, 0])), Some(class), "{msg:?}");
            // More fragments follow: still the first fragment, classified.
            assert_eq!(frame_class(&udp_frame(&d, [0x20, 0])), Some(class));
            // A later fragment carries no header.
            assert_eq!(frame_class(&udp_frame(&d, [0, 0xb9])), None);
            // What its drops are counted as: the session layer apart from the agents'.
            let h = frame_header(&udp_frame(&d, [0, 0]));
            let want = match (Header::parse(&d).unwrap().family, class.is_data()) {
                (Family::Session, _) => Carried::Session,
                (_, true) => Carried::Data,
                (_, false) => Carried::Control,
            };
            assert_eq!(Carried::of(h), want, "{msg:?}");
            assert_eq!(
                Carried::of(frame_header(&udp_frame(&d, [0, 0xb9]))),
                Carried::Other
            );
        }
    }

    #[test]
    fn frames_are_classified_by_their_rmcast_header() {
        let mut f = vec![0u8; 14 + 20 + 8];
        f[12] = 0x08;
        f[14] = 0x45;
        f[23] = 17;
        assert_eq!(frame_class(&f), None); // no rmcast header
        assert_eq!(frame_class(&f[..20]), None);
        f[12] = 0x08;
        f[13] = 0x06; // ARP
        assert_eq!(frame_class(&f), None);
    }
}
