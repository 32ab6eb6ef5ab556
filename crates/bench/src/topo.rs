//! Where the endpoints run: one host (loopback), or one network namespace per endpoint on a
//! Linux bridge.

use crate::{BenchError, Result};
use std::path::Path;
use std::process::Command;

/// Where endpoints run: host 0 is the sender, 1.. the receivers.
pub struct Topo {
    prefix: Option<String>,
    /// The interface every endpoint uses.
    pub iface: String,
}

impl Topo {
    /// Every endpoint on this host, on `lo`.
    pub fn loopback() -> Self {
        Topo {
            prefix: None,
            iface: "lo".into(),
        }
    }

    /// `hosts` network namespaces on a bridge, each with `eth0` at 10.78.0.(h+1)/24 and a
    /// multicast route (root and iproute2 needed). Removed on drop.
    pub fn bridge(hosts: usize) -> Result<Self> {
        let p = format!("rmb{}", std::process::id() % 100_000);
        let t = Topo {
            prefix: Some(p.clone()),
            iface: "eth0".into(),
        };
        let ip = |args: &[&str]| -> Result<()> {
            let st = Command::new("ip")
                .args(args)
                .status()
                .map_err(BenchError::io("run ip"))?;
            if !st.success() {
                return Err(BenchError::Failed(format!(
                    "`ip {}` failed (root and iproute2 are needed for --bridge)",
                    args.join(" ")
                )));
            }
            Ok(())
        };
        let br = format!("br{p}");
        ip(&["link", "add", &br, "type", "bridge"])?;
        let _ = Command::new("ip")
            .args(["link", "set", &br, "type", "bridge", "mcast_snooping", "0"])
            .status();
        ip(&["link", "set", &br, "up"])?;
        for h in 0..hosts {
            let ns = format!("{p}h{h}");
            let v = format!("v{p}h{h}");
            ip(&["netns", "add", &ns])?;
            ip(&[
                "link", "add", &v, "type", "veth", "peer", "name", "eth0", "netns", &ns,
            ])?;
            ip(&["link", "set", &v, "master", &br, "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
            ip(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("10.78.0.{}/24", h + 1),
                "dev",
                "eth0",
            ])?;
            ip(&["-n", &ns, "link", "set", "eth0", "up"])?;
            ip(&["-n", &ns, "route", "add", "224.0.0.0/4", "dev", "eth0"])?;
        }
        Ok(t)
    }

    /// Whether endpoints share one host.
    pub fn is_loopback(&self) -> bool {
        self.prefix.is_none()
    }

    /// A command on host `h` (0 = sender, 1.. = receivers).
    pub fn cmd(&self, h: usize, prog: &Path) -> Command {
        match &self.prefix {
            None => Command::new(prog),
            Some(p) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", &format!("{p}h{h}")]).arg(prog);
                c
            }
        }
    }
}

impl Drop for Topo {
    fn drop(&mut self) {
        if let Some(p) = &self.prefix {
            for h in 0..64 {
                let ns = format!("{p}h{h}");
                if !Path::new("/run/netns").join(&ns).exists() {
                    continue;
                }
                let _ = Command::new("ip").args(["netns", "del", &ns]).status();
            }
            let _ = Command::new("ip")
                .args(["link", "del", &format!("br{p}")])
                .status();
        }
    }
}
