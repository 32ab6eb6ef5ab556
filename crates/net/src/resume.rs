//! Restart mode: what a receiver keeps of a file it did not finish, and how it finds it again.
//!
//! A file with an announced size and digest is written to `.NAME.rmcast-<16 hex>.part`, the
//! hex being the first 8 bytes of its BLAKE3 digest, beside a small sidecar
//! `.NAME.rmcast-<16 hex>.meta` that names the file (format [`Sidecar`]). Neither name can be
//! mistaken for the finished file: that appears only after the digest verified, by rename,
//! and the sidecar is removed then. A receive that ends before the file is whole (the sender
//! ended or went silent, the receiver was evicted, interrupted or killed) leaves both; a
//! digest mismatch or malformed data removes both.
//!
//! What a partial copy holds is its first `len(part)` bytes: data reaches the file in order,
//! so it holds a prefix, and the sidecar need not count it. When a receiver finds a session
//! it scans its directory for sidecars ([`scan`]) and tells the sender what it holds (a HAVE,
//! [`rmcast_wire::session::Held`]); the sender starts each file at the shortest prefix any
//! of its receivers holds (0 if one holds none), and says so in the file's header. A
//! sidecar that does not parse, or names another file than its own name says, is ignored
//! with a warning.

use crate::outdir::check_name;
use rmcast_wire::session::{Held, MAX_HELD};
use std::path::{Path, PathBuf};

/// The first line of a sidecar.
const MAGIC: &str = "rmcast-resume 1";

/// What a sidecar records: the file a `.part` belongs to. On disk, four lines of text:
///
/// ```text
/// rmcast-resume 1
/// size 20000000
/// blake3 <64 lower-case hex digits>
/// name f.bin
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sidecar {
    /// The file's size, bytes.
    pub size: u64,
    /// Its BLAKE3 digest.
    pub digest: [u8; 32],
    /// Its name (one plain path component).
    pub name: String,
}

/// Why a sidecar was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SidecarError {
    /// Not the expected lines.
    #[error("line {0}: expected `{1}`")]
    Line(usize, &'static str),
    /// A size or digest that does not parse.
    #[error("{0} does not parse")]
    Value(&'static str),
    /// A name the receiver would refuse.
    #[error("name refused: {0}")]
    Name(crate::outdir::NameError),
}

impl Sidecar {
    /// The sidecar's text.
    pub fn encode(&self) -> String {
        format!(
            "{MAGIC}\nsize {}\nblake3 {}\nname {}\n",
            self.size,
            blake3::Hash::from(self.digest).to_hex(),
            self.name
        )
    }

    /// Parse a sidecar's text; never panics, whatever the bytes.
    pub fn parse(text: &str) -> Result<Sidecar, SidecarError> {
        let body = text
            .strip_suffix('\n')
            .ok_or(SidecarError::Line(0, "a final newline"))?;
        let mut lines = body.split('\n');
        let mut field = |n: usize, key: &'static str| {
            lines
                .next()
                .and_then(|l| l.strip_prefix(key))
                .ok_or(SidecarError::Line(n, key))
        };
        if !field(1, MAGIC)?.is_empty() {
            return Err(SidecarError::Line(1, MAGIC));
        }
        let size = field(2, "size ")?
            .parse()
            .map_err(|_| SidecarError::Value("size"))?;
        let hex = field(3, "blake3 ")?;
        let digest = blake3::Hash::from_hex(hex)
            .map_err(|_| SidecarError::Value("blake3"))?
            .into();
        let name = field(4, "name ")?.to_string();
        if lines.next().is_some() {
            return Err(SidecarError::Line(5, "the end"));
        }
        check_name(&name).map_err(SidecarError::Name)?;
        Ok(Sidecar { size, digest, name })
    }

    /// The HAVE entry of this file with `held` bytes of it held.
    pub fn held(&self, held: u64) -> Held {
        Held {
            size: self.size,
            held: held.min(self.size),
            name_key: name_key(&self.name),
            digest: self.digest,
        }
    }
}

/// The first 8 bytes of BLAKE3 of `name`: how a HAVE names a file.
pub fn name_key(name: &str) -> u64 {
    let h = blake3::hash(name.as_bytes());
    let mut k = [0u8; 8];
    k.copy_from_slice(h.as_bytes().get(..8).unwrap_or(&[0; 8]));
    u64::from_be_bytes(k)
}

/// The partial file and the sidecar of file `name` with digest `digest` in `dir`.
pub fn paths(dir: &Path, name: &str, digest: &[u8; 32]) -> (PathBuf, PathBuf) {
    let tag = blake3::Hash::from(*digest).to_hex();
    let stem = format!(".{name}.rmcast-{}", tag.get(..16).unwrap_or_default());
    (
        dir.join(format!("{stem}.part")),
        dir.join(format!("{stem}.meta")),
    )
}

/// The sidecar at `meta`, if it parses and belongs where it lies (its name and digest give
/// its own path): `None`, with a warning, otherwise.
pub fn read_sidecar(dir: &Path, meta: &Path) -> Option<Sidecar> {
    let text = std::fs::read(meta).ok()?;
    let parsed = std::str::from_utf8(&text)
        .map_err(|_| SidecarError::Value("UTF-8 text"))
        .and_then(Sidecar::parse)
        .and_then(|s| {
            if paths(dir, &s.name, &s.digest).1 == meta {
                Ok(s)
            } else {
                Err(SidecarError::Value("its path (another file's sidecar)"))
            }
        });
    match parsed {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(sidecar = %meta.display(), "partial copy ignored: {e}");
            None
        }
    }
}

/// The partial copies in `dir` (at most [`MAX_HELD`]), as a HAVE names them: each sidecar
/// that parses, with the length of its `.part` (a sidecar without one is skipped).
pub fn scan(dir: &Path) -> Vec<Held> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut held = Vec::new();
    for e in entries.flatten() {
        let file = e.file_name();
        let name = file.to_string_lossy();
        if !(name.starts_with('.') && name.contains(".rmcast-") && name.ends_with(".meta")) {
            continue;
        }
        let Some(s) = read_sidecar(dir, &e.path()) else {
            continue;
        };
        let (part, _) = paths(dir, &s.name, &s.digest);
        if let Ok(m) = std::fs::metadata(&part) {
            held.push(s.held(m.len()));
        }
        if held.len() == MAX_HELD {
            break;
        }
    }
    held
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sample() -> Sidecar {
        Sidecar {
            size: 20_000_000,
            digest: *blake3::hash(b"f").as_bytes(),
            name: "f.bin".into(),
        }
    }

    #[test]
    fn a_sidecar_reads_back_what_was_written() {
        let s = sample();
        assert_eq!(Sidecar::parse(&s.encode()), Ok(s.clone()));
        let h = s.held(30_000_000);
        assert_eq!(
            (h.size, h.held),
            (20_000_000, 20_000_000),
            "capped at the size"
        );
        assert_eq!(h.name_key, name_key("f.bin"));
        assert_ne!(name_key("f.bin"), name_key("g.bin"));
    }

    #[test]
    fn malformed_sidecars_are_refused_never_a_panic() {
        let good = sample().encode();
        let hex = blake3::Hash::from(sample().digest).to_hex().to_string();
        let cases = [
            String::new(),
            "rmcast-resume 2\n".into(),
            good.replace("size 20000000", "size -1"),
            good.replace("size 20000000", "size 99999999999999999999999"),
            good.replace(&hex, &hex[..63]),
            good.replace(&hex, &"zz".repeat(32)),
            good.replace("name f.bin", "name ../etc/passwd"),
            good.replace("name f.bin", "name "),
            good.replace("blake3", "sha256"),
            format!("{good}extra\n"),
            good.replace('\n', "\r\n"),
        ];
        for c in &cases {
            assert!(Sidecar::parse(c).is_err(), "{c:?}");
        }
        // Bytes that are not text, or half a sidecar.
        for n in 0..good.len() {
            assert!(Sidecar::parse(&good[..n]).is_err(), "{n}");
        }
    }

    #[test]
    fn scan_takes_valid_sidecars_with_their_part_and_ignores_the_rest() {
        let d = tempfile::tempdir().unwrap();
        let s = sample();
        let (part, meta) = paths(d.path(), &s.name, &s.digest);
        std::fs::write(&meta, s.encode()).unwrap();
        std::fs::write(&part, vec![1u8; 1234]).unwrap();
        // Garbage, a sidecar copied under another file's name, one without its part.
        std::fs::write(
            d.path().join(".x.rmcast-0000000000000000.meta"),
            b"\xff\x00",
        )
        .unwrap();
        let other = Sidecar {
            name: "g.bin".into(),
            ..s.clone()
        };
        std::fs::write(paths(d.path(), "h.bin", &s.digest).1, other.encode()).unwrap();
        let lone = Sidecar {
            digest: [9; 32],
            ..s.clone()
        };
        std::fs::write(paths(d.path(), &lone.name, &lone.digest).1, lone.encode()).unwrap();
        assert_eq!(scan(d.path()), vec![s.held(1234)]);
        assert!(scan(&d.path().join("missing")).is_empty());
    }
}
