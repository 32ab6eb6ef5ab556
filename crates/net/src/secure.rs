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
//! The counter follows the wall clock: each datagram's counter is the time it was sealed in
//! microseconds since the Unix epoch, or the previous counter + 1 if that is larger. A
//! receiver keeps, per session and source node, the newest 1,024 counters seen
//! (`WINDOW`); a counter seen before or older than the window is a replay and is dropped. A
//! sender also keeps the counters it seals itself ([`Sealer::remember_sealed`]).
//! That window lives in one process; across processes the clock-based counter makes an
//! ANNOUNCE datable: a receiver refuses one sealed more than [`FRESHNESS`] from its own clock
//! (a captured ANNOUNCE replayed later cannot make a fresh receiver join a dead session; the
//! hosts' clocks must agree within that much). The header, with its session id, is covered by
//! the tag, so a packet cannot be moved to another session.
//!
//! A key file holds exactly [`KEY_LEN`] random bytes (`rmcast keygen FILE` writes one) and is
//! readable by its owner only; keys are derived from it with BLAKE3's key derivation, one key
//! per purpose.

use crate::NetError;
use chacha20poly1305::aead::AeadInPlace;
use chacha20poly1305::{ChaCha20Poly1305, KeyInit, Nonce, Tag};
use rmcast_wire::{session, HEADER_LEN};
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// Bytes a sealed datagram adds.
pub const TRAILER_LEN: usize = 8 + 16;

/// Bytes of a key file.
pub const KEY_LEN: usize = 32;

/// How far a sealed ANNOUNCE's counter (its sealing time) may be from the receiver's clock.
pub const FRESHNESS: std::time::Duration = std::time::Duration::from_secs(30);

/// Microseconds since the Unix epoch by the wall clock (0 before 1970).
pub fn unix_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// Whether a counter (a sealing time in µs) lies within `window` of `now_us`.
pub fn fresh(counter: u64, now_us: u64, window: std::time::Duration) -> bool {
    counter.abs_diff(now_us) <= u64::try_from(window.as_micros()).unwrap_or(u64::MAX)
}

/// Why an ANNOUNCE sealed at `counter` is refused, if it lies further than `window` from
/// this host's clock now (a dead session's ANNOUNCE replayed, or clocks apart): the warning
/// receivers and relays give.
pub fn stale_announce(counter: u64, window: std::time::Duration) -> Option<String> {
    let now = unix_micros();
    (!fresh(counter, now, window)).then(|| {
        format!(
            "ANNOUNCE refused: sealed {:.0} s away from this host's clock (more than \
             {window:.0?}): a replayed ANNOUNCE, or the hosts' clocks disagree (synchronise \
             them with NTP)",
            counter.abs_diff(now) as f64 / 1e6
        )
    })
}

/// Why a sealed datagram was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Reject {
    #[error("too short to carry a header and trailer")]
    /// Too short to carry a header and the trailer.
    Short,
    #[error("authentication failed")]
    /// The authentication tag does not match.
    BadTag,
    #[error("replayed or too old")]
    /// Replayed, or sealed too long ago.
    Replay,
}

/// Loaded key material.
#[derive(Clone)]
pub struct Keys {
    auth: [u8; 32],
    enc: [u8; 32],
    /// Encrypt payloads besides authenticating them (`--encrypt`).
    pub encrypt: bool,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Keys {{ encrypt: {} }}", self.encrypt)
    }
}

impl Keys {
    /// The security bits an ANNOUNCE carries for a session run with `keys` (none: no key).
    pub fn announced_security(keys: Option<&Keys>) -> u8 {
        match keys {
            None => 0,
            Some(k) if k.encrypt => session::SECURITY_AUTH | session::SECURITY_ENCRYPT,
            Some(_) => session::SECURITY_AUTH,
        }
    }

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

    /// Load a key file: exactly [`KEY_LEN`] bytes, readable by its owner only (Unix).
    pub fn from_file(path: &Path, encrypt: bool) -> Result<Self, NetError> {
        let shown = path.display();
        let meta = std::fs::metadata(path).map_err(|e| {
            NetError::setup(format!(
                "cannot read key file {shown}: {e}; pass --key-file with a readable file (make one with `rmcast keygen {shown}`)"
            ))
        })?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(NetError::setup(format!(
                    "key file {shown} is readable by group or others (mode {mode:04o}): run `chmod 600 {shown}`"
                )));
            }
        }
        let secret = std::fs::read(path).map_err(|e| {
            NetError::setup(format!(
                "cannot read key file {shown}: {e}; pass --key-file with a readable file"
            ))
        })?;
        if secret.len() != KEY_LEN || meta.len() != KEY_LEN as u64 {
            return Err(NetError::setup(format!(
                "key file {shown} holds {} bytes, a key is {KEY_LEN} random bytes: make one with `rmcast keygen FILE`",
                secret.len()
            )));
        }
        Self::from_secret(&secret, encrypt)
    }

    /// Write a new key file: [`KEY_LEN`] bytes from the operating system's random source,
    /// mode 0600 (Unix); an existing file is never overwritten.
    pub fn generate(path: &Path) -> Result<(), NetError> {
        use rand::TryRngCore;
        use std::io::Write;
        let shown = path.display();
        let mut key = [0u8; KEY_LEN];
        rand::rngs::OsRng.try_fill_bytes(&mut key).map_err(|e| {
            NetError::setup(format!("no random bytes from the operating system: {e}"))
        })?;
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        let mut f = o.open(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                NetError::setup(format!(
                    "{shown} exists: keygen never overwrites a key; remove it first or choose another name"
                ))
            } else {
                NetError::setup(format!("cannot create key file {shown}: {e}"))
            }
        })?;
        f.write_all(&key)
            .and_then(|_| f.sync_all())
            .map_err(|e| NetError::setup(format!("cannot write key file {shown}: {e}")))
    }
}

/// How many of a source's newest counters a replay window remembers: a datagram may arrive
/// after this many newer ones of its source (a relay reading several sockets in turn
/// reorders) and still open. Counters are sealing times in µs, so a window of counter
/// *values* would refuse a datagram overtaken by one sealed a few hundred µs later.
const WINDOW: usize = 1024;

/// The counters of one (session, source) seen so far: the newest [`WINDOW`] of them, and the
/// largest one forgotten, at or below which everything is refused.
#[derive(Debug, Default, Clone)]
struct Window {
    floor: u64,
    seen: BTreeSet<u64>,
}

/// What marking a counter changed, to take it back ([`Sealer::unmark_last`]).
#[derive(Debug, Clone, Copy)]
struct Marked {
    key: (u32, u32),
    counter: u64,
    forgot: Option<u64>,
    floor: u64,
}

impl Window {
    fn check(&self, c: u64) -> bool {
        c > self.floor && !self.seen.contains(&c)
    }

    /// Remember `c` (which [`Window::check`] passed); returns the counter forgotten for it.
    fn mark(&mut self, c: u64) -> Option<u64> {
        self.seen.insert(c);
        if self.seen.len() <= WINDOW {
            return None;
        }
        let forgot = self.seen.pop_first()?;
        self.floor = self.floor.max(forgot);
        Some(forgot)
    }

    fn unmark(&mut self, m: &Marked) {
        self.seen.remove(&m.counter);
        if let Some(f) = m.forgot {
            self.seen.insert(f);
        }
        self.floor = m.floor;
    }
}

/// Seals outgoing and opens incoming datagrams for one endpoint.
pub struct Sealer {
    keys: Keys,
    aead: ChaCha20Poly1305,
    counter: u64,
    /// Replay windows by (session, source node).
    windows: HashMap<(u32, u32), Window>,
    /// The counter of the datagram [`Sealer::open`] accepted last.
    last_opened: u64,
    /// What the datagram opened last did to its replay window (for [`Sealer::unmark_last`]).
    undo: Option<Marked>,
    /// Put the counter of every datagram it seals into the replay window of that datagram's
    /// session and source ([`Sealer::remember_sealed`]).
    remember: bool,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sealer {{ {:?}, counter: {} }}", self.keys, self.counter)
    }
}

fn source_of(datagram: &[u8]) -> u32 {
    be_u32_at(datagram, 12)
}

fn session_of(datagram: &[u8]) -> u32 {
    be_u32_at(datagram, 8)
}

fn be_u32_at(datagram: &[u8], at: usize) -> u32 {
    datagram
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_be_bytes)
}

fn nonce(source: u32, counter: u64) -> Nonce {
    let mut n = [0u8; 12];
    n[..4].copy_from_slice(&source.to_be_bytes());
    n[4..].copy_from_slice(&counter.to_be_bytes());
    Nonce::from(n)
}

impl Sealer {
    /// Counters start at `counter_start` (the callers pass [`unix_micros`]) and follow the
    /// wall clock from there (see the module doc).
    pub fn new(keys: Keys, counter_start: u64) -> Self {
        let aead = ChaCha20Poly1305::new(&keys.enc.into());
        Sealer {
            keys,
            aead,
            counter: counter_start,
            windows: HashMap::new(),
            last_opened: 0,
            undo: None,
            remember: false,
        }
    }

    /// From now on, put the counter of every datagram this sealer seals into the replay window
    /// of its (session, source): a copy of one of its own datagrams sent back to it (by a peer
    /// bouncing the sender's multicast at the sender's unicast port) is then a replay and never
    /// opens. The sender asks for this; without it the endpoint never saw its own counters
    /// (its looped-back multicasts are skipped unopened), so its own packets opened as new.
    pub fn remember_sealed(&mut self) {
        self.remember = true;
    }

    /// The counter (sealing time, µs since the epoch) of the datagram opened last.
    pub fn last_opened(&self) -> u64 {
        self.last_opened
    }

    /// Whether it encrypts payloads.
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
        let c = self.counter.saturating_add(1).max(unix_micros());
        self.counter = c;
        let start = out.len();
        out.extend_from_slice(datagram);
        let cb = c.to_be_bytes();
        let tag: [u8; 16] = if self.keys.encrypt && datagram.len() >= HEADER_LEN {
            let src = source_of(datagram);
            let (head, body) = out
                .get_mut(start..)
                .unwrap_or_default()
                .split_at_mut(HEADER_LEN);
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
        if self.remember && datagram.len() >= HEADER_LEN {
            let key = (session_of(datagram), source_of(datagram));
            self.windows.entry(key).or_default().mark(c);
        }
    }

    /// Verify (and decrypt) a sealed datagram in place; on success returns the length of the
    /// plain datagram at the front of `buf`.
    pub fn open(&mut self, buf: &mut [u8]) -> Result<usize, Reject> {
        if buf.len() < HEADER_LEN + TRAILER_LEN {
            return Err(Reject::Short);
        }
        let plain_len = buf.len() - TRAILER_LEN;
        let (data, trailer) = buf.split_at_mut(plain_len);
        let Some((cb, tag)) = trailer.split_first_chunk::<8>() else {
            return Err(Reject::Short);
        };
        let c = u64::from_be_bytes(*cb);
        let Ok::<[u8; 16], _>(tag) = tag.try_into() else {
            return Err(Reject::Short);
        };
        let src = source_of(data);
        let key = (session_of(data), src);
        if !self.windows.get(&key).is_none_or(|w| w.check(c)) {
            return Err(Reject::Replay);
        }
        if self.keys.encrypt {
            let (head, body) = data.split_at_mut(HEADER_LEN);
            let mut aad = [0u8; HEADER_LEN + 8];
            aad[..HEADER_LEN].copy_from_slice(head);
            aad[HEADER_LEN..].copy_from_slice(cb);
            self.aead
                .decrypt_in_place_detached(&nonce(src, c), &aad, body, Tag::from_slice(&tag))
                .map_err(|_| Reject::BadTag)?;
        } else {
            let want = self.mac(&[data, cb]);
            // Constant-time comparison.
            let diff = want
                .iter()
                .zip(tag.iter())
                .fold(0u8, |a, (x, y)| a | (x ^ y));
            if diff != 0 {
                return Err(Reject::BadTag);
            }
        }
        let w = self.windows.entry(key).or_default();
        let floor = w.floor;
        let forgot = w.mark(c);
        self.undo = Some(Marked {
            key,
            counter: c,
            forgot,
            floor,
        });
        self.last_opened = c;
        Ok(plain_len)
    }

    /// Take back what the datagram opened last did to its replay window: the endpoint
    /// refused it for who sent it (a member's multicast heard directly, which only a relay's
    /// copy of it may bring), so that copy, the same bytes, is not a replay.
    pub fn unmark_last(&mut self) {
        if let Some(m) = self.undo.take() {
            if let Some(w) = self.windows.get_mut(&m.key) {
                w.unmark(&m);
            }
        }
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
    fn the_window_remembers_the_newest_counters_however_far_apart() {
        // Sealing times 300 µs apart (a sender at a few thousand datagrams a second).
        let mut w = Window::default();
        let at = |i: u64| 1_000_000 + 300 * i;
        for i in 0..2000 {
            assert!(w.check(at(i)));
            w.mark(at(i));
        }
        // Anything overtaken by fewer than WINDOW newer ones opens, once.
        let gap = at(1000) + 1;
        assert!(w.check(gap));
        assert!(!w.check(at(1999)) && !w.check(at(1500)));
        // At or below the newest counter forgotten: refused, seen or not.
        assert!(!w.check(at(975)) && !w.check(at(100) + 1));
        let m = Marked {
            key: (0, 0),
            counter: gap,
            forgot: w.mark(gap),
            floor: at(975),
        };
        assert!(!w.check(gap));
        assert_eq!(w.seen.len(), WINDOW);
        // Taken back: as before.
        w.unmark(&m);
        assert!(w.check(gap) && !w.check(at(976)) && w.floor == at(975));
        assert_eq!(w.seen.len(), WINDOW);
    }

    #[test]
    fn reordered_datagrams_open_once_within_the_window() {
        let (mut a, mut b) = pair(false);
        let p = pkt();
        let n = WINDOW + 100;
        let sealed: Vec<Vec<u8>> = (0..n)
            .map(|_| {
                let mut s = Vec::new();
                a.seal(&p, &mut s);
                s
            })
            .collect();
        // The newest first, then the WINDOW - 1 before it: all open, once.
        b.open(&mut sealed[n - 1].clone()).unwrap();
        for s in &sealed[100..n - 1] {
            b.open(&mut s.clone()).unwrap();
        }
        for s in &sealed[100..110] {
            assert_eq!(b.open(&mut s.clone()), Err(Reject::Replay));
        }
        // One more opens (the oldest remembered is forgotten for it); older ones do not.
        b.open(&mut sealed[99].clone()).unwrap();
        assert_eq!(b.open(&mut sealed[50].clone()), Err(Reject::Replay));
    }

    #[test]
    fn an_unmarked_datagram_opens_again_and_the_window_is_as_before() {
        let (mut a, mut b) = pair(true);
        let p = pkt();
        let sealed: Vec<Vec<u8>> = (0..3)
            .map(|_| {
                let mut s = Vec::new();
                a.seal(&p, &mut s);
                std::thread::sleep(std::time::Duration::from_millis(1));
                s
            })
            .collect();
        b.open(&mut sealed[0].clone()).unwrap();
        // The newest, heard from a stranger first and refused for it...
        b.open(&mut sealed[2].clone()).unwrap();
        b.unmark_last();
        // ...leaves the window where it was: the middle one still opens,
        // and so does the newest's copy from where it may come.
        b.open(&mut sealed[1].clone()).unwrap();
        b.open(&mut sealed[2].clone()).unwrap();
        assert_eq!(b.open(&mut sealed[2].clone()), Err(Reject::Replay));
        // Only the last open is taken back, once.
        b.unmark_last();
        b.unmark_last();
        assert_eq!(b.open(&mut sealed[0].clone()), Err(Reject::Replay));
    }

    /// A sealer that remembers what it seals refuses a copy of its own datagram (the sender's
    /// multicast bounced back at it), also one older than its window; one that does not
    /// remember opens it (as the sender did before).
    #[test]
    fn a_sealer_that_remembers_its_seals_refuses_its_own_datagrams() {
        let (mut a, _) = pair(true);
        a.remember_sealed();
        let p = pkt();
        let sealed: Vec<Vec<u8>> = (0..WINDOW + 10)
            .map(|_| {
                let mut s = Vec::new();
                a.seal(&p, &mut s);
                s
            })
            .collect();
        for s in [&sealed[0], &sealed[5], &sealed[WINDOW + 9]] {
            assert_eq!(a.open(&mut s.clone()), Err(Reject::Replay));
        }
        let (mut forgetful, _) = pair(true);
        let mut s = Vec::new();
        forgetful.seal(&p, &mut s);
        assert!(forgetful.open(&mut s).is_ok());
    }

    #[test]
    fn short_keys_are_refused() {
        assert!(Keys::from_secret(b"short", false).is_err());
    }

    #[test]
    fn keygen_writes_an_owner_only_key_and_never_overwrites() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k");
        Keys::generate(&path).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.len(), KEY_LEN as u64);
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let first = std::fs::read(&path).unwrap();
        let e = Keys::generate(&path).unwrap_err().to_string();
        assert!(e.contains("never overwrites"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), first);
        Keys::from_file(&path, false).unwrap();
        let other = dir.path().join("k2");
        Keys::generate(&other).unwrap();
        assert_ne!(std::fs::read(&other).unwrap(), first);
    }

    #[test]
    fn key_files_readable_by_others_or_of_the_wrong_size_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k");
        std::fs::write(&path, [7u8; KEY_LEN]).unwrap();
        for mode in [0o644, 0o640, 0o604] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = Keys::from_file(&path, false).unwrap_err().to_string();
            assert!(e.contains("chmod 600"), "{mode:o}: {e}");
        }
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        Keys::from_file(&path, true).unwrap();
        for len in [16, 31, 33, 4096] {
            std::fs::write(&path, vec![7u8; len]).unwrap();
            let e = Keys::from_file(&path, false).unwrap_err().to_string();
            assert!(e.contains("rmcast keygen"), "{len}: {e}");
        }
    }

    #[test]
    fn counters_follow_the_clock_and_replays_are_per_session() {
        let keys = Keys::from_secret(b"0123456789abcdef0123456789abcdef", false).unwrap();
        let mut tx = Sealer::new(keys.clone(), 0);
        let mut rx = Sealer::new(keys, 0);
        let before = unix_micros();
        let mut a = Vec::new();
        tx.seal(&pkt(), &mut a);
        let n = rx.open(&mut a.clone()).unwrap();
        assert_eq!(n, pkt().len());
        let c = rx.last_opened();
        assert!(
            c >= before && fresh(c, unix_micros(), FRESHNESS),
            "{c} vs {before}"
        );
        assert!(!fresh(c, c + 31_000_000, FRESHNESS));
        assert_eq!(stale_announce(unix_micros(), FRESHNESS), None);
        let why = stale_announce(unix_micros() + 120_000_000, FRESHNESS).unwrap();
        assert!(
            why.starts_with("ANNOUNCE refused: sealed 120 s away"),
            "{why}"
        );
        assert_eq!(rx.open(&mut a), Err(Reject::Replay));
    }
}
