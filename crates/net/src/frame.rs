//! Application framing: how files and streams travel as agent messages.
//!
//! Every message handed to [`rmcast_proto::SenderAgent::send`] starts with a one-byte type:
//!
//! ```text
//! 1 FILE   size (u64) | BLAKE3 digest (32) | name length (u16) | name (UTF-8)
//! 2 DATA   the next bytes of the current file or stream
//! 3 STREAM name length (u16) | name            (a stream of unknown length begins)
//! 4 EOS    size (u64) | BLAKE3 digest (32)      (the stream ended; verify it)
//! 5 FINISH file count (u32)                     (nothing follows)
//! 6 RESUME from (u64) | then as FILE            (a file sent from byte `from` on: every
//!                                                receiver holds its first `from` bytes)
//! ```

use bytes::{BufMut, Bytes, BytesMut};

/// Bytes of framing in a DATA message.
pub const DATA_OVERHEAD: usize = 1;
/// Longest file name announced.
pub const MAX_NAME: usize = crate::outdir::MAX_NAME;

#[derive(Debug, Clone, PartialEq, Eq)]
/// One application message, decoded (names and data borrow the message).
pub enum Frame<'a> {
    /// A file begins.
    File {
        /// Its length, bytes.
        size: u64,
        /// Its BLAKE3 digest.
        digest: [u8; 32],
        /// Its name (one path component).
        name: &'a str,
    },
    /// A file begins at byte `from` (restart mode: every receiver holds the bytes before).
    Resume {
        /// Where its data begins.
        from: u64,
        /// Its length, bytes.
        size: u64,
        /// Its BLAKE3 digest.
        digest: [u8; 32],
        /// Its name (one path component).
        name: &'a str,
    },
    /// The next bytes of the current file or stream.
    Data(&'a [u8]),
    /// A stream of unknown length begins.
    Stream {
        /// Its name.
        name: &'a str,
    },
    /// The stream ended.
    EndOfStream {
        /// Its length, bytes.
        size: u64,
        /// Its BLAKE3 digest.
        digest: [u8; 32],
    },
    /// Nothing follows.
    Finish {
        /// Files sent in the session.
        files: u32,
    },
}

/// A malformed application message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed application message: {0}")]
pub struct FrameError(pub &'static str);

/// The `N` bytes of `r` at `at`, or `FrameError(what)` if `r` is too short.
fn array_at<const N: usize>(
    r: &[u8],
    at: usize,
    what: &'static str,
) -> Result<[u8; N], FrameError> {
    r.get(at..at.saturating_add(N))
        .and_then(|b| b.try_into().ok())
        .ok_or(FrameError(what))
}

fn name_at(r: &[u8], at: usize) -> Result<&str, FrameError> {
    let len = usize::from(u16::from_be_bytes(array_at(
        r,
        at,
        "truncated name length",
    )?));
    if len > MAX_NAME {
        return Err(FrameError("name too long"));
    }
    let raw = r
        .get(at + 2..at + 2 + len)
        .ok_or(FrameError("truncated name"))?;
    if r.len() != at + 2 + len {
        return Err(FrameError("trailing bytes"));
    }
    std::str::from_utf8(raw).map_err(|_| FrameError("name is not UTF-8"))
}

impl Frame<'_> {
    /// The message's bytes.
    pub fn encode(&self) -> Bytes {
        let mut b = BytesMut::new();
        match self {
            Frame::File { size, digest, name } => {
                b.put_u8(1);
                b.put_u64(*size);
                b.put_slice(digest);
                b.put_u16(name.len() as u16);
                b.put_slice(name.as_bytes());
            }
            Frame::Resume {
                from,
                size,
                digest,
                name,
            } => {
                b.put_u8(6);
                b.put_u64(*from);
                b.put_u64(*size);
                b.put_slice(digest);
                b.put_u16(name.len() as u16);
                b.put_slice(name.as_bytes());
            }
            Frame::Data(d) => {
                b.reserve(1 + d.len());
                b.put_u8(2);
                b.put_slice(d);
            }
            Frame::Stream { name } => {
                b.put_u8(3);
                b.put_u16(name.len() as u16);
                b.put_slice(name.as_bytes());
            }
            Frame::EndOfStream { size, digest } => {
                b.put_u8(4);
                b.put_u64(*size);
                b.put_slice(digest);
            }
            Frame::Finish { files } => {
                b.put_u8(5);
                b.put_u32(*files);
            }
        }
        b.freeze()
    }

    /// The message `m`, or why it is malformed.
    pub fn decode(m: &[u8]) -> Result<Frame<'_>, FrameError> {
        let (&t, rest) = m.split_first().ok_or(FrameError("empty"))?;
        let u64_at = |r: &[u8], at: usize| array_at(r, at, "truncated").map(u64::from_be_bytes);
        let digest_at = |r: &[u8], at: usize| array_at(r, at, "truncated digest");
        match t {
            1 => Ok(Frame::File {
                size: u64_at(rest, 0)?,
                digest: digest_at(rest, 8)?,
                name: name_at(rest, 40)?,
            }),
            6 => Ok(Frame::Resume {
                from: u64_at(rest, 0)?,
                size: u64_at(rest, 8)?,
                digest: digest_at(rest, 16)?,
                name: name_at(rest, 48)?,
            }),
            2 => Ok(Frame::Data(rest)),
            3 => Ok(Frame::Stream {
                name: name_at(rest, 0)?,
            }),
            4 if rest.len() == 40 => Ok(Frame::EndOfStream {
                size: u64_at(rest, 0)?,
                digest: digest_at(rest, 8)?,
            }),
            5 if rest.len() == 4 => Ok(Frame::Finish {
                files: u32::from_be_bytes(array_at(rest, 0, "truncated")?),
            }),
            4 | 5 => Err(FrameError("wrong length")),
            _ => Err(FrameError("unknown type")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trips() {
        let d = [7u8; 32];
        for f in [
            Frame::File {
                size: 5,
                digest: d,
                name: "a.bin",
            },
            Frame::Resume {
                from: 2,
                size: 5,
                digest: d,
                name: "a.bin",
            },
            Frame::Data(b"xyz"),
            Frame::Stream { name: "-" },
            Frame::EndOfStream { size: 9, digest: d },
            Frame::Finish { files: 3 },
        ] {
            let b = f.encode();
            assert_eq!(Frame::decode(&b).unwrap(), f);
        }
    }

    proptest! {
        #[test]
        fn decode_never_panics(b in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = Frame::decode(&b);
        }
    }
}
