//! The closed forms of docs/fec.md: repairs per source packet for independent loss `p` at
//! `R` receivers, with retransmission and with ideal on-demand parity over blocks of `k`.
//!
//! ```sh
//! cargo run -p rmcast-proto --example fec_closed_form [p] [k]   # defaults 0.01 16
//! ```

use rmcast_proto::fec::closed_form::{parity_repairs, retransmission_repairs};

fn main() {
    let mut args = std::env::args().skip(1);
    let p: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(0.01);
    let k: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(16);
    println!("p = {p}, k = {k}");
    println!("receivers,retransmission,parity,ratio");
    for r in [1u64, 10, 100, 1_000, 10_000, 100_000] {
        let (a, b) = (retransmission_repairs(p, r), parity_repairs(p, r, k));
        println!("{r},{a:.5},{b:.5},{:.4}", b / a);
    }
}
