//! A BLAKE3 digest of a byte stream that arrives in datagram-sized pieces. BLAKE3 hashes
//! many 1-KiB chunks in parallel (SIMD lanes) only when one update hands it several; fed a
//! 1,440-byte piece at a time it compresses one chunk after another, about four times
//! slower. [`StreamDigest`] gathers the pieces into [`BLOCK`]-byte updates; the digest is
//! the same as hashing the whole stream at once.

/// Bytes per update of the hasher.
pub(crate) const BLOCK: usize = 64 * 1024;

/// BLAKE3 over a stream fed in small pieces.
pub(crate) struct StreamDigest {
    hasher: blake3::Hasher,
    pending: Vec<u8>,
}

impl Default for StreamDigest {
    fn default() -> Self {
        StreamDigest {
            hasher: blake3::Hasher::new(),
            pending: Vec::with_capacity(BLOCK),
        }
    }
}

impl StreamDigest {
    /// Add `data` to the stream.
    pub(crate) fn update(&mut self, mut data: &[u8]) {
        if self.pending.is_empty() && data.len() >= BLOCK {
            let (whole, rest) = data.split_at(data.len() - data.len() % BLOCK);
            self.hasher.update(whole);
            data = rest;
        }
        while !data.is_empty() {
            let take = (BLOCK - self.pending.len()).min(data.len());
            let (head, rest) = data.split_at(take);
            self.pending.extend_from_slice(head);
            data = rest;
            if self.pending.len() == BLOCK {
                self.hasher.update(&self.pending);
                self.pending.clear();
            }
        }
    }

    /// The digest of everything added.
    pub(crate) fn finalize(&mut self) -> [u8; 32] {
        self.hasher.update(&self.pending);
        self.pending.clear();
        *self.hasher.finalize().as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the pieces, the digest is BLAKE3 of the whole stream.
        #[test]
        fn pieces_hash_like_the_whole(
            data in proptest::collection::vec(any::<u8>(), 0..300_000),
            cuts in proptest::collection::vec(1usize..100_000, 0..40),
        ) {
            let mut d = StreamDigest::default();
            let mut rest = &data[..];
            for c in cuts {
                let k = c.min(rest.len());
                d.update(&rest[..k]);
                rest = &rest[k..];
            }
            d.update(rest);
            prop_assert_eq!(d.finalize(), *blake3::hash(&data).as_bytes());
        }
    }
}
