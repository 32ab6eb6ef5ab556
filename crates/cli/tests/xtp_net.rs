//! `rmcast send --protocol xtp` / `rmcast recv` over loopback multicast: a file to three
//! receivers, one of which drops 1 in 5 of the protocol packets it receives (the thesis's
//! worst loss level, at one receiver), with the default selective repeat and with the
//! thesis's settings (block on acknowledgment per write, go-back-N, uncapped back-off);
//! `--unicast` to one receiver dropping a fifth, and its refusals.

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

#[test]
fn xtp_unicast_file_to_one_receiver_dropping_a_fifth() {
    let dir = tempfile::tempdir().unwrap();
    let send = [
        "--protocol",
        "xtp",
        "--unicast",
        "--rate",
        "0",
        "--datagram-size",
        "1480",
    ];
    let lossy = vec!["--drop-rate", "0.2", "--drop-seed", "11"];
    let run = common::transfer(
        "239.255.78.63:47363",
        1_000_000,
        &send,
        &[lossy],
        dir.path(),
    );
    assert_eq!(run.sender["all_completed"], true);
    // Every protocol datagram went to the receiver's own address, none to the group.
    assert_eq!(run.sender["protocol_to_group"], 0, "{}", run.sender);
    assert!(run.sender["protocol_unicast"].as_u64().unwrap() > 600);
    let r = &run.receivers[0];
    assert!(r["driver"]["dropped_injected"].as_u64().unwrap() > 0);
    assert!(r["repairs_received"].as_u64().unwrap() > 0);
}

fn rmcast(args: &[&str]) -> std::process::Output {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("rmcast"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn xtp_unicast_and_late_join_refuse_what_makes_no_sense() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f.bin");
    std::fs::write(&f, b"hello").unwrap();
    let f = f.to_str().unwrap();
    let g = ["-g", "239.255.78.64:47364", "-i", "lo", "--join-wait", "2"];
    let cases: [(&[&str], &str); 5] = [
        (
            &["--protocol", "xtp", "--unicast", "-n", "2", f],
            "exactly one receiver",
        ),
        (
            &["--protocol", "saw", "--unicast", "-n", "1", f],
            "only with --protocol xtp",
        ),
        (
            &["--protocol", "xtp", "--late-join", "-n", "1", f],
            "needs a stream",
        ),
        (
            &["--protocol", "bap", "--late-join", "-n", "1", "-"],
            "only with --protocol xtp",
        ),
        (
            &[
                "--protocol",
                "xtp",
                "--late-join",
                "--unicast",
                "-n",
                "1",
                "-",
            ],
            "exclude each other",
        ),
    ];
    for (args, says) in cases {
        let mut a = vec!["send"];
        a.extend_from_slice(&g);
        a.extend_from_slice(args);
        let out = rmcast(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn xtp_unicast_refuses_a_second_receiver() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f.bin");
    std::fs::write(&f, common::pseudo_random(10_000, 5)).unwrap();
    let group = "239.255.78.65:47365";
    let bin = assert_cmd::cargo::cargo_bin("rmcast");
    let mut recvs: Vec<_> = (0..2)
        .map(|r| {
            std::process::Command::new(&bin)
                .args(["recv", "-g", group, "-i", "lo", "--quiet", "--wait", "30"])
                .arg("--dir")
                .arg(dir.path().join(format!("out{r}")))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    // Without --receivers the sender takes whoever joins within --discover: both do.
    let out = rmcast(&[
        "send",
        f.to_str().unwrap(),
        "-g",
        group,
        "-i",
        "lo",
        "--protocol",
        "xtp",
        "--unicast",
        "--discover",
        "3",
    ]);
    for r in recvs.iter_mut() {
        let _ = r.kill();
        let _ = r.wait();
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("a second receiver"), "{err}");
}
