//! Where the endpoints run: one host (loopback), or one network namespace per endpoint on a
//! Linux bridge — `rmcast_lab::netns::Segment`, whose bridge lives in a switch namespace of
//! its own so loss can be applied per Ethernet frame ([`Topo::frame_loss`]).

use crate::{BenchError, Result};
use rmcast_lab::netns::{self, Count, Policer, Segment};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Where endpoints run: host 0 is the sender, 1.. the receivers.
pub struct Topo {
    seg: Option<Segment>,
    /// The interface every endpoint uses.
    pub iface: String,
}

impl Topo {
    /// Every endpoint on this host, on `lo`.
    pub fn loopback() -> Self {
        Topo {
            seg: None,
            iface: "lo".into(),
        }
    }

    /// `hosts` network namespaces on a bridge (a [`Segment`]: root and iproute2 needed).
    /// Removed on drop.
    pub fn bridge(hosts: usize) -> Result<Self> {
        let seg = Segment::create(hosts).map_err(|e| {
            BenchError::Failed(format!(
                "--bridge: {e} (root and iproute2 are needed for --bridge)"
            ))
        })?;
        Ok(Topo {
            seg: Some(seg),
            iface: netns::IFACE.into(),
        })
    }

    /// Whether endpoints share one host.
    pub fn is_loopback(&self) -> bool {
        self.seg.is_none()
    }

    /// A command on host `h` (0 = sender, 1.. = receivers).
    pub fn cmd(&self, h: usize, prog: &Path) -> Command {
        match &self.seg {
            None => Command::new(prog),
            Some(seg) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", &seg.host(h)]).arg(prog);
                c
            }
        }
    }

    /// Drop each Ethernet frame the bridge forwards to a receiver with probability `p`
    /// (frames to the sender, host 0, pass); 0 removes the rule. Bridge only.
    pub fn frame_loss(&self, p: f64) -> Result<()> {
        match &self.seg {
            Some(seg) => Ok(seg.frame_loss(p, Some(0))?),
            None if p == 0.0 => Ok(()),
            None => Err(BenchError::Failed(
                "--frame-loss needs --bridge (loss per Ethernet frame is applied on the bridge)"
                    .into(),
            )),
        }
    }

    /// Frames dropped since the last [`Topo::frame_loss`] (None on loopback).
    pub fn frames_dropped(&self) -> Option<u64> {
        self.seg.as_ref().map(Segment::frames_dropped)
    }

    /// What the `--slow-port` queue counted so far (None without one).
    pub fn queue_stats(&self) -> Option<rmcast_lab::netns::QueueStats> {
        self.seg.as_ref().and_then(Segment::queue_stats)
    }

    /// The bridge segment a bottleneck is built on (`verb`: what the bottleneck does to a
    /// bridge port, for the error on loopback).
    fn bridge_segment(&self, verb: &str) -> Result<&Segment> {
        self.seg.as_ref().ok_or_else(|| {
            BenchError::Failed(format!(
                "a bottleneck needs the bridge (it {verb} a bridge port)"
            ))
        })
    }

    /// Make host `host`'s bridge port a bottleneck of `bits_per_s` counting `flows`
    /// ([`Segment::bottleneck`]). Bridge only.
    pub fn bottleneck(
        &self,
        host: usize,
        bits_per_s: u64,
        burst: Duration,
        flows: &[(&str, &str)],
    ) -> Result<Policer> {
        Ok(self
            .bridge_segment("polices")?
            .bottleneck(host, bits_per_s, burst, flows)?)
    }

    /// Host `host`'s port as a link of `bits_per_s` behind a drop-tail queue of `queue`
    /// ([`Segment::queue_bottleneck`]).
    pub fn queue_bottleneck(
        &self,
        host: usize,
        bits_per_s: u64,
        queue: Duration,
        flows: &[(&str, &str)],
    ) -> Result<Policer> {
        Ok(self
            .bridge_segment("shapes")?
            .queue_bottleneck(host, bits_per_s, queue, flows)?)
    }

    /// The bottleneck's counters by name ([`Segment::bottleneck_counts`]; empty on loopback).
    pub fn bottleneck_counts(&self) -> Result<BTreeMap<String, Count>> {
        match &self.seg {
            Some(seg) => Ok(seg.bottleneck_counts()?),
            None => Ok(BTreeMap::new()),
        }
    }

    /// Host `h`'s IPv4 address on the bridge (None on loopback).
    pub fn addr(&self, h: usize) -> Option<Ipv4Addr> {
        self.seg.as_ref().map(|s| s.addr(h))
    }

    /// The MTU of host `h`'s interface, from `ip -o link show` (None if it cannot be read).
    pub fn mtu(&self, h: usize) -> Option<usize> {
        let out = self
            .cmd(h, Path::new("ip"))
            .args(["-o", "link", "show", "dev", &self.iface])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let mut words = text.split_whitespace();
        words.find(|w| *w == "mtu")?;
        words.next()?.parse().ok()
    }
}
