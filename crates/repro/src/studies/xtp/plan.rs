//! The sweep: the grid's cells and the scale cells, with their seeds.

use super::super::xtp_grid::*;
use super::sim::Cell;
use rmcast_proto::rng::mix64;

// ------------------------------------------------------------------------------ the plan

crate::plan! {
    pub(super) struct Plan {
        pub(super) writes: Vec<usize> = quick vec![64, 256, 1024, 2048, 8192], full WRITES.to_vec();
        pub(super) reps: u64 = quick 5, full 5;
        pub(super) scale_ns: Vec<usize> = quick vec![1, 10], full vec![1, 2, 3, 10, 100, 1000];
        pub(super) scale_writes: Vec<usize> = quick vec![8192], full vec![1024, 8192];
    }
    runs: reps;
}

impl Plan {
    pub(super) fn cells(&self) -> Vec<Cell> {
        let mut v = Vec::new();
        for setting in [Setting::Thesis, Setting::Improved] {
            for &message in &MESSAGES {
                for &mode in &MODES {
                    for &loss in &LOSSES {
                        for &write in &self.writes {
                            for k in 0..self.reps {
                                let seed = mix64(
                                    message
                                        ^ (write as u64) << 20
                                        ^ (mode.receivers() as u64) << 40
                                        ^ u64::from(matches!(mode, Mode::Unicast)) << 50
                                        ^ u64::from(loss.0) << 52
                                        ^ (k & 15) << 60
                                        // Beyond 16 repetitions (`--runs-factor`) the
                                        // high bits of k are shifted out: mix them in.
                                        ^ if k < 16 { 0 } else { mix64(k) },
                                );
                                v.push(Cell {
                                    message,
                                    write,
                                    mode,
                                    loss,
                                    setting,
                                    seed,
                                });
                                // T7's coalescing variant: unicast, writes up to 1024 B, the
                                // same seeds (same loss draws) as the thesis setting.
                                if setting == Setting::Thesis
                                    && mode == Mode::Unicast
                                    && write <= 1024
                                {
                                    v.push(Cell {
                                        message,
                                        write,
                                        mode,
                                        loss,
                                        setting: Setting::Coalesce,
                                        seed,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        v
    }

    pub(super) fn scale_cells(&self) -> Vec<Cell> {
        let mut v = Vec::new();
        for &n in &self.scale_ns {
            // 1,000 receivers in 1024-B writes take minutes of simulation (a CNTL storm on
            // the bus per write): only the 8192-B writes there.
            for &write in self.scale_writes.iter().filter(|&&w| n < 1000 || w == 8192) {
                for loss in [(0, 0.0), (10, 0.1)] {
                    v.push(Cell {
                        message: 1_024_000,
                        write,
                        mode: Mode::Multi(n),
                        loss,
                        setting: Setting::Improved,
                        seed: mix64(
                            0x5ca1e ^ (n as u64) << 8 ^ (write as u64) << 24 ^ u64::from(loss.0),
                        ),
                    });
                }
            }
        }
        v
    }
}
