//! `rmcast send|recv --protocol pgm --open`: plain RFC 3208 PGM to or from any PGM host
//! (OpenPGM, ZeroMQ's `epgm://`), without rmcast's session layer ([`rmcast_net::open`]).

use super::send::{fail, Rate};
use super::{recv, send};
use anyhow::Result;
use rmcast_net::open::{self, OpenRecv, OpenSend};
use rmcast_net::NetError;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::process::ExitCode;

/// Bytes the PGM header (16) and ODATA's fields (8) take of a datagram.
const PGM_ODATA: usize = 24;

/// The largest datagram by default: a 1500-byte frame less the IPv4 and UDP headers.
const FRAME_PAYLOAD: usize = 1472;

/// Refuse the session-layer options open mode cannot honour.
pub(super) fn check_common(protocol: &str, net: &send::NetOpts) -> Result<(), NetError> {
    if protocol != "pgm" && protocol != "norm" {
        return Err(NetError::setup(format!(
            "--open speaks plain RFC 3208 PGM or RFC 5740 NORM: give --protocol pgm or norm, \
             not {protocol}"
        )));
    }
    if net.key_file.is_some() {
        return Err(NetError::setup(
            "--open has no keys: RFC 3208 and RFC 5740 carry no authentication (drop --key-file)",
        ));
    }
    if net.drop_rate > 0.0 || net.drop_one_in.is_some() {
        return Err(NetError::setup(
            "--open does not inject loss: use frame loss on the network instead",
        ));
    }
    Ok(())
}

fn open_send_config(a: &send::Args) -> Result<OpenSend, NetError> {
    check_common(&a.protocol, &a.net)?;
    let rate_bps =
        match a.rate {
            Rate::Fixed(r) => r,
            Rate::Auto => return Err(NetError::setup(
                "--rate auto needs TFMCC, which RFC 3208 has no packet for: give a fixed --rate",
            )),
        };
    if a.files.len() != 1 {
        return Err(NetError::setup(
            "--open sends one file (or `-`): a PGM receiver sees one stream of APDUs, no names",
        ));
    }
    let size = a.datagram_size.unwrap_or(FRAME_PAYLOAD);
    let segment = size
        .checked_sub(PGM_ODATA)
        .filter(|s| *s > 0 && *s <= rmcast_proto::pgm::MAX_MESSAGE)
        .ok_or_else(|| NetError::setup(format!("--datagram-size {size} holds no ODATA")))?;
    let linger = rmcast_proto::duration_from_secs(a.final_wait)
        .ok_or_else(|| NetError::setup("--final-wait must be a non-negative number"))?;
    let txw = a.proto.int(&a.protocol, "txw")?;
    let (gsi, sport) = open::random_tsi();
    Ok(OpenSend {
        sock: a.net.socket_opts(),
        rate_bps,
        segment,
        linger,
        dport: a.pgm_dport,
        sport,
        gsi,
        txw,
    })
}

/// `rmcast send --open`.
pub fn run_send(a: &send::Args) -> Result<ExitCode> {
    if a.protocol == "norm" {
        return super::open_norm::run_send(a);
    }
    let cfg = match open_send_config(a) {
        Ok(c) => c,
        Err(e) => return Ok(fail(e)),
    };
    let path = &a.files[0];
    let mut input: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        match File::open(path) {
            Ok(f) => Box::new(BufReader::new(f)),
            Err(e) => return Ok(fail(NetError::io(format!("open {}", path.display()), e))),
        }
    };
    let r = match open::send(&cfg, &mut input) {
        Ok(r) => r,
        Err(e) => return Ok(fail(e)),
    };
    if a.net.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else if !a.net.quiet {
        eprintln!(
            "open pgm: TSI {}, {} bytes in {} ODATA over {:.2} s ({:.2} s with the linger); \
             {} NAKs, {} held off, {} RDATA",
            r.tsi,
            r.bytes,
            r.odata,
            r.data_seconds,
            r.seconds,
            r.naks_received,
            r.naks_held_off,
            r.rdata
        );
        eprintln!("open mode cannot know: {}", r.unknown.join("; "));
    }
    Ok(ExitCode::SUCCESS)
}

/// `rmcast recv --open`: the output file is `OUT/pgm-<TSI>` (the stream has no name), written
/// under a hidden temporary name first.
pub fn run_recv(a: &recv::Args) -> Result<ExitCode> {
    let protocol = a.protocol.as_deref().unwrap_or("pgm");
    if let Err(e) = check_common(protocol, &a.net) {
        return Ok(fail(e));
    }
    if protocol == "norm" {
        return super::open_norm::run_recv(a);
    }
    let Some(idle_exit) =
        rmcast_proto::duration_from_secs(a.sender_timeout).filter(|d| !d.is_zero())
    else {
        return Ok(fail(NetError::setup(
            "--sender-timeout must be a positive number",
        )));
    };
    let cfg = OpenRecv {
        sock: a.net.socket_opts(),
        dport: a.pgm_dport,
        idle_exit,
        wait: a.wait.and_then(rmcast_proto::duration_from_secs),
    };
    let (report, to_stderr) = match &a.dir {
        None => {
            let mut out = BufWriter::new(std::io::stdout().lock());
            (open::recv(&cfg, &mut out), true)
        }
        Some(dir) => (recv_to_dir(&cfg, dir, a.force), false),
    };
    let r = match report {
        Ok(r) => r,
        Err(e) => return Ok(fail(e)),
    };
    let text = if a.net.json {
        serde_json::to_string_pretty(&r)?
    } else {
        format!(
            "open pgm: TSI {}, {} bytes in {} TSDUs over {:.2} s, ended by {:?}; {} NAKs, {} \
             SPMRs, {} duplicates\nopen mode cannot know: {}",
            r.tsi,
            r.bytes,
            r.tsdus,
            r.seconds,
            r.ending,
            r.naks_sent,
            r.spmrs_sent,
            r.duplicates,
            r.unknown.join("; ")
        )
    };
    if a.net.json || !a.net.quiet {
        if to_stderr {
            eprintln!("{text}");
        } else {
            println!("{text}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn recv_to_dir(cfg: &OpenRecv, dir: &Path, force: bool) -> Result<open::OpenRecvReport, NetError> {
    to_dir(
        dir,
        force,
        |out| open::recv(cfg, out),
        |r| format!("pgm-{}", r.tsi),
    )
}

/// Receive with `recv` into a hidden temporary file of `dir`, then rename it to `name` of
/// the report (refused if it exists and not `force`; the data is then kept).
pub(super) fn to_dir<R>(
    dir: &Path,
    force: bool,
    recv: impl FnOnce(&mut dyn Write) -> Result<R, NetError>,
    name: impl FnOnce(&R) -> String,
) -> Result<R, NetError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| NetError::io(format!("create {}", dir.display()), e))?;
    let tmp = dir.join(format!(".open-{}.part", std::process::id()));
    let f = File::create(&tmp).map_err(|e| NetError::io(format!("create {}", tmp.display()), e))?;
    let mut out = BufWriter::new(f);
    let r = recv(&mut out);
    let r = r.and_then(|r| {
        out.flush()
            .map_err(|e| NetError::io("write the output", e))?;
        Ok(r)
    });
    let r = match r {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    let name = dir.join(name(&r));
    if name.exists() && !force {
        return Err(NetError::Failed(format!(
            "{} exists (kept the data in {}): give --force",
            name.display(),
            tmp.display()
        )));
    }
    std::fs::rename(&tmp, &name)
        .map_err(|e| NetError::io(format!("rename to {}", name.display()), e))?;
    Ok(r)
}
