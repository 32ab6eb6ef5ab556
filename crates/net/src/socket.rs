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

impl SocketOpts {
    /// Defaults for `group`: any interface, TTL 1, loopback on, 8-MiB buffers.
    pub fn new(group: SocketAddr) -> Self {
        SocketOpts {
            group,
            interface: None,
            ttl: 1,
            loopback: true,
            recv_buffer: Some(8 << 20),
            send_buffer: Some(8 << 20),
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

fn new_socket(v6: bool) -> Result<Socket, NetError> {
    let domain = if v6 { Domain::IPV6 } else { Domain::IPV4 };
    Socket::new(domain, Type::DGRAM, Some(Protocol::UDP))
        .map_err(|e| NetError::setup(format!("cannot create a UDP socket: {e}")))
}

fn buffers(s: &Socket, o: &SocketOpts) {
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
    tracing::debug!(
        recv = s.recv_buffer_size().unwrap_or(0),
        send = s.send_buffer_size().unwrap_or(0),
        "socket buffers"
    );
    count_drops(s);
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

fn iface_of(o: &SocketOpts) -> Result<Option<Iface>, NetError> {
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
        (IpAddr::V4(group), None) => {
            let ifc = match iface {
                Some(i) => InterfaceIndexOrAddress::Index(i.index),
                None => InterfaceIndexOrAddress::Address(Ipv4Addr::UNSPECIFIED),
            };
            s.join_multicast_v4_n(&group, &ifc)
                .map_err(|x| e("join", x))?;
            let _ = s.set_multicast_all_v4(false);
        }
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
fn gso_groups(msgs: &[(SocketAddr, &[u8])], gso: bool) -> Vec<(usize, usize)> {
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
fn send_groups(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_multicast_groups_are_refused_with_a_hint() {
        let e = check_group("10.0.0.1:5000".parse().unwrap()).unwrap_err();
        assert!(e.to_string().contains("not a multicast address"), "{e}");
        assert!(check_group("239.1.2.3:5000".parse().unwrap()).is_ok());
        assert!(check_group("[ff15::1]:5000".parse().unwrap()).is_ok());
        assert!(check_group("239.1.2.3:0".parse().unwrap()).is_err());
    }

    #[test]
    fn missing_interface_is_a_clear_error() {
        let e = resolve_interface("rmcast-no-such-if0").unwrap_err();
        assert!(e.to_string().contains("no interface named"), "{e}");
        let lo = resolve_interface("lo").unwrap();
        assert_eq!(lo.v4, Some(Ipv4Addr::LOCALHOST));
    }

    /// IPv6 source-specific join: in a private network namespace (root; this thread only)
    /// with a veth interface, a receiver joined for our source gets our datagram, one joined
    /// for another source on the same group and port does not. (Linux's `lo` carries no IPv6
    /// multicast, hence the namespace.)
    #[cfg(target_os = "linux")]
    #[test]
    fn ipv6_source_specific_join_filters_by_source() {
        use std::process::Command;
        use std::time::Duration;
        let t = std::thread::spawn(|| {
            // SAFETY: unshare(2) with CLONE_NEWNET moves only this thread into a new network
            // namespace; it touches no memory of ours.
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                let e = io::Error::last_os_error();
                eprintln!("skipped: cannot create a network namespace (needs root): {e}");
                return;
            }
            let ip = |args: &str| {
                Command::new("ip")
                    .args(args.split(' '))
                    .status()
                    .is_ok_and(|s| s.success())
            };
            if !(ip("link add rmv0 type veth peer name rmv1")
                && ip("link set rmv0 up")
                && ip("link set rmv1 up")
                && ip("-6 addr add fd00:7e5d::1/64 dev rmv0 nodad"))
            {
                eprintln!("skipped: cannot set up a veth pair with `ip`");
                return;
            }
            let me: IpAddr = "fd00:7e5d::1".parse().unwrap();
            let group: SocketAddr = "[ff15::7e5d:1]:47161".parse().unwrap();
            let mut o = SocketOpts::new(group);
            o.interface = Some("rmv0".into());
            o.source = Some(me);
            let ours = group_socket(&o).unwrap();
            o.source = Some("2001:db8::1".parse().unwrap());
            let theirs = group_socket(&o).unwrap();
            let tx = unicast_socket(&o).unwrap();
            tx.send_to(b"from us", group).unwrap();
            ours.set_nonblocking(false).unwrap();
            ours.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut buf = [0u8; 64];
            let (n, from) = ours.recv_from(&mut buf).unwrap();
            assert_eq!(&buf[..n], b"from us");
            assert_eq!(from.ip(), me);
            // Both sockets' copies are queued at once; the other source's join got none.
            let e = theirs.recv_from(&mut buf).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
        });
        t.join().unwrap();
    }

    #[test]
    fn the_datagram_size_follows_the_link_and_refuses_fragmentation() {
        let eth = |mtu| Link {
            name: "eth0".into(),
            mtu,
            ethernet: true,
        };
        let lo = Link {
            name: "lo".into(),
            mtu: 65_536,
            ethernet: false,
        };
        assert_eq!(datagram_size(&eth(1500), false, None, false).unwrap(), 1472);
        assert_eq!(datagram_size(&eth(1500), true, None, false).unwrap(), 1452);
        assert_eq!(datagram_size(&eth(9000), false, None, false).unwrap(), 8972);
        // Loopback's 65,536 does not make 65k the default: links other than Ethernet count
        // as 1500-byte Ethernet, so loopback runs what a LAN runs.
        assert_eq!(datagram_size(&lo, false, None, false).unwrap(), 1472);
        // ... but nothing fragments there, so a large size is not refused.
        assert_eq!(
            datagram_size(&lo, false, Some(60_000), false).unwrap(),
            60_000
        );
        assert_eq!(
            datagram_size(&eth(1500), false, Some(1472), false).unwrap(),
            1472
        );
        let e = datagram_size(&eth(1500), false, Some(60_000), false)
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n'), "one line: {e}");
        assert!(
            e.contains("--allow-fragmentation") && e.contains("1472"),
            "{e}"
        );
        assert!(e.contains("about 41 fragments"), "{e}");
        assert!(datagram_size(&eth(1500), true, Some(1453), false).is_err());
        assert_eq!(
            datagram_size(&eth(1500), false, Some(60_000), true).unwrap(),
            60_000
        );
    }

    #[test]
    fn loopback_is_found_by_name_and_by_address() {
        let mut o = SocketOpts::new("239.255.78.9:47169".parse().unwrap());
        o.interface = Some("lo".into());
        let by_name = group_link(&o).expect("lo in /sys/class/net");
        assert!(!by_name.ethernet && by_name.mtu >= 1500, "{by_name:?}");
        o.interface = Some("127.0.0.1".into());
        assert_eq!(group_link(&o), Some(by_name));
        o.interface = Some("no-such-if0".into());
        assert_eq!(group_link(&o), None);
    }

    /// A group on the loopback interface, its options and a socket joined to it.
    fn loopback_group(addr: &str) -> (SocketAddr, SocketOpts, mio::net::UdpSocket) {
        let group: SocketAddr = addr.parse().unwrap();
        let mut o = SocketOpts::new(group);
        o.interface = Some("lo".into());
        let rx = mio::net::UdpSocket::from_std(group_socket(&o).unwrap());
        (group, o, rx)
    }

    #[test]
    fn gso_groups_are_runs_of_one_size_to_one_destination() {
        let a: SocketAddr = "239.255.78.12:47172".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:47173".parse().unwrap();
        let (big, small) = ([1u8; 1472], [2u8; 100]);
        let msgs: Vec<(SocketAddr, &[u8])> = vec![
            (a, &big),
            (a, &big),
            (a, &small), // a shorter datagram ends its group
            (a, &big),
            (b, &big), // another destination starts one
            (b, &big),
            (a, &small),
            (a, &big), // a longer one than the first does not join
        ];
        let groups = gso_groups(&msgs, true);
        assert_eq!(groups, vec![(0, 3), (3, 1), (4, 2), (6, 1), (7, 1)]);
        assert_eq!(gso_groups(&msgs, false).len(), msgs.len());
        // At most 64 datagrams and 65,507 bytes a group.
        let many: Vec<(SocketAddr, &[u8])> = vec![(a, &small); 130];
        assert_eq!(gso_groups(&many, true), vec![(0, 64), (64, 64), (128, 2)]);
        let full: Vec<(SocketAddr, &[u8])> = vec![(a, &big); 64];
        assert_eq!(gso_groups(&full, true), vec![(0, 44), (44, 20)]);
    }

    #[test]
    fn segmented_sends_arrive_as_the_datagrams_they_were() {
        let (group, o, rx) = loopback_group("239.255.78.13:47174");
        coalesce_reads(&rx);
        let tx = mio::net::UdpSocket::from_std(unicast_socket(&o).unwrap());
        // 50 full datagrams (two GSO groups), a short one, and 3 more full ones.
        let data: Vec<Vec<u8>> = (0..54u8)
            .map(|i| vec![i; if i == 50 { 300 } else { 1472 }])
            .collect();
        let msgs: Vec<(SocketAddr, &[u8])> = data.iter().map(|d| (group, d.as_slice())).collect();
        // Segmented for certain (no fallback): loopback takes UDP_SEGMENT.
        let mut sent = 0;
        while sent < msgs.len() {
            sent += send_groups(&tx, msgs.get(sent..).unwrap(), true).unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut batch = RecvBatch::new();
        let mut got = Vec::new();
        while let Some((d, _)) = batch.next(&rx) {
            got.push(d.to_vec());
        }
        assert_eq!(got, data);
        // Loopback hands a segmented send whole to a socket that asked for it (UDP_GRO), and
        // the batch split it again: 54 datagrams, most of them from coalesced buffers.
        assert_eq!(batch.datagrams, 54);
        assert!(batch.coalesced >= 50, "{} coalesced", batch.coalesced);
    }

    #[test]
    fn a_batch_reads_many_datagrams_per_call_and_counts_kernel_drops() {
        let (group, mut o, rx) = loopback_group("239.255.78.10:47170");
        let tx = unicast_socket(&o).unwrap();
        tx.set_nonblocking(false).unwrap();
        let mut batch = RecvBatch::new();
        for i in 0..40u8 {
            tx.send_to(&[i; 100], group).unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut got = Vec::new();
        while let Some((d, from)) = batch.next(&rx) {
            assert_eq!(from.ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));
            got.push((d[0], d.len()));
        }
        assert_eq!(got, (0..40u8).map(|i| (i, 100)).collect::<Vec<_>>());
        assert_eq!((batch.calls, batch.datagrams), (2, 40), "32 + 8");
        // Nothing was dropped: the counter is absent or zero.
        assert!(batch.take_drops().unwrap_or(0) == 0);
        // A tiny receive buffer overflows; the kernel says how many it dropped.
        o.group = "239.255.78.11:47171".parse().unwrap();
        o.recv_buffer = Some(4096);
        let small = mio::net::UdpSocket::from_std(group_socket(&o).unwrap());
        for _ in 0..200 {
            tx.send_to(&[7u8; 1000], o.group).unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut n = 0u32;
        while batch.next(&small).is_some() {
            n += 1;
        }
        // A datagram carries the count as of its own arrival: the next one tells all.
        tx.send_to(&[8u8; 10], o.group).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(batch.next(&small).is_some());
        let drops = batch.take_drops().unwrap_or(0);
        assert!(n > 0 && drops > 0, "{n} read, {drops} dropped");
        assert_eq!(n + drops, 200);
    }

    #[test]
    fn mismatched_source_family_is_refused() {
        let mut o = SocketOpts::new("[ff15::7e5d:2]:47162".parse().unwrap());
        o.source = Some("10.0.0.1".parse().unwrap());
        let e = group_socket(&o).unwrap_err();
        assert!(e.to_string().contains("give an IPv6 source"), "{e}");
    }
}
