//! Socket setup with socket2: group checks, interface choice, joins (ASM and SSM), TTL/hop
//! limit, loopback, buffer sizes, and binding that only receives the joined group.

use crate::error::{classify, NetError};
use socket2::{Domain, InterfaceIndexOrAddress, Protocol, Socket, Type};
use std::ffi::CString;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};

/// Start writing a file's dirty pages in `[offset, offset + len)` to disk without waiting
/// (`sync_file_range(2)` with `SYNC_FILE_RANGE_WRITE`; the one file-system call std does not
/// wrap, kept here with the crate's other system calls). The receiver calls it as a file
/// grows, so the `fsync` that commits the finished file waits only for the last pages instead
/// of the whole file (with the kernel's default thresholds nothing of a 100-MB file was
/// written before it: 0.33 s of a 3.4-s transfer). Best effort: an error only means the
/// commit's `fsync` does all the work.
#[cfg(target_os = "linux")]
pub fn start_writeback(file: &std::fs::File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (
        libc::off64_t::try_from(offset),
        libc::off64_t::try_from(len),
    ) else {
        return;
    };
    // SAFETY: the descriptor is open for the duration of the call (borrowed from `file`);
    // the call reads no memory of ours.
    let _ = unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
    };
}

/// Elsewhere: nothing (the commit's `fsync` writes the whole file).
#[cfg(not(target_os = "linux"))]
pub fn start_writeback(_file: &std::fs::File, _offset: u64, _len: u64) {}

/// Multicast socket options shared by senders and receivers.
#[derive(Debug, Clone)]
pub struct SocketOpts {
    /// The multicast group and port.
    pub group: SocketAddr,
    /// Interface name (`eth0`) or address.
    pub interface: Option<String>,
    /// IPv4 TTL / IPv6 hop limit of multicast datagrams.
    pub ttl: u32,
    /// Deliver our own multicast datagrams to listeners on this host.
    pub loopback: bool,
    /// Receive buffer size to ask the kernel for, bytes (`None`: the system's).
    pub recv_buffer: Option<usize>,
    /// Send buffer size to ask the kernel for, bytes (`None`: the system's).
    pub send_buffer: Option<usize>,
    /// Source-specific join (receivers): only accept the group's traffic from this source.
    pub source: Option<IpAddr>,
}

/// The receive buffer asked for by default, bytes. A receiver's buffer must hold what
/// arrives while it is not reading: 8 MiB overflowed in 4 of 9 ten-receiver cells of three
/// `rmcast bench net` runs on 2 cores (each drop a repair sent to every receiver), 32 MiB in
/// none (docs/performance.md, "The receive buffer"). Memory is taken only while datagrams
/// wait.
pub const RECV_BUFFER: usize = 32 << 20;

/// The send buffer asked for by default, bytes.
pub const SEND_BUFFER: usize = 8 << 20;

impl SocketOpts {
    /// Defaults for `group`: any interface, TTL 1, loopback on, [`RECV_BUFFER`] and
    /// [`SEND_BUFFER`].
    pub fn new(group: SocketAddr) -> Self {
        SocketOpts {
            group,
            interface: None,
            ttl: 1,
            loopback: true,
            recv_buffer: Some(RECV_BUFFER),
            send_buffer: Some(SEND_BUFFER),
            source: None,
        }
    }
}

/// A resolved interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Iface {
    /// Its index.
    pub index: u32,
    /// Its IPv4 address, if it has one.
    pub v4: Option<Ipv4Addr>,
}

/// Refuse a group address that is not multicast, with a suggestion.
pub fn check_group(group: SocketAddr) -> Result<(), NetError> {
    if !group.ip().is_multicast() {
        let hint = if group.is_ipv4() {
            "239.0.0.0/8 (administratively scoped), e.g. 239.1.2.3"
        } else {
            "ff00::/8, e.g. ff15::1234"
        };
        return Err(NetError::setup(format!(
            "{} is not a multicast address: choose a group in {hint}",
            group.ip()
        )));
    }
    if group.port() == 0 {
        return Err(NetError::setup(format!(
            "{group} has port 0: give the group a port, e.g. {}:5000",
            group.ip()
        )));
    }
    Ok(())
}

/// Every (interface name, index, address) pair of the host.
fn if_addrs() -> Vec<(String, u32, IpAddr)> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below with freeifaddrs; we only read
    // fields of entries while the list is alive and check every pointer for null.
    unsafe {
        if libc::getifaddrs(&mut head) != 0 {
            return out;
        }
        let mut cur = head;
        while !cur.is_null() {
            let ifa = &*cur;
            if !ifa.ifa_addr.is_null() && !ifa.ifa_name.is_null() {
                let name = std::ffi::CStr::from_ptr(ifa.ifa_name)
                    .to_string_lossy()
                    .into_owned();
                let index = libc::if_nametoindex(ifa.ifa_name);
                let family = i32::from((*ifa.ifa_addr).sa_family);
                if family == libc::AF_INET {
                    let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                    out.push((name, index, IpAddr::V4(ip)));
                } else if family == libc::AF_INET6 {
                    let sin6 = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    out.push((
                        name,
                        index,
                        IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)),
                    ));
                }
            }
            cur = ifa.ifa_next;
        }
        libc::freeifaddrs(head);
    }
    out
}

/// Resolve `--interface NAME|ADDR`.
pub fn resolve_interface(spec: &str) -> Result<Iface, NetError> {
    let addrs = if_addrs();
    if let Ok(ip) = spec.parse::<IpAddr>() {
        return addrs
            .iter()
            .find(|(_, _, a)| *a == ip)
            .map(|(_, index, _)| Iface {
                index: *index,
                v4: match ip {
                    IpAddr::V4(v4) => Some(v4),
                    IpAddr::V6(_) => None,
                },
            })
            .ok_or_else(|| {
                NetError::setup(format!(
                    "no interface has the address {ip}: pass --interface with an address \
                     or name shown by `ip addr`"
                ))
            });
    }
    let c = CString::new(spec).map_err(|_| NetError::setup("interface name contains NUL"))?;
    // SAFETY: `c` is a valid NUL-terminated string for the duration of the call.
    let index = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if index == 0 {
        return Err(NetError::setup(format!(
            "no interface named {spec:?}: pass --interface with a name shown by `ip link`"
        )));
    }
    let v4 = addrs.iter().find_map(|(n, _, a)| match a {
        IpAddr::V4(v4) if n == spec => Some(*v4),
        _ => None,
    });
    Ok(Iface { index, v4 })
}

/// The link a group's datagrams use, as far as their size is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// Interface name (`eth0`); empty when the link could not be found.
    pub name: String,
    /// The interface's MTU: the largest IP packet one frame carries.
    pub mtu: u32,
    /// An Ethernet link (`ARPHRD_ETHER`: NICs, veth, bridges, VLANs, bonds). Its MTU is the
    /// frame size on the wire, jumbo frames included. Other links (loopback with its 65,536,
    /// tunnels) say nothing about the Ethernet segments behind them.
    pub ethernet: bool,
}

/// The MTU of standard Ethernet.
pub const ETHERNET_MTU: u32 = 1500;
/// IPv4 and IPv6 header sizes without options or extension headers, and UDP's.
const IPV4_HEADER: usize = 20;
const IPV6_HEADER: usize = 40;
const UDP_HEADER: usize = 8;

impl Link {
    /// What is assumed when the link cannot be found: standard Ethernet.
    pub fn assumed() -> Link {
        Link {
            name: String::new(),
            mtu: ETHERNET_MTU,
            ethernet: true,
        }
    }

    /// The largest UDP payload one frame of this link carries (no IP fragmentation).
    pub fn max_payload(&self, v6: bool) -> usize {
        payload_of(self.mtu as usize, v6)
    }

    /// The default datagram size: one frame's UDP payload on an Ethernet link (jumbo frames
    /// included), and on any other link (loopback, tunnels) at most standard Ethernet's, so a
    /// transfer tried on loopback behaves as it will on a LAN.
    pub fn default_payload(&self, v6: bool) -> usize {
        let mtu = if self.ethernet {
            self.mtu
        } else {
            self.mtu.min(ETHERNET_MTU)
        };
        payload_of(mtu as usize, v6)
    }
}

fn payload_of(mtu: usize, v6: bool) -> usize {
    let ip = if v6 { IPV6_HEADER } else { IPV4_HEADER };
    mtu.saturating_sub(ip + UDP_HEADER)
        .min(rmcast_wire::MAX_DATAGRAM)
}

/// The link of `name` from `/sys/class/net` (Linux); `None` where that cannot be read.
fn link_named(name: &str) -> Option<Link> {
    let read = |what: &str| -> Option<u32> {
        std::fs::read_to_string(format!("/sys/class/net/{name}/{what}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    Some(Link {
        name: name.to_string(),
        mtu: read("mtu")?,
        // ARPHRD_ETHER = 1 (if_arp.h).
        ethernet: read("type")? == 1,
    })
}

/// The interface whose address is `ip`.
fn name_of_addr(ip: IpAddr) -> Option<String> {
    if_addrs()
        .into_iter()
        .find(|(_, _, a)| *a == ip)
        .map(|(n, _, _)| n)
}

/// The link the group's datagrams use: `--interface` when given, else the one the routing
/// table picks for the group (a UDP socket connected to it tells its source address). `None`
/// when neither can be found (no route yet; `/sys` unreadable).
pub fn group_link(o: &SocketOpts) -> Option<Link> {
    let name = match &o.interface {
        Some(spec) => match spec.parse::<IpAddr>() {
            Ok(ip) => name_of_addr(ip)?,
            Err(_) => spec.clone(),
        },
        None => {
            let bind: SocketAddr = if o.group.is_ipv6() {
                SocketAddrV6::new(Ipv6Addr::UNSPECIFIED, 0, 0, 0).into()
            } else {
                SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0).into()
            };
            let s = UdpSocket::bind(bind).ok()?;
            s.connect(o.group).ok()?;
            name_of_addr(s.local_addr().ok()?.ip())?
        }
    };
    link_named(&name)
}

/// The datagram size to use on `link` for a group of family `v6`: `requested`
/// (`--datagram-size`) or the link's default. A requested size above what one frame carries
/// is refused unless `allow_fragmentation`: the IP layer would split every datagram into
/// fragments, and one lost frame loses the whole datagram.
pub fn datagram_size(
    link: &Link,
    v6: bool,
    requested: Option<usize>,
    allow_fragmentation: bool,
) -> Result<usize, NetError> {
    let max = link.max_payload(v6);
    match requested {
        None => Ok(link.default_payload(v6)),
        Some(n) if n <= max || allow_fragmentation => Ok(n),
        Some(n) => {
            // A fragment carries a multiple of 8 bytes (IPv6 adds an 8-byte fragment header).
            let ip = if v6 { IPV6_HEADER + 8 } else { IPV4_HEADER };
            let per = ((link.mtu as usize).saturating_sub(ip) / 8 * 8).max(8);
            let frames = (n + UDP_HEADER).div_ceil(per);
            Err(NetError::setup(format!(
                "--datagram-size {n} does not fit one frame of {} (MTU {}: at most {max} bytes \
                 of UDP payload); the IP layer would split each datagram into about {frames} \
                 fragments and one lost frame loses it: use {max} or less, or pass \
                 --allow-fragmentation",
                if link.name.is_empty() {
                    "the link"
                } else {
                    &link.name
                },
                link.mtu
            )))
        }
    }
}

pub(crate) fn new_socket(v6: bool) -> Result<Socket, NetError> {
    let domain = if v6 { Domain::IPV6 } else { Domain::IPV4 };
    Socket::new(domain, Type::DGRAM, Some(Protocol::UDP))
        .map_err(|e| NetError::setup(format!("cannot create a UDP socket: {e}")))
}

pub(crate) fn buffers(s: &Socket, o: &SocketOpts) {
    // SO_RCVBUF and SO_SNDBUF are capped at net.core.{r,w}mem_max (often 208 KiB, a few
    // milliseconds of a gigabit burst); as root the *FORCE variants are not. Best effort.
    if let Some(n) = o.recv_buffer {
        if !force_buffer(s, Force::Recv, n) {
            let _ = s.set_recv_buffer_size(n);
        }
    }
    if let Some(n) = o.send_buffer {
        if !force_buffer(s, Force::Send, n) {
            let _ = s.set_send_buffer_size(n);
        }
    }
    let got = s.recv_buffer_size().unwrap_or(0);
    tracing::debug!(
        recv = got,
        send = s.send_buffer_size().unwrap_or(0),
        "socket buffers"
    );
    if let Some(why) = o.recv_buffer.and_then(|n| short_buffer(n, got)) {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| tracing::warn!("{why}"));
    }
    count_drops(s);
}

/// What to tell a user whose receive buffer the kernel granted below the `asked` bytes
/// (`reported`: what `SO_RCVBUF` reads back, which on Linux is twice the size granted), if
/// it did.
fn short_buffer(asked: usize, reported: usize) -> Option<String> {
    let granted = if cfg!(target_os = "linux") {
        reported / 2
    } else {
        reported
    };
    (granted < asked).then(|| {
        format!(
            "the socket receive buffer is {granted} bytes, not the {asked} asked for \
             (send/recv --rcvbuf): net.core.rmem_max caps it without root (CAP_NET_ADMIN). \
             Datagrams that arrive while this process is busy wait there; beyond it the \
             kernel drops them, and each one costs a repair. Raise the cap (sysctl -w \
             net.core.rmem_max={asked}) or run as root"
        )
    })
}

#[derive(Clone, Copy)]
enum Force {
    Recv,
    Send,
}

/// `SO_RCVBUFFORCE`/`SO_SNDBUFFORCE` (Linux, needs CAP_NET_ADMIN); whether it took.
#[cfg(target_os = "linux")]
fn force_buffer(s: &Socket, which: Force, n: usize) -> bool {
    let opt = match which {
        Force::Recv => libc::SO_RCVBUFFORCE,
        Force::Send => libc::SO_SNDBUFFORCE,
    };
    set_int(
        s,
        libc::SOL_SOCKET,
        opt,
        i32::try_from(n).unwrap_or(i32::MAX),
    )
}

#[cfg(not(target_os = "linux"))]
fn force_buffer(_: &Socket, _: Force, _: usize) -> bool {
    false
}

/// Ask for the socket's kernel drop counter on every datagram (`SO_RXQ_OVFL`, Linux).
#[cfg(target_os = "linux")]
fn count_drops(s: &Socket) {
    let _ = set_int(s, libc::SOL_SOCKET, libc::SO_RXQ_OVFL, 1);
}

#[cfg(not(target_os = "linux"))]
fn count_drops(_: &Socket) {}

/// Let the kernel hand over runs of datagrams of one sender as one buffer where it coalesced
/// them (`UDP_GRO`, Linux 5.0; a segmented send that reached this socket whole, or the NIC's
/// or veth's GRO). Only for a socket read through [`RecvBatch`], which splits them again; a
/// plain `recv_from` would get the run as one datagram. Refused by older kernels: then each
/// datagram comes on its own, as before.
#[cfg(target_os = "linux")]
pub fn coalesce_reads(sock: &impl std::os::fd::AsFd) {
    let _ = set_int(
        &socket2::SockRef::from(sock),
        libc::SOL_UDP,
        libc::UDP_GRO,
        1,
    );
}

/// See the Linux version: elsewhere datagrams always come one by one.
#[cfg(not(target_os = "linux"))]
pub fn coalesce_reads<S>(_: &S) {}

#[cfg(target_os = "linux")]
fn set_int(s: &Socket, level: libc::c_int, opt: libc::c_int, v: i32) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: `v` lives across the call and the length passed is its size; setsockopt only
    // reads it.
    unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            level,
            opt,
            &v as *const i32 as *const libc::c_void,
            std::mem::size_of::<i32>() as libc::socklen_t,
        ) == 0
    }
}

/// Join the IPv4 `group` on `iface` (`None`: the kernel's choice), any source, and receive
/// only the groups joined on this socket.
pub(crate) fn join_v4(s: &Socket, group: &Ipv4Addr, iface: Option<Iface>) -> io::Result<()> {
    let ifc = match iface {
        Some(i) => InterfaceIndexOrAddress::Index(i.index),
        None => InterfaceIndexOrAddress::Address(Ipv4Addr::UNSPECIFIED),
    };
    s.join_multicast_v4_n(group, &ifc)?;
    let _ = s.set_multicast_all_v4(false);
    Ok(())
}

pub(crate) fn iface_of(o: &SocketOpts) -> Result<Option<Iface>, NetError> {
    match &o.interface {
        Some(spec) => {
            let i = resolve_interface(spec)?;
            if o.group.is_ipv4() && i.v4.is_none() {
                return Err(NetError::setup(format!(
                    "interface {spec} has no IPv4 address: give it one or choose another \
                     --interface for an IPv4 group"
                )));
            }
            Ok(Some(i))
        }
        None => Ok(None),
    }
}

/// The socket a sender multicasts from and receives feedback on, or a receiver sends feedback
/// from: bound to an ephemeral port, multicast interface, TTL and loopback set.
pub fn unicast_socket(o: &SocketOpts) -> Result<UdpSocket, NetError> {
    let v6 = o.group.is_ipv6();
    let s = new_socket(v6)?;
    let iface = iface_of(o)?;
    let bind: SocketAddr = if v6 {
        SocketAddrV6::new(Ipv6Addr::UNSPECIFIED, 0, 0, 0).into()
    } else {
        SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0).into()
    };
    let e = |op: &str, err| classify(op, o.group, err);
    if v6 {
        s.set_multicast_hops_v6(o.ttl)
            .map_err(|x| e("set hop limit", x))?;
        s.set_multicast_loop_v6(o.loopback)
            .map_err(|x| e("set loopback", x))?;
        if let Some(i) = iface {
            s.set_multicast_if_v6(i.index)
                .map_err(|x| e("choose interface", x))?;
        }
    } else {
        s.set_multicast_ttl_v4(o.ttl).map_err(|x| e("set TTL", x))?;
        s.set_multicast_loop_v4(o.loopback)
            .map_err(|x| e("set loopback", x))?;
        if let Some(Iface { v4: Some(a), .. }) = iface {
            s.set_multicast_if_v4(&a)
                .map_err(|x| e("choose interface", x))?;
        }
    }
    buffers(&s, o);
    s.bind(&bind.into())
        .map_err(|x| classify("bind", bind, x))?;
    s.set_nonblocking(true)
        .map_err(|x| NetError::io("set non-blocking", x))?;
    Ok(s.into())
}

/// The receiver's group socket: bound to the group address itself (on Linux this receives
/// only datagrams sent to that group and port, not other groups' traffic on the same port),
/// address reuse on so several receivers can share a host, joined (source-specific when
/// `source` is set).
pub fn group_socket(o: &SocketOpts) -> Result<UdpSocket, NetError> {
    let v6 = o.group.is_ipv6();
    let s = new_socket(v6)?;
    let iface = iface_of(o)?;
    let g = o.group;
    let e = |op: &str, err| classify(op, g, err);
    s.set_reuse_address(true)
        .map_err(|x| e("set SO_REUSEADDR", x))?;
    if v6 {
        let _ = s.set_only_v6(true);
    }
    buffers(&s, o);
    let bind: SocketAddr = if cfg!(target_os = "linux") {
        match g {
            // Binding a multicast address of interface- or link-local scope needs the scope.
            SocketAddr::V6(a) if a.scope_id() == 0 => {
                SocketAddrV6::new(*a.ip(), a.port(), 0, iface.map_or(0, |i| i.index)).into()
            }
            other => other,
        }
    } else if v6 {
        SocketAddrV6::new(Ipv6Addr::UNSPECIFIED, g.port(), 0, 0).into()
    } else {
        SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, g.port()).into()
    };
    s.bind(&bind.into())
        .map_err(|x| classify("bind", bind, x))?;
    match (g.ip(), o.source) {
        (IpAddr::V4(group), None) => join_v4(&s, &group, iface).map_err(|x| e("join", x))?,
        (IpAddr::V4(group), Some(IpAddr::V4(src))) => {
            let local = iface.and_then(|i| i.v4).unwrap_or(Ipv4Addr::UNSPECIFIED);
            s.join_ssm_v4(&src, &group, &local)
                .map_err(|x| e("source-specific join", x))?;
            let _ = s.set_multicast_all_v4(false);
        }
        (IpAddr::V6(group), None) => {
            s.join_multicast_v6(&group, iface.map_or(0, |i| i.index))
                .map_err(|x| e("join", x))?;
            let _ = s.set_multicast_all_v6(false);
        }
        (IpAddr::V6(group), Some(IpAddr::V6(src))) => {
            join_ssm_v6(&s, &group, &src, iface.map_or(0, |i| i.index))
                .map_err(|x| e("source-specific join", x))?;
            let _ = s.set_multicast_all_v6(false);
        }
        (IpAddr::V6(_), Some(IpAddr::V4(_))) => {
            return Err(NetError::setup(
                "--source is IPv4 but the group is IPv6: give an IPv6 source address",
            ))
        }
        (IpAddr::V4(_), Some(IpAddr::V6(_))) => {
            return Err(NetError::setup(
                "--source is IPv6 but the group is IPv4: give an IPv4 source address",
            ))
        }
    }
    s.set_nonblocking(true)
        .map_err(|x| NetError::io("set non-blocking", x))?;
    Ok(s.into())
}

/// IPv6 source-specific join (RFC 3678 `MCAST_JOIN_SOURCE_GROUP`) of `group` from `source` on
/// interface `ifindex` (0: the kernel chooses). socket2 offers this for IPv4 only.
#[cfg(target_os = "linux")]
fn join_ssm_v6(s: &Socket, group: &Ipv6Addr, source: &Ipv6Addr, ifindex: u32) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let sa = |ip: &Ipv6Addr| socket2::SockAddr::from(SocketAddrV6::new(*ip, 0, 0, 0)).as_storage();
    let req = libc::group_source_req {
        gsr_interface: ifindex,
        gsr_group: sa(group),
        gsr_source: sa(source),
    };
    // SAFETY: `req` is a fully initialised group_source_req that lives across the call, and
    // the length passed is its size; setsockopt only reads it.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_IPV6,
            libc::MCAST_JOIN_SOURCE_GROUP,
            &req as *const libc::group_source_req as *const libc::c_void,
            std::mem::size_of::<libc::group_source_req>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn join_ssm_v6(_: &Socket, _: &Ipv6Addr, _: &Ipv6Addr, _: u32) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "IPv6 source-specific joins are built for Linux only: drop --source",
    ))
}

/// Wait until `sock` is readable or `d` has passed, with the high-resolution timer of
/// `ppoll(2)` (a socket's read timeout is rounded up to the kernel's tick, 4 ms at 250 Hz:
/// too coarse to pace packets sub-millisecond apart).
pub fn wait_readable(sock: &UdpSocket, d: std::time::Duration) {
    use std::os::fd::AsRawFd;
    let mut fd = libc::pollfd {
        fd: sock.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: libc::time_t::try_from(d.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: libc::c_long::from(d.subsec_nanos() as i32),
    };
    // SAFETY: `fd` and `ts` live across the call, which writes only `fd.revents`; the count
    // passed is 1, the one pollfd; no signal mask is given.
    let _ = unsafe { libc::ppoll(&mut fd, 1, &ts, std::ptr::null()) };
}

mod batch;
pub use batch::{send_many, RecvBatch, MAX_BATCH, RECV_BATCH};

#[cfg(test)]
mod tests;
