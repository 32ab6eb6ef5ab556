//! Checks of single simulated runs and the grid.

use super::*;

fn cell(message: u64, write: usize, mode: Mode, loss: (u32, f64), setting: Setting) -> Cell {
    Cell {
        message,
        write,
        mode,
        loss,
        setting,
        seed: 1,
    }
}

#[test]
fn a_write_call_costs_the_per_call_cost_plus_the_network() {
    let o = run_sim(&cell(
        51_200,
        1024,
        Mode::Multi(3),
        (0, 0.0),
        Setting::Thesis,
    ))
    .unwrap();
    assert!(o.ok);
    assert_eq!(o.calls, 50);
    // 4.7 ms per call, plus a 1,094-byte frame (0.9 ms) and three CNTL frames.
    assert!(
        o.ms_per_call > 4.7 && o.ms_per_call < 7.0,
        "{} ms per call",
        o.ms_per_call
    );
    // Every write is one packet; nothing is retransmitted without loss.
    assert_eq!(o.repairs, 0);
}

#[test]
fn lossy_multicast_delivers_the_whole_message_with_the_recommendations() {
    for w in [1024, 8192] {
        let o = run_sim(&cell(
            51_200,
            w,
            Mode::Multi(3),
            (20, 0.2),
            Setting::Improved,
        ))
        .unwrap();
        assert!(o.ok, "{w}: {o:?}");
        assert!(o.repairs > 0);
    }
}

#[test]
fn the_last_write_is_cut_to_the_message() {
    // 51,200 = 6 x 8192 + 2048: seven calls.
    let o = run_sim(&cell(
        51_200,
        8192,
        Mode::Unicast,
        (0, 0.0),
        Setting::Thesis,
    ))
    .unwrap();
    assert!(o.ok);
    assert_eq!(o.calls, 7);
}

#[test]
fn coalescing_variant_is_bound_by_the_per_call_cost() {
    // Writes do not block: each call costs the 4.7 ms, and 1/5 loss adds only the last
    // write's repair round (FASTNAK from the next packet, no WTIMER wait), while the
    // blocking thesis setting waits for WTIMER (>= 100 ms) per lost write.
    let c = |loss, setting| run_sim(&cell(51_200, 1024, Mode::Unicast, loss, setting)).unwrap();
    let clean = c((0, 0.0), Setting::Coalesce);
    let lossy = c((20, 0.2), Setting::Coalesce);
    assert!(clean.ok && lossy.ok, "{clean:?} {lossy:?}");
    assert!(clean.ms_per_call < 4.8, "{clean:?}");
    assert!(lossy.repairs > 0, "{lossy:?}");
    assert!(lossy.seconds < clean.seconds + 0.02, "{clean:?} {lossy:?}");
    let blocking = c((20, 0.2), Setting::Thesis);
    assert!(blocking.seconds > clean.seconds + 0.1, "{blocking:?}");
}

#[test]
fn spread_is_range_over_mean() {
    assert_eq!(spread(&[1.0, 1.0]), 0.0);
    assert!((spread(&[0.9, 1.1]) - 0.2).abs() < 1e-12);
}

/// `cargo test --release -p rmcast-repro explore_xtp -- --ignored --nocapture`
#[test]
#[ignore]
fn explore_xtp() {
    for setting in [Setting::Thesis, Setting::Improved] {
        for msg in MESSAGES {
            for mode in [Mode::Unicast, Mode::Multi(3)] {
                for loss in LOSSES {
                    let mut line = format!("{:?} {} {:?} l{}:", setting, msg, mode, loss.0);
                    for w in WRITES {
                        let o = run_sim(&cell(msg, w, mode, loss, setting)).unwrap();
                        if o.ok {
                            line += &format!(" {:.3}", o.mbps);
                        } else {
                            line += " FAIL";
                        }
                    }
                    println!("{line}");
                }
            }
        }
    }
}

#[test]
fn a_missing_cell_leaves_the_ratio_missing_not_zero() {
    assert_eq!(
        min_ratio(Some(2.0), [Some(3.0), Some(1.0)].into_iter()),
        Some(0.5)
    );
    assert_eq!(min_ratio(Some(2.0), [Some(3.0), None].into_iter()), None);
    assert_eq!(min_ratio(None, [Some(3.0)].into_iter()), None);
    assert_eq!(min_ratio(Some(2.0), std::iter::empty()), None);
}
