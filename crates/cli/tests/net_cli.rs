//! `rmcast send` / `rmcast recv` from the outside: help, clear errors with exit status 2, and a
//! stream from standard input to standard output over loopback multicast.

mod common;

use common::{json_exit, spawn_recv, spawn_stream_send};
use std::io::Write;
use std::process::{Command as Std, Stdio};

#[test]
fn help_shows_examples_and_the_rate_default() {
    let out = common::rmcast(&["send", "--help"]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("Examples:") && s.contains("rmcast recv --group"),
        "{s}"
    );
    assert!(s.contains("1 Gbit/s"), "{s}");
    let out = common::rmcast(&["recv", "--help"]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("Examples:") && s.contains("--stdout"), "{s}");
}

/// `rmcast relay`: its help has examples; bad usage is refused in one line with exit 2
/// before any socket is opened or a namespace is needed.
#[test]
fn relay_help_and_usage_errors() {
    let out = common::rmcast(&["relay", "--help"]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(
        s.contains("Examples:") && s.contains("--downstream eth1"),
        "{s}"
    );
    let g = "239.1.2.3:5000";
    expect_setup_error(
        &["relay", "-g", g, "--upstream", "lo", "--downstream", "lo"],
        "both upstream and downstream",
    );
    expect_setup_error(
        &[
            "relay",
            "-g",
            "10.1.2.3:5000",
            "--upstream",
            "a",
            "--downstream",
            "b",
        ],
        "not a multicast address",
    );
    expect_setup_error(
        &[
            "relay",
            "-g",
            g,
            "--upstream",
            "nosuch9",
            "--downstream",
            "lo",
        ],
        "no interface named",
    );
    let args = ["--upstream", "lo", "--downstream", "x", "--idle", "0"];
    expect_setup_error(
        &[&["relay", "-g", g][..], &args[..]].concat(),
        "--idle must be a positive number",
    );
    // A key file that cannot be read, or one readable by others, is refused before any
    // socket is opened; --encrypt needs --key-file.
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.key").display().to_string();
    let open_key = common::file_in(dir.path(), "open.key", &[7u8; 32]);
    for (key, needle) in [(&missing, "cannot read key file"), (&open_key, "chmod 600")] {
        let args = ["relay", "-g", g, "--upstream", "lo", "--downstream", "x"];
        expect_setup_error(&[&args[..], &["--key-file", key]].concat(), needle);
    }
    let args = ["--upstream", "lo", "--downstream", "x", "--encrypt"];
    let out = common::rmcast(&[&["relay", "-g", g][..], &args[..]].concat());
    assert_eq!(out.status.code(), Some(2));
    // clap: --downstream is required.
    let out = common::rmcast(&["relay", "-g", g, "--upstream", "lo"]);
    assert_eq!(out.status.code(), Some(2));
}

fn expect_setup_error(args: &[&str], needle: &str) {
    let err = common::assert_refused(&common::rmcast(args), needle, &format!("{args:?}"));
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}

#[test]
fn clear_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let fs = &common::file_in(dir.path(), "x", b"x");
    let out = dir.path().join("out");
    let os = out.to_str().unwrap();
    expect_setup_error(
        &["send", "-g", "10.1.2.3:5000", fs],
        "not a multicast address",
    );
    expect_setup_error(
        &["recv", "-g", "239.1.2.3:5000", "-i", "nosuch9", "--dir", os],
        "no interface named",
    );
    expect_setup_error(
        &["send", "-g", "239.1.2.3:5000", "/nonexistent/file"],
        "cannot read",
    );
    // A flag the chosen protocol does not read is refused, naming the flag and its readers;
    // one it reads passes this check (and fails here only on the missing file).
    for (args, needle) in [
        (
            &["--epoch-ms", "5"][..],
            "--epoch-ms does not apply to --protocol pgm: only prmp",
        ),
        (
            &["--window", "8"][..],
            "--window does not apply to --protocol pgm",
        ),
        (
            &["--protocol", "saw", "--txw", "10"][..],
            "--txw does not apply to --protocol saw: only pgm",
        ),
        (
            &["--protocol", "bap", "--unicast"][..],
            "--unicast does not apply to --protocol bap: only xtp",
        ),
        (
            &["--protocol", "dsp", "--rto-ms", "50"][..],
            "--rto-ms does not apply to --protocol dsp",
        ),
        (&["--protocol", "prmp", "--rto-ms", "50"][..], "cannot read"),
        (
            &["--protocol", "bap", "--ack-delay-ms", "5", "--window", "4"][..],
            "cannot read",
        ),
        (
            &["--protocol", "xtp", "--unicast", "--write-size", "900"][..],
            "cannot read",
        ),
    ] {
        let mut a = vec!["send", "-g", "239.1.2.3:5000", "/nonexistent/file"];
        a.extend_from_slice(args);
        expect_setup_error(&a, needle);
    }
    // One name limit on both sides: 225 bytes, so the receiver's temporary name fits in 255.
    let long = dir.path().join("n".repeat(226));
    std::fs::write(&long, b"x").unwrap();
    let long_name = "s".repeat(226);
    for source in [&[long.to_str().unwrap()][..], &["--name", &long_name, "-"]] {
        let mut args = vec!["send", "-g", "239.1.2.3:5000", "-i", "lo"];
        args.extend_from_slice(source);
        expect_setup_error(&args, "names are at most 225 bytes");
    }
    let busy = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let g = format!("239.1.2.3:{port}");
    expect_setup_error(&["recv", "-g", &g, "--dir", os], "already in use");
    // no partial output left behind by a failed start
    assert!(!out.exists());
    let key = dir.path().join("short.key");
    std::fs::write(&key, b"short").unwrap();
    let send_with_key = |why: &str| {
        expect_setup_error(
            &[
                "send",
                "-g",
                "239.1.2.3:5000",
                "--key-file",
                key.to_str().unwrap(),
                fs,
            ],
            why,
        )
    };
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        send_with_key("chmod 600");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        send_with_key("rmcast keygen");
    }
    // keygen: a 32-byte owner-only key, never an overwrite
    let made = dir.path().join("made.key");
    let ok = common::cmd()
        .args(["keygen", made.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(ok.status.success(), "{ok:?}");
    assert_eq!(std::fs::read(&made).unwrap().len(), 32);
    let again = common::cmd()
        .args(["keygen", made.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("never overwrites"));
}

#[test]
fn stream_from_stdin_to_stdout() {
    let group = "239.255.78.9:28110";
    let mut recv = common::cmd()
        .args([
            "recv", "-g", group, "-i", "lo", "--stdout", "--quiet", "--wait", "30",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drain the receiver's stdout concurrently: a consumer that stops reading stalls the
    // receiver (and, after --evict-after, gets it evicted).
    let mut rout = recv.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut rout, &mut v).unwrap();
        v
    });
    let data: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i * 7 + i / 1000) as u8)
        .collect();
    let (mut send, mut stdin) = spawn_stream_send(group, "1", &["--rate", "0", "--quiet"]);
    stdin.write_all(&data).unwrap();
    drop(stdin);
    assert!(send.wait().unwrap().success());
    let out = recv.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = reader.join().unwrap();
    assert_eq!(got.len(), data.len());
    assert!(got == data);
}

/// Warnings reach stderr (a tracing subscriber is installed): a receiver without a key that
/// sees sealed packets says to pass --key-file; a forged ANNOUNCE it refuses is named with -v.
#[test]
fn warnings_and_refusals_are_shown_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let group: std::net::SocketAddr = "239.255.78.71:28171".parse().unwrap();
    let recv = common::cmd()
        .args([
            "-v",
            "recv",
            "-g",
            "239.255.78.71:28171",
            "-i",
            "lo",
            "--wait",
            "2",
        ])
        .arg("--dir")
        .arg(dir.path().join("out"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let mut o = rmcast_net::socket::SocketOpts::new(group);
    o.interface = Some("lo".into());
    let s = rmcast_net::socket::unicast_socket(&o).unwrap();
    let bad = rmcast_net::endpoint::session_packet(
        9,
        7,
        rmcast_wire::session::Message::Announce {
            protocol: 99,
            phase: rmcast_wire::session::Phase::Gathering,
            security: 0,
            ack_delay_us: 0,
            window: 0,
            ack_timeout_us: 0,
            members: &[],
            params: &[],
        },
    )
    .unwrap();
    let keys = rmcast_net::secure::Keys::from_secret(&[5u8; 32], false).unwrap();
    let mut sealer = rmcast_net::secure::Sealer::new(keys, 1);
    let mut sealed = Vec::new();
    sealer.seal(&bad, &mut sealed);
    for _ in 0..5 {
        s.send_to(&bad, group).unwrap();
        s.send_to(&sealed, group).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = recv.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pass --key-file"), "{err}");
    assert!(
        err.contains("ANNOUNCE refused: unknown protocol family 99"),
        "{err}"
    );
}

/// Files below `dir` (recursively), with their sizes.
fn files_in(dir: &std::path::Path) -> Vec<(std::path::PathBuf, u64)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let m = e.metadata().unwrap();
        if m.is_dir() {
            out.extend(files_in(&e.path()));
        } else {
            out.push((e.path(), m.len()));
        }
    }
    out
}

fn interrupt(child: &std::process::Child) {
    let ok = Std::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// Ctrl-C mid-stream: a receiver stops with exit status 130 and removes its unfinished file;
/// the sender stops with 130 and tells the other receiver at once (it ends with status 1 and
/// no file, well before it would have noticed a silent sender).
#[test]
fn sigint_ends_receiver_and_sender_cleanly() {
    let group = "239.255.78.10:28130";
    let tmp = tempfile::tempdir().unwrap();
    let recv = |name: &str| {
        let dir = tmp.path().join(name);
        let child = spawn_recv(group, &dir, "30", &["--sender-timeout", "20"]);
        (dir, child)
    };
    let (dir_a, a) = recv("a");
    let (dir_b, b) = recv("b");
    let (send, mut stdin) = spawn_stream_send(
        group,
        "2",
        &["--name", "s.bin", "--rate", "0", "--json", "--quiet"],
    );
    // Half a stream: the pipe stays open, so neither receiver can finish.
    stdin.write_all(&vec![7u8; 1_000_000]).unwrap();
    stdin.flush().unwrap();
    let has_data = |d: &std::path::Path| files_in(d).iter().any(|(_, n)| *n > 0);
    let t0 = std::time::Instant::now();
    while !(has_data(&dir_a) && has_data(&dir_b)) {
        assert!(t0.elapsed().as_secs() < 30, "no receiver wrote anything");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    interrupt(&a);
    let ja = json_exit(a, 130);
    assert_eq!(ja["outcome"], "interrupted");
    assert_eq!(files_in(&dir_a), vec![], "the unfinished file is removed");

    interrupt(&send);
    let t1 = std::time::Instant::now();
    let js = json_exit(send, 130);
    assert_eq!(js["interrupted"], true);
    assert_eq!(js["all_completed"], false);
    let jb = json_exit(b, 1);
    // The END reached it: it did not wait for --sender-timeout (20 s).
    assert!(
        t1.elapsed().as_secs() < 10,
        "receiver b waited {:?}",
        t1.elapsed()
    );
    assert_eq!(jb["outcome"], "failed", "{jb}");
    assert_eq!(files_in(&dir_b), vec![], "the unfinished file is removed");
    drop(stdin);
}

/// A receiver admitted early stays a member while the sender waits for the last one to
/// join: the REPORTs it sends meanwhile are signs of life. (Stop 31's CI: with
/// `--evict-after 2`, a member admitted more than 2 s before the last JOIN was evicted by the
/// transfer's first silence check, before any of its REPORTs was read, and got nothing.)
#[test]
fn an_early_receiver_is_not_evicted_while_the_sender_waits_for_the_last() {
    let group = "239.255.79.41:28141";
    let tmp = tempfile::tempdir().unwrap();
    let data = common::pseudo_random(300_000, 41);
    let src = common::file_in(tmp.path(), "early.bin", &data);
    let early = spawn_recv(group, &tmp.path().join("early"), "60", &[]);
    let send = common::cmd()
        .args(["send", &src, "-g", group, "-i", "lo", "--receivers", "2"])
        .args(["--evict-after", "1", "--json", "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first receiver is admitted at once (the gathering ANNOUNCE lists it); the second
    // joins three times --evict-after later.
    std::thread::sleep(std::time::Duration::from_secs(3));
    let late = spawn_recv(group, &tmp.path().join("late"), "60", &[]);
    let s = json_exit(send, 0);
    assert_eq!(s["all_completed"], true, "{s}");
    for r in s["receivers"].as_array().unwrap() {
        assert_eq!(r["outcome"], "completed", "{s}");
    }
    for (name, c) in [("early", early), ("late", late)] {
        json_exit(c, 0);
        let got = std::fs::read(tmp.path().join(name).join("early.bin")).unwrap();
        assert!(got == data, "{name}: contents differ");
    }
}

/// `rmcast send --session ID` sets the session id in advance and says it before any receiver
/// joins, so `rmcast recv --session ID` can be started first for a new transfer; a tiny file
/// (whole before the receiver's first progress report) still counts its unkeyed receiver as
/// completed (admitted by a JOIN, seen at work: its reports moved), exit 0.
#[test]
fn send_session_sets_the_id_in_advance_for_recv_session() {
    let group = "239.255.78.91:28191";
    let run = common::transfer(
        group,
        1_000,
        &["--session", "0x1a2b3c4d"],
        &[vec!["--session", "1a2b3c4d"]],
    );
    assert_eq!(run.sender["session"], 0x1a2b_3c4d, "{}", run.sender);
    assert_eq!(run.receivers[0]["session"], 0x1a2b_3c4d);
    let r = &run.sender["receivers"][0];
    assert_eq!(r["outcome"], "completed", "{}", run.sender);
    assert_eq!(
        (&r["admitted"], &r["traffic"]),
        (&"join".into(), &true.into())
    );
    // Said at the start, before anyone joined (here nobody does).
    let dir = tempfile::tempdir().unwrap();
    let f = common::file_in(dir.path(), "f.bin", b"x");
    let args = ["send", &f, "-g", group, "-i", "lo", "-n", "1"];
    let out =
        common::rmcast(&[&args[..], &["--session", "0badcafe", "--join-wait", "0.3"]].concat());
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("session 0badcafe on 239.255.78.91:28191"),
        "{err}"
    );
    let out = common::rmcast(&[&args[..], &["--session", "0"]].concat());
    assert_eq!(out.status.code(), Some(2));
}

/// `norm` (issue 62) on loopback: a file to two receivers byte-exact, and the sender done on
/// their watermark ACKs (`norm` is acknowledged: every receiver completed).
#[test]
fn norm_moves_a_file_to_two_receivers_over_loopback() {
    let group = "239.255.78.62:23462";
    let run = common::transfer(group, 2_000_000, &["--protocol", "norm"], &[vec![], vec![]]);
    assert_eq!(run.sender["protocol"], "norm", "{}", run.sender);
    assert_eq!(run.sender["all_completed"], true, "{}", run.sender);
    for r in run.sender["receivers"].as_array().unwrap() {
        assert_eq!(r["outcome"], "completed", "{}", run.sender);
    }
}

/// `norm --rate auto` (NORM-CC, issue 62) on loopback: the sender paces at the receivers'
/// TCP-friendly rate and still moves the file to both, every receiver completed.
#[test]
fn norm_with_rate_auto_moves_a_file_to_two_receivers_over_loopback() {
    let group = "239.255.78.63:23463";
    let args = ["--protocol", "norm", "--rate", "auto"];
    let run = common::transfer(group, 2_000_000, &args, &[vec![], vec![]]);
    assert_eq!(run.sender["protocol"], "norm", "{}", run.sender);
    assert_eq!(run.sender["all_completed"], true, "{}", run.sender);
    for r in run.sender["receivers"].as_array().unwrap() {
        assert_eq!(r["outcome"], "completed", "{}", run.sender);
    }
}
