//! Delivery and metric checks of single runs.

use super::*;

fn check_delivery(proto: Proto, fail: f64, r: usize, messages: u64, seed: u64) -> RunOut {
    let mut s = RunSpec::thesis(proto, r, seed);
    s.messages = messages;
    s.fail = fail;
    if fail > 0.0 {
        s.increment_bits = error_increment(r);
    }
    let o = run_one(&s, true).unwrap();
    assert_eq!(o.delivered.len(), r);
    for got in &o.delivered {
        // Exactly once, in order.
        assert!(
            got.windows(2).all(|w| w[0] < w[1]),
            "{proto:?}: out of order or twice"
        );
        // Everything the sender did not give up on arrived.
        for k in 0..messages {
            if o.failed_seqs.binary_search(&k).is_err() {
                assert!(
                    got.binary_search(&k).is_ok(),
                    "{proto:?}: message {k} missing"
                );
            }
        }
    }
    assert!(o.delivery_ok);
    o
}

#[test]
fn frames_are_the_thesis_sizes() {
    let bus = BusConfig::default();
    for proto in [
        Proto::Saw,
        Proto::Bap { window: 10 },
        Proto::Rra { window: 120 },
    ] {
        for frame in [64u64, 848, 1436, 1518] {
            let pl = payload_for_frame(proto, frame, &bus).unwrap();
            let len = data_datagram_len(proto, pl).unwrap();
            assert_eq!(bus.frame_bytes(len) as u64, frame, "{proto:?}");
        }
    }
    // Table 4.1 bounds with these frames.
    let p = RunSpec::thesis(Proto::Saw, 5, 0).params();
    assert!((p.ubrt() - 4.304).abs() < 5e-4);
    assert_eq!(p.lbl(), 14704.0);
    let p = RunSpec::thesis(Proto::Bap { window: 10 }, 60, 0).params();
    assert!((p.ubrt() - 48.088).abs() < 5e-4);
}

#[test]
fn error_increments_match_the_thesis() {
    assert_eq!(
        [
            error_increment(20),
            error_increment(40),
            error_increment(60)
        ],
        [45_000, 90_000, 135_000]
    );
}

#[test]
fn saw_on_the_bus_exactly_once_in_order_0_and_5_percent() {
    let o = check_delivery(Proto::Saw, 0.0, 5, 60, 1);
    assert!(o.failed_seqs.is_empty());
    assert_eq!(o.summary.retransmissions.max, 0.0);
    let o = check_delivery(Proto::Saw, 0.05, 5, 60, 2);
    assert!(
        o.summary.retransmissions.mean > 0.0,
        "5 % failures but no retransmission"
    );
}

#[test]
fn bap_on_the_bus_exactly_once_in_order_0_and_5_percent() {
    let o = check_delivery(Proto::Bap { window: 5 }, 0.0, 5, 60, 3);
    assert!(o.failed_seqs.is_empty());
    let o = check_delivery(Proto::Bap { window: 5 }, 0.05, 5, 60, 4);
    assert!(o.summary.retransmissions.mean > 0.0);
}

#[test]
fn rra_on_the_bus_exactly_once_in_order_0_and_5_percent() {
    let o = check_delivery(Proto::Rra { window: 10 }, 0.0, 5, 60, 5);
    assert!(o.failed_seqs.is_empty());
    check_delivery(Proto::Rra { window: 10 }, 0.05, 5, 60, 6);
}

#[test]
fn a_tight_limit_under_heavy_loss_is_recorded_as_failures() {
    let mut s = RunSpec::thesis(Proto::Saw, 5, 9);
    s.messages = 40;
    s.fail = 0.3;
    s.max_retx = Some(0);
    s.increment_bits = error_increment(5);
    let o = run_one(&s, true).unwrap();
    assert!(
        !o.failed_seqs.is_empty(),
        "30 % loss with no retransmissions allowed"
    );
}

#[test]
fn one_receiver_msaw_takes_d_plus_a() {
    let mut s = RunSpec::thesis(Proto::Saw, 1, 1);
    s.messages = 20;
    let o = run_one(&s, false).unwrap();
    assert_eq!(o.summary.latency.min, 12656.0);
    assert_eq!(o.summary.latency.max, 12656.0);
}

#[test]
fn error_families_find_the_thesis_table_of_their_r() {
    use super::plots::paper_err_key;
    assert_eq!(
        paper_err_key("saw_r40_rand0").as_deref(),
        Some("t4_6_saw_r40_rand0_mean_lat")
    );
    assert_eq!(
        paper_err_key("bap_w10_r60_rand22000").as_deref(),
        Some("t4_13_bap_w10_r60_rand22000_mean_lat")
    );
    // Sensitivity families compare with the thesis's runs at their r without random wait.
    assert_eq!(
        paper_err_key("sens.saw_r60_drop2").as_deref(),
        Some("t4_6_saw_r60_rand0_mean_lat")
    );
    assert_eq!(
        paper_err_key("sens.bap_w10_r20_t25000").as_deref(),
        Some("t4_8_bap_w10_r20_rand0_mean_lat")
    );
    assert_eq!(paper_err_key("sens.saw_exclusive"), None);
    assert_eq!(paper_err_key("t4_1"), None);
}

#[test]
fn two_failure_draws_per_interface_lose_more() {
    use super::run::{run_one, Proto, RunSpec};
    let mut retx = [0.0; 2];
    for (i, checks) in [1u32, 2].into_iter().enumerate() {
        for seed in 0..3 {
            let mut s = RunSpec::thesis(Proto::Saw, 20, seed);
            s.fail = 0.03;
            s.increment_bits = 45_000;
            s.messages = 200;
            s.drop_checks = checks;
            retx[i] += run_one(&s, false).unwrap().summary.retransmissions.mean;
        }
    }
    assert!(retx[1] > retx[0] * 1.15, "{retx:?}");
}

#[test]
fn a_measure_names_its_x_by_the_sweep_it_comes_from() {
    for (name, x) in [
        ("t4_1.rt_mean", "receivers"),
        ("t4_3_rand12000.lat_mean", "receivers"),
        ("sens.bap_w10_t25000.retx_mean", "receivers"),
        ("err.saw_r20_rand0.lat_mean", "failure rate %"),
        ("sens.saw_r40_drop2.lat_mean", "failure rate %"),
        ("sens.bap_w10_r60_t50000.retx_mean", "failure rate %"),
        ("proc.saw_r60.lat_mean", "failure rate %"),
    ] {
        assert_eq!(super::unit_of(name).1, x, "{name}");
    }
    assert_eq!(
        super::unit_of("inc.saw_r20.retransmitted_frac"),
        ("fraction", "timeout increment (bit times)")
    );
}
