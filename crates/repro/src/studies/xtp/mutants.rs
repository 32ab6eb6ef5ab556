//! Seed 002's declared mutants (`rmcast repro xtp --mutants`): the contrasts the thesis's
//! tables draw (multicast against unicast, its setting against the improved one) swapped, the
//! loss removed, and the model's timer doubled. They change the simulated runs; the
//! real-network runs are left as they are.

use super::sim::{Cell, Model};
use super::{Mode, Setting};
use crate::study::Mutant;
use core::time::Duration;

/// The mutants, in the report's order.
pub(super) const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "swap_modes",
        what: "every multicast cell runs unicast and every unicast cell multicast to 3 \
               receivers",
    },
    Mutant {
        name: "swap_settings",
        what: "the thesis's setting (go-back-N, uncapped back-off) and the improved one \
               (selective repeat, capped back-off, periodic SREQ) swapped (T7's coalescing variant \
               kept)",
    },
    Mutant {
        name: "no_loss",
        what: "no receiver drops a packet (the loss Tables 4.6–4.16 sweep)",
    },
    Mutant {
        name: "one_receiver",
        what: "every multicast cell has one receiver (the receiver counts the tables compare)",
    },
    Mutant {
        name: "no_error_control",
        what: "the sender runs without error control (no SREQ, no retransmission): a lost \
               packet stays lost (what every claim that runs complete is about)",
    },
    Mutant {
        name: "no_per_call_cost",
        what: "the write call's cost cut from the model's per-call cost to 1 µs (the bound \
               the small-write claims credit)",
    },
];

/// The model under `mutant` (none: unchanged).
pub(super) fn apply_model(mutant: Option<&str>, mut m: Model) -> Model {
    match mutant {
        Some("no_error_control") => m.error_control = false,
        Some("no_per_call_cost") => m.per_call = Duration::from_micros(1),
        _ => {}
    }
    m
}

/// `c` under `mutant` (none: unchanged).
pub(super) fn apply(mutant: Option<&str>, mut c: Cell) -> Cell {
    match mutant {
        Some("swap_modes") => {
            c.mode = match c.mode {
                Mode::Unicast => Mode::Multi(3),
                Mode::Multi(_) => Mode::Unicast,
            }
        }
        Some("swap_settings") => {
            c.setting = match c.setting {
                Setting::Thesis => Setting::Improved,
                Setting::Improved => Setting::Thesis,
                Setting::Coalesce => Setting::Coalesce,
            }
        }
        Some("no_loss") => c.loss.1 = 0.0,
        Some("one_receiver") => {
            if let Mode::Multi(_) = c.mode {
                c.mode = Mode::Multi(1);
            }
        }
        _ => {}
    }
    c
}
