//! Registry lookups with 10, 10,000 and 1,000,000 registered tools, in one
//! run: an exact `name@module` key and a bare name (the second step, through
//! the name index). Both are hash lookups, so the size should not matter.
#![allow(missing_docs)] // criterion's macros generate undocumented items

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use toolbox::registry::Registry;
use toolbox::{Arguments, Context, DispatchFuture, ToolBox, ToolError, ToolSpecification};

/// A box of `n` trivial tools named `tool_{i}`.
struct Many(usize);

impl ToolBox for Many {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        (0..self.0)
            .map(|i| ToolSpecification::new(format!("tool_{i}"), "A tool"))
            .collect()
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        _: Arguments<'a>,
        _: &'a Context,
    ) -> DispatchFuture<'a> {
        DispatchFuture::ready(Err(ToolError::unknown_tool(name, [])))
    }
}

fn bench_lookup(c: &mut Criterion) {
    let mut group = c.benchmark_group("registry_get");
    for size in [10usize, 10_000, 1_000_000] {
        let registry = Registry::empty();
        registry.register_box(Many(size), "m").expect("fresh keys");
        let exact = format!("tool_{}@m", size / 2);
        // Not an exact key: found by the second step, the bare-name index.
        let bare = format!("tool_{}", size / 2);
        assert_eq!(
            registry
                .get(&bare)
                .expect("unique bare name")
                .key()
                .to_string(),
            exact
        );
        group.bench_function(format!("exact/{size}"), |b| {
            b.iter(|| registry.get(black_box(&exact)).is_ok())
        });
        group.bench_function(format!("bare/{size}"), |b| {
            b.iter(|| registry.get(black_box(&bare)).is_ok())
        });
    }
    group.finish();
}

criterion_group!(benches, bench_lookup);
criterion_main!(benches);
