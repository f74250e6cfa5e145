//! Tools from closures, and `FnToolBox`, the box that holds them.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rustc_hash::FxHashMap;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::boxes::decorate::time_limited;
use crate::dispatch::DispatchFuture;
use crate::dispatch::DispatchResult;
use crate::schema::{arguments_schema, describe_property};
use crate::spec::tool_name_problem;
use crate::{
    args::Arguments, context::Context, error::BoxError, error::DefinitionError, error::ToolError,
    response::ToolResponse, spec::ToolAnnotations, spec::ToolSpecification, toolbox::ToolBox,
};

/// A function a closure tool can be built from: `Fn(T) -> impl Future` or
/// `Fn(T, Context) -> impl Future`. `M` tells the two shapes apart.
pub trait ToolClosure<T, M>: Send + Sync + 'static {
    /// What the tool's future yields.
    type Output: 'static;
    /// The tool's future.
    type Future: Future<Output = Self::Output> + Send + 'static;
    /// Runs the closure.
    fn run(&self, arguments: T, ctx: &Context) -> Self::Future;
}

impl<F, T, Fut> ToolClosure<T, fn(T)> for F
where
    F: Fn(T) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: 'static,
{
    type Output = Fut::Output;
    type Future = Fut;
    fn run(&self, arguments: T, _: &Context) -> Fut {
        self(arguments)
    }
}

impl<F, T, Fut> ToolClosure<T, fn(T, Context)> for F
where
    F: Fn(T, Context) -> Fut + Send + Sync + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: 'static,
{
    type Output = Fut::Output;
    type Future = Fut;
    fn run(&self, arguments: T, ctx: &Context) -> Fut {
        self(arguments, ctx.clone())
    }
}

type Invoke = dyn Fn(Arguments<'_>, &Context) -> DispatchFuture<'static> + Send + Sync;
type Check = dyn Fn(Arguments<'_>) -> Result<(), ToolError> + Send + Sync;

/// A tool made from a closure by [`tool_fn`] or [`try_tool_fn`]; put tools in
/// a [`FnToolBox`] to call them.
#[derive(Clone)]
pub struct FnTool {
    specification: ToolSpecification,
    invoke: Arc<Invoke>,
    check: Arc<Check>,
    timeout: Option<Duration>,
    problems: Vec<String>,
}

/// A tool from a closure taking its arguments as `T` (and optionally the
/// [`Context`]) and returning any `Serialize` value, which reaches the model
/// by the one serialization rule (a top-level `Result` included).
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use toolbox_core::{tool_fn, FnToolBox};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct AddArgs { a: i64, b: i64 }
///
/// let add = tool_fn("add", "Adds two integers", |args: AddArgs| async move { args.a + args.b })
///     .describe_arg("a", "The first addend")
///     .describe_arg("b", "The second addend");
/// let tools = FnToolBox::new([add]).unwrap();
/// # let _ = tools;
/// ```
pub fn tool_fn<T, M, F>(name: impl Into<String>, description: impl Into<String>, f: F) -> FnTool
where
    T: DeserializeOwned + JsonSchema + Send + 'static,
    F: ToolClosure<T, M>,
    F::Output: Serialize,
{
    FnTool::build(name.into(), description.into(), f, |output| {
        ToolResponse::from_output(&output)
    })
}

/// A tool from a fallible closure: `Ok(v)` reaches the model by the
/// serialization rule, `Err(e)` as an error response with `e`'s text (the
/// operator also gets its `source()` chain). Any `E: Into<BoxError>` works:
/// `String`, `&str`, std errors, `anyhow::Error`.
pub fn try_tool_fn<T, M, F, O, E>(
    name: impl Into<String>,
    description: impl Into<String>,
    f: F,
) -> FnTool
where
    T: DeserializeOwned + JsonSchema + Send + 'static,
    F: ToolClosure<T, M, Output = Result<O, E>>,
    O: Serialize,
    E: Into<BoxError>,
{
    FnTool::build(name.into(), description.into(), f, |output| match output {
        Ok(value) => ToolResponse::from_output(&value),
        Err(error) => Err(ToolError::from_error(error)),
    })
}

impl FnTool {
    fn build<T, M, F, G>(name: String, description: String, f: F, finish: G) -> Self
    where
        T: DeserializeOwned + JsonSchema + Send + 'static,
        F: ToolClosure<T, M>,
        G: Fn(F::Output) -> DispatchResult + Copy + Send + Sync + 'static,
    {
        let mut problems = Vec::new();
        let parameters = arguments_schema::<T>().unwrap_or_else(|problem| {
            problems.push(problem);
            crate::schema::empty_object_schema()
        });
        let takes_unit = <T as JsonSchema>::schema_name() == "null";
        let take = move |arguments: Arguments<'_>| -> Result<T, ToolError> {
            if takes_unit {
                unit_arguments(arguments).and_then(|()| {
                    serde_json::from_value::<T>(Value::Null)
                        .map_err(|e| ToolError::invalid_arguments("", e.to_string()))
                })
            } else {
                arguments.deserialize_tool::<T>()
            }
        };
        let invoke = move |arguments: Arguments<'_>, ctx: &Context| -> DispatchFuture<'static> {
            match take(arguments) {
                Ok(parsed) => {
                    let future = f.run(parsed, ctx);
                    DispatchFuture::new(async move { finish(future.await) })
                }
                Err(error) => DispatchFuture::ready(Err(error)),
            }
        };
        FnTool {
            specification: ToolSpecification {
                name,
                title: None,
                description,
                parameters,
                output_schema: None,
                annotations: None,
                namespace: None,
                deferred: false,
                examples: Vec::new(),
                ui: None,
                callers: crate::callers::Callers::DIRECT,
                task: crate::spec::TaskSupport::Never,
            },
            invoke: Arc::new(invoke),
            check: Arc::new(move |arguments| take(arguments).map(drop)),
            timeout: None,
            problems,
        }
    }

    /// Replaces the tool's description.
    pub fn describe(mut self, description: impl Into<String>) -> Self {
        self.specification.description = description.into();
        self
    }

    /// Describes one argument. Naming an argument the tool does not have is
    /// reported when the tool is put in a [`FnToolBox`].
    pub fn describe_arg(mut self, argument: &str, description: impl Into<String>) -> Self {
        if let Err(problem) = describe_property(
            &mut self.specification.parameters,
            argument,
            &description.into(),
        ) {
            self.problems.push(format!("`describe_arg`: {problem}"));
        }
        self
    }

    /// Sets a display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.specification.title = Some(title.into());
        self
    }

    /// Marks the tool read-only: it may run in parallel with other read-only calls.
    pub fn read_only(mut self) -> Self {
        self.annotations().read_only = Some(true);
        self
    }

    /// Marks the tool destructive: it never runs concurrently with other calls of a turn.
    pub fn destructive(mut self) -> Self {
        self.annotations().destructive = Some(true);
        self
    }

    /// Marks the tool open-world: it reaches outside systems (the web, a
    /// third party's API).
    pub fn open_world(mut self) -> Self {
        self.annotations().open_world = Some(true);
        self
    }

    /// Marks the tool idempotent.
    pub fn idempotent(mut self) -> Self {
        self.annotations().idempotent = Some(true);
        self
    }

    /// Adds an example argument object, shown to the model (Anthropic's
    /// `input_examples`, appended to the description elsewhere) and
    /// checked against the tool's schema by
    /// `testing::check_surface`.
    pub fn with_example(mut self, example: serde_json::Value) -> Self {
        self.specification.examples.push(example);
        self
    }

    /// Marks the tool deferred: a `toolbox::catalog::Catalog`
    /// offers it only once a tool search revealed it.
    pub fn defer(mut self) -> Self {
        self.specification.deferred = true;
        self
    }

    /// Gives the tool an MCP Apps view (`_meta.ui`: its `ui://` resource,
    /// who may call it); a tool whose visibility leaves the model out is
    /// never offered to a model.
    pub fn ui(mut self, ui: crate::spec::ToolUi) -> Self {
        self.specification.ui = Some(ui);
        self
    }

    /// Runs the tool as an MCP task when served, for clients that declared
    /// the extension ([`TaskSupport::Optional`](crate::spec::TaskSupport)), or
    /// only as one ([`TaskSupport::Required`](crate::spec::TaskSupport)); either
    /// makes it an `async` tool for OpenAI Responses.
    pub fn task(mut self, task: crate::spec::TaskSupport) -> Self {
        self.specification.task = task;
        self
    }

    /// Sets who may call the tool: the model directly (the default), code
    /// the model wrote, or both (see `toolbox::program`). A tool
    /// only code may call is absent from the model's direct list.
    pub fn callers(mut self, callers: crate::callers::Callers) -> Self {
        self.specification.callers = callers;
        self
    }

    /// Puts the tool in a namespace (see [`Namespace`](crate::spec::Namespace)).
    pub fn namespace(mut self, name: impl Into<String>, description: impl Into<String>) -> Self {
        self.specification.namespace = Some(crate::spec::Namespace::new(name, description));
        self
    }

    /// Ends a call of this tool that runs longer than `limit`.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Replaces the argument schema with one written by hand (every 2020-12
    /// keyword kept as written, `$schema` included), e.g. for a closure over
    /// `serde_json::Value` whose arguments a hand-made schema describes
    /// better. The closure's type still takes the arguments in: the two
    /// must agree. A schema that is not an object is reported when the tool
    /// is put in a [`FnToolBox`].
    pub fn with_parameters(mut self, schema: Value) -> Self {
        if schema.get("type").and_then(Value::as_str) == Some("object") {
            self.specification.parameters = schema;
        } else {
            self.problems.push(
                "`with_parameters`: the argument schema must be `\"type\": \"object\"`".to_owned(),
            );
        }
        self
    }

    /// Sets the schema of the tool's result.
    pub fn output_schema<O: JsonSchema>(mut self) -> Self {
        self.specification.output_schema = crate::schema::output_schema::<O>();
        self
    }

    /// The tool's specification.
    pub fn specification(&self) -> &ToolSpecification {
        &self.specification
    }

    fn annotations(&mut self) -> &mut ToolAnnotations {
        self.specification
            .annotations
            .get_or_insert_with(Default::default)
    }
}

fn unit_arguments(arguments: Arguments<'_>) -> Result<(), ToolError> {
    let arguments = arguments.to_value()?;
    match arguments.as_object().and_then(|o| o.keys().next()) {
        None => Ok(()),
        Some(key) => Err(ToolError::invalid_arguments(
            "",
            format!(
                "unknown field `{}`: this tool takes no arguments",
                crate::echo::echo(key)
            ),
        )),
    }
}

impl std::fmt::Debug for FnTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnTool")
            .field("specification", &self.specification)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// A box of closure tools ([`FnTool`]s from [`tool_fn`]), routed by name
/// in O(1).
#[derive(Clone, Debug)]
pub struct FnToolBox {
    tools: Vec<FnTool>,
    index: FxHashMap<String, usize>,
}

impl FnToolBox {
    /// A box of these tools. Fails, listing every problem at once, on an
    /// illegal or duplicate name, a non-object argument type, a
    /// `describe_arg` naming a missing argument, or a namespace whose name
    /// is illegal, whose description is empty or too long, or which two
    /// tools describe differently (what `toolbox::catalog::Catalog`
    /// would refuse later).
    pub fn new(tools: impl IntoIterator<Item = FnTool>) -> Result<Self, DefinitionError> {
        let mut problems = Vec::new();
        let mut index = FxHashMap::default();
        let mut namespaces: FxHashMap<&str, (&str, &str)> = FxHashMap::default();
        let tools: Vec<FnTool> = tools.into_iter().collect();
        for (position, tool) in tools.iter().enumerate() {
            let name = &tool.specification.name;
            if let Some(namespace) = &tool.specification.namespace {
                if let Some(problem) = namespace.problem() {
                    problems.push(format!(
                        "tool `{name}`: namespace `{}`: {problem}",
                        namespace.name
                    ));
                }
                match namespaces.get(namespace.name.as_str()) {
                    Some((first, description)) if *description != namespace.description => {
                        problems.push(format!(
                            "namespace `{}` is described one way by tool `{first}` and another by tool `{name}`; give it one description",
                            namespace.name
                        ));
                    }
                    Some(_) => {}
                    None => {
                        namespaces.insert(&namespace.name, (name, &namespace.description));
                    }
                }
            }
            if let Some(problem) = tool_name_problem(name) {
                problems.push(problem);
            }
            for problem in &tool.problems {
                problems.push(format!("tool `{name}`: {problem}"));
            }
            if tool.specification.description.trim().is_empty() {
                problems.push(format!(
                    "tool `{name}` has no description; the model needs one"
                ));
            }
            if index.insert(name.clone(), position).is_some() {
                problems.push(format!("two tools are named `{name}`"));
            }
        }
        if problems.is_empty() {
            Ok(FnToolBox { tools, index })
        } else {
            Err(DefinitionError::new(problems))
        }
    }

    fn get(&self, name: &str) -> Option<&FnTool> {
        // A handful of names compare faster than they hash.
        if self.tools.len() <= 8 {
            return self.tools.iter().find(|t| t.specification.name == name);
        }
        self.index.get(name).map(|&i| &self.tools[i])
    }
}

impl ToolBox for FnToolBox {
    fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
        self.tools.iter().map(|t| t.specification.clone()).collect()
    }

    fn specification(
        &self,
        name: &str,
        _: &Context,
    ) -> Option<std::borrow::Cow<'_, ToolSpecification>> {
        self.get(name)
            .map(|t| std::borrow::Cow::Borrowed(&t.specification))
    }

    fn contains(&self, name: &str, _: &Context) -> bool {
        self.get(name).is_some()
    }

    fn check(&self, name: &str, arguments: Arguments<'_>, _: &Context) -> Result<(), ToolError> {
        match self.get(name) {
            Some(tool) => (tool.check)(arguments),
            None => {
                let names = self.tools.iter().map(|t| t.specification.name.as_str());
                Err(ToolError::unknown_tool(name, names))
            }
        }
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        match self.get(name) {
            Some(tool) => {
                let call = (tool.invoke)(arguments, ctx);
                match tool.timeout {
                    None => call,
                    Some(limit) => DispatchFuture::new(time_limited(limit, call)),
                }
            }
            None => {
                let names = self.tools.iter().map(|t| t.specification.name.as_str());
                DispatchFuture::ready(Err(ToolError::unknown_tool(name, names)))
            }
        }
    }
}
