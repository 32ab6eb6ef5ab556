//! Complete state (`LW_r`, LOB, `buffer_available`) and its consolidation at a local
//! exchange (seed 001 §4, §5).

use super::*;

/// One reporter's complete state: `LW_r`, the LOB (`L` bits from `LW_r`, set = received)
/// and `buffer_available`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockStatus {
    /// `LW_r`: every block below it is received.
    pub lw: u64,
    /// The LOB bitmap, `L` bits from `LW_r`.
    pub lob: Vec<u8>,
    /// `buffer_available`, in blocks.
    pub buf: u32,
}

impl BlockStatus {
    /// Nothing received yet, `buf` blocks of room.
    pub fn initial(l: u32, buf: u32) -> Self {
        BlockStatus {
            lw: 0,
            lob: vec![0; wire::bitmap_bytes(l)],
            buf,
        }
    }
    /// Whether block `s` is received according to this status (`l` = bits in the LOB).
    pub fn received(&self, s: u64, l: u32) -> bool {
        s < self.lw || (s - self.lw < u64::from(l) && wire::bit(&self.lob, (s - self.lw) as usize))
    }
    /// Highest block this status shows received (`None`: nothing at or above `LW_r`, and
    /// nothing below it either when `LW_r` is 0).
    pub fn highest(&self, l: u32) -> Option<u64> {
        let bytes = wire::bitmap_bytes(l).min(self.lob.len());
        let top = self.lob[..bytes]
            .iter()
            .rposition(|&b| b != 0)
            .and_then(|i| {
                let b = self.lob[i];
                let bit = 7 - b.leading_zeros() as usize;
                let idx = (8 * i + bit) as u64;
                (idx < u64::from(l)).then_some(self.lw + idx)
            });
        top.or_else(|| self.lw.checked_sub(1))
    }
    pub(super) fn from_wire(s: &wire::Status<'_>) -> Self {
        BlockStatus {
            lw: s.lw_r,
            lob: s.lob.to_vec(),
            buf: s.buffer_available,
        }
    }
}

/// How a local exchange merges its endpoints' statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// CSP: `LW_r = min`, LOB = AND of the aligned LOBs, `buffer_available = min`.
    Pessimistic,
    /// CP: `LW_r = max`, LOB = OR of the aligned LOBs, `buffer_available = min`.
    Optimistic,
}

/// Consolidate endpoint statuses (seed 001 §4 and §5). Each LOB is re-aligned at the
/// consolidated `LW_r` before the bitwise AND / OR: a block below an endpoint's own `LW_r`
/// counts as received by it. `None` for no statuses.
pub fn consolidate(merge: Merge, l: u32, statuses: &[BlockStatus]) -> Option<BlockStatus> {
    let lw = match merge {
        Merge::Pessimistic => statuses.iter().map(|s| s.lw).min()?,
        Merge::Optimistic => statuses.iter().map(|s| s.lw).max()?,
    };
    let buf = statuses.iter().map(|s| s.buf).min()?;
    let (and, or) = aligned_and_or(statuses, lw, l);
    let words = match merge {
        Merge::Pessimistic => and,
        Merge::Optimistic => or,
    };
    Some(BlockStatus {
        lw,
        lob: words_to_lob(&words, l),
        buf,
    })
}

/// 64 bits of `st`'s received set starting at block `start` (bit `i` = block `start + i`),
/// `l` = bits in its LOB.
fn received_word(st: &BlockStatus, start: u64, l: u32) -> u64 {
    let mut w = 0u64;
    // Blocks below the endpoint's own LW_r are received.
    if start < st.lw {
        let n = st.lw - start;
        w = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        if n >= 64 {
            return w;
        }
    }
    let first = start.max(st.lw);
    let end = (start + 64).min(st.lw.saturating_add(u64::from(l)));
    let mut b = first;
    while b < end {
        let off = (b - st.lw) as usize;
        let byte = st.lob.get(off / 8).copied().unwrap_or(0) >> (off % 8);
        let take = (8 - off % 8).min((end - b) as usize);
        let mask = if take >= 8 { 0xff } else { (1u64 << take) - 1 };
        w |= (u64::from(byte) & mask) << (b - start);
        b += take as u64;
    }
    w
}

/// Bitwise AND and OR of the statuses' received sets over `[lw, lw + l)`, 64 blocks a word.
pub(super) fn aligned_and_or(statuses: &[BlockStatus], lw: u64, l: u32) -> (Vec<u64>, Vec<u64>) {
    let n = (l as usize).div_ceil(64);
    let mut and = vec![u64::MAX; n];
    let mut or = vec![0u64; n];
    for st in statuses {
        for (i, (a, o)) in and.iter_mut().zip(or.iter_mut()).enumerate() {
            let w = received_word(st, lw + 64 * i as u64, l);
            *a &= w;
            *o |= w;
        }
    }
    (and, or)
}

fn words_to_lob(words: &[u64], l: u32) -> Vec<u8> {
    let mut lob = vec![0u8; wire::bitmap_bytes(l)];
    for (i, b) in lob.iter_mut().enumerate() {
        *b = words.get(i / 8).map_or(0, |w| (w >> (8 * (i % 8))) as u8);
    }
    if !l.is_multiple_of(8) {
        if let Some(last) = lob.last_mut() {
            *last &= (1u8 << (l % 8)) - 1;
        }
    }
    lob
}
