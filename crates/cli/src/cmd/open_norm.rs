//! `rmcast send|recv --protocol norm --open`: plain RFC 5740 NORM to or from NRL's libnorm
//! or any NORM host, without rmcast's session layer ([`rmcast_net::open::norm_recv`]).

use super::open::{check_common, to_dir};
use super::send::{fail, Rate};
use super::{recv, send};
use anyhow::Result;
use rmcast_net::open::norm_recv::{self, NormRecv, NormRecvReport};
use rmcast_net::open::norm_send::{self, NormSend};
use rmcast_net::NetError;
use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::process::ExitCode;

/// libnorm's (normfile's) segment size.
const SEGMENT: u16 = 1_400;

/// NORM_DATA's header with fec_id 5's payload id (20) and EXT_FTI (16): what a datagram
/// holds besides its segment.
const DATA_HEADERS: usize = 36;

/// `rmcast recv --protocol norm --open`: the object goes to `OUT/norm-<SENDER>-<INSTANCE>`.
pub fn run_recv(a: &recv::Args) -> Result<ExitCode> {
    let Some(idle_exit) =
        rmcast_proto::duration_from_secs(a.sender_timeout).filter(|d| !d.is_zero())
    else {
        return Ok(fail(NetError::setup(
            "--sender-timeout must be a positive number",
        )));
    };
    let node_id = a.norm_node_id.unwrap_or_else(norm_recv::random_node_id);
    let cfg = NormRecv {
        sock: a.net.socket_opts(),
        node_id,
        idle_exit,
        wait: a.wait.and_then(rmcast_proto::duration_from_secs),
    };
    let (report, to_stderr) = match &a.dir {
        None => {
            let mut out = BufWriter::new(std::io::stdout().lock());
            (norm_recv::recv(&cfg, &mut out), true)
        }
        Some(dir) => (
            to_dir(
                dir,
                a.force,
                |out| norm_recv::recv(&cfg, out),
                |r: &NormRecvReport| format!("norm-{}-{}", r.sender, r.instance),
            ),
            false,
        ),
    };
    let r = match report {
        Ok(r) => r,
        Err(e) => return Ok(fail(e)),
    };
    let text = if a.net.json {
        serde_json::to_string_pretty(&r)?
    } else {
        format!(
            "open norm: node {node_id} from sender {} (instance {}), {} of {} bytes in {} \
             segments over {:.2} s, ended {:?}; {} parity received, {} sources rebuilt, {} \
             NACKs and ACKs\nopen mode cannot know: {}",
            r.sender,
            r.instance,
            r.bytes,
            r.object_size,
            r.segments,
            r.seconds,
            r.ending,
            r.parity_received,
            r.recovered,
            r.feedback_sent,
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
    if r.ending != norm_recv::NormEnding::Complete {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// `rmcast send --protocol norm --open`: one regular FILE as a NORM FILE object.
pub fn run_send(a: &send::Args) -> Result<ExitCode> {
    let cfg = match send_config(a) {
        Ok(c) => c,
        Err(e) => return Ok(fail(e)),
    };
    let path = &a.files[0];
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) => return Ok(fail(NetError::io(format!("open {}", path.display()), e))),
    };
    let size = match file.metadata() {
        Ok(m) if m.is_file() => m.len(),
        _ => {
            return Ok(fail(NetError::setup(format!(
                "--open --protocol norm sends a regular file (EXT_FTI names its size first): {}",
                path.display()
            ))))
        }
    };
    let r = match norm_send::send(&cfg, size, &mut BufReader::new(file)) {
        Ok(r) => r,
        Err(e) => return Ok(fail(e)),
    };
    if a.net.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else if !a.net.quiet {
        eprintln!(
            "open norm: node {} instance {}, {} bytes in {} segments over {:.2} s ({:.2} s in \
             all); {} NACKs, {} parity and {} sources sent again; acking nodes {:?} {}",
            r.node_id,
            r.instance,
            r.bytes,
            r.segments,
            r.data_seconds,
            r.seconds,
            r.nacks_received,
            r.parity_sent,
            r.sources_resent,
            r.acking_nodes,
            if r.acknowledged {
                "all acknowledged"
            } else {
                "not all acknowledged"
            }
        );
        if let Some(cc) = &r.cc {
            eprintln!(
                "NORM-CC: {:.1} Mbit/s at the end, limiting receiver {}{}",
                cc.rate_bps as f64 / 1e6,
                cc.clr.map_or("none".to_string(), |n| n.to_string()),
                if cc.slow_start {
                    ", still in slow start"
                } else {
                    ""
                }
            );
        }
        eprintln!("open mode cannot know: {}", r.unknown.join("; "));
    }
    if !r.acking_nodes.is_empty() && !r.acknowledged {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn send_config(a: &send::Args) -> Result<NormSend, NetError> {
    check_common(&a.protocol, &a.net)?;
    // --rate auto: NORM-CC, capped at --max-rate.
    let (rate_bps, cc) = match a.rate {
        Rate::Fixed(r) => (r, false),
        Rate::Auto => (a.max_rate, true),
    };
    if a.files.len() != 1 || a.files[0].as_os_str() == "-" {
        return Err(NetError::setup(
            "--open --protocol norm sends one regular file (a NORM FILE object)",
        ));
    }
    let segment = match a.datagram_size {
        None => SEGMENT,
        Some(size) => size
            .checked_sub(DATA_HEADERS)
            .and_then(|s| u16::try_from(s).ok())
            .filter(|s| *s > 0)
            .ok_or_else(|| NetError::setup(format!("--datagram-size {size} holds no NORM_DATA")))?,
    };
    Ok(NormSend {
        sock: a.net.socket_opts(),
        rate_bps,
        cc,
        segment,
        node_id: a.norm_node_id,
        acking_nodes: a.norm_acking_nodes.clone(),
    })
}
