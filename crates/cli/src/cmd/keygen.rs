//! `rmcast keygen`: write a new random key for `--key-file`.

use super::send::fail;
use anyhow::Result;
use rmcast_net::secure;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
#[command(
    about = "Write a new random key for --key-file (32 bytes, readable by its owner only)",
    after_help = "Examples:\n  \
    rmcast keygen rmcast.key\n  \
    scp -p rmcast.key host2:   # every sender and receiver of a session needs the same key\n\n\
    The file is created with mode 0600 and never overwritten. Give it to every host of the\n\
    session over a channel you trust (scp, a secrets manager), never over the multicast group.\n\
    Exit status: 0 written; 2 the file exists or cannot be written."
)]
pub struct Args {
    /// Where to write the key (must not exist)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

pub fn run(a: Args) -> Result<ExitCode> {
    match secure::Keys::generate(&a.file) {
        Ok(()) => {
            eprintln!(
                "wrote a new key to {} (mode 0600): pass it to send and recv with --key-file",
                a.file.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(fail(e)),
    }
}
