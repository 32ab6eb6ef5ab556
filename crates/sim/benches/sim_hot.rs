//! Hot paths of the simulator: the event queue and multicast replication.
//! `cargo bench -p rmcast-sim` (not run in CI; clippy --all-targets compiles it).

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rmcast_proto::Time;
use rmcast_sim::bench::binary_tree_multicast;
use rmcast_sim::kernel::Kernel;
use rmcast_sim::SimRng;

fn event_queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("kernel");
    for pending in [1_000usize, 100_000] {
        g.throughput(Throughput::Elements(10_000));
        g.bench_function(format!("hold_{pending}_pending_10k_steps"), |b| {
            b.iter_batched(
                || {
                    let mut k: Kernel<u32> = Kernel::new();
                    let mut rng = SimRng::new(1, 0, 0, 0);
                    for i in 0..pending {
                        k.schedule(Time::from_nanos(rng.below(2_000_000)), i as u32);
                    }
                    (k, rng)
                },
                |(mut k, mut rng)| {
                    for _ in 0..10_000 {
                        if let Some((now, e)) = k.pop() {
                            k.schedule(Time::from_nanos(now.as_nanos() + rng.below(2_000_000)), e);
                        }
                    }
                    black_box(k.len())
                },
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

fn multicast_replication(c: &mut Criterion) {
    let mut g = c.benchmark_group("multicast");
    g.sample_size(10);
    // 128 receivers on a binary tree of height 7: 254 link hops per packet.
    g.throughput(Throughput::Elements(254 * 100));
    g.bench_function("binary_tree_h7_100_packets", |b| {
        b.iter(|| black_box(binary_tree_multicast(7, 100, 1000, 0.0).link_hops))
    });
    g.finish();
}

criterion_group!(benches, event_queue, multicast_replication);
criterion_main!(benches);
