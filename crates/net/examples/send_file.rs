//! Send a file from Rust over real UDP multicast on the loopback interface: one receiver
//! thread joins the group and writes verified files into a directory, the sender waits for
//! it, sends one 2 MB file with the default protocol (`pgm`) and reports per receiver. This
//! is what `rmcast send` and `rmcast recv` do, without the command line.
//!
//! ```sh
//! cargo run -p rmcast-net --example send_file
//! ```

use rmcast_net::receiver::{self, Output, RecvConfig};
use rmcast_net::sender::{self, Expect, NoObserver, SendConfig, Source};
use std::net::SocketAddr;
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // An administratively scoped group; `lo` keeps every datagram on this machine.
    let group: SocketAddr = "239.255.60.5:47960".parse()?;
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("hello.bin");
    std::fs::write(&file, sender::pseudo_random(2_000_000, 7))?;

    // The receiver: joins the group, writes each file under a temporary name and renames
    // it once its BLAKE3 digest matches the sender's announcement.
    let out = dir.path().join("incoming");
    let mut rx = RecvConfig::new(
        group,
        Output::Dir {
            path: out.clone(),
            force: false,
        },
    );
    rx.sock.interface = Some("lo".into());
    rx.wait = Some(Duration::from_secs(20)); // give up if no session starts by then
    let receiving = std::thread::spawn(move || receiver::receive(rx, &mut receiver::NoObserver));

    // The sender: waits for one receiver to join, then sends at the default pace.
    let mut tx = SendConfig::new(group);
    tx.sock.interface = Some("lo".into());
    tx.expect = Expect::Count(1);
    tx.join_wait = Duration::from_secs(20);
    let sent = sender::send(tx, Source::Files(vec![file.clone()]), &mut NoObserver)?;

    // Both sides report: the sender per receiver, the receiver per file.
    for r in &sent.receivers {
        println!("sender: receiver {} at {}: {}", r.node, r.addr, r.outcome);
    }
    let got = receiving
        .join()
        .map_err(|_| "the receiver thread panicked")??;
    for f in &got.files {
        println!(
            "receiver: {} ({} bytes) verified: {}",
            f.name, f.bytes, f.ok
        );
    }
    let same = std::fs::read(out.join("hello.bin"))? == std::fs::read(&file)?;
    println!(
        "{} bytes in {:.2} s, all completed: {}, copy identical: {same}",
        sent.bytes, sent.seconds, sent.all_completed
    );
    Ok(())
}

// `cargo test` runs this example too (`test = true` in Cargo.toml), so it cannot rot.
#[test]
fn runs() {
    main().unwrap();
}
