//! Emulators on [`Segment`]s: a segment's ports taken off its bridge ([`unbridge`]), and a
//! chain of emulated links between two hosts through IP-forwarding routers ([`Chain`]), on
//! which the emulator is measured (`examples/emu_measure.rs`, `tests/netns_emu.rs`).

use super::model::{Medium, MediumSpec};
use super::{Channel, EmuSpec, Emulator, Port};
use crate::netns::{Router, Segment};
use rmcast_net::NetError;
use rmcast_sim::loss::{LossModel, LossRule, LossSite, LossState};
use rmcast_sim::SimRng;
use std::net::Ipv4Addr;
use std::process::{Command, Stdio};

fn ip(args: &[&str]) -> Result<(), NetError> {
    let out = Command::new("ip")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| NetError::io("run `ip`", e))?;
    if !out.status.success() {
        return Err(NetError::setup(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// Take `ports` (interfaces in `seg`'s switch namespace) off the segment's bridge: frames
/// between them then cross only what forwards them (an [`Emulator`] on those ports).
pub fn unbridge(seg: &Segment, ports: &[&str]) -> Result<(), NetError> {
    let sw = seg.switch();
    for p in ports {
        ip(&["-n", &sw, "link", "set", p, "nomaster"])?;
    }
    Ok(())
}

/// A point-to-point emulator between `ends` of `seg` (taken off its bridge): `medium` each
/// way, `loss` (if any) on each direction with its own state, seeded by `seed` as the
/// simulator seeds a link rule (rule 0, direction `0` and `1` of link 0).
pub fn emulate_link(
    seg: &Segment,
    ends: [&str; 2],
    medium: &MediumSpec,
    loss: Option<&LossModel>,
    seed: u64,
) -> Result<Emulator, NetError> {
    unbridge(seg, &ends)?;
    let rule = loss.map(|m| {
        LossRule::new(
            LossSite::Link {
                link: 0,
                from: None,
            },
            m.clone(),
        )
    });
    let mut ports = Vec::new();
    let mut channels = Vec::new();
    for (d, end) in ends.iter().enumerate() {
        ports.push(Port {
            ifname: end.to_string(),
            channel: d,
            iface: 0,
            tx: None,
            rx: None,
        });
        channels.push(Channel {
            medium: Medium::new(medium.clone(), SimRng::new(seed, 0x454d_554a, 0, d as u64)),
            loss: rule
                .iter()
                .map(|r| LossState::new(r, 0, seed, 0, d as u64))
                .collect(),
        });
    }
    Emulator::start(EmuSpec {
        name: format!("link on {}", seg.switch()),
        netns: Some(seg.switch()),
        ports,
        channels,
    })
}

/// Two hosts `hops` emulated links apart (1 to 8): host A on the first link's segment, host B
/// on the last's, IP-forwarding routers between them with static routes.
#[derive(Debug)]
pub struct Chain {
    /// The emulators, link 0 (host A's) first; dropped before the namespaces.
    pub emulators: Vec<Emulator>,
    /// The routers between the links.
    pub routers: Vec<Router>,
    /// One segment per link.
    pub segments: Vec<Segment>,
}

impl Chain {
    /// Build it: every link `medium`, with `loss` on every link direction.
    pub fn create(
        hops: usize,
        medium: &MediumSpec,
        loss: Option<&LossModel>,
        seed: u64,
    ) -> Result<Chain, NetError> {
        if !(1..=8).contains(&hops) {
            return Err(NetError::setup(format!(
                "a chain of 1 to 8 links, not {hops}"
            )));
        }
        let mut segments = Vec::new();
        for k in 0..hops {
            let hosts = usize::from(k == 0) + usize::from(k + 1 == hops);
            segments.push(Segment::create(hosts)?);
        }
        let mut routers = Vec::new();
        for j in 0..hops - 1 {
            routers.push(Router::create(
                &[&segments[j], &segments[j + 1]],
                200 + j as u8,
            )?);
        }
        let mut c = Chain {
            emulators: Vec::new(),
            routers,
            segments,
        };
        c.route()?;
        for k in 0..hops {
            let seg = &c.segments[k];
            let left = match k {
                0 => seg.port(0),
                _ => c.router_port(k - 1, k)?,
            };
            let right = match k + 1 == hops {
                true => seg.port(seg.hosts() - 1),
                false => c.router_port(k, k)?,
            };
            let e = emulate_link(seg, [&left, &right], medium, loss, seed + k as u64)?;
            c.emulators.push(e);
        }
        Ok(c)
    }

    fn router_port(&self, r: usize, seg: usize) -> Result<String, NetError> {
        self.routers[r]
            .port_on(&self.segments[seg])
            .map(str::to_string)
            .ok_or_else(|| NetError::setup("a router without its port"))
    }

    /// Router `r`'s address on segment `k` (its octet is 200 + `r`).
    fn router_addr(&self, r: usize, k: usize) -> Ipv4Addr {
        let o = self.segments[k].addr(0).octets();
        Ipv4Addr::new(o[0], o[1], o[2], 200 + r as u8)
    }

    fn route(&self) -> Result<(), NetError> {
        let hops = self.segments.len();
        if hops == 1 {
            return Ok(());
        }
        let (a, b) = (self.a_addr(), self.b_addr());
        let (sa, sb) = (format!("{a}/32"), format!("{b}/32"));
        let (na, nb) = (self.a_ns(), self.b_ns());
        let first = self.router_addr(0, 0).to_string();
        ip(&["-n", &na, "route", "add", &sb, "via", &first])?;
        let last = self.router_addr(hops - 2, hops - 1).to_string();
        ip(&["-n", &nb, "route", "add", &sa, "via", &last])?;
        for (j, r) in self.routers.iter().enumerate() {
            let on = Command::new("ip")
                .args(["netns", "exec", r.name(), "sh", "-c"])
                .arg("echo 1 > /proc/sys/net/ipv4/ip_forward")
                .status();
            if !on.is_ok_and(|s| s.success()) {
                return Err(NetError::setup(
                    "could not turn IP forwarding on in a router",
                ));
            }
            // Router j sits on segments j and j + 1, router j - 1 on j, router j + 1 on j + 1.
            if j > 0 {
                let via = self.router_addr(j - 1, j).to_string();
                ip(&["-n", r.name(), "route", "add", &sa, "via", &via])?;
            }
            if j + 2 < hops {
                let via = self.router_addr(j + 1, j + 1).to_string();
                ip(&["-n", r.name(), "route", "add", &sb, "via", &via])?;
            }
        }
        Ok(())
    }

    /// Host A's namespace.
    pub fn a_ns(&self) -> String {
        self.segments[0].host(0)
    }

    /// Host B's namespace.
    pub fn b_ns(&self) -> String {
        let s = &self.segments[self.segments.len() - 1];
        s.host(s.hosts() - 1)
    }

    /// Host A's address.
    pub fn a_addr(&self) -> Ipv4Addr {
        self.segments[0].addr(0)
    }

    /// Host B's address.
    pub fn b_addr(&self) -> Ipv4Addr {
        let s = &self.segments[self.segments.len() - 1];
        s.addr(s.hosts() - 1)
    }
}
