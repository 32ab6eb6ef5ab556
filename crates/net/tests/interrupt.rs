//! `rmcast_net::interrupt` in a process of its own: raising SIGTERM in a test binary whose other
//! tests run receivers would interrupt them.

use rmcast_net::interrupt::Interrupt;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::low_level::raise;

/// A signal raised while a guard lives sets its flag and does not end the process; a guard
/// installed later sees only the signals after its own installation; a second live guard sees
/// the same signal.
#[test]
fn a_signal_raises_the_flags_of_the_live_guards_only() {
    let g = Interrupt::install();
    let h = Interrupt::install();
    assert!(!g.raised());
    raise(SIGTERM).unwrap();
    assert!(g.raised());
    assert!(h.raised());
    drop(g);
    drop(h);
    let k = Interrupt::install();
    assert!(!k.raised());
    raise(SIGINT).unwrap();
    assert!(k.raised());
}
