//! Bounds-checked big-endian reading and writing. Reading never panics: every read that would
//! run past the end returns [`DecodeError::Truncated`].

use crate::DecodeError;

/// A forward-only reader over a byte slice.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// Take the next `n` bytes, borrowing them from the input.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).ok_or(DecodeError::Truncated {
            needed: usize::MAX,
            got: self.buf.len(),
        })?;
        let s = self.buf.get(self.pos..end).ok_or(DecodeError::Truncated {
            needed: end,
            got: self.buf.len(),
        })?;
        self.pos = end;
        Ok(s)
    }

    /// Take everything that is left.
    pub fn rest(&mut self) -> &'a [u8] {
        let s = self.buf.get(self.pos..).unwrap_or_default();
        self.pos = self.buf.len();
        s
    }

    /// The next `N` bytes.
    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let s = self.bytes(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// The next byte.
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(u8::from_be_bytes(self.array()?))
    }
    /// The next 2 bytes, big-endian.
    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array()?))
    }
    /// The next 4 bytes, big-endian.
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    /// The next 8 bytes, big-endian.
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_be_bytes(self.array()?))
    }
}

/// A writer into a slice that the caller sized exactly (from a message's `body_len`). Writing
/// past the end is a bug in the encoder; it is caught by a debug assertion and otherwise
/// leaves the slice short rather than panicking.
#[derive(Debug)]
pub struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    /// A writer at the start of `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        Writer { buf, pos: 0 }
    }

    /// Bytes written so far.
    pub fn written(&self) -> usize {
        self.pos
    }

    /// Append `s`.
    pub fn put(&mut self, s: &[u8]) {
        let end = self.pos + s.len();
        debug_assert!(
            end <= self.buf.len(),
            "encoder wrote past its computed length"
        );
        if let Some(dst) = self.buf.get_mut(self.pos..end) {
            dst.copy_from_slice(s);
        }
        self.pos = end;
    }
    /// Append `v`.
    pub fn u8(&mut self, v: u8) {
        self.put(&v.to_be_bytes());
    }
    /// Append `v`, big-endian.
    pub fn u16(&mut self, v: u16) {
        self.put(&v.to_be_bytes());
    }
    /// Append `v`, big-endian.
    pub fn u32(&mut self, v: u32) {
        self.put(&v.to_be_bytes());
    }
    /// Append `v`, big-endian.
    pub fn u64(&mut self, v: u64) {
        self.put(&v.to_be_bytes());
    }
}
