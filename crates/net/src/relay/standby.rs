//! A standby relay (`rmcast relay --standby SECS`): a second relay between the same networks
//! as an active one, which takes the region over when the active relay dies, as a redundant
//! router takes a subnet over when its peer stops (VRRP, a PIM designated router's
//! successor).
//!
//! While it stands by it follows the session upstream as any relay does (the ANNOUNCE fixes
//! the session and its sender) but forwards nothing down and hosts no agent: the receivers
//! below hear the active relay only. It listens on its downstream interfaces for the
//! session's multicast from anyone it does not serve: the active relay forwarding it. When
//! it has heard none for `SECS` while the session runs upstream, it takes over: from then on
//! it is an ordinary relay (its agent is built from the next running ANNOUNCE, which it
//! forwards down), and the receivers, whose relay fell silent, follow the session to its
//! address ([`crate::receiver`]'s fallback) and JOIN again through it.
//!
//! Under a key the active relay's copies are replays of what the standby opened upstream: it
//! reads their clear header only, so the sign of life is not authenticated (a host on the
//! region's network can keep a standby standing by, as it could flood the network).
//!
//! A standby started alone (no active relay below) takes over `SECS` after it adopted the
//! session. Two standbys on the same networks would both take over: run one. A standby never
//! takes over a helper that holds custody ([`crate::agents::NetProtocol::relay_custody`]):
//! the dead one would have acknowledged data the sender then released, which a fresh one
//! could not get back, so taking over would hold the transfer for ever; the region's
//! receivers then end as they would without a standby. No protocol's helper holds custody
//! on sockets now: prmp's region relay (`prmp::tree::Relay::end_to_end`) and dsp's
//! designated relay (`tree::HostedDesignated::end_to_end`) acknowledge to the sender only
//! what their receivers hold, and the sender keeps the rest, so a standby takes them over
//! and resumes the region's receivers where they were.

use super::Relay;
use crate::agents::{self, Announced};
use crate::secure::TRAILER_LEN;
use mio::Token;
use rmcast_proto::Time;
use rmcast_wire::{session, Header, Message, Packet};
use std::net::SocketAddr;
use std::time::Duration;

/// A standby relay's watch over the active relay downstream.
#[derive(Debug, Clone)]
pub(super) struct Standby {
    /// Silence of the active relay after which it takes over.
    after: Duration,
    /// When the active relay's multicast was last heard downstream.
    heard: Option<Time>,
    /// When the session being watched was adopted.
    watching: Option<Time>,
    /// When it took over (`None`: standing by).
    took_over: Option<Time>,
    /// The helper it would host holds custody ([`custody`]): it never takes over.
    custody: Option<&'static str>,
}

impl Standby {
    pub(super) fn new(after: Duration) -> Self {
        Standby {
            after,
            heard: None,
            watching: None,
            took_over: None,
            custody: None,
        }
    }

    /// The session's helper here holds custody (the protocol's name): never take it over,
    /// say why once.
    pub(super) fn custody(&mut self, protocol: &'static str) {
        if self.custody.is_none() {
            tracing::error!(
                "standby: {protocol}'s helper in this region holds custody of data the sender \
                 has released to it; a standby cannot take it over mid-session and will not"
            );
        }
        self.custody = Some(protocol);
    }

    /// Whether it still stands by (forwards nothing down).
    pub(super) fn standing_by(&self) -> bool {
        self.took_over.is_none()
    }

    /// The session's multicast heard downstream from a host it does not serve: the active
    /// relay is alive.
    pub(super) fn heard(&mut self, now: Time) {
        self.heard = Some(now);
    }

    /// Whether what came from upstream at `now` is held (not forwarded, not shown to an
    /// agent): the active relay was heard within [`Standby::after`] of `now`, or the session
    /// was adopted less than that ago. Takes over (and says so) when neither holds.
    pub(super) fn holds(&mut self, now: Time) -> bool {
        if self.took_over.is_some() {
            return false;
        }
        if self.custody.is_some() {
            return true;
        }
        let watching = *self.watching.get_or_insert(now);
        let last = self.heard.map_or(watching, |h| h.max(watching));
        if now.saturating_since(last) < self.after {
            return true;
        }
        self.took_over = Some(now);
        match self.heard {
            Some(_) => tracing::warn!(
                "standby: the active relay has been silent downstream for {:.1}s: taking over",
                now.saturating_since(last).as_secs_f64()
            ),
            None => tracing::warn!(
                "standby: no relay heard downstream within {:.1}s of the session: taking over",
                self.after.as_secs_f64()
            ),
        }
        false
    }

    /// Seconds from the session's adoption to the takeover, if it took over.
    pub(super) fn took_over_after(&self) -> Option<f64> {
        let (w, t) = (self.watching?, self.took_over?);
        Some(t.saturating_since(w).as_secs_f64())
    }

    /// The session ended: stand by again for the next one.
    pub(super) fn reset(&mut self) {
        *self = Standby::new(self.after);
    }
}

/// The protocol's name, when `d` is a running ANNOUNCE of a session whose helper in
/// `region` holds custody ([`crate::agents::NetProtocol::relay_custody`]).
pub(super) fn custody(d: &[u8], region: Option<u16>) -> Option<&'static str> {
    let Ok(Packet {
        message: Message::Session(m),
        ..
    }) = Packet::decode(d)
    else {
        return None;
    };
    let a = Announced::of(&m).filter(|a| a.running)?;
    let p = agents::announced(a.protocol)?;
    p.relay_custody(a, region).then(|| p.name_of(&a))
}

impl Relay {
    /// A standby standing by reads the group downstream only for the active relay's sign of
    /// life: the session's multicast from a host it does not serve, told by its header alone
    /// (under a key the copies are replays of what the standby opened upstream, which its
    /// replay window refuses). `true`: the datagram (`n` bytes in the buffer, from the socket
    /// of `t`) was such a read.
    pub(super) fn standby_hears(
        &mut self,
        t: Token,
        n: usize,
        from: SocketAddr,
        now: Time,
    ) -> bool {
        let Token(k) = t;
        let standing_by = self.standby.as_ref().is_some_and(|sb| sb.standing_by());
        if !standing_by || !(super::DOWN_GROUP_BASE..super::PROXY_BASE).contains(&k) {
            return false;
        }
        let keyed = self.sealer.is_some();
        let h = self.buf.get(..n).and_then(|d| cleartext_header(d, keyed));
        let Some(h) = h else {
            self.report.rejected += 1;
            return true;
        };
        let Some(sb) = self.standby.as_mut() else {
            return true;
        };
        let ours = self
            .served
            .as_ref()
            .is_none_or(|s| s.report.session == h.session && !s.by_addr.contains_key(&from));
        if ours {
            sb.heard(now);
        }
        true
    }
}

/// The header of datagram `d` as it came (with `keyed`, sealed: the header is in clear and
/// the trailer follows the payload), without opening it.
pub(super) fn cleartext_header(d: &[u8], keyed: bool) -> Option<Header> {
    let d = if keyed {
        d.get(..d.len().checked_sub(TRAILER_LEN)?)?
    } else {
        d
    };
    Header::parse(d).ok()
}

/// Whether `d` is the sender's END (a standby that holds the session still ends with it).
pub(super) fn is_end(d: &[u8]) -> bool {
    matches!(
        Packet::decode(d),
        Ok(Packet {
            message: Message::Session(session::Message::End { .. }),
            ..
        })
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Time {
        Time::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn it_holds_while_the_active_relay_is_heard_and_takes_over_after_its_silence() {
        let mut s = Standby::new(Duration::from_secs(1));
        assert!(s.holds(at(0)), "the session just adopted");
        s.heard(at(100));
        assert!(s.holds(at(900)));
        s.heard(at(1000));
        assert!(s.holds(at(1999)), "heard 999 ms ago");
        assert!(s.standing_by());
        assert!(!s.holds(at(2000)), "silent for 1 s: taken over");
        assert!(!s.standing_by());
        s.heard(at(2100));
        assert!(!s.holds(at(2100)), "once taken over, it serves");
        assert_eq!(s.took_over_after(), Some(2.0));
        s.reset();
        assert!(s.standing_by() && s.took_over_after().is_none());
    }

    #[test]
    fn alone_it_takes_over_once_the_session_has_run_its_delay() {
        let mut s = Standby::new(Duration::from_millis(500));
        assert!(s.holds(at(10_000)));
        assert!(s.holds(at(10_499)));
        assert!(!s.holds(at(10_500)));
        assert_eq!(s.took_over_after(), Some(0.5));
    }

    /// The active relay's copies are told by their clear header, sealed or not.
    #[test]
    fn a_header_is_read_without_opening_the_datagram() {
        let d = crate::endpoint::session_packet(7, 0x42, session::Message::Join { region: None })
            .unwrap();
        let keys = crate::secure::Keys::from_secret(&[3; 32], true).unwrap();
        let mut sealed = Vec::new();
        crate::secure::Sealer::new(keys, 0).seal(&d, &mut sealed);
        for (d, keyed) in [(&d, false), (&sealed, true)] {
            let h = cleartext_header(d, keyed).expect("a header");
            assert_eq!((h.session, h.source), (7, 0x42));
        }
        assert!(
            cleartext_header(&sealed, false).is_none(),
            "a trailer it does not expect"
        );
        assert!(cleartext_header(&d[..3], true).is_none());
    }

    #[test]
    fn it_never_takes_over_a_helper_that_holds_custody() {
        let mut s = Standby::new(Duration::from_millis(500));
        assert!(s.holds(at(0)));
        s.custody("dsp");
        assert!(s.holds(at(60_000)));
        assert!(s.standing_by() && s.took_over_after().is_none());
    }
}
