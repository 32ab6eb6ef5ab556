//! An AF_PACKET socket bound to one interface: reads every frame that arrives on it (its
//! peer's sends, in promiscuous mode, not the frames it writes itself) and writes frames out
//! of it. Each frame carries a `virtio_net_hdr` ([`VNET_HDR`] bytes) in front, so a frame whose
//! UDP checksum the sender left to the "hardware" (a veth's checksum offload) keeps that state
//! across the forwarder instead of arriving with a wrong checksum.

#![allow(unsafe_code)]

use rmcast_net::NetError;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Bytes of the `virtio_net_hdr` in front of every frame read or written.
pub const VNET_HDR: usize = 10;

const ETH_P_ALL: u16 = 0x0003;
/// `PACKET_IGNORE_OUTGOING` (Linux 4.20): not in every libc crate version.
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// A packet socket on one interface.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
}

fn setopt(fd: RawFd, level: libc::c_int, opt: libc::c_int, v: &[u8]) -> io::Result<()> {
    // SAFETY: `v` is a valid buffer of the given length for the duration of the call.
    let r = unsafe { libc::setsockopt(fd, level, opt, v.as_ptr().cast(), v.len() as u32) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn one(v: libc::c_int) -> [u8; 4] {
    v.to_ne_bytes()
}

impl PacketSocket {
    /// A non-blocking socket on interface `name` of the calling thread's network namespace.
    pub fn open(name: &str) -> Result<PacketSocket, NetError> {
        let ctx = |what: &str| format!("packet socket on {name}: {what}");
        let cname = std::ffi::CString::new(name)
            .map_err(|_| NetError::setup(ctx("a name with a NUL byte")))?;
        // SAFETY: a valid NUL-terminated string.
        let index = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if index == 0 {
            return Err(NetError::io(
                ctx("no such interface"),
                io::Error::last_os_error(),
            ));
        }
        // Protocol 0: nothing is received until the bind below names the interface.
        // SAFETY: plain socket(2).
        let raw = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        };
        if raw < 0 {
            return Err(NetError::io(ctx("socket"), io::Error::last_os_error()));
        }
        // SAFETY: `raw` is a fresh descriptor owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let f = fd.as_raw_fd();
        let opt = |level, o, v: &[u8], what: &str| {
            setopt(f, level, o, v).map_err(|e| NetError::io(ctx(what), e))
        };
        opt(
            libc::SOL_PACKET,
            libc::PACKET_VNET_HDR,
            &one(1),
            "PACKET_VNET_HDR",
        )?;
        opt(
            libc::SOL_PACKET,
            PACKET_IGNORE_OUTGOING,
            &one(1),
            "PACKET_IGNORE_OUTGOING",
        )?;
        let buf = one(8 << 20);
        // Best effort: a bigger buffer than rmem_max needs CAP_NET_ADMIN (`...FORCE`).
        let _ = setopt(f, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &buf)
            .or_else(|_| setopt(f, libc::SOL_SOCKET, libc::SO_RCVBUF, &buf));
        let _ = setopt(f, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, &buf)
            .or_else(|_| setopt(f, libc::SOL_SOCKET, libc::SO_SNDBUF, &buf));
        // SAFETY: zeroed sockaddr_ll is a valid value; the fields set below are plain data.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ETH_P_ALL.to_be();
        sll.sll_ifindex = index as i32;
        // SAFETY: `sll` is a valid sockaddr_ll of the size given.
        let r = unsafe {
            libc::bind(
                f,
                (&sll as *const libc::sockaddr_ll).cast(),
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if r < 0 {
            return Err(NetError::io(ctx("bind"), io::Error::last_os_error()));
        }
        // SAFETY: zeroed packet_mreq is valid; promiscuous mode on this interface.
        let mut mr: libc::packet_mreq = unsafe { std::mem::zeroed() };
        mr.mr_ifindex = index as i32;
        mr.mr_type = libc::PACKET_MR_PROMISC as u16;
        // SAFETY: `mr` is plain data of its own size.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                (&mr as *const libc::packet_mreq).cast::<u8>(),
                std::mem::size_of::<libc::packet_mreq>(),
            )
        };
        opt(
            libc::SOL_PACKET,
            libc::PACKET_ADD_MEMBERSHIP,
            bytes,
            "promiscuous mode",
        )?;
        opt(
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            &one(1),
            "SO_TIMESTAMPNS",
        )?;
        Ok(PacketSocket { fd })
    }

    /// The next frame (with its `virtio_net_hdr`) into `buf`: its length and when the kernel
    /// took it in (`CLOCK_REALTIME`, ns; 0 if it did not say), or `None` when none is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<(usize, u64)>> {
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        let mut control = [0u64; 16];
        // SAFETY: zeroed msghdr is valid; its pointers are set to live buffers below.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: `msg` points at `iov` (into `buf`) and `control`, both live for the call.
        let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                _ => Err(e),
            };
        }
        let mut stamp = 0;
        // SAFETY: the CMSG_* walk stays within `msg.msg_controllen` bytes of `control`, as
        // the kernel filled them; the timestamp is read unaligned.
        unsafe {
            let mut cm = libc::CMSG_FIRSTHDR(&msg);
            while !cm.is_null() {
                if (*cm).cmsg_level == libc::SOL_SOCKET && (*cm).cmsg_type == libc::SCM_TIMESTAMPNS
                {
                    let ts: libc::timespec =
                        std::ptr::read_unaligned(libc::CMSG_DATA(cm).cast::<libc::timespec>());
                    stamp = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
                }
                cm = libc::CMSG_NXTHDR(&msg, cm);
            }
        }
        Ok(Some((n as usize, stamp)))
    }

    /// Write one frame (with its `virtio_net_hdr`) out of the interface; `false` when the
    /// kernel refused it (the peer's backlog full: the frame is lost, as on a wire).
    pub fn send(&self, frame: &[u8]) -> bool {
        // SAFETY: `frame` is valid for reads of its length.
        let n = unsafe {
            libc::send(
                self.fd.as_raw_fd(),
                frame.as_ptr().cast(),
                frame.len(),
                libc::MSG_DONTWAIT,
            )
        };
        n >= 0
    }

    /// Its descriptor, for `ppoll`.
    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Wait until one of `fds` is readable or `timeout_ns` has passed (`ppoll`, nanosecond
/// timeout); which are readable.
pub fn wait(fds: &[RawFd], timeout_ns: u64, ready: &mut Vec<usize>) -> io::Result<()> {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `pfds` and `ts` are valid for the call; no signal mask is changed.
    let r = unsafe {
        libc::ppoll(
            pfds.as_mut_ptr(),
            pfds.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    };
    ready.clear();
    if r < 0 {
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::Interrupted => Ok(()),
            _ => Err(e),
        };
    }
    ready.extend(
        pfds.iter()
            .enumerate()
            .filter(|(_, p)| p.revents != 0)
            .map(|(i, _)| i),
    );
    Ok(())
}

/// Ask for timer wake-ups of this thread to the nanosecond (`PR_SET_TIMERSLACK` 1; the
/// default slack is 50 us, a tenth of a 0.5 ms delay).
pub fn tight_timers() {
    // SAFETY: prctl with integer arguments only.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Make the calling thread a real-time one (`SCHED_FIFO`, priority `prio`), so that its
/// wake-ups at a frame's due time are not queued behind other processes' time slices on a
/// busy machine; `false` if the kernel refused (no CAP_SYS_NICE, or no real-time budget).
/// The kernel's real-time throttling (`sched_rt_runtime_us`) still leaves others 5 %.
pub fn realtime(prio: i32) -> bool {
    let p = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: `p` is valid for the call; pthread_self() is this thread.
    unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &p) == 0 }
}

/// `CLOCK_REALTIME` minus `CLOCK_MONOTONIC` now, ns: what turns a socket's timestamp into
/// the monotonic clock's time.
pub fn realtime_offset_ns() -> i128 {
    let read = |clock| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is valid for writes.
        unsafe { libc::clock_gettime(clock, &mut ts) };
        i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
    };
    let m0 = read(libc::CLOCK_MONOTONIC);
    let r = read(libc::CLOCK_REALTIME);
    let m1 = read(libc::CLOCK_MONOTONIC);
    r - (m0 + m1) / 2
}

/// CPU time the calling thread has used, ns.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is valid for writes.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if r < 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
