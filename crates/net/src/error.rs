//! Errors of the real-network driver. Every setup error is one line saying what is wrong and
//! what to do about it.

use std::io;
use std::net::SocketAddr;

/// Why a transfer could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// Bad usage or an environment problem found before or while setting up: the message says
    /// what is wrong and what to do. The command line exits with status 2.
    #[error("{0}")]
    Setup(String),
    /// The job ran but did not succeed (receivers missing, source failed). Exit status 1.
    #[error("{0}")]
    Failed(String),
    /// SIGINT or SIGTERM ended the job before it started its transfer (see
    /// [`crate::interrupt`]). The command line exits with status 130, as a shell does.
    #[error("{0}")]
    Interrupted(String),
    /// An I/O error while the transfer ran.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        #[source]
        /// The error it met.
        source: io::Error,
    },
}

impl NetError {
    /// A [`NetError::Setup`] saying `msg`.
    pub fn setup(msg: impl Into<String>) -> Self {
        NetError::Setup(msg.into())
    }
    /// A [`NetError::Io`] met while doing `context`.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        NetError::Io {
            context: context.into(),
            source,
        }
    }
}

/// Turn a socket error during `op` on `addr` into a one-line diagnosis with a remedy.
pub fn classify(op: &str, addr: SocketAddr, e: io::Error) -> NetError {
    let port = addr.port();
    let raw = e.raw_os_error();
    let msg = match (e.kind(), raw) {
        (io::ErrorKind::AddrInUse, _) => format!(
            "port {port} is already in use ({op} {addr}): stop the program holding it \
             (`ss -ulpn | grep :{port}`) or choose another port in --group"
        ),
        (io::ErrorKind::PermissionDenied, _) => format!(
            "permission denied ({op} {addr}): use a port of 1024 or above, or run with the \
             needed privileges; a firewall may also forbid it"
        ),
        (_, Some(libc::ENODEV)) | (_, Some(libc::EADDRNOTAVAIL)) => format!(
            "no usable interface for {addr} ({op}: {e}): pass --interface NAME|ADDR of an \
             up, multicast-capable interface, or add a multicast route \
             (`ip route add 224.0.0.0/4 dev IFACE`)"
        ),
        (_, Some(libc::ENETUNREACH)) | (_, Some(libc::EHOSTUNREACH)) => format!(
            "no route to {addr} ({op}): add a multicast route \
             (`ip route add 224.0.0.0/4 dev IFACE`, `ip -6 route add ff00::/8 dev IFACE`) \
             or pass --interface"
        ),
        _ => format!("{op} {addr} failed: {e}"),
    };
    NetError::Setup(msg)
}
