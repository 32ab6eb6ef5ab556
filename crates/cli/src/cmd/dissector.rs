//! `rmcast dissector`: print the Wireshark dissector with its tables (families, kinds, every
//! field and every kind's layout) generated from the wire crate's declarations.

use anyhow::{Context, Result};
use std::process::ExitCode;

/// The dissector as committed; its generated block is rewritten before printing.
const LUA: &str = include_str!("../../../../tools/wireshark/rmcast.lua");

#[derive(clap::Args, Debug)]
#[command(
    about = "Print the Wireshark/tshark dissector (Lua), its fields and every kind's layout generated from the wire format",
    after_help = "Examples:\n  \
    rmcast dissector > rmcast.lua\n  \
    tshark -X lua_script:rmcast.lua -r capture.pcap -V\n  \
    rmcast dissector > tools/wireshark/rmcast.lua   # after changing a family, kind or field\n\n\
    Exit status: 0 printed; 2 the built-in dissector has no generated block (a build error)."
)]
pub struct Args {}

pub fn run(_: Args) -> Result<ExitCode> {
    let lua = rmcast_wire::dissector::regenerate(LUA)
        .context("the built-in dissector has no generated block")?;
    print!("{lua}");
    Ok(ExitCode::SUCCESS)
}
