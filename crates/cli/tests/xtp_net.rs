//! `rmcast send --protocol xtp` / `rmcast recv` over loopback multicast: a file to three
//! receivers, one of which drops 1 in 5 of the protocol packets it receives (the thesis's
//! worst loss level, at one receiver), with the default selective repeat and with the
//! thesis's settings (block on acknowledgment per write, go-back-N, uncapped back-off).

use std::path::Path;
use std::process::{Command, Stdio};

fn pseudo_random(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn transfer(group: &str, size: usize, extra: &[&str], dir: &Path) {
    let bin = assert_cmd::cargo::cargo_bin("rmcast");
    let data = pseudo_random(size, size as u64);
    let src = dir.join("payload.bin");
    std::fs::write(&src, &data).unwrap();
    let mut recvs = Vec::new();
    for r in 0..3 {
        let out = dir.join(format!("out{r}"));
        std::fs::create_dir_all(&out).unwrap();
        let mut args: Vec<String> = vec![
            "recv".into(),
            "-g".into(),
            group.into(),
            "-i".into(),
            "lo".into(),
            "--dir".into(),
            out.display().to_string(),
            "--quiet".into(),
            "--wait".into(),
            "60".into(),
        ];
        if r == 0 {
            // The lossy receiver: 1 in 5 of the protocol packets it receives are dropped.
            args.extend([
                "--drop-rate".into(),
                "0.2".into(),
                "--drop-seed".into(),
                "7".into(),
            ]);
        }
        recvs.push(
            Command::new(&bin)
                .args(&args)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
    }
    let mut args = vec![
        "send",
        src.to_str().unwrap(),
        "-g",
        group,
        "-i",
        "lo",
        "--receivers",
        "3",
        "--protocol",
        "xtp",
        "--rate",
        "0",
        "--datagram-size",
        "1480",
        "--evict-after",
        "30",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let send = Command::new(&bin)
        .args(&args)
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    assert!(
        send.status.success(),
        "sender: {}\n{}",
        String::from_utf8_lossy(&send.stdout),
        String::from_utf8_lossy(&send.stderr)
    );
    for (r, c) in recvs.into_iter().enumerate() {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "receiver {r}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = std::fs::read(dir.join(format!("out{r}")).join("payload.bin")).unwrap();
        assert_eq!(got.len(), data.len(), "receiver {r}");
        // The receiver renamed the file only after its BLAKE3 digest matched the sender's;
        // compare the bytes too.
        assert!(got == data, "receiver {r}: contents differ");
    }
}

#[test]
fn xtp_file_to_three_receivers_one_dropping_a_fifth() {
    let dir = tempfile::tempdir().unwrap();
    transfer(
        "239.255.78.61:47361",
        2_000_000,
        &["--window", "32"],
        dir.path(),
    );
}

#[test]
fn xtp_thesis_settings_file_to_three_receivers_one_dropping_a_fifth() {
    let dir = tempfile::tempdir().unwrap();
    transfer(
        "239.255.78.62:47362",
        150_000,
        &["--xtp-thesis", "--write-size", "1024"],
        dir.path(),
    );
}
