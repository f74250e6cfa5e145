//! A local code mode: the model writes one program that calls the tools,
//! instead of one model round trip per call. [`typescript`] declares the
//! tools to the model (public on its own, for other sandboxes);
//! `CodeMode` (feature `code-mode`) runs the model's JavaScript in an
//! embedded QuickJS where every tool call passes the lifecycle and the
//! approval hook. For the providers' own code execution, see
//! [`program`](toolbox_provider::program).

#[cfg(feature = "code-mode")]
mod mode;
#[cfg(feature = "code-mode")]
mod sandbox;
pub mod typescript;

#[cfg(feature = "code-mode")]
pub use mode::{CodeMode, CODE_MODE_RUNTIME, MAX_OVERRUN_THREADS, RUN_CODE};
#[cfg(feature = "code-mode")]
pub use sandbox::Limits;
