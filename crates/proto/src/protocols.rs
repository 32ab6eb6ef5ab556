//! # The one table of protocols
//!
//! [`PROTOCOLS`] lists every protocol this build implements, once, each a [`ProtocolDef`]
//! written in its own module's `spec.rs` (for example [`crate::saw::spec::SAW`]): its spec
//! row ([`crate::spec::ProtocolSpec`]: name, seed, wire family, parameters, whether it runs on
//! sockets), how its roles are laid out on a network ([`Deployer`]), and, through its wire
//! family, its sample messages ([`ProtocolDef::samples`]). The simulator's registry, the
//! socket driver's protocol list, `rmcast protocols` and `rmcast send`'s flags are built from
//! it; a new protocol adds its module and its row to the table in `lib.rs` (ARCHITECTURE.md,
//! "Where a new protocol goes").

use crate::deploy::{DeployError, Site};
use crate::spec::ProtocolSpec;
use crate::tree::Variant;
use rmcast_wire::samples::Sample;
use rmcast_wire::Message;

pub use crate::PROTOCOLS;

/// How a protocol's roles are laid out.
#[derive(Clone, Copy)]
pub enum Deployer {
    /// On a [`crate::deploy::Layout`], through a driver's [`Site`]
    /// ([`laid_out`](crate::deploy::laid_out)`::<F>` for the family's
    /// [`crate::deploy::Deployable`] `F`).
    Layout(fn(&mut dyn Site) -> Result<(), DeployError>),
    /// Seed 001's regions ([`crate::tree::deploy`]), which the driver derives from its
    /// topology (regions, round-trip delays, the source's rate) with this variant.
    Regions(Variant),
}

impl core::fmt::Debug for Deployer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Deployer::Layout(_) => f.write_str("Layout"),
            Deployer::Regions(v) => write!(f, "Regions({v:?})"),
        }
    }
}

/// One protocol: its spec row, its deployment and the module that defines it; its sample
/// messages come from its wire family. Dereferences to its [`ProtocolSpec`].
#[derive(Debug, Clone, Copy)]
pub struct ProtocolDef {
    /// Its spec row.
    pub spec: &'static ProtocolSpec,
    /// How its roles are laid out.
    pub deploy: Deployer,
    /// The module path of its definition, `module_path!()` where it is written
    /// (`rmcast_proto::saw::spec`): the protocol's module is its second segment.
    pub module: &'static str,
}

impl ProtocolDef {
    /// Sample messages of its wire family, one of every kind at least, each with the bytes it
    /// encodes to ([`rmcast_wire::samples`]).
    pub fn samples(&self) -> Vec<Sample<Message<'static>>> {
        self.family.samples()
    }

    /// The module of `rmcast_proto` that implements it (`saw`; `tree` for `dsp`).
    pub fn module_name(&self) -> &'static str {
        self.module.split("::").nth(1).unwrap_or_default()
    }
}

impl core::ops::Deref for ProtocolDef {
    type Target = ProtocolSpec;
    fn deref(&self) -> &ProtocolSpec {
        self.spec
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for ProtocolDef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.spec.serialize(s)
    }
}

/// The protocol called `name`.
pub fn lookup(name: &str) -> Option<&'static ProtocolDef> {
    PROTOCOLS.iter().find(|p| p.name == name)
}

/// The protocols that run on real sockets, in table order.
pub fn socket_protocols() -> impl Iterator<Item = &'static ProtocolDef> {
    PROTOCOLS.iter().filter(|p| p.sockets)
}

/// The protocols laid out on seed 001's regions ([`Deployer::Regions`]), in table order.
pub fn region_protocols() -> impl Iterator<Item = &'static ProtocolDef> {
    PROTOCOLS
        .iter()
        .filter(|p| matches!(p.deploy, Deployer::Regions(_)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcast_wire::{Packet, HEADER_LEN};

    /// Each protocol's samples are messages of its family that encode to their bytes and
    /// decode back, and they show every kind of the family.
    #[test]
    fn every_protocol_has_samples_of_its_family() {
        for p in PROTOCOLS {
            let samples = p.samples();
            let kinds: Vec<u8> = p.family.kinds().iter().map(|(k, _)| *k).collect();
            for kind in &kinds {
                assert!(
                    samples.iter().any(|s| {
                        let d = Packet::to_vec(s.env, &s.message).unwrap();
                        d.get(4) == Some(kind)
                    }),
                    "{}: no sample of kind {kind}",
                    p.name
                );
            }
            for s in &samples {
                assert_eq!(s.message.family(), p.family, "{}: {s:?}", p.name);
                let bytes = s.datagram().unwrap();
                assert!(bytes.len() >= HEADER_LEN);
                let decoded = Packet::decode(&bytes).unwrap();
                assert_eq!(decoded.header.family, p.family);
                assert_eq!(decoded.message, s.message, "{}", p.name);
            }
        }
    }

    /// Every row is defined in its protocol's own module (or that module's `spec`), named
    /// after its wire family.
    #[test]
    fn every_row_lives_in_its_own_module() {
        for p in PROTOCOLS {
            let m = p.module_name();
            assert!(
                [
                    format!("rmcast_proto::{m}"),
                    format!("rmcast_proto::{m}::spec")
                ]
                .contains(&p.module.to_string()),
                "{}: {}",
                p.name,
                p.module
            );
            assert_eq!(m, p.family.name(), "{}", p.name);
        }
    }
}
