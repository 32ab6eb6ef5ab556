//! libnorm's 8-bit Reed–Solomon code (fec_id 5), so that rmcast's parity segments equal
//! libnorm's (`NormEncoderRS8`, Luigi Rizzo's Vandermonde code of 1997–98).
//!
//! The code is systematic over GF(2^8) with the polynomial `x^8 + x^4 + x^3 + x^2 + 1`
//! (0x11d), α = 2. Its generator is an `n × k` Vandermonde matrix whose row 0 is
//! `[1, 0, …, 0]` (the point 0) and whose row `r ≥ 1` is `[α^((r−1)·c)]` for column `c`
//! (the points 1, α, α², …), multiplied on the right by the inverse of its top `k × k`
//! square, so that the top is the identity. Parity symbol `i` (ESI `k + i`) is
//! `Σ_j G[k+i][j] · source_j`, byte by byte.
//!
//! How libnorm lays a block out before encoding (`normObject.cpp`, `NextSenderMsg`,
//! `CalculateBlockParity`): each source symbol is the NORM_DATA payload as sent (for a file
//! or data object the segment's bytes; for a stream the 8-byte [`super::StreamHeader`] and
//! the data), zero-padded to `segment_size + 8`; the block's last, short segment is padded
//! too. A parity segment is sent with the length of the block's longest source payload
//! (`GetSegSizeMax`); the bytes past it are zeros of zeros. So [`Rs8::parity`] pads every
//! source to the longest one given and returns parity of that length.
//!
//! rmcast's `crates/proto/src/fec` (the `reed-solomon-erasure` crate) differs in two ways,
//! each of which alone makes the parity differ (`crates/wire/tests/libnorm.rs` computes both
//! on libnorm's captured segments): that crate's Vandermonde rows are the points 0, 1, 2,
//! 3, … (integers as field elements), not 0, 1, α, α², …; and rmcast prefixes each source
//! symbol with its 2-byte length.

/// Why a code cannot be built or a block cannot be coded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rs8Error {
    /// k of 0, or k + parity over 255.
    #[error("k = {k} with {parity} parity is not a GF(2^8) code (1 <= k, k + parity <= 255)")]
    Params {
        /// Source symbols per block.
        k: usize,
        /// Parity symbols per block.
        parity: usize,
    },
    /// Not k symbols, or a symbol id outside the code.
    #[error("{0}")]
    Symbols(&'static str),
}

/// Exp and log tables of GF(2^8) with the polynomial 0x11d.
struct Gf {
    exp: [u8; 510],
    log: [u16; 256],
}

impl Gf {
    fn new() -> Self {
        let mut exp = [0u8; 510];
        let mut log = [0u16; 256];
        let mut x: u16 = 1;
        for i in 0..255 {
            for j in [i, i + 255] {
                if let Some(e) = exp.get_mut(j) {
                    *e = x as u8;
                }
            }
            if let Some(l) = log.get_mut(usize::from(x)) {
                *l = i as u16;
            }
            x <<= 1;
            if x & 0x100 != 0 {
                x ^= 0x11d;
            }
        }
        Gf { exp, log }
    }

    fn log(&self, a: u8) -> usize {
        usize::from(self.log.get(usize::from(a)).copied().unwrap_or(0))
    }

    fn mul(&self, a: u8, b: u8) -> u8 {
        if a == 0 || b == 0 {
            return 0;
        }
        self.exp
            .get(self.log(a) + self.log(b))
            .copied()
            .unwrap_or(0)
    }

    fn inv(&self, a: u8) -> u8 {
        // a ≠ 0: α^(255 − log a).
        self.exp.get(255 - self.log(a)).copied().unwrap_or(0)
    }

    /// α^e.
    fn pow_alpha(&self, e: usize) -> u8 {
        self.exp.get(e % 255).copied().unwrap_or(0)
    }
}

/// Invert the `k × k` matrix `m` (row-major) by Gauss–Jordan elimination; `None` when it
/// is singular.
fn invert(gf: &Gf, m: &[u8], k: usize) -> Option<Vec<u8>> {
    let mut a = m.to_vec();
    let mut inv = vec![0u8; k * k];
    for i in 0..k {
        *inv.get_mut(i * k + i)? = 1;
    }
    for col in 0..k {
        let pivot = (col..k).find(|&r| a.get(r * k + col).is_some_and(|&v| v != 0))?;
        if pivot != col {
            for c in 0..k {
                a.swap(pivot * k + c, col * k + c);
                inv.swap(pivot * k + c, col * k + c);
            }
        }
        let p = gf.inv(*a.get(col * k + col)?);
        for c in 0..k {
            let i = col * k + c;
            *a.get_mut(i)? = gf.mul(*a.get(i)?, p);
            *inv.get_mut(i)? = gf.mul(*inv.get(i)?, p);
        }
        for r in (0..k).filter(|&r| r != col) {
            let f = *a.get(r * k + col)?;
            if f == 0 {
                continue;
            }
            for c in 0..k {
                let (x, y) = (*a.get(col * k + c)?, *inv.get(col * k + c)?);
                *a.get_mut(r * k + c)? ^= gf.mul(f, x);
                *inv.get_mut(r * k + c)? ^= gf.mul(f, y);
            }
        }
    }
    Some(inv)
}

/// libnorm's RS8 code for blocks of `k` source and `parity` parity symbols.
pub struct Rs8 {
    gf: Gf,
    k: usize,
    parity: usize,
    /// The generator's `n × k` rows, top `k` the identity.
    gen: Vec<u8>,
}

impl Rs8 {
    /// The code with `k` source and `parity` parity symbols per block (k + parity ≤ 255).
    pub fn new(k: usize, parity: usize) -> Result<Self, Rs8Error> {
        let n = k + parity;
        if k == 0 || n > 255 {
            return Err(Rs8Error::Params { k, parity });
        }
        let gf = Gf::new();
        let mut vdm = vec![0u8; n * k];
        if let Some(first) = vdm.first_mut() {
            *first = 1;
        }
        for r in 1..n {
            for c in 0..k {
                if let Some(v) = vdm.get_mut(r * k + c) {
                    *v = gf.pow_alpha((r - 1) * c);
                }
            }
        }
        let top_inv = invert(&gf, vdm.get(..k * k).unwrap_or_default(), k)
            .ok_or(Rs8Error::Symbols("singular Vandermonde matrix"))?;
        let mut gen = vec![0u8; n * k];
        for r in 0..n {
            for c in 0..k {
                let mut s = 0u8;
                for j in 0..k {
                    let a = vdm.get(r * k + j).copied().unwrap_or(0);
                    let b = top_inv.get(j * k + c).copied().unwrap_or(0);
                    s ^= gf.mul(a, b);
                }
                if let Some(g) = gen.get_mut(r * k + c) {
                    *g = s;
                }
            }
        }
        Ok(Rs8 { gf, k, parity, gen })
    }

    /// Source symbols per block.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The generator's coefficient for symbol `esi` and source `j`.
    pub fn coefficient(&self, esi: usize, j: usize) -> Option<u8> {
        if j >= self.k {
            return None;
        }
        self.gen.get(esi * self.k + j).copied()
    }

    /// A block's parity symbols (wire ESIs `n_src .. n_src + parity` for its `n_src =
    /// sources.len() ≤ k` sources), each as long as the longest source; shorter sources count
    /// as zero-padded. A block shorter than k (the object's last blocks, RFC 5052's
    /// partition) is coded as libnorm codes it: with the same k-source code, the missing
    /// sources taken as zeros, so parity `i` is generator row `k + i` whatever the block's
    /// length.
    pub fn parity<S: AsRef<[u8]>>(&self, sources: &[S]) -> Result<Vec<Vec<u8>>, Rs8Error> {
        if sources.is_empty() || sources.len() > self.k {
            return Err(Rs8Error::Symbols("a block holds 1 to k source symbols"));
        }
        let len = sources.iter().map(|s| s.as_ref().len()).max().unwrap_or(0);
        let mut out = vec![vec![0u8; len]; self.parity];
        for (i, p) in out.iter_mut().enumerate() {
            for (j, s) in sources.iter().enumerate() {
                let c = self.coefficient(self.k + i, j).unwrap_or(0);
                self.addmul(p, s.as_ref(), c);
            }
        }
        Ok(out)
    }

    /// The `n_src` source symbols of a block of `n_src ≤ k` sources from any `n_src`
    /// distinct symbols `(esi, bytes)` of it, ESIs as on the wire (`< n_src` a source,
    /// `n_src + i` parity `i`); each comes back as long as the longest symbol given (a short
    /// source zero-padded).
    pub fn recover(
        &self,
        n_src: usize,
        symbols: &[(usize, &[u8])],
    ) -> Result<Vec<Vec<u8>>, Rs8Error> {
        let k = self.k;
        if n_src == 0 || n_src > k || symbols.len() != n_src {
            return Err(Rs8Error::Symbols(
                "recovery needs as many symbols as sources",
            ));
        }
        let len = symbols.iter().map(|(_, s)| s.len()).max().unwrap_or(0);
        let zeros = vec![0u8; len];
        // The k × k system: the symbols given, then the shortened block's zero sources.
        let mut rows: Vec<(usize, &[u8])> = Vec::with_capacity(k);
        for &(esi, s) in symbols {
            let row = if esi < n_src { esi } else { esi - n_src + k };
            if row >= k + self.parity {
                return Err(Rs8Error::Symbols("a symbol id outside the code"));
            }
            rows.push((row, s));
        }
        rows.extend((n_src..k).map(|j| (j, zeros.as_slice())));
        let mut m = Vec::with_capacity(k * k);
        for &(row, _) in &rows {
            m.extend_from_slice(self.gen.get(row * k..row * k + k).unwrap_or_default());
        }
        let inv =
            invert(&self.gf, &m, k).ok_or(Rs8Error::Symbols("repeated symbol ids in recovery"))?;
        let mut out = vec![vec![0u8; len]; n_src];
        for (j, o) in out.iter_mut().enumerate() {
            for (i, (_, s)) in rows.iter().enumerate() {
                self.addmul(o, s, inv.get(j * k + i).copied().unwrap_or(0));
            }
        }
        Ok(out)
    }

    /// `dst ^= c · src`, byte by byte (src no longer than dst counts).
    fn addmul(&self, dst: &mut [u8], src: &[u8], c: u8) {
        if c == 0 {
            return;
        }
        for (d, s) in dst.iter_mut().zip(src) {
            *d ^= self.gf.mul(c, *s);
        }
    }
}
