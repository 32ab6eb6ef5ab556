//! Building `openpgm_peer.c` for the tests that run it (`crates/wire/tests/openpgm.rs`,
//! `crates/cli/tests/openpgm_open.rs`, which include this file with `#[path]`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Whether `cmd` runs and exits 0 (its output discarded).
pub fn ok(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// What the build lacks here, if anything: a C compiler, pkg-config or libpgm-dev.
pub fn missing_tools() -> Option<&'static str> {
    if !ok(Command::new("cc").arg("--version")) {
        return Some("no C compiler (`cc`)");
    }
    if !ok(Command::new("pkg-config").args(["--exists", "openpgm-5.3"])) {
        return Some("libpgm-dev (openpgm-5.3) is not installed");
    }
    None
}

/// `bench/pgm/openpgm_peer.c`, built into `dir` against libpgm 5.3 (`pkg-config
/// openpgm-5.3`); panics with the compiler's message if it does not build.
pub fn build(dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/pgm/openpgm_peer.c");
    let bin = dir.join("openpgm_peer");
    let flags = Command::new("pkg-config")
        .args(["--cflags", "--libs", "openpgm-5.3"])
        .output()
        .expect("pkg-config");
    let flags = String::from_utf8_lossy(&flags.stdout).into_owned();
    let out = Command::new("cc")
        .args(["-O2", "-Wall", "-o"])
        .arg(&bin)
        .arg(&src)
        .args(flags.split_whitespace())
        .output()
        .expect("cc runs");
    assert!(
        out.status.success(),
        "building {}: {}",
        src.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    bin
}
