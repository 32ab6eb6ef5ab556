//! A relay's side of keyed sessions: what comes in is opened with the key (a copy, for the
//! relay and its agent to read), what passes goes on as it came, and what the agent
//! originates is sealed.

use super::Relay;
use crate::secure::{stale_announce, FRESHNESS, TRAILER_LEN};
use rmcast_wire::{DecodeError, Header};

/// A datagram as it came (`wire`: what is forwarded) and opened (`plain`: what the relay and
/// its agent read); the same bytes without a key.
#[derive(Debug, Clone, Copy)]
pub(super) struct Dgram<'a> {
    pub(super) plain: &'a [u8],
    pub(super) wire: &'a [u8],
}

impl Relay {
    /// `wire` opened into `plain` with the key (without one, as it came); `None` if it did
    /// not open (counted).
    pub(super) fn unseal<'a>(
        &mut self,
        wire: &'a [u8],
        plain: &'a mut Vec<u8>,
    ) -> Option<Dgram<'a>> {
        let Some(s) = self.sealer.as_mut() else {
            return Some(Dgram { plain: wire, wire });
        };
        plain.clear();
        plain.extend_from_slice(wire);
        match s.open(plain) {
            Ok(n) => Some(Dgram {
                plain: plain.get(..n)?,
                wire,
            }),
            Err(why) => {
                self.report.rejected_auth += 1;
                if self.report.rejected_auth == 1 {
                    tracing::warn!(
                        "a datagram did not open with --key-file ({why}): a different key, \
                         --encrypt on one side only, or a sender without a key; refused"
                    );
                }
                None
            }
        }
    }

    /// A datagram refused for where it came from or what it is: counted, and its mark in
    /// the replay window taken back (the same bytes may yet come from where they belong: a
    /// member's multicast heard from another relay before its own copy).
    pub(super) fn refuse(&mut self) {
        self.report.rejected += 1;
        if let Some(s) = self.sealer.as_mut() {
            s.unmark_last();
        }
    }

    /// What the agent originated, sealed with the key into `out` (without one, as it is).
    pub(super) fn seal<'a>(&mut self, payload: &'a [u8], out: &'a mut Vec<u8>) -> &'a [u8] {
        match self.sealer.as_mut() {
            Some(s) => {
                out.clear();
                s.seal(payload, out);
                out
            }
            None => payload,
        }
    }

    /// Whether the ANNOUNCE just opened was sealed too far from this host's clock to be
    /// adopted (counted): a captured ANNOUNCE of a dead session, replayed, must not make the
    /// relay serve it (receivers refuse it by the same test).
    pub(super) fn stale_announce(&mut self, session: u32) -> bool {
        let Some(why) = self
            .sealer
            .as_ref()
            .and_then(|s| stale_announce(s.last_opened(), FRESHNESS))
        else {
            return false;
        };
        self.report.rejected_stale += 1;
        if self.report.rejected_stale == 1 {
            tracing::warn!(session = %format_args!("{session:08x}"), "{why}");
        }
        true
    }

    /// The header of a datagram, or `None` (counted) if it is not a plain rmcast datagram.
    pub(super) fn header(&mut self, d: &[u8]) -> Option<Header> {
        match Header::parse(d) {
            Ok(h) => Some(h),
            Err(DecodeError::LengthMismatch { header, actual })
                if actual as u64 == header + TRAILER_LEN as u64 =>
            {
                self.report.rejected_sealed += 1;
                if !self.warned_sealed {
                    self.warned_sealed = true;
                    tracing::warn!(
                        "sealed (--key-file) datagrams arrive: this relay has no key, so they \
                         are dropped; pass the sender's --key-file (and --encrypt if it uses it)"
                    );
                }
                None
            }
            Err(_) => {
                self.report.rejected += 1;
                None
            }
        }
    }

    /// Why no session may have been found, as far as keys tell.
    pub(super) fn keying_hint(&self) -> &'static str {
        if self.report.rejected_stale > 0 {
            " (sealed ANNOUNCEs arrived sealed too far from this host's clock: replayed, or \
             the hosts' clocks disagree)"
        } else if self.report.rejected_sealed > 0 {
            " (sealed datagrams arrived: pass the sender's --key-file, and --encrypt if it \
             uses it)"
        } else if self.report.rejected_auth > 0 {
            " (datagrams that did not open with --key-file arrived: a different key, --encrypt \
             on one side only, or a sender without a key)"
        } else {
            ""
        }
    }
}
