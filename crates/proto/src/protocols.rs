//! # The one table of protocols
//!
//! [`PROTOCOLS`] lists every protocol this build implements, once: its spec row
//! ([`crate::spec`]: name, seed, wire family, parameters, whether it runs on sockets) and how
//! its roles are laid out on a network ([`Deployer`]). The simulator's registry, the socket
//! driver's protocol list, `rmcast protocols` and `rmcast send`'s flags are built from it; a
//! new protocol adds one row here.

use crate::deploy::{laid_out, DeployError, Site};
use crate::spec::{self, ProtocolSpec};
use crate::tree::Variant;
use crate::{bap, ff, lms, pgm, prmp, rra, saw, srm, xtp};

/// How a protocol's roles are laid out.
#[derive(Clone, Copy)]
pub enum Deployer {
    /// On a [`crate::deploy::Layout`], through a driver's [`Site`]
    /// ([`laid_out`]`::<F>` for the family's [`crate::deploy::Deployable`] `F`).
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

/// One protocol: its spec row and its deployment. Dereferences to its [`ProtocolSpec`].
#[derive(Debug, Clone, Copy)]
pub struct ProtocolDef {
    /// Its spec row.
    pub spec: &'static ProtocolSpec,
    /// How its roles are laid out.
    pub deploy: Deployer,
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

const fn def(spec: &'static ProtocolSpec, deploy: Deployer) -> ProtocolDef {
    ProtocolDef { spec, deploy }
}

/// Every implemented protocol, in the order `rmcast protocols` lists them.
pub const PROTOCOLS: &[ProtocolDef] = &[
    def(&spec::SAW, Deployer::Layout(laid_out::<saw::Saw>)),
    def(&spec::BAP, Deployer::Layout(laid_out::<bap::Bap>)),
    def(&spec::RRA, Deployer::Layout(laid_out::<rra::Rra>)),
    def(&spec::DSP, Deployer::Regions(Variant::Dsp)),
    def(&spec::CSP, Deployer::Regions(Variant::Csp)),
    def(&spec::CP, Deployer::Regions(Variant::Cp)),
    def(&spec::PRMP, Deployer::Layout(laid_out::<prmp::Prmp>)),
    def(&spec::SRM, Deployer::Layout(laid_out::<srm::Srm>)),
    def(&spec::PGM, Deployer::Layout(laid_out::<pgm::Pgm>)),
    def(&spec::LMS, Deployer::Layout(laid_out::<lms::Lms>)),
    def(&spec::FF, Deployer::Layout(laid_out::<ff::Ff>)),
    def(&spec::XTP, Deployer::Layout(laid_out::<xtp::Xtp>)),
];

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
