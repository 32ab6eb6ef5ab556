//! `rmcast send|recv --protocol norm --open`: plain RFC 5740 NORM to or from NRL's libnorm
//! or any NORM host, without rmcast's session layer ([`rmcast_net::open::norm_recv`]).

use super::open::to_dir;
use super::recv;
use super::send::fail;
use anyhow::Result;
use rmcast_net::open::norm_recv::{self, NormRecv, NormRecvReport};
use rmcast_net::NetError;
use std::io::BufWriter;
use std::process::ExitCode;

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
