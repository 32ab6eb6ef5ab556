//! What the `rmcast send`/`rmcast recv` tests over loopback share: a file moved from one
//! sender to several receivers, every copy compared byte for byte, the JSON summaries kept.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

pub fn pseudo_random(len: usize, seed: u64) -> Vec<u8> {
    rmcast_repro::studies::xtp_net::payload(len as u64, seed)
}

pub struct Run {
    pub sender: Value,
    pub receivers: Vec<Value>,
}

/// Move a file from one sender to `recv_extra.len()` receivers (each with its extra flags)
/// and check every copy; returns the JSON summaries.
pub fn transfer(
    group: &str,
    size: usize,
    send_extra: &[&str],
    recv_extra: &[Vec<&str>],
    dir: &Path,
) -> Run {
    let bin = assert_cmd::cargo::cargo_bin("rmcast");
    let data = pseudo_random(size, size as u64 + 3);
    let src = dir.join("payload.bin");
    std::fs::write(&src, &data).unwrap();
    let mut recvs = Vec::new();
    for (r, extra) in recv_extra.iter().enumerate() {
        let out = dir.join(format!("out{r}"));
        std::fs::create_dir_all(&out).unwrap();
        let mut args: Vec<String> = [
            "recv", "-g", group, "-i", "lo", "--quiet", "--json", "--wait", "60",
        ]
        .map(String::from)
        .to_vec();
        args.extend(["--dir".into(), out.display().to_string()]);
        args.extend(extra.iter().map(|s| s.to_string()));
        recvs.push(
            Command::new(&bin)
                .args(&args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
    }
    let n = recv_extra.len().to_string();
    let mut args = vec![
        "send",
        src.to_str().unwrap(),
        "-g",
        group,
        "-i",
        "lo",
        "--receivers",
        &n,
        "--evict-after",
        "30",
        "--json",
        "--quiet",
    ];
    args.extend_from_slice(send_extra);
    let send = Command::new(&bin).args(&args).output().unwrap();
    assert!(
        send.status.success(),
        "sender: {}\n{}",
        String::from_utf8_lossy(&send.stdout),
        String::from_utf8_lossy(&send.stderr)
    );
    let mut receivers = Vec::new();
    for (r, c) in recvs.into_iter().enumerate() {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "receiver {r}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got = std::fs::read(dir.join(format!("out{r}")).join("payload.bin")).unwrap();
        assert_eq!(got.len(), data.len(), "receiver {r}");
        assert!(got == data, "receiver {r}: contents differ");
        receivers.push(serde_json::from_slice(&out.stdout).unwrap());
    }
    Run {
        sender: serde_json::from_slice(&send.stdout).unwrap(),
        receivers,
    }
}
