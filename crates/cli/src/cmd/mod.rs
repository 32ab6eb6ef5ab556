//! One module per subcommand. Each exposes `Args` (clap) and
//! `run(Args) -> anyhow::Result<ExitCode>`.
pub mod bench;
pub mod bench_cc;
pub mod bench_net;
pub mod bench_scale;
pub mod bench_xtp;
pub mod dissector;
pub mod keygen;
pub mod merge;
pub mod open;
pub mod open_norm;
pub mod protocols;
pub mod recv;
pub mod relay;
pub mod repro;
pub mod send;
pub mod send_flags;
pub mod sim;
pub mod testbed;
