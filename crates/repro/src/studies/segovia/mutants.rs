//! Seed 000's declared mutants (`rmcast repro segovia --mutants`): what the thesis's tables
//! and trends are about, changed one at a time.

use super::run::{Proto, RunSpec};
use crate::study::Mutant;

/// The mutants, in the report's order.
pub(super) const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "no_random_delay",
        what: "receivers ACK at once: SAWrand and BAPrand set to 0 (the randomly timed ACKs \
               the thesis studies)",
    },
    Mutant {
        name: "no_failures",
        what: "no frame failures (the error rate Tables 4.6–4.13 sweep)",
    },
    Mutant {
        name: "double_t",
        what: "MBAP's ACK-delay timeout t doubled (a timer of the sender's packet timeout)",
    },
    Mutant {
        name: "saw_window_1",
        what: "every MBAP run with a window of 1 message (block acknowledgment reduced to \
               stop-and-wait)",
    },
    Mutant {
        name: "one_receiver",
        what: "every run with one receiver (the receiver count every table sweeps)",
    },
    Mutant {
        name: "random_delay",
        what: "every run without a random ACK delay gets one of 32,000 bit times (the thesis: \
               random ACKs move the point where RT levels off to larger r, by lowering the \
               collisions that cause it)",
    },
    Mutant {
        name: "no_collisions",
        what: "a bus on which nothing collides: of the stations ready at once one transmits \
               and the others defer (the thesis credits collisions for RT levelling off, for \
               MSAW with 64-byte data doing worse than unicast, and for what random ACK \
               delays gain)",
    },
    Mutant {
        name: "rra_acks_all",
        what: "RRA runs as MSAW: every receiver acknowledges every message (the one selected \
               acknowledger RRA is about)",
    },
];

/// `s` under `mutant` (none: unchanged).
pub(super) fn apply(mutant: Option<&str>, s: &mut RunSpec) {
    match mutant {
        Some("no_random_delay") => s.rand_bits = 0,
        Some("no_failures") => s.fail = 0.0,
        Some("double_t") => s.ack_timeout_bits *= 2,
        Some("saw_window_1") => {
            if let Proto::Bap { window } = &mut s.proto {
                *window = 1;
            }
        }
        Some("one_receiver") => s.receivers = 1,
        Some("random_delay") if s.rand_bits == 0 => s.rand_bits = 32_000,
        Some("no_collisions") => s.collisions = false,
        Some("rra_acks_all") => {
            if let Proto::Rra { .. } = s.proto {
                s.proto = Proto::Saw;
            }
        }
        _ => {}
    }
}
