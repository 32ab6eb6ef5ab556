//! Seed 003's declared mutants (`rmcast repro lms --mutants`): the schemes the chapter
//! contrasts, swapped, and the loss that every recovery measure is about, removed.

use crate::study::Mutant;
use rmcast_sim::Scheme;

/// The mutants, in the report's order.
pub(super) const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "swap_lms_srm",
        what: "every LMS run uses SRM and every SRM run LMS (static LMS ↔ plain SRM, adaptive \
               LMS ↔ adaptive SRM)",
    },
    Mutant {
        name: "swap_lms_pgm",
        what: "every LMS run uses PGM and every PGM run LMS (static)",
    },
    Mutant {
        name: "adaptive_for_static",
        what: "static LMS and SRM run as their adaptive versions (the repliers and timers §5.9 \
               contrasts)",
    },
    Mutant {
        name: "no_loss",
        what: "no packet is dropped (the single loss every recovery measure is about)",
    },
    Mutant {
        name: "repairs_lost",
        what: "the loss site drops every repair as well (a receiver behind it never \
               recovers: what the recovery claims are about)",
    },
];

/// The run's shape under `mutant`.
pub(super) fn shape(mutant: Option<&str>, mut s: super::sim::RunShape) -> super::sim::RunShape {
    s.lose_repairs = mutant == Some("repairs_lost");
    s
}

/// The scheme a run of `scheme` uses under `mutant`.
pub(super) fn scheme(mutant: Option<&str>, scheme: Scheme) -> Scheme {
    let srm = |adaptive| Scheme::Srm {
        adaptive,
        topo: false,
    };
    match (mutant, scheme) {
        (Some("swap_lms_srm"), Scheme::Lms) => srm(false),
        (Some("swap_lms_srm"), Scheme::LmsAdaptive) => srm(true),
        (Some("swap_lms_srm"), Scheme::Srm { adaptive, .. }) => {
            if adaptive {
                Scheme::LmsAdaptive
            } else {
                Scheme::Lms
            }
        }
        (Some("swap_lms_pgm"), Scheme::Lms | Scheme::LmsAdaptive) => Scheme::Pgm,
        (Some("swap_lms_pgm"), Scheme::Pgm) => Scheme::Lms,
        (Some("adaptive_for_static"), Scheme::Lms) => Scheme::LmsAdaptive,
        (Some("adaptive_for_static"), Scheme::Srm { topo, .. }) => Scheme::Srm {
            adaptive: true,
            topo,
        },
        (_, s) => s,
    }
}

/// Whether a run under `mutant` drops its packets.
pub(super) fn lossy(mutant: Option<&str>) -> bool {
    mutant != Some("no_loss")
}
