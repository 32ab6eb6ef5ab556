//! `fec` — erasure coding over transmission groups (blocks) of source packets: the shared
//! building block of FEC repair (issue 21).
//!
//! A block is `k` consecutive source packets. Parity symbol `j` of a block is row `k + j` of a
//! systematic Reed–Solomon code over GF(2^8) (`reed-solomon-erasure`, chosen by measurement:
//! docs/fec.md), so parity `j` is the same however many parity symbols are made, and a sender
//! that answers a request with "the next unused parity indices" sends symbols no receiver has
//! seen. Any `k` distinct symbols of a block (source or parity) give back its source packets.
//! A block holds at most [`MAX_SYMBOLS`] symbols in all: `k` source and up to
//! [`max_parity`]`(k)` parity.
//!
//! Packets of unequal length are coded as RFC 5510 and RFC 3208's parity are: each source
//! packet becomes a symbol of the block's symbol length ([`symbol_len`], the longest packet
//! plus a two-byte length prefix), its length (`u16`, big-endian) and its bytes followed by
//! zeros; a parity symbol has that length, so a receiver learns it from any parity packet and
//! recovers each missing packet's length from the decoded prefix.

pub mod closed_form;

use bytes::Bytes;
use reed_solomon_erasure::galois_8::ReedSolomon;
use std::collections::BTreeMap;

/// Most symbols (source and parity) one block can have: the size of GF(2^8).
pub const MAX_SYMBOLS: usize = 256;
/// Bytes of the length prefix in a source symbol.
pub const LEN_PREFIX: usize = 2;
/// Longest source packet a block can carry (its length must fit the prefix).
pub const MAX_SOURCE_LEN: usize = u16::MAX as usize;

/// Why a block cannot be coded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FecError {
    /// `k` is 0 or leaves no room for parity.
    #[error("a block holds 1 to {} source packets, not {k}", MAX_SYMBOLS - 1)]
    BadK {
        /// The block size asked for.
        k: usize,
    },
    /// A parity index beyond what a block of `k` has.
    #[error("parity index {index} beyond the {} a block of {k} has", max_parity(*k))]
    BadIndex {
        /// The block size.
        k: usize,
        /// The parity index asked for.
        index: usize,
    },
    /// A source packet too long for the length prefix.
    #[error("a source packet of {len} bytes is longer than {MAX_SOURCE_LEN}")]
    TooLong {
        /// Its length.
        len: usize,
    },
    /// A symbol whose length does not fit the block's (a parity of another length than the
    /// others, or a source packet longer than the parity says the block's longest is).
    #[error("a symbol of {got} bytes in a block of {symbol}-byte symbols")]
    Length {
        /// The block's symbol length.
        symbol: usize,
        /// What the symbol needs or has.
        got: usize,
    },
    /// Fewer than `k` symbols: nothing can be decoded yet.
    #[error("{have} of the {k} symbols needed")]
    TooFew {
        /// Symbols held.
        have: usize,
        /// Symbols needed.
        k: usize,
    },
    /// A decoded symbol's length prefix exceeds the symbol (the parity did not belong to these
    /// source packets).
    #[error("a decoded length {len} exceeds the {room} bytes of its symbol")]
    Corrupt {
        /// The prefix.
        len: usize,
        /// Bytes after the prefix.
        room: usize,
    },
}

/// Parity symbols a block of `k` source packets can have.
pub const fn max_parity(k: usize) -> usize {
    MAX_SYMBOLS.saturating_sub(k)
}

fn check_k(k: usize) -> Result<(), FecError> {
    if k == 0 || k >= MAX_SYMBOLS {
        return Err(FecError::BadK { k });
    }
    Ok(())
}

/// The symbol length of a block whose longest source packet has `max_len` bytes.
pub const fn symbol_len(max_len: usize) -> usize {
    LEN_PREFIX + max_len
}

/// `data` as a source symbol of `len` bytes: its length, its bytes, zeros.
fn pad(data: &[u8], len: usize) -> Vec<u8> {
    let mut s = Vec::with_capacity(len);
    s.extend_from_slice(&(data.len() as u16).to_be_bytes());
    s.extend_from_slice(data);
    s.resize(len, 0);
    s
}

/// The codec of a block of `k` source symbols and `m` parity symbols.
fn codec(k: usize, m: usize) -> Result<ReedSolomon, FecError> {
    check_k(k)?;
    if m == 0 || k + m > MAX_SYMBOLS {
        return Err(FecError::BadIndex {
            k,
            index: m.saturating_sub(1),
        });
    }
    ReedSolomon::new(k, m).map_err(|_| FecError::BadK { k })
}

/// Parity symbols `first .. first + count` of the block whose source packets are `sources`
/// (each [`symbol_len`] of the longest packet).
pub fn parity<S: AsRef<[u8]>>(
    sources: &[S],
    first: usize,
    count: usize,
) -> Result<Vec<Vec<u8>>, FecError> {
    let k = sources.len();
    check_k(k)?;
    if count == 0 {
        return Ok(Vec::new());
    }
    let longest = sources.iter().map(|s| s.as_ref().len()).max().unwrap_or(0);
    if longest > MAX_SOURCE_LEN {
        return Err(FecError::TooLong { len: longest });
    }
    let len = symbol_len(longest);
    let m = first.saturating_add(count);
    let rs = codec(k, m)?;
    let data: Vec<Vec<u8>> = sources.iter().map(|s| pad(s.as_ref(), len)).collect();
    let mut out = vec![vec![0u8; len]; m];
    rs.encode_sep(&data, &mut out)
        .map_err(|_| FecError::Length {
            symbol: len,
            got: 0,
        })?;
    Ok(out.split_off(first))
}

/// A receiver's view of one block: the source packets and parity symbols it holds, and the
/// decoding of the missing source packets once any `k` symbols are in.
#[derive(Debug, Clone)]
pub struct BlockDecoder {
    k: usize,
    sources: Vec<Option<Bytes>>,
    held_sources: usize,
    parity: BTreeMap<usize, Bytes>,
}

impl BlockDecoder {
    /// An empty block of `k` source packets.
    pub fn new(k: usize) -> Result<Self, FecError> {
        check_k(k)?;
        Ok(BlockDecoder {
            k,
            sources: vec![None; k],
            held_sources: 0,
            parity: BTreeMap::new(),
        })
    }

    /// Source packets in the block.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Source packet `i` arrived (`false`: already held, or `i` is not in the block).
    pub fn add_source(&mut self, i: usize, data: Bytes) -> bool {
        match self.sources.get_mut(i) {
            Some(slot @ None) => {
                *slot = Some(data);
                self.held_sources += 1;
                true
            }
            _ => false,
        }
    }

    /// Whether source packet `i` is held.
    pub fn has_source(&self, i: usize) -> bool {
        self.sources.get(i).is_some_and(Option::is_some)
    }

    /// Source packet `i`, if held.
    pub fn source(&self, i: usize) -> Option<&Bytes> {
        self.sources.get(i).and_then(Option::as_ref)
    }

    /// Parity symbol `index` arrived (`Ok(false)`: already held, or every source packet is
    /// in). Refused: an index beyond the block's, or a length unlike the parity held.
    pub fn add_parity(&mut self, index: usize, symbol: Bytes) -> Result<bool, FecError> {
        if index >= max_parity(self.k) {
            return Err(FecError::BadIndex { k: self.k, index });
        }
        if let Some(s) = self.symbol_len() {
            if symbol.len() != s {
                return Err(FecError::Length {
                    symbol: s,
                    got: symbol.len(),
                });
            }
        } else if symbol.len() < LEN_PREFIX {
            return Err(FecError::Length {
                symbol: LEN_PREFIX,
                got: symbol.len(),
            });
        }
        if self.is_complete() || self.parity.contains_key(&index) {
            return Ok(false);
        }
        self.parity.insert(index, symbol);
        Ok(true)
    }

    /// Forget the parity held (it did not decode with the source packets held).
    pub fn clear_parity(&mut self) {
        self.parity.clear();
    }

    /// The block's symbol length, once a parity symbol told it.
    fn symbol_len(&self) -> Option<usize> {
        self.parity.values().next().map(Bytes::len)
    }

    /// Distinct symbols held (source and parity).
    pub fn symbols(&self) -> usize {
        self.held_sources + self.parity.len()
    }

    /// Symbols still needed before the block decodes (0 once it can).
    pub fn needed(&self) -> usize {
        self.k.saturating_sub(self.symbols())
    }

    /// Source packets not held.
    pub fn missing(&self) -> usize {
        self.k - self.held_sources
    }

    /// Whether every source packet is held.
    pub fn is_complete(&self) -> bool {
        self.held_sources == self.k
    }

    /// The missing source packets, decoded from the `k` or more symbols held, as (index in
    /// the block, packet); they are then held too. Nothing when none is missing.
    pub fn decode(&mut self) -> Result<Vec<(usize, Bytes)>, FecError> {
        if self.is_complete() {
            return Ok(Vec::new());
        }
        if self.needed() > 0 {
            return Err(FecError::TooFew {
                have: self.symbols(),
                k: self.k,
            });
        }
        // Some parity is held: a source packet is missing and k symbols are in.
        let len = self.symbol_len().unwrap_or(LEN_PREFIX);
        let m = self.parity.keys().next_back().map_or(1, |&i| i + 1);
        let rs = codec(self.k, m)?;
        let mut shards: Vec<Option<Vec<u8>>> = Vec::with_capacity(self.k + m);
        for s in &self.sources {
            match s {
                Some(d) if symbol_len(d.len()) > len => {
                    return Err(FecError::Length {
                        symbol: len,
                        got: symbol_len(d.len()),
                    })
                }
                Some(d) => shards.push(Some(pad(d, len))),
                None => shards.push(None),
            }
        }
        shards.extend((0..m).map(|j| self.parity.get(&j).map(|p| p.to_vec())));
        rs.reconstruct_data(&mut shards)
            .map_err(|_| FecError::TooFew {
                have: self.symbols(),
                k: self.k,
            })?;
        let mut out = Vec::new();
        for (i, shard) in shards.into_iter().take(self.k).enumerate() {
            if self.has_source(i) {
                continue;
            }
            let sym = shard.unwrap_or_default();
            let (prefix, rest) = sym.split_at(LEN_PREFIX.min(sym.len()));
            let n = match prefix {
                [a, b] => usize::from(u16::from_be_bytes([*a, *b])),
                _ => 0,
            };
            if n > rest.len() {
                return Err(FecError::Corrupt {
                    len: n,
                    room: rest.len(),
                });
            }
            out.push((i, Bytes::copy_from_slice(&rest[..n])));
        }
        for (i, d) in &out {
            self.add_source(*i, d.clone());
        }
        self.parity.clear();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A block of `k` packets of lengths from `lens` (cycled) and `m` parity symbols.
    fn block(k: usize, m: usize, lens: &[usize], seed: u8) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
        let src: Vec<Vec<u8>> = (0..k)
            .map(|i| {
                let n = lens[i % lens.len()];
                (0..n)
                    .map(|j| (j as u8).wrapping_mul(31) ^ (i as u8) ^ seed)
                    .collect()
            })
            .collect();
        let par = parity(&src, 0, m).unwrap();
        (src, par)
    }

    proptest! {
        /// Any k of the k + m symbols give back the k source packets, whatever their lengths.
        #[test]
        fn any_k_of_k_plus_m_symbols_decode_to_the_originals(
            k in 1usize..40,
            m in 1usize..10,
            lens in proptest::collection::vec(0usize..300, 1..8),
            seed in any::<u8>(),
            order in Just(()).prop_perturb(|_, mut rng| {
                let mut v: Vec<usize> = (0..64).collect();
                for i in (1..v.len()).rev() {
                    let j = (rng.next_u32() as usize) % (i + 1);
                    v.swap(i, j);
                }
                v
            }),
        ) {
            let (src, par) = block(k, m, &lens, seed);
            // k distinct symbols of the k + m, in a random order.
            let chosen: Vec<usize> = order.iter().copied().filter(|&i| i < k + m).take(k).collect();
            let mut d = BlockDecoder::new(k).unwrap();
            for &i in &chosen {
                if i < k {
                    d.add_source(i, Bytes::from(src[i].clone()));
                } else {
                    prop_assert!(d.add_parity(i - k, Bytes::from(par[i - k].clone())).unwrap());
                }
            }
            prop_assert_eq!(d.needed(), 0);
            let missing = d.missing();
            let got = d.decode().unwrap();
            prop_assert_eq!(got.len(), missing);
            for (i, data) in got {
                prop_assert_eq!(&data[..], &src[i][..]);
            }
            prop_assert!(d.is_complete());
            for (i, s) in src.iter().enumerate() {
                prop_assert_eq!(&d.source(i).unwrap()[..], &s[..]);
            }
        }

        /// Parity `j` does not depend on how many parity symbols are made: on-demand parity can
        /// send the next unused indices.
        #[test]
        fn parity_j_is_the_same_however_many_are_made(
            k in 1usize..40,
            first in 0usize..20,
            count in 1usize..6,
            seed in any::<u8>(),
        ) {
            let (src, _) = block(k, 1, &[10, 1400, 0, 77], seed);
            let all = parity(&src, 0, first + count).unwrap();
            let some = parity(&src, first, count).unwrap();
            prop_assert_eq!(&all[first..], &some[..]);
        }
    }

    #[test]
    fn fewer_than_k_symbols_do_not_decode_and_bad_input_is_refused() {
        let (src, par) = block(4, 2, &[5, 9], 1);
        let mut d = BlockDecoder::new(4).unwrap();
        d.add_source(0, Bytes::from(src[0].clone()));
        d.add_parity(1, Bytes::from(par[1].clone())).unwrap();
        assert_eq!(d.needed(), 2);
        assert_eq!(d.decode(), Err(FecError::TooFew { have: 2, k: 4 }));
        // a parity of another length, an index beyond the block's, a block size out of range
        assert!(matches!(
            d.add_parity(0, Bytes::from_static(b"xyz")),
            Err(FecError::Length { .. })
        ));
        assert!(matches!(
            d.add_parity(252, Bytes::from(par[0].clone())),
            Err(FecError::BadIndex { .. })
        ));
        assert!(BlockDecoder::new(0).is_err() && BlockDecoder::new(256).is_err());
        assert!(parity(&src, 250, 3).is_err());
        // a source longer than the parity says the block's symbols are
        d.add_source(1, Bytes::from(vec![0u8; 100]));
        d.add_source(2, Bytes::from(src[2].clone()));
        assert!(matches!(d.decode(), Err(FecError::Length { .. })));
    }

    /// Parity from other packets decodes to garbage, never to a panic: a length prefix beyond
    /// the symbol is refused.
    #[test]
    fn foreign_parity_gives_an_error_or_wrong_bytes_but_no_panic() {
        let (src, _) = block(3, 1, &[4], 2);
        let other: Vec<Vec<u8>> = vec![vec![0xff; 4]; 3];
        let par = parity(&other, 0, 1).unwrap();
        let mut d = BlockDecoder::new(3).unwrap();
        d.add_source(0, Bytes::from(src[0].clone()));
        d.add_source(1, Bytes::from(src[1].clone()));
        d.add_parity(0, Bytes::from(par[0].clone())).unwrap();
        let _ = d.decode();
    }
}
