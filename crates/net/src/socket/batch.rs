//! Many datagrams per system call: `sendmmsg(2)` with UDP segmentation offload on send,
//! `recvmmsg(2)` with UDP GRO splitting on receive.

use std::io;
use std::net::SocketAddr;

/// Most datagrams handed to one `sendmmsg` call.
pub const MAX_BATCH: usize = 64;

/// Send `(destination, datagram)` pairs in order with as few system calls as the platform
/// allows: one `sendmmsg(2)` per [`MAX_BATCH`] datagrams on Linux, one `send_to` each elsewhere.
/// Returns how many leading datagrams the kernel took (at least one), or the error of the first
/// one (`WouldBlock` when the send buffer is full). A short count means the rest were not sent.
pub fn send_many(sock: &mio::net::UdpSocket, msgs: &[(SocketAddr, &[u8])]) -> io::Result<usize> {
    match msgs {
        [] => Ok(0),
        [(to, buf)] => sock.send_to(buf, *to).map(|_| 1),
        _ => send_many_sys(sock, msgs),
    }
}

/// UDP generic segmentation offload (`UDP_SEGMENT`, Linux 4.18): consecutive datagrams of one
/// size to one destination go to the kernel as one buffer it splits into those datagrams (in
/// the NIC, or in software just before the device), so the stack is walked once per group
/// instead of once per datagram. A group holds at most this many datagrams (the kernel's
/// `UDP_MAX_SEGMENTS`) ...
#[cfg(target_os = "linux")]
const GSO_MAX_SEGMENTS: usize = 64;
/// ... and at most this many bytes (an IPv4 datagram's 65,535 less its IP and UDP headers).
#[cfg(target_os = "linux")]
const GSO_MAX_BYTES: usize = 65_507;

/// Set once a kernel or device refused a segmented send: from then on every datagram goes on
/// its own.
#[cfg(target_os = "linux")]
static GSO_REFUSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The GSO groups of `msgs`: `(first, count)` runs of datagrams to one destination, each but
/// the last of a run as long as the first, the last no longer, within the limits above.
#[cfg(target_os = "linux")]
pub(super) fn gso_groups(msgs: &[(SocketAddr, &[u8])], gso: bool) -> Vec<(usize, usize)> {
    let mut groups = Vec::with_capacity(msgs.len());
    let mut i = 0;
    while let Some((to, first)) = msgs.get(i) {
        let (seg, mut total, mut n) = (first.len(), first.len(), 1);
        while let Some((t, b)) = msgs.get(i + n) {
            let fits = gso
                && seg > 0
                && t == to
                && b.len() <= seg
                && n < GSO_MAX_SEGMENTS
                && total + b.len() <= GSO_MAX_BYTES;
            if !fits {
                break;
            }
            total += b.len();
            n += 1;
            if b.len() < seg {
                break;
            }
        }
        groups.push((i, n));
        i += n;
    }
    groups
}

#[cfg(target_os = "linux")]
fn send_many_sys(sock: &mio::net::UdpSocket, msgs: &[(SocketAddr, &[u8])]) -> io::Result<usize> {
    use std::sync::atomic::Ordering;
    let gso = !GSO_REFUSED.load(Ordering::Relaxed);
    match send_groups(sock, msgs, gso) {
        // EIO: the device cannot checksum a segmented send; EINVAL or EMSGSIZE: a segment
        // larger than the path's MTU allows (--allow-fragmentation), or a kernel without
        // UDP_SEGMENT.
        Err(e)
            if gso
                && matches!(
                    e.raw_os_error(),
                    Some(libc::EIO | libc::EINVAL | libc::EMSGSIZE)
                ) =>
        {
            GSO_REFUSED.store(true, Ordering::Relaxed);
            tracing::debug!(
                "segmented UDP sends refused ({e}): one datagram per message from now on"
            );
            send_groups(sock, msgs, false)
        }
        r => r,
    }
}

/// One `sendmmsg(2)`: a message per GSO group (one datagram each when `gso` is off). Returns
/// how many leading datagrams the kernel took.
#[cfg(target_os = "linux")]
pub(super) fn send_groups(
    sock: &mio::net::UdpSocket,
    msgs: &[(SocketAddr, &[u8])],
    gso: bool,
) -> io::Result<usize> {
    use std::os::fd::AsRawFd;
    let msgs = msgs.get(..MAX_BATCH).unwrap_or(msgs);
    let groups = gso_groups(msgs, gso);
    let addrs: Vec<socket2::SockAddr> = groups
        .iter()
        .filter_map(|&(i, _)| msgs.get(i))
        .map(|(a, _)| (*a).into())
        .collect();
    let mut iovs: Vec<libc::iovec> = msgs
        .iter()
        .map(|(_, b)| libc::iovec {
            iov_base: b.as_ptr() as *mut libc::c_void,
            iov_len: b.len(),
        })
        .collect();
    // One control buffer per group (u64s, so aligned for a cmsghdr): UDP_SEGMENT's u16.
    let mut ctrl: Vec<[u64; 4]> = vec![[0; 4]; groups.len()];
    // SAFETY: every mmsghdr is zero-initialised (a valid "no control data, no flags" header)
    // and then points at one address of `addrs`, at the run of iovecs of `iovs` its group
    // covers (in bounds: the groups partition `msgs`, and `iovs` has one iovec per message),
    // and, for a group of two or more, at its own control buffer of `ctrl`, 32 bytes, which
    // holds CMSG_SPACE(2) = 24 bytes: one cmsghdr and the u16 segment size written through
    // CMSG_FIRSTHDR/CMSG_DATA of that header. The iovecs point at the caller's datagrams. All
    // of these outlive the sendmmsg call, which only reads them (it writes `msg_len`, inside
    // `hdrs`). `hdrs.len()` <= MAX_BATCH fits in a c_uint.
    let sent = unsafe {
        let mut hdrs: Vec<libc::mmsghdr> = Vec::with_capacity(groups.len());
        for ((&(first, n), addr), c) in groups.iter().zip(&addrs).zip(ctrl.iter_mut()) {
            let mut h: libc::mmsghdr = std::mem::zeroed();
            h.msg_hdr.msg_name = addr.as_ptr() as *mut libc::c_void;
            h.msg_hdr.msg_namelen = addr.len();
            h.msg_hdr.msg_iov = iovs.as_mut_ptr().add(first);
            h.msg_hdr.msg_iovlen = n;
            if n > 1 {
                let seg = msgs.get(first).map_or(0, |(_, b)| b.len()) as u16;
                h.msg_hdr.msg_control = c.as_mut_ptr() as *mut libc::c_void;
                h.msg_hdr.msg_controllen = libc::CMSG_SPACE(2) as usize;
                let cm = libc::CMSG_FIRSTHDR(&h.msg_hdr);
                (*cm).cmsg_level = libc::SOL_UDP;
                (*cm).cmsg_type = libc::UDP_SEGMENT;
                (*cm).cmsg_len = libc::CMSG_LEN(2) as usize;
                std::ptr::write_unaligned(libc::CMSG_DATA(cm) as *mut u16, seg);
            }
            hdrs.push(h);
        }
        libc::sendmmsg(
            sock.as_raw_fd(),
            hdrs.as_mut_ptr(),
            hdrs.len() as libc::c_uint,
            0,
        )
    };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(groups.iter().take(sent as usize).map(|&(_, n)| n).sum())
}

#[cfg(not(target_os = "linux"))]
fn send_many_sys(sock: &mio::net::UdpSocket, msgs: &[(SocketAddr, &[u8])]) -> io::Result<usize> {
    let mut n = 0;
    for (to, buf) in msgs {
        match sock.send_to(buf, *to) {
            Ok(_) => n += 1,
            Err(e) if n == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(n)
}

/// Most datagrams one [`RecvBatch::next`] refill reads (one `recvmmsg(2)` on Linux).
pub const RECV_BATCH: usize = 32;

/// Largest datagram read (every UDP datagram fits).
const RECV_BUF: usize = 65_536;

/// Buffers for reading many datagrams per system call, allocated once: `recvmmsg(2)` on
/// Linux, one `recv_from` elsewhere. It also collects the socket's kernel drop counter
/// (`SO_RXQ_OVFL`: datagrams the kernel dropped because the receive buffer was full).
pub struct RecvBatch {
    bufs: Vec<u8>,
    lens: [usize; RECV_BATCH],
    from: [Option<SocketAddr>; RECV_BATCH],
    /// Per slot: the size of each datagram in a coalesced (GRO) buffer, 0 for one datagram.
    segs: [usize; RECV_BATCH],
    /// Where the next datagram of the current slot's coalesced buffer starts.
    sub: usize,
    #[cfg(target_os = "linux")]
    names: Vec<libc::sockaddr_storage>,
    /// Control messages, `u64`s so each buffer is aligned for a `cmsghdr`.
    #[cfg(target_os = "linux")]
    ctrl: Vec<[u64; 8]>,
    filled: usize,
    at: usize,
    drops: Option<u32>,
    /// Refills that read at least one datagram, and the datagrams they read.
    pub calls: u64,
    /// See `calls`.
    pub datagrams: u64,
    /// Of `datagrams`, those the kernel handed over coalesced (UDP GRO).
    pub coalesced: u64,
}

impl Default for RecvBatch {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for RecvBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecvBatch")
            .field("filled", &self.filled)
            .field("at", &self.at)
            .finish()
    }
}

impl RecvBatch {
    /// Buffers for a batch of datagrams.
    pub fn new() -> Self {
        RecvBatch {
            bufs: vec![0u8; RECV_BATCH * RECV_BUF],
            lens: [0; RECV_BATCH],
            from: [None; RECV_BATCH],
            segs: [0; RECV_BATCH],
            sub: 0,
            #[cfg(target_os = "linux")]
            // SAFETY: an all-zero sockaddr_storage is a valid (AF_UNSPEC) value.
            names: vec![unsafe { std::mem::zeroed() }; RECV_BATCH],
            #[cfg(target_os = "linux")]
            ctrl: vec![[0u64; 8]; RECV_BATCH],
            filled: 0,
            at: 0,
            drops: None,
            calls: 0,
            datagrams: 0,
            coalesced: 0,
        }
    }

    /// The next datagram waiting on `sock` (its bytes, writable for in-place opening, and
    /// its sender), reading a new batch when the last one is used up; `None` once the socket
    /// has none left (or an error other than "would block", which a datagram socket reports
    /// for one datagram and recovers from).
    pub fn next(&mut self, sock: &mio::net::UdpSocket) -> Option<(&mut [u8], SocketAddr)> {
        while self.at < self.filled && matches!(self.from.get(self.at), Some(None)) {
            self.at += 1;
            self.sub = 0;
        }
        if self.at >= self.filled {
            self.at = 0;
            self.sub = 0;
            self.filled = self.fill(sock);
            if self.filled == 0 {
                return None;
            }
            self.calls += 1;
            return self.next(sock);
        }
        let i = self.at;
        let from = (*self.from.get(i)?)?;
        let len = *self.lens.get(i)?;
        let seg = self.segs.get(i).copied().unwrap_or(0);
        let (start, end) = match seg {
            0 => (0, len),
            _ => (self.sub, (self.sub + seg).min(len)),
        };
        if end >= len {
            self.at += 1;
            self.sub = 0;
        } else {
            self.sub = end;
        }
        let buf = self
            .bufs
            .chunks_exact_mut(RECV_BUF)
            .nth(i)?
            .get_mut(start..end)?;
        Some((buf, from))
    }

    /// Forget datagrams read but not yet returned (before reading another socket).
    pub fn clear(&mut self) {
        self.filled = 0;
        self.at = 0;
        self.sub = 0;
    }

    /// The largest kernel drop counter seen since the last call (`SO_RXQ_OVFL`; cumulative
    /// per socket, so the caller keeps the largest per socket).
    pub fn take_drops(&mut self) -> Option<u32> {
        self.drops.take()
    }

    #[cfg(target_os = "linux")]
    fn fill(&mut self, sock: &mio::net::UdpSocket) -> usize {
        use std::os::fd::AsRawFd;
        // SAFETY: zeroed iovec and mmsghdr values are valid (null pointers, zero lengths).
        let mut iovs: [libc::iovec; RECV_BATCH] = unsafe { std::mem::zeroed() };
        let mut hdrs: [libc::mmsghdr; RECV_BATCH] = unsafe { std::mem::zeroed() };
        let slots = iovs
            .iter_mut()
            .zip(hdrs.iter_mut())
            .zip(self.names.iter_mut())
            .zip(self.ctrl.iter_mut())
            .zip(self.bufs.chunks_exact_mut(RECV_BUF));
        for ((((iov, hdr), name), ctrl), buf) in slots {
            *iov = libc::iovec {
                iov_base: buf.as_mut_ptr() as *mut libc::c_void,
                iov_len: buf.len(),
            };
            let h = &mut hdr.msg_hdr;
            h.msg_name = name as *mut libc::sockaddr_storage as *mut libc::c_void;
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_iov = iov;
            h.msg_iovlen = 1;
            h.msg_control = ctrl.as_mut_ptr() as *mut libc::c_void;
            h.msg_controllen = std::mem::size_of::<[u64; 8]>() as _;
        }
        // SAFETY: every header points at its own iovec (a distinct RECV_BUF slot of `bufs`),
        // sockaddr_storage and control buffer, all alive and unaliased across the call; the
        // kernel writes at most the lengths given. RECV_BATCH fits in a c_uint.
        let n = unsafe {
            libc::recvmmsg(
                sock.as_raw_fd(),
                hdrs.as_mut_ptr(),
                RECV_BATCH as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if n <= 0 {
            return 0;
        }
        let n = n as usize;
        let slots = hdrs
            .iter()
            .zip(self.lens.iter_mut())
            .zip(self.from.iter_mut())
            .zip(self.names.iter())
            .zip(self.segs.iter_mut());
        for ((((h, len), from), name), seg) in slots.take(n) {
            *len = (h.msg_len as usize).min(RECV_BUF);
            *seg = 0;
            // SAFETY: the kernel wrote a socket address of `msg_namelen` bytes into `name`.
            let addr = unsafe { socket2::SockAddr::new(*name, h.msg_hdr.msg_namelen) };
            *from = addr.as_socket();
            // SAFETY: msg_control/msg_controllen describe the control data the kernel wrote
            // into ctrl[i]; CMSG_FIRSTHDR/NXTHDR stay inside it and return null at its end.
            unsafe {
                let mut c = libc::CMSG_FIRSTHDR(&h.msg_hdr);
                while !c.is_null() {
                    if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SO_RXQ_OVFL {
                        let v = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const u32);
                        self.drops = Some(self.drops.map_or(v, |d| d.max(v)));
                    }
                    if (*c).cmsg_level == libc::SOL_UDP && (*c).cmsg_type == libc::UDP_GRO {
                        let v = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::c_int);
                        *seg = usize::try_from(v).unwrap_or(0);
                    }
                    c = libc::CMSG_NXTHDR(&h.msg_hdr, c);
                }
            }
        }
        for (&len, &seg) in self.lens.iter().zip(&self.segs).take(n) {
            match seg {
                s if s > 0 && len > s => {
                    let k = len.div_ceil(s) as u64;
                    self.datagrams += k;
                    self.coalesced += k;
                }
                _ => self.datagrams += 1,
            }
        }
        n
    }

    #[cfg(not(target_os = "linux"))]
    fn fill(&mut self, sock: &mio::net::UdpSocket) -> usize {
        let Some(buf) = self.bufs.get_mut(..RECV_BUF) else {
            return 0;
        };
        match sock.recv_from(buf) {
            Ok((n, from)) => match (self.lens.first_mut(), self.from.first_mut()) {
                (Some(l), Some(f)) => {
                    *l = n;
                    *f = Some(from);
                    self.datagrams += 1;
                    1
                }
                _ => 0,
            },
            Err(_) => 0,
        }
    }
}
