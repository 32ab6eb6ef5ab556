//! Seed 004's declared mutants (`rmcast repro prmp --mutants`): the mechanisms the paper
//! credits (polling, the parent's response buffer, the window, multi-level trees) and the
//! settings it fixes, changed one at a time.

use super::run::{Proto, RunSpec};
use crate::study::Mutant;
use rmcast_sim::topo::LinkClass;

/// The mutants, in the report's order.
pub(super) const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "swap_polling",
        what: "every PRMP (polling) point runs full feedback and every full-feedback point \
               PRMP, window kept (PF ↔ FF, PF-IW ↔ FF-IW)",
    },
    Mutant {
        name: "swap_window",
        what: "the window swapped: S = 64 runs as a whole-transfer window and back (PF ↔ PF-IW, \
               FF ↔ FF-IW)",
    },
    Mutant {
        name: "no_implosion",
        what: "the parent's response buffer removed for every version (no implosion losses)",
    },
    Mutant {
        name: "no_link_loss",
        what: "no link errors (the loss that drives repairs and the HYBRID/LAN contrast)",
    },
    Mutant {
        name: "double_rr",
        what: "PRMP's response rate RR doubled (the paper fixes it at the parent's intake \
               rate ITR, 1,500/s)",
    },
    Mutant {
        name: "swap_classes",
        what: "every LAN run with at least 3 children on the HYBRID star and every HYBRID run \
               on the LAN star (the configurations Figures 5–9 contrast)",
    },
    Mutant {
        name: "implosion_for_it",
        what: "FF-IW-IT runs with the parent's response buffer, i.e. as FF-IW (the \
               implosion-free reference the paper's reasons r1 and r2 are told apart by)",
    },
    Mutant {
        name: "no_multilevel",
        what: "the multi-level PRMP trees run single-level (beyond the paper's §4)",
    },
];

/// `s` under `mutant` (none: unchanged).
pub(super) fn apply(mutant: Option<&str>, s: &mut RunSpec) {
    let swap = |p: Proto, pairs: &[(Proto, Proto)]| {
        pairs
            .iter()
            .find_map(|&(a, b)| {
                if p == a {
                    Some(b)
                } else if p == b {
                    Some(a)
                } else {
                    None
                }
            })
            .unwrap_or(p)
    };
    match mutant {
        Some("swap_polling") => {
            s.proto = swap(
                s.proto,
                &[(Proto::Pf, Proto::Ff), (Proto::PfIw, Proto::FfIw)],
            );
        }
        Some("swap_window") => {
            s.proto = swap(
                s.proto,
                &[(Proto::Pf, Proto::PfIw), (Proto::Ff, Proto::FfIw)],
            );
        }
        _ => {}
    }
    // A beyond-the-paper run (its limit shorter than the paper's hour) keeps the limit its
    // new version gets there.
    if matches!(mutant, Some("swap_polling" | "swap_window"))
        && s.limit < std::time::Duration::from_secs(3600)
    {
        s.limit = super::plan::scale_limit(s.proto, s.nc as f64);
    }
    match mutant {
        Some("no_implosion") => s.implosion_off = true,
        Some("no_link_loss") => s.lossless = true,
        Some("double_rr") => s.rr *= 2,
        Some("swap_classes") => {
            s.class = match s.class {
                // A HYBRID star needs a child of each class.
                LinkClass::Lan if s.nc >= 3 => LinkClass::Hybrid,
                LinkClass::Hybrid => LinkClass::Lan,
                c => c,
            }
        }
        Some("implosion_for_it") if s.proto == Proto::FfIwIt => s.proto = Proto::FfIw,
        _ => {}
    }
}

/// Whether a tree run under `mutant` is multi-level when it would be `multi`.
pub(super) fn multi(mutant: Option<&str>, multi: bool) -> bool {
    multi && mutant != Some("no_multilevel")
}
