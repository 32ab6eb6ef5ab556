//! Per-packet authentication and encryption with a pre-shared key.
//!
//! A sealed datagram is the plain rmcast datagram (20-byte header + body) followed by a
//! 24-byte trailer: a 64-bit per-sender counter and a 16-byte tag.
//!
//! * `--key-file` alone: the tag is keyed BLAKE3 over header, body and counter (truncated to
//!   16 bytes).
//! * `--key-file --encrypt`: the body is encrypted with ChaCha20-Poly1305; the nonce is the
//!   source node id (from the header) and the counter; the header and counter are associated
//!   data, so they are authenticated too.
//!
//! Each endpoint starts its counter at a random point and increments it per datagram. A
//! receiver keeps, per source node, the highest counter seen and a 64-entry window below it;
//! a counter seen before or older than the window is a replay and is dropped. Keys are derived
//! from the key file with BLAKE3's key derivation, one key per purpose.

use crate::NetError;
use chacha20poly1305::aead::AeadInPlace;
use chacha20poly1305::{ChaCha20Poly1305, KeyInit, Nonce, Tag};
use rmcast_wire::HEADER_LEN;
use std::collections::HashMap;
use std::path::Path;

/// Bytes a sealed datagram adds.
pub const TRAILER_LEN: usize = 8 + 16;

/// Why a sealed datagram was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Reject {
    #[error("too short to carry a header and trailer")]
    Short,
    #[error("authentication failed")]
    BadTag,
    #[error("replayed or too old")]
    Replay,
}

/// Loaded key material.
#[derive(Clone)]
pub struct Keys {
    auth: [u8; 32],
    enc: [u8; 32],
    pub encrypt: bool,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Keys {{ encrypt: {} }}", self.encrypt)
    }
}

impl Keys {
    /// Derive keys from a key file's bytes (at least 16 bytes of secret).
    pub fn from_secret(secret: &[u8], encrypt: bool) -> Result<Self, NetError> {
        if secret.len() < 16 {
            return Err(NetError::setup(format!(
                "the key file holds {} bytes; it needs at least 16 bytes of secret \
                 (make one with `head -c 32 /dev/urandom > rmcast.key`)",
                secret.len()
            )));
        }
        Ok(Keys {
            auth: blake3::derive_key("rmcast 2026 per-packet authentication v1", secret),
            enc: blake3::derive_key("rmcast 2026 per-packet encryption v1", secret),
            encrypt,
        })
    }

    pub fn from_file(path: &Path, encrypt: bool) -> Result<Self, NetError> {
        let secret = std::fs::read(path).map_err(|e| {
            NetError::setup(format!(
                "cannot read key file {}: {e}; pass --key-file with a readable file",
                path.display()
            ))
        })?;
        Self::from_secret(&secret, encrypt)
    }
}

#[derive(Debug, Default, Clone, Copy)]
struct Window {
    highest: u64,
    bits: u64,
    any: bool,
}

impl Window {
    fn check(&self, c: u64) -> bool {
        if !self.any || c > self.highest {
            return true;
        }
        let back = self.highest - c;
        back < 64 && self.bits & (1u64 << back) == 0
    }
    fn mark(&mut self, c: u64) {
        if !self.any {
            *self = Window {
                highest: c,
                bits: 1,
                any: true,
            };
        } else if c > self.highest {
            let shift = c - self.highest;
            self.bits = if shift >= 64 { 0 } else { self.bits << shift };
            self.bits |= 1;
            self.highest = c;
        } else {
            self.bits |= 1u64 << (self.highest - c);
        }
    }
}

/// Seals outgoing and opens incoming datagrams for one endpoint.
pub struct Sealer {
    keys: Keys,
    aead: ChaCha20Poly1305,
    counter: u64,
    windows: HashMap<u32, Window>,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sealer {{ {:?}, counter: {} }}", self.keys, self.counter)
    }
}

fn source_of(datagram: &[u8]) -> u32 {
    match datagram.get(12..16) {
        Some(b) => u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
        None => 0,
    }
}

fn nonce(source: u32, counter: u64) -> Nonce {
    let mut n = [0u8; 12];
    n[..4].copy_from_slice(&source.to_be_bytes());
    n[4..].copy_from_slice(&counter.to_be_bytes());
    Nonce::from(n)
}

impl Sealer {
    /// `counter_start` should be random (the callers use `rand`), so that two runs with the
    /// same node id and key never reuse a nonce.
    pub fn new(keys: Keys, counter_start: u64) -> Self {
        let aead = ChaCha20Poly1305::new(&keys.enc.into());
        Sealer {
            keys,
            aead,
            counter: counter_start >> 1,
            windows: HashMap::new(),
        }
    }

    pub fn encrypts(&self) -> bool {
        self.keys.encrypt
    }

    fn mac(&self, parts: &[&[u8]]) -> [u8; 16] {
        let mut h = blake3::Hasher::new_keyed(&self.keys.auth);
        for p in parts {
            h.update(p);
        }
        let full = h.finalize();
        let mut t = [0u8; 16];
        t.copy_from_slice(&full.as_bytes()[..16]);
        t
    }

    /// Append the sealed form of `datagram` (a plain rmcast datagram) to `out`.
    pub fn seal(&mut self, datagram: &[u8], out: &mut Vec<u8>) {
        let c = self.counter;
        self.counter = self.counter.wrapping_add(1);
        let start = out.len();
        out.extend_from_slice(datagram);
        let cb = c.to_be_bytes();
        let tag: [u8; 16] = if self.keys.encrypt && datagram.len() >= HEADER_LEN {
            let src = source_of(datagram);
            let (head, body) = out[start..].split_at_mut(HEADER_LEN);
            let mut aad = [0u8; HEADER_LEN + 8];
            aad[..HEADER_LEN].copy_from_slice(head);
            aad[HEADER_LEN..].copy_from_slice(&cb);
            match self
                .aead
                .encrypt_in_place_detached(&nonce(src, c), &aad, body)
            {
                Ok(t) => t.into(),
                // Only fails for bodies beyond 256 GiB; cannot happen for a datagram.
                Err(_) => [0u8; 16],
            }
        } else {
            self.mac(&[datagram, &cb])
        };
        out.extend_from_slice(&cb);
        out.extend_from_slice(&tag);
    }

    /// Verify (and decrypt) a sealed datagram in place; on success returns the length of the
    /// plain datagram at the front of `buf`.
    pub fn open(&mut self, buf: &mut [u8]) -> Result<usize, Reject> {
        if buf.len() < HEADER_LEN + TRAILER_LEN {
            return Err(Reject::Short);
        }
        let plain_len = buf.len() - TRAILER_LEN;
        let (data, trailer) = buf.split_at_mut(plain_len);
        let mut cb = [0u8; 8];
        cb.copy_from_slice(&trailer[..8]);
        let c = u64::from_be_bytes(cb);
        let mut tag = [0u8; 16];
        tag.copy_from_slice(&trailer[8..]);
        let src = source_of(data);
        if !self.windows.get(&src).copied().unwrap_or_default().check(c) {
            return Err(Reject::Replay);
        }
        if self.keys.encrypt {
            let (head, body) = data.split_at_mut(HEADER_LEN);
            let mut aad = [0u8; HEADER_LEN + 8];
            aad[..HEADER_LEN].copy_from_slice(head);
            aad[HEADER_LEN..].copy_from_slice(&cb);
            self.aead
                .decrypt_in_place_detached(&nonce(src, c), &aad, body, Tag::from_slice(&tag))
                .map_err(|_| Reject::BadTag)?;
        } else {
            let want = self.mac(&[data, &cb]);
            // Constant-time comparison.
            let diff = want
                .iter()
                .zip(tag.iter())
                .fold(0u8, |a, (x, y)| a | (x ^ y));
            if diff != 0 {
                return Err(Reject::BadTag);
            }
        }
        self.windows.entry(src).or_default().mark(c);
        Ok(plain_len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcast_wire::{saw, Envelope, Message, Packet};

    fn pkt() -> Vec<u8> {
        Packet::to_vec(
            Envelope {
                session: 5,
                source: 77,
                flags: 0,
            },
            &Message::Saw(saw::Message::Data {
                seq: 1,
                payload: b"hello world",
            }),
        )
        .unwrap()
    }

    fn pair(encrypt: bool) -> (Sealer, Sealer) {
        let k = Keys::from_secret(b"0123456789abcdef0123", encrypt).unwrap();
        (Sealer::new(k.clone(), 1000), Sealer::new(k, 5))
    }

    #[test]
    fn round_trip_tamper_and_replay() {
        for encrypt in [false, true] {
            let (mut a, mut b) = pair(encrypt);
            let p = pkt();
            let mut s = Vec::new();
            a.seal(&p, &mut s);
            assert_eq!(s.len(), p.len() + TRAILER_LEN);
            if encrypt {
                assert_ne!(&s[HEADER_LEN..p.len()], &p[HEADER_LEN..]);
            }
            let mut r = s.clone();
            let n = b.open(&mut r).unwrap();
            assert_eq!(&r[..n], &p[..]);
            // replay
            let mut r2 = s.clone();
            assert_eq!(b.open(&mut r2), Err(Reject::Replay));
            // every single-bit flip is refused
            for i in 0..s.len() {
                for bit in 0..8 {
                    let mut t = s.clone();
                    t[i] ^= 1 << bit;
                    assert!(b.open(&mut t).is_err(), "flip {i}:{bit} accepted");
                }
            }
            // a different key is refused
            let other = Keys::from_secret(b"another secret of sixteen", encrypt).unwrap();
            let mut c = Sealer::new(other, 0);
            let mut r3 = Vec::new();
            a.seal(&p, &mut r3);
            assert_eq!(c.open(&mut r3), Err(Reject::BadTag));
            assert_eq!(c.open(&mut [0u8; 3]), Err(Reject::Short));
        }
    }

    #[test]
    fn window_accepts_reordering_within_64() {
        let (mut a, mut b) = pair(false);
        let p = pkt();
        let sealed: Vec<Vec<u8>> = (0..100)
            .map(|_| {
                let mut s = Vec::new();
                a.seal(&p, &mut s);
                s
            })
            .collect();
        let mut x = sealed[99].clone();
        b.open(&mut x).unwrap();
        let mut y = sealed[50].clone();
        b.open(&mut y).unwrap();
        let mut z = sealed[10].clone();
        assert_eq!(b.open(&mut z), Err(Reject::Replay));
    }

    #[test]
    fn short_keys_are_refused() {
        assert!(Keys::from_secret(b"short", false).is_err());
    }
}
