//! # rmcast-bench — the benchmark harnesses of `rmcast bench`
//!
//! Every `rmcast bench` subcommand's orchestration (what runs, how it is measured, the JSON
//! rows, tables and plots) is here; the binary keeps only the arguments and the output:
//! [`sim`] (the simulator's three figures), [`scale`] (seed 003's single-loss runs on
//! transit-stub graphs, each in a child process), [`xtp`] (seed 002's `metric` tool), [`cc`]
//! (a bottleneck beside TCP) and the network benchmark below.
//!
//! `rmcast bench net` measures `rmcast send`/`recv` on real sockets beside the raw ceiling (an
//! unreliable blast of datagrams to the same receivers, measured in the same run) and beside
//! uftp/uftpd and udp-sender/udp-receiver moving the same file. This crate holds the
//! harnesses; the binary keeps only the arguments and the output.
//!
//! Every endpoint is a separate process: [`run`] starts the `rmcast` binary it is given for
//! rmcast's endpoints and for the raw blast's roles ([`raw::child_args`], answered by
//! [`raw::recv`] and [`raw::send`] in the child). On loopback all processes share one host
//! ([`Topo::loopback`]); with a bridge ([`Topo::bridge`], root) every endpoint runs in its own
//! network namespace of a `rmcast_lab::netns::Segment`, and loss can be applied per Ethernet
//! frame on the bridge ([`Loss::Frame`]). Every received file is checked by BLAKE3 digest; a
//! run still going after [`NetBench::timeout`] is stopped and reported as not finished.
//!
//! `rmcast bench cc` ([`cc`]) measures rmcast's rate against a bottleneck on the bridge (a
//! policer on one receiver's port), alone and beside a competing TCP flow, as a time series.

#![warn(missing_docs)]

pub mod cc;
pub mod openpgm;
mod proc;
pub mod raw;
mod run;
pub mod scale;
pub mod sim;
mod spec;
mod tools;
mod topo;
pub mod xtp;

pub use proc::table;
pub use run::{default_protocols, run, socket_protocols};
pub use spec::{Loss, NetBench};
pub use tools::normfile;
pub use topo::Topo;

use std::io;

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The benchmark could not be set up or a step failed; the message says which.
    #[error("{0}")]
    Failed(String),
    /// An I/O error, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A socket could not be set up.
    #[error(transparent)]
    Net(#[from] rmcast_net::NetError),
}

impl BenchError {
    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(io::Error) -> BenchError {
        let context = context.into();
        move |source| BenchError::Io { context, source }
    }
}

/// The result of a benchmark step.
pub type Result<T> = std::result::Result<T, BenchError>;
