//! `rmcast send --protocol xtp` / `rmcast recv` over loopback multicast: a file to three
//! receivers, one of which drops 1 in 5 of the protocol packets it receives (the thesis's
//! worst loss level, at one receiver), with the default selective repeat and with the
//! thesis's settings (block on acknowledgment per write, go-back-N, uncapped back-off).

mod common;

fn transfer(group: &str, size: usize, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let mut send = vec![
        "--protocol",
        "xtp",
        "--rate",
        "0",
        "--datagram-size",
        "1480",
    ];
    send.extend_from_slice(extra);
    // The lossy receiver: 1 in 5 of the protocol packets it receives are dropped.
    let lossy = vec!["--drop-rate", "0.2", "--drop-seed", "7"];
    // The receivers renamed the file only after its BLAKE3 digest matched the sender's;
    // `common::transfer` compares the bytes too.
    let run = common::transfer(group, size, &send, &[lossy, vec![], vec![]], dir.path());
    assert_eq!(run.sender["protocol"], "xtp");
    assert_eq!(run.sender["all_completed"], true);
    assert!(
        run.receivers[0]["driver"]["dropped_injected"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn xtp_file_to_three_receivers_one_dropping_a_fifth() {
    transfer("239.255.78.61:47361", 2_000_000, &["--window", "32"]);
}

#[test]
fn xtp_thesis_settings_file_to_three_receivers_one_dropping_a_fifth() {
    transfer(
        "239.255.78.62:47362",
        150_000,
        &["--xtp-thesis", "--write-size", "1024"],
    );
}
