//! What `#[tool_box]` / `#[tool]` generated code reaches through
//! `::toolbox::macro_support`. Not a public API: it changes with the macros.

#![allow(missing_docs)]

use std::cell::Cell;
use std::fmt::Display;
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};

pub use schemars;
pub use serde;
pub use serde_json;
pub use serde_json::Value;

pub use crate::boxes::decorate::time_limited;
pub use crate::dispatch::DispatchResult;
pub use crate::{
    args::Args, args::Arguments, context::Context, context::FromContext, dispatch::DispatchFuture,
    error::BoxError, error::ToolError, response::ToolResponse, spec::ToolAnnotations,
    spec::ToolSpecification, toolbox::NamedToolBox, toolbox::ToolBox,
};

pub use crate::discover::{last_segment, Discovered};
#[cfg(feature = "discovery")]
pub use inventory;

/// Submits a [`Discovered`] entry, when the `discovery` feature is on.
#[cfg(feature = "discovery")]
#[doc(hidden)]
#[macro_export]
macro_rules! __toolbox_submit {
    ($($entry:tt)*) => { $crate::macro_support::inventory::submit! { $($entry)* } };
}

/// Submits nothing: the `discovery` feature is off.
#[cfg(not(feature = "discovery"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __toolbox_submit {
    ($($entry:tt)*) => {};
}

pub use crate::__toolbox_submit as submit;

/// Builds a box for discovery when its type is `Default` (autoref
/// specialization: the `Default` impl is the nearer one).
pub struct BuildProbe<T>(PhantomData<fn() -> T>);

impl<T> BuildProbe<T> {
    pub const fn new() -> Self {
        BuildProbe(PhantomData)
    }
}

impl<T> Default for BuildProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}

pub trait BuildViaDefault {
    fn build(&self) -> Option<std::sync::Arc<dyn ToolBox>>;
}

impl<T: Default + ToolBox + 'static> BuildViaDefault for &BuildProbe<T> {
    fn build(&self) -> Option<std::sync::Arc<dyn ToolBox>> {
        Some(std::sync::Arc::new(T::default()))
    }
}

pub trait BuildViaNothing {
    fn build(&self) -> Option<std::sync::Arc<dyn ToolBox>>;
}

impl<T> BuildViaNothing for BuildProbe<T> {
    fn build(&self) -> Option<std::sync::Arc<dyn ToolBox>> {
        None
    }
}

/// A box a generated surface test can build.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be built for its generated surface test",
    label = "needs `Default`, or a constructor",
    note = "derive or implement `Default` for `{Self}`, or name a constructor: `#[tool_box(register = {Self}::new_for_tests, check(..))]`"
)]
pub trait Buildable {}

impl<T: Default> Buildable for T {}

pub fn assert_buildable<T: Buildable + ?Sized>() {}

/// A box `Registry::discover()` can build.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `Default`, so `Registry::discover()` cannot build this `#[tool_box]`",
    label = "discovered boxes are built with `Default`",
    note = "derive or implement `Default` for `{Self}`, name its constructor with `#[tool_box(register = {Self}::new)]`, or opt out of discovery with `#[tool_box(register = false)]` (and `scan` a built box)"
)]
pub trait Discoverable {}

#[cfg(feature = "discovery")]
impl<T: Default> Discoverable for T {}

/// Without discovery nothing is built: every box is fine.
#[cfg(not(feature = "discovery"))]
impl<T: ?Sized> Discoverable for T {}

pub fn assert_discoverable<T: Discoverable + ?Sized>() {}

/// The argument schema of a generated argument struct (always an object).
pub fn parameters<T: schemars::JsonSchema>() -> Value {
    crate::schema::parameters_of::<T>()
}

/// An opaque (`impl Serialize`) result: serialized, then dropped, neither
/// of which may unwind.
#[inline]
pub fn output<T: serde::Serialize>(value: T) -> DispatchResult {
    let result = ToolResponse::from_output(&value);
    dropped(value)?;
    result
}

/// [`output`] inside a dispatch that is guarded as a whole.
#[inline]
pub fn output_unguarded<T: serde::Serialize>(value: T) -> DispatchResult {
    ToolResponse::from_output_unguarded(&value)
}

/// Runs the tool's own code (its arguments' deserializers, injected
/// parameters, its body) with panics caught: generated dispatch never
/// unwinds (`ToolBox::catches_panics`).
#[inline(always)]
pub fn guarded<T>(f: impl FnOnce() -> Result<T, ToolError>) -> Result<T, ToolError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => Err(crate::panic::panicked(payload)),
    }
}

/// Drops a value of the tool's with a panicking `Drop` caught.
#[inline(always)]
fn dropped<T>(value: T) -> Result<(), ToolError> {
    if std::mem::needs_drop::<T>() {
        catch_unwind(AssertUnwindSafe(move || drop(value))).map_err(crate::panic::panicked)
    } else {
        Ok(())
    }
}

pub fn unknown(name: &str, names: &[&str]) -> DispatchResult {
    Err(ToolError::unknown_tool(name, names.iter().copied()))
}

pub fn unknown_error(name: &str, names: &[&str]) -> Result<(), ToolError> {
    Err(ToolError::unknown_tool(name, names.iter().copied()))
}

/// Checks arguments with the deserializer the tool's dispatch uses.
#[inline]
pub fn check<T: serde::de::DeserializeOwned + schemars::JsonSchema>(
    arguments: Arguments<'_>,
) -> Result<(), ToolError> {
    match arguments.deserialize_tool::<T>() {
        Ok(_) => Ok(()),
        Err(error) => Err(error),
    }
}

/// A generated tool's specification, built by code compiled once.
#[allow(clippy::too_many_arguments)]
pub fn specification(
    name: &str,
    title: Option<&str>,
    description: &str,
    parameters: Value,
    output_schema: Option<Value>,
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
) -> ToolSpecification {
    ToolSpecification {
        name: name.to_owned(),
        title: title.map(str::to_owned),
        description: description.to_owned(),
        parameters,
        output_schema,
        annotations: annotations(read_only, destructive, idempotent, open_world),
        namespace: None,
        deferred: false,
        examples: Vec::new(),
        ui: None,
        callers: crate::callers::Callers::DIRECT,
        task: crate::spec::TaskSupport::Never,
    }
}

/// A generated specification with `#[tool(task)]` (`required`: only as a
/// task).
pub fn with_task(mut spec: ToolSpecification, required: bool) -> ToolSpecification {
    spec.task = if required {
        crate::spec::TaskSupport::Required
    } else {
        crate::spec::TaskSupport::Optional
    };
    spec
}

/// A generated specification with `#[tool(defer)]` / `#[tool_box(defer)]`
/// and `#[tool(example = ..)]`.
pub fn with_extras(
    mut spec: ToolSpecification,
    defer: bool,
    examples: Vec<Value>,
) -> ToolSpecification {
    spec.deferred = defer;
    spec.examples = examples;
    spec
}

/// A generated specification with `#[tool(callers(..))]` (or the box's).
pub fn with_callers(mut spec: ToolSpecification, direct: bool, code: bool) -> ToolSpecification {
    let names = [(direct, "direct"), (code, "code")];
    if let Ok(callers) =
        crate::callers::Callers::from_names(names.iter().filter(|(on, _)| *on).map(|(_, n)| *n))
    {
        spec.callers = callers;
    }
    spec
}

/// A generated specification with `#[tool(ui = "ui://…")]` (and
/// `app_only`: visible to the view only).
pub fn with_ui(mut spec: ToolSpecification, uri: &str, app_only: bool) -> ToolSpecification {
    let ui = crate::spec::ToolUi::new(uri);
    spec.ui = Some(if app_only {
        ui.with_visibility(["app"])
    } else {
        ui
    });
    spec
}

/// An example written as JSON text (checked when the macro ran).
pub fn example_text(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// An example written as an expression (`json!({..})`).
pub fn example_value(value: impl Into<Value>) -> Value {
    value.into()
}

pub fn annotations(
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
) -> Option<ToolAnnotations> {
    if read_only.is_none() && destructive.is_none() && idempotent.is_none() && open_world.is_none()
    {
        return None;
    }
    Some(ToolAnnotations {
        read_only,
        destructive,
        idempotent,
        open_world,
    })
}

pub fn millis(ms: u64) -> std::time::Duration {
    std::time::Duration::from_millis(ms)
}

/// The calls that read a tool's arguments, by autoref specialization:
/// `(&&ArgsProbe::<T>::new()).__toolbox_read(arguments)` deserializes `T`
/// when `T` has what it needs. Where it does not, a parameter type lacks
/// `Deserialize` or `JsonSchema`, which `assert_argument` and
/// `assert_argument_schema` already report at the parameter, so the
/// fallback keeps the compiler from saying it again about the generated
/// struct (it never runs: the build has failed).
pub struct ArgsProbe<T>(PhantomData<fn() -> T>);

impl<T> ArgsProbe<T> {
    pub fn new() -> Self {
        ArgsProbe(PhantomData)
    }
}

impl<T> Default for ArgsProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}

pub trait ArgsViaTraits<T> {
    fn __toolbox_parameters(&self) -> Value;
    fn __toolbox_check(&self, arguments: Arguments<'_>) -> Result<(), ToolError>;
    fn __toolbox_read(&self, arguments: Arguments<'_>) -> Result<T, ToolError>;
}

impl<T: serde::de::DeserializeOwned + schemars::JsonSchema> ArgsViaTraits<T> for &ArgsProbe<T> {
    #[inline]
    fn __toolbox_parameters(&self) -> Value {
        parameters::<T>()
    }

    #[inline]
    fn __toolbox_check(&self, arguments: Arguments<'_>) -> Result<(), ToolError> {
        check::<T>(arguments)
    }

    #[inline]
    fn __toolbox_read(&self, arguments: Arguments<'_>) -> Result<T, ToolError> {
        arguments.deserialize_tool::<T>()
    }
}

pub trait ArgsViaNothing<T> {
    fn __toolbox_parameters(&self) -> Value;
    fn __toolbox_check(&self, arguments: Arguments<'_>) -> Result<(), ToolError>;
    fn __toolbox_read(&self, arguments: Arguments<'_>) -> Result<T, ToolError>;
}

impl<T> ArgsViaNothing<T> for ArgsProbe<T> {
    fn __toolbox_parameters(&self) -> Value {
        Value::Null
    }

    fn __toolbox_check(&self, _: Arguments<'_>) -> Result<(), ToolError> {
        Err(ToolError::failed(
            "the tool's argument types cannot be read",
        ))
    }

    fn __toolbox_read(&self, _: Arguments<'_>) -> Result<T, ToolError> {
        Err(ToolError::failed(
            "the tool's argument types cannot be read",
        ))
    }
}

/// Output schema probe: `(&&SchemaProbe::<T>::new()).__toolbox_output_schema()`
/// is `T`'s schema when `T: JsonSchema` (and not text), else `None`.
pub struct SchemaProbe<T: ?Sized>(PhantomData<fn() -> Box<T>>);

impl<T: ?Sized> SchemaProbe<T> {
    pub fn new() -> Self {
        SchemaProbe(PhantomData)
    }
}

impl<T: ?Sized> Default for SchemaProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}

pub trait SchemaViaJsonSchema {
    fn __toolbox_output_schema(&self) -> Option<Value>;
}

impl<T: schemars::JsonSchema + ?Sized> SchemaViaJsonSchema for &SchemaProbe<T> {
    fn __toolbox_output_schema(&self) -> Option<Value> {
        crate::schema::output_schema::<T>()
    }
}

pub trait SchemaViaNothing {
    fn __toolbox_output_schema(&self) -> Option<Value>;
}

impl<T: ?Sized> SchemaViaNothing for SchemaProbe<T> {
    fn __toolbox_output_schema(&self) -> Option<Value> {
        None
    }
}

/// Error conversion by autoref specialization:
/// `(&&&ErrorWrap::new(e)).__toolbox_into_error()` keeps a `ToolError` as
/// is, keeps the source chain of anything `Into<BoxError>`, and falls back
/// to the `Display` text.
pub struct ErrorWrap<E>(Cell<Option<E>>);

impl<E> ErrorWrap<E> {
    pub fn new(error: E) -> Self {
        ErrorWrap(Cell::new(Some(error)))
    }

    fn take(&self) -> E {
        match self.0.take() {
            Some(error) => error,
            None => unreachable!("an ErrorWrap is converted once"),
        }
    }
}

pub trait ErrViaToolError {
    fn __toolbox_into_error(&self) -> ToolError;
}

impl ErrViaToolError for &&ErrorWrap<ToolError> {
    fn __toolbox_into_error(&self) -> ToolError {
        self.take()
    }
}

pub trait ErrViaBoxError {
    fn __toolbox_into_error(&self) -> ToolError;
}

impl<E: Into<BoxError>> ErrViaBoxError for &ErrorWrap<E> {
    fn __toolbox_into_error(&self) -> ToolError {
        let error = self.take();
        guarded(|| Ok(ToolError::from_error(error))).unwrap_or_else(|panicked| panicked)
    }
}

pub trait ErrViaDisplay {
    fn __toolbox_into_error(&self) -> ToolError;
}

impl<E: Display> ErrViaDisplay for ErrorWrap<E> {
    fn __toolbox_into_error(&self) -> ToolError {
        // The error is moved into the guard: its `Display` and its `Drop`
        // run there.
        let error = self.take();
        guarded(move || Ok(ToolError::failed(error))).unwrap_or_else(|panicked| panicked)
    }
}

/// A tool parameter's type must deserialize.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `serde::Deserialize`",
    label = "the model's JSON is deserialized into this parameter",
    note = "derive what a parameter needs: `#[derive(serde::Deserialize, schemars::JsonSchema)]`; or mark the parameter `#[inject]` if it comes from the context"
)]
pub trait ToolArgument {}

#[diagnostic::do_not_recommend]
impl<T: serde::de::DeserializeOwned> ToolArgument for T {}

pub fn assert_argument<T: ToolArgument + ?Sized>() {}

/// A tool parameter's type must have a schema: the model is shown it.
/// This is the one error for a missing `JsonSchema`: the argument struct's
/// derive is bounded on it and reached through [`ArgsProbe`], so nothing
/// else reports it again.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter: it does not implement `schemars::JsonSchema`",
    label = "the model is shown this parameter's JSON Schema",
    note = "derive what a parameter needs: `#[derive(serde::Deserialize, schemars::JsonSchema)]`, or implement `JsonSchema` by hand; or mark the parameter `#[inject]` if it comes from the context"
)]
pub trait ToolArgumentSchema {}

#[diagnostic::do_not_recommend]
impl<T: schemars::JsonSchema + ?Sized> ToolArgumentSchema for T {}

pub fn assert_argument_schema<T: ToolArgumentSchema + ?Sized>() {}

/// A tool's result must serialize.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a tool",
    label = "a tool returns `T: Serialize`, `Result<T, E>` or `ToolResponse`",
    note = "derive `serde::Serialize` for it, or return a `String` or a `ToolResponse`"
)]
pub trait ToolOutput {}

impl<T: serde::Serialize + ?Sized> ToolOutput for T {}

pub fn assert_output<T: ToolOutput + ?Sized>() {}

/// A parameter injected as toolbox's `Context`. A parameter whose type is
/// named `Context` but is another crate's gets this one error, on it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not toolbox's `Context`",
    label = "a parameter of a type named `Context` is injected with toolbox's `Context`",
    note = "to take this parameter from the model's arguments, mark it `#[arg]`; to build it from the context, mark it `#[inject]` and implement `toolbox::FromContext` for it"
)]
pub trait IsContext {
    fn borrowed(ctx: &Context) -> &Self;
    fn owned(ctx: &Context) -> Self
    where
        Self: Sized;
}

impl IsContext for Context {
    #[inline]
    fn borrowed(ctx: &Context) -> &Self {
        ctx
    }

    #[inline]
    fn owned(ctx: &Context) -> Self {
        ctx.clone()
    }
}

/// A parameter that is the whole argument object, wrapped: toolbox's `Args<T>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not toolbox's `Args<T>`",
    label = "a parameter of a type named `Args<T>` takes the whole argument object as toolbox's `Args<T>`",
    note = "to take this parameter from the model's arguments as one field, mark it `#[arg]`; for the whole object as your own type, mark it `#[args]`"
)]
pub trait WholeArguments<T> {
    fn wrap(inner: T) -> Self;
}

impl<T> WholeArguments<T> for Args<T> {
    #[inline]
    fn wrap(inner: T) -> Self {
        Args(inner)
    }
}

/// A tool's result into a response by autoref specialization:
/// `(&&OutputWrap::new(v)).__toolbox_respond()` keeps a `ToolResponse` as
/// is (decided by the type, whatever it is called where it is used) and
/// serializes anything else.
pub struct OutputWrap<T>(Cell<Option<T>>);

impl<T> OutputWrap<T> {
    #[inline]
    pub fn new(value: T) -> Self {
        OutputWrap(Cell::new(Some(value)))
    }
}

pub trait RespondViaResponse {
    fn __toolbox_respond(&self) -> DispatchResult;
    /// The conversion cannot panic: the same as `__toolbox_respond`.
    fn __toolbox_respond_unguarded(&self) -> DispatchResult {
        self.__toolbox_respond()
    }
}

impl RespondViaResponse for &&OutputWrap<ToolResponse> {
    #[inline]
    fn __toolbox_respond(&self) -> DispatchResult {
        match self.0.take() {
            Some(response) => Ok(response),
            None => unreachable!("an OutputWrap is converted once"),
        }
    }
}

/// Results whose `Serialize` and `Drop` cannot panic (std's scalars and
/// strings): converted without a panic guard.
pub trait PlainOutput: serde::Serialize {}

macro_rules! plain_outputs {
    ($($ty:ty),* $(,)?) => { $(impl PlainOutput for $ty {})* };
}

plain_outputs!(
    (),
    bool,
    char,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    f32,
    f64,
    String,
    &str,
);

pub trait RespondViaPlain {
    fn __toolbox_respond(&self) -> DispatchResult;
    /// The conversion cannot panic: the same as `__toolbox_respond`.
    fn __toolbox_respond_unguarded(&self) -> DispatchResult {
        self.__toolbox_respond()
    }
}

impl<T: PlainOutput> RespondViaPlain for &&OutputWrap<T> {
    #[inline]
    fn __toolbox_respond(&self) -> DispatchResult {
        match self.0.take() {
            Some(value) => ToolResponse::from_output_unguarded(&value),
            None => unreachable!("an OutputWrap is converted once"),
        }
    }
}

pub trait RespondViaSerialize {
    fn __toolbox_respond(&self) -> DispatchResult;
    fn __toolbox_respond_unguarded(&self) -> DispatchResult;
}

impl<T: serde::Serialize> RespondViaSerialize for &OutputWrap<T> {
    #[inline]
    fn __toolbox_respond(&self) -> DispatchResult {
        match self.0.take() {
            Some(value) => output(value),
            None => unreachable!("an OutputWrap is converted once"),
        }
    }

    #[inline]
    fn __toolbox_respond_unguarded(&self) -> DispatchResult {
        match self.0.take() {
            Some(value) => output_unguarded(value),
            None => unreachable!("an OutputWrap is converted once"),
        }
    }
}

/// Chosen only when the result type is neither a `ToolResponse` nor
/// `Serialize`: the spanned `assert_output` check has already failed the
/// build with its one error, so this never runs.
pub trait RespondViaNothing {
    fn __toolbox_respond(&self) -> DispatchResult;
    fn __toolbox_respond_unguarded(&self) -> DispatchResult {
        self.__toolbox_respond()
    }
}

impl<T> RespondViaNothing for OutputWrap<T> {
    fn __toolbox_respond(&self) -> DispatchResult {
        unreachable!("a tool result that is not `Serialize` does not compile")
    }
}
