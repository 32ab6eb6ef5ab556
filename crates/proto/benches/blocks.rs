//! Shared building blocks on the per-packet path: receive window and bitmaps.
//! `cargo bench -p rmcast-proto` (not run in CI; clippy --all-targets compiles it).

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rmcast_proto::window::{Bitmap, SeqWindow};

fn window(c: &mut Criterion) {
    let mut g = c.benchmark_group("window");
    g.throughput(Throughput::Elements(10_000));
    g.bench_function("insert_pop_in_order_10k", |b| {
        b.iter(|| {
            let mut w = SeqWindow::new(1024);
            let mut n = 0u64;
            for s in 0..10_000u64 {
                // every 16th packet arrives 3 late: a little reordering
                let seq = if s % 16 == 3 { s - 3 } else { s };
                let _ = w.insert(seq);
                while let Some(x) = w.pop_in_order() {
                    n = n.wrapping_add(x);
                }
            }
            black_box(n)
        })
    });
    g.bench_function("missing_with_gaps", |b| {
        let mut w = SeqWindow::new(1024);
        for s in (0..1000u64).filter(|s| s % 7 != 0) {
            let _ = w.insert(s);
        }
        b.iter(|| black_box(w.missing().count()))
    });
    g.finish();
}

fn bitmap(c: &mut Criterion) {
    let mut g = c.benchmark_group("bitmap");
    let mut a = Bitmap::new(4096);
    let mut b2 = Bitmap::new(4096);
    for i in (0..4096).step_by(3) {
        a.set(i, true);
    }
    for i in (0..4096).step_by(5) {
        b2.set(i, true);
    }
    g.bench_function("set_get_4096", |b| {
        b.iter(|| {
            let mut m = Bitmap::new(4096);
            for i in 0..4096 {
                m.set(i, i % 2 == 0);
            }
            black_box((0..4096).filter(|&i| m.get(i)).count())
        })
    });
    g.bench_function("and_or_count_4096", |b| {
        b.iter(|| {
            let mut x = a.clone();
            x.and_assign(&b2);
            let mut y = a.clone();
            y.or_assign(&b2);
            black_box(x.count_ones() + y.count_ones())
        })
    });
    g.bench_function("iter_ones_4096", |b| {
        b.iter(|| black_box(a.iter_ones().count()))
    });
    g.finish();
}

criterion_group!(benches, window, bitmap);
criterion_main!(benches);
