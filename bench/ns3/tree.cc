// bench/ns3/tree.cc: rmcast's `bench sim` figure (b) in ns-3 (3.37, Debian's libns3-dev).
//
// One source host at the root of a complete binary tree of height H (default 10): routers at
// depths 1..H-1, 2^H receiver hosts at depth H, every link a point-to-point link of 100 Mb/s
// and 1 ms. The source sends PACKETS (default 10^4) UDP datagrams of SIZE (default 1024)
// payload bytes to a multicast group at time zero, all at once (rmcast's saturated source:
// the link's FIFO, unbounded in rmcast, 2 * PACKETS packets here, serializes them). Each
// router forwards by a static multicast route (Ipv4StaticRoutingHelper::AddMulticastRoute:
// group, input = the parent link's device, output = the two child links' devices). Every
// device receiving on a tree link (the child end of each link, and the parent end although
// nothing travels upwards) has its own RateErrorModel, ERROR_UNIT_PACKET, rate LOSS (default
// 0.01): each packet crossing each link is lost independently with probability LOSS, after
// it was transmitted (rmcast applies its loss rules after the transmission too).
//
// ns-3's sockets source a multicast datagram on one interface only (see
// Ipv4StaticRouting::RouteOutput), and the source host has two: it has two UDP sockets, each
// bound to one of its devices (a default multicast route on each), and sends every datagram
// on both. rmcast's source host replicates on both its links in its network layer instead.
//
// Counts, printed as one JSON object on stdout:
//   link_hops   PointToPointNetDevice "PhyTxBegin" events: packets put on a link (lost or not),
//               what rmcast's `link_hops` counts;
//   lost        PointToPointNetDevice "PhyRxDrop" events (the error models' drops);
//   delivered   datagrams read by the receivers' UDP sockets, summed over receivers;
//   events      Simulator::GetEventCount() after the run.
// Times: wall (steady_clock) and CPU (CLOCK_PROCESS_CPUTIME_ID) of building the network and
// of Simulator::Run() alone.
//
// Usage: tree SEED [H PACKETS SIZE LOSS]

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

using namespace ns3;

namespace
{

uint64_t g_hops = 0;
uint64_t g_lost = 0;
uint64_t g_delivered = 0;

void
OnTx(Ptr<const Packet>)
{
    ++g_hops;
}

void
OnDrop(Ptr<const Packet>)
{
    ++g_lost;
}

void
OnRecv(Ptr<Socket> s)
{
    while (Ptr<Packet> p = s->Recv())
    {
        ++g_delivered;
    }
}

double
CpuNow()
{
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

double
WallNow()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

void
SendAll(std::vector<Ptr<Socket>> socks, uint32_t packets, uint32_t size)
{
    for (uint32_t i = 0; i < packets; ++i)
    {
        for (auto& s : socks)
        {
            s->Send(Create<Packet>(size));
        }
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    if (argc < 2)
    {
        std::fprintf(stderr, "usage: %s SEED [H PACKETS SIZE LOSS]\n", argv[0]);
        return 2;
    }
    const uint32_t seed = std::strtoul(argv[1], nullptr, 10);
    const uint32_t h = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 10;
    const uint32_t packets = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 10000;
    const uint32_t size = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 1024;
    const double loss = argc > 5 ? std::strtod(argv[5], nullptr) : 0.01;
    if (h < 1 || h > 20 || seed < 1)
    {
        std::fprintf(stderr, "need SEED >= 1 and 1 <= H <= 20\n");
        return 2;
    }

    const double w0 = WallNow();
    const double c0 = CpuNow();
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    const Ipv4Address group("225.1.2.3");
    const uint16_t port = 9;

    // Nodes: 0 is the source; level d holds 2^d nodes, the children of node i at level d-1
    // being nodes 2i and 2i+1 of level d.
    std::vector<NodeContainer> level(h + 1);
    level[0].Create(1);
    for (uint32_t d = 1; d <= h; ++d)
    {
        level[d].Create(1u << d);
    }
    NodeContainer all;
    for (auto& l : level)
    {
        all.Add(l);
    }
    // Static routing only (behind the list routing that delivers multicast locally).
    Ipv4StaticRoutingHelper staticRouting;
    Ipv4ListRoutingHelper list;
    list.Add(staticRouting, 0);
    InternetStackHelper stack;
    stack.SetRoutingHelper(list);
    stack.Install(all);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    p2p.SetChannelAttribute("Delay", StringValue("1ms"));
    // rmcast's link queues are unbounded; this one holds every packet the source sends.
    p2p.SetQueue("ns3::DropTailQueue<Packet>",
                 "MaxSize",
                 QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 2 * packets + 16)));

    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.252");
    TrafficControlHelper tch;
    // For each non-leaf node: (parent device or null, child devices).
    std::vector<std::vector<Ptr<NetDevice>>> childDev(h); // by level, 2 per node
    std::vector<std::vector<Ptr<NetDevice>>> parentDev(h + 1);
    for (uint32_t d = 1; d <= h; ++d)
    {
        for (uint32_t i = 0; i < level[d].GetN(); ++i)
        {
            NetDeviceContainer link = p2p.Install(level[d - 1].Get(i / 2), level[d].Get(i));
            addr.Assign(link);
            addr.NewNetwork();
            // No queue disc (Ipv4AddressHelper installs ns-3's default one): packets go
            // straight to the device's FIFO, as in rmcast.
            tch.Uninstall(link);
            for (uint32_t k = 0; k < 2; ++k)
            {
                Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
                em->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
                em->SetRate(loss);
                link.Get(k)->SetAttribute("ReceiveErrorModel", PointerValue(em));
                link.Get(k)->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnTx));
                link.Get(k)->TraceConnectWithoutContext("PhyRxDrop", MakeCallback(&OnDrop));
            }
            childDev[d - 1].push_back(link.Get(0));
            parentDev[d].push_back(link.Get(1));
        }
    }

    // Static multicast routes: every router forwards the group from its parent link to its
    // two child links.
    for (uint32_t d = 1; d < h; ++d)
    {
        for (uint32_t i = 0; i < level[d].GetN(); ++i)
        {
            NetDeviceContainer out;
            out.Add(childDev[d][2 * i]);
            out.Add(childDev[d][2 * i + 1]);
            staticRouting.AddMulticastRoute(level[d].Get(i),
                                            Ipv4Address::GetAny(),
                                            group,
                                            parentDev[d][i],
                                            out);
        }
    }

    // The source: a default multicast route on each of its two devices, a socket bound to
    // each.
    Ptr<Node> src = level[0].Get(0);
    std::vector<Ptr<Socket>> socks;
    for (uint32_t k = 0; k < 2; ++k)
    {
        Ptr<NetDevice> dev = childDev[0][k];
        staticRouting.SetDefaultMulticastRoute(src, dev);
        Ptr<Socket> s = Socket::CreateSocket(src, UdpSocketFactory::GetTypeId());
        s->Bind();
        s->BindToNetDevice(dev);
        s->Connect(InetSocketAddress(group, port));
        socks.push_back(s);
    }

    // The receivers: a UDP socket on the group's port each, counting what it reads.
    for (uint32_t i = 0; i < level[h].GetN(); ++i)
    {
        Ptr<Socket> s = Socket::CreateSocket(level[h].Get(i), UdpSocketFactory::GetTypeId());
        s->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        s->SetRecvCallback(MakeCallback(&OnRecv));
    }

    Simulator::Schedule(Seconds(0), &SendAll, socks, packets, size);

    const double w1 = WallNow();
    const double c1 = CpuNow();
    Simulator::Run();
    const double w2 = WallNow();
    const double c2 = CpuNow();
    const double end = Simulator::Now().GetSeconds();
    const uint64_t events = Simulator::GetEventCount();
    Simulator::Destroy();

    std::printf("{\"seed\": %u, \"height\": %u, \"receivers\": %u, \"nodes\": %u, "
                "\"links\": %u, \"packets\": %u, \"size\": %u, \"loss\": %g, "
                "\"link_hops\": %llu, \"lost\": %llu, \"delivered\": %llu, "
                "\"events\": %llu, \"end_time_s\": %.9f, "
                "\"build_wall_s\": %.6f, \"build_cpu_s\": %.6f, "
                "\"run_wall_s\": %.6f, \"run_cpu_s\": %.6f}\n",
                seed,
                h,
                level[h].GetN(),
                all.GetN(),
                all.GetN() - 1,
                packets,
                size,
                loss,
                (unsigned long long)g_hops,
                (unsigned long long)g_lost,
                (unsigned long long)g_delivered,
                (unsigned long long)events,
                end,
                w1 - w0,
                c1 - c0,
                w2 - w1,
                c2 - c1);
    return 0;
}
