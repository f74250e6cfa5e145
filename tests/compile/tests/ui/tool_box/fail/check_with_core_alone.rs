// `check(..)` runs the surface checks, which live above toolbox-core: with
// `crate = toolbox_core` the macro says so instead of naming a missing item.

#[derive(Default)]
struct Clock;

/// Time.
#[toolbox::tool_box(crate = toolbox_core, check(openai_strict))]
impl Clock {
    /// The hour.
    #[toolbox::tool]
    fn hour(&self) -> u32 {
        12
    }
}

fn main() {}
