use std::time::Instant;

//! Encode and decode times of three erasure-code crates for blocks of k source symbols of
//! 1,400 bytes with m parity symbols (docs/fec.md). CPU time of this thread (Linux schedstat),
//! so a shared machine's load counts less than in wall-clock time.

/// CPU time this thread has run, ns (Linux `/proc/self/schedstat`, first field).
fn cpu_ns() -> u128 {
    let s = std::fs::read_to_string("/proc/self/schedstat").unwrap();
    s.split_whitespace().next().unwrap().parse::<u128>().unwrap()
}

fn data(k: usize, len: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut x = seed.wrapping_mul(0x9E3779B97F4A7C15) | 1;
    (0..k).map(|_| (0..len).map(|_| { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x as u8 }).collect()).collect()
}

fn time<F: FnMut()>(reps: usize, mut f: F) -> (f64, f64) {
    f();
    let (w0, c0) = (Instant::now(), cpu_ns());
    for _ in 0..reps { f(); }
    let w = w0.elapsed().as_nanos() as f64 / reps as f64;
    let c = (cpu_ns() - c0) as f64 / reps as f64;
    (w / 1e3, c / 1e3)
}

fn main() {
    const LEN: usize = 1400;
    println!("crate,k,m,op,us_per_block_cpu,MB_per_s_cpu");
    for &k in &[16usize, 32, 64] {
        for &m in &[2usize, 4, 8] {
            let orig = data(k, LEN, (k * 100 + m) as u64);
            let reps = 2000 * 16 / k;
            let mb = |us: f64| (k * LEN) as f64 / us;
            // reed-solomon-simd
            let rec = reed_solomon_simd::encode(k, m, &orig).unwrap();
            let (_, c) = time(reps, || { std::hint::black_box(reed_solomon_simd::encode(k, m, &orig).unwrap()); });
            println!("reed-solomon-simd,{k},{m},encode,{c:.1},{:.0}", mb(c));
            let (_, c) = time(reps, || {
                // lose the first m originals, decode from the rest plus all recovery
                let o: Vec<(usize, &Vec<u8>)> = orig.iter().enumerate().skip(m).collect();
                let r: Vec<(usize, &Vec<u8>)> = rec.iter().enumerate().collect();
                let out = reed_solomon_simd::decode(k, m, o, r).unwrap();
                assert_eq!(out.len(), m);
            });
            println!("reed-solomon-simd,{k},{m},decode,{c:.1},{:.0}", mb(c));
            // reed-solomon-erasure (GF(2^8))
            let rs = reed_solomon_erasure::galois_8::ReedSolomon::new(k, m).unwrap();
            let mut shards: Vec<Vec<u8>> = orig.iter().cloned().chain((0..m).map(|_| vec![0u8; LEN])).collect();
            let (_, c) = time(reps, || { rs.encode(&mut shards).unwrap(); });
            println!("reed-solomon-erasure,{k},{m},encode,{c:.1},{:.0}", mb(c));
            let full = shards.clone();
            let (_, c) = time(reps, || {
                let mut s: Vec<Option<Vec<u8>>> = full.iter().cloned().map(Some).collect();
                for x in s.iter_mut().take(m) { *x = None; }
                rs.reconstruct_data(&mut s).unwrap();
            });
            println!("reed-solomon-erasure,{k},{m},decode,{c:.1},{:.0}", mb(c));
            // raptorq: one source block of k symbols of LEN bytes
            let flat: Vec<u8> = orig.concat();
            let cfg = raptorq::ObjectTransmissionInformation::with_defaults(flat.len() as u64, LEN as u16);
            let (_, c) = time(reps / 4 + 1, || {
                let enc = raptorq::Encoder::new(&flat, cfg);
                let pk: Vec<_> = enc.get_block_encoders()[0].repair_packets(0, m as u32);
                std::hint::black_box(pk);
            });
            println!("raptorq,{k},{m},encode,{c:.1},{:.0}", mb(c));
            let enc = raptorq::Encoder::new(&flat, cfg);
            let be = &enc.get_block_encoders()[0];
            let src = be.source_packets();
            let rep = be.repair_packets(0, m as u32);
            let (_, c) = time(reps / 4 + 1, || {
                let mut d = raptorq::Decoder::new(cfg);
                let mut res = None;
                for p in src.iter().skip(m).cloned().chain(rep.iter().cloned()) {
                    res = d.decode(p);
                    if res.is_some() { break; }
                }
                assert!(res.is_some());
            });
            println!("raptorq,{k},{m},decode,{c:.1},{:.0}", mb(c));
        }
    }
    // Is parity j stable when more parity is asked for (needed for on-demand parity)?
    let orig = data(16, LEN, 7);
    let a = reed_solomon_simd::encode(16, 2, &orig).unwrap();
    let b = reed_solomon_simd::encode(16, 8, &orig).unwrap();
    println!("simd parity stable across counts: {}", a[..] == b[..2]);
    let mut s1: Vec<Vec<u8>> = orig.iter().cloned().chain((0..2).map(|_| vec![0u8; LEN])).collect();
    reed_solomon_erasure::galois_8::ReedSolomon::new(16, 2).unwrap().encode(&mut s1).unwrap();
    let mut s2: Vec<Vec<u8>> = orig.iter().cloned().chain((0..8).map(|_| vec![0u8; LEN])).collect();
    reed_solomon_erasure::galois_8::ReedSolomon::new(16, 8).unwrap().encode(&mut s2).unwrap();
    println!("erasure parity stable across counts: {}", s1[16..] == s2[16..18]);
}
