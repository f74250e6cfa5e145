//! Every box type: the empty box, merged boxes (`{box}_{tool}` names),
//! closure tools, filtered boxes (conditions that hide and refuse), the
//! decorators (timeout, observation), deferred tools, and the recording
//! and replaying boxes with their tapes.

pub(crate) mod closure;
pub(crate) mod condition;
pub(crate) mod decorate;
pub(crate) mod deferred;
pub(crate) mod empty;
pub(crate) mod multi;
pub(crate) mod record;

pub use closure::{tool_fn, try_tool_fn, FnTool, FnToolBox, ToolClosure};
pub use condition::{AlwaysTrue, FilteredToolBox, ToolCondition};
pub use decorate::{time_limited, ObservedToolBox, TimeoutToolBox};
pub use deferred::{DeferredToolBox, DEFERRED_ANSWER};
pub use empty::EmptyToolBox;
pub use multi::{MultiToolBox, MultiToolBoxBuilder};
pub use record::{
    read_tape, RecordingToolBox, ReplayToolBox, Tape, TapeDefect, TapeEntry, TapeError,
    MAX_TAPE_LINE,
};
