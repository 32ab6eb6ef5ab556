//! Seed 001's declared mutants (`rmcast repro paul --mutants`): what the paper's contrasts and
//! trends are about, changed one at a time.

use super::Spec;
use crate::study::Mutant;
use rmcast_proto::tree::Variant;

/// The mutants, in the report's order.
pub(super) const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "swap_dsp_cp",
        what: "every DSP point runs CP and every CP point runs DSP (the protocols Figures 4–12 \
               contrast)",
    },
    Mutant {
        name: "swap_csp_cp",
        what: "every CSP point runs CP and every CP point runs CSP",
    },
    Mutant {
        name: "swap_dsp_csp",
        what: "every DSP point runs CSP and every CSP point runs DSP",
    },
    Mutant {
        name: "no_loss",
        what: "no block errors (the loss that drives re-multicasts, buffers and Figure 11's \
               trend)",
    },
    Mutant {
        name: "double_status",
        what: "the status interval doubled (the paper fixes 4–6 ms)",
    },
    Mutant {
        name: "halve_status",
        what: "the status interval halved (2–3 ms: status traffic against the data)",
    },
    Mutant {
        name: "double_status_dsp",
        what: "DSP's status interval doubled, CSP's and CP's kept (the same regular interval \
               the paper credits for their equal status traffic)",
    },
    Mutant {
        name: "ten_times_loss",
        what: "the block error rate of every point ×10 (the loss under which Figure 12's \
               insensitivity to the number of destinations holds)",
    },
    Mutant {
        name: "halve_window",
        what: "every window halved (Figures 9–12 fix it at 2 × the largest RTD: the window \
               under which ρ ≈ 1 at low error rates)",
    },
    Mutant {
        name: "double_rtd",
        what: "every exchange's round-trip delay doubled (the paper fixes 10–60 ms)",
    },
];

/// `s` under `mutant` (none: unchanged).
pub(super) fn apply(mutant: Option<&str>, s: &mut Spec) {
    let swap = |s: &mut Spec, a: Variant, b: Variant| {
        if s.variant == a {
            s.variant = b;
        } else if s.variant == b {
            s.variant = a;
        }
    };
    match mutant {
        Some("swap_dsp_cp") => swap(s, Variant::Dsp, Variant::Cp),
        Some("swap_csp_cp") => swap(s, Variant::Csp, Variant::Cp),
        Some("swap_dsp_csp") => swap(s, Variant::Dsp, Variant::Csp),
        Some("no_loss") => s.err = 0.0,
        Some("double_status") => s.status_scale = 2.0,
        Some("halve_status") => s.status_scale = 0.5,
        Some("double_status_dsp") if s.variant == Variant::Dsp => s.status_scale = 2.0,
        Some("ten_times_loss") => s.err *= 10.0,
        Some("halve_window") => s.window *= 0.5,
        Some("double_rtd") => s.rtds_ms.iter_mut().for_each(|r| *r *= 2.0),
        _ => {}
    }
}
