//! One module per subcommand. Each exposes `Args` (clap) and `run(Args) -> anyhow::Result<ExitCode>`.
pub mod protocols;
pub mod recv;
pub mod send;
pub mod repro;
