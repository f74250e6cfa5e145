//! The `ToolBox` contract: implementors write raw dispatch and the schema;
//! the public call path is [`ToolBoxExt::call`](crate::ToolBoxExt::call), which nobody can override.

use std::borrow::Cow;
use std::sync::Arc;

use crate::args::Arguments;
use crate::context::Context;
use crate::dispatch::{BoxFuture, DispatchFuture};
use crate::error::ToolError;
use crate::spec::ToolSpecification;

/// A set of tools.
///
/// Implement this for a new kind of box: list the tools and run one by name.
/// Callers never use [`dispatch`](ToolBox::dispatch) directly; they call
/// [`ToolBoxExt::call`](crate::ToolBoxExt::call), the one lifecycle every call passes (events, timing,
/// tracing, panic capture, serialization). Because `ToolBoxExt` has a blanket
/// implementation, no box can replace or skip it.
///
/// ```
/// use serde_json::{json, Value};
/// use toolbox_core::{
///     Arguments, Context, ToolBox, ToolBoxExt, ToolError, ToolHandler, ToolResponse,
///     ToolSpecification,
/// };
/// use toolbox_core::dispatch::DispatchFuture;
///
/// struct Echo;
///
/// impl ToolBox for Echo {
///     fn specifications(&self, _: &Context) -> Vec<ToolSpecification> {
///         vec![ToolSpecification::new("echo", "Repeats the text").with_parameters(json!({
///             "type": "object",
///             "properties": {"text": {"type": "string"}},
///             "required": ["text"]
///         }))]
///     }
///
///     fn dispatch<'a>(&'a self, name: &'a str, arguments: Arguments<'a>, _: &'a Context) -> DispatchFuture<'a> {
///         if name != "echo" {
///             return DispatchFuture::ready(Err(ToolError::unknown_tool(name, ["echo"])));
///         }
///         #[derive(serde::Deserialize)]
///         struct Args { text: String }
///         DispatchFuture::new(async move {
///             let args: Args = arguments.deserialize()?;
///             ToolResponse::from_output(&args.text)
///         })
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let response = Echo.call("echo", &json!({"text": "hi"}), &Context::new(), &ToolHandler::empty()).await;
/// assert_eq!(response.content, "hi");
/// # });
/// ```
pub trait ToolBox: Send + Sync {
    /// The tools offered in this context.
    fn specifications(&self, ctx: &Context) -> Vec<ToolSpecification>;

    /// The specification of one tool offered in this context, borrowed when
    /// the box holds it as is. Override when the box can answer without
    /// listing every tool: conditions check it on every call.
    fn specification(&self, name: &str, ctx: &Context) -> Option<Cow<'_, ToolSpecification>> {
        self.specifications(ctx)
            .into_iter()
            .find(|s| s.name == name)
            .map(Cow::Owned)
    }

    /// Whether the box has a tool of this name, offered or hidden in this
    /// context. Override with an O(1) lookup: composed boxes route by it.
    fn contains(&self, name: &str, ctx: &Context) -> bool {
        self.specification(name, ctx).is_some()
    }

    /// Every tool the box can ever offer, whatever the context: what
    /// registration, scanning and merge collision checks look at, so a tool
    /// offered only to some contexts is never dropped or shadowed. The
    /// default is the offer in an empty context; boxes whose offer depends
    /// on the context (conditions) override it.
    fn catalog(&self) -> Vec<ToolSpecification> {
        self.specifications(&Context::new())
    }

    /// Checks a call without running it, with the same code that would take
    /// its arguments in: `Ok` exactly when dispatch would get past argument
    /// intake. The turn runner asks it before the approval hook, so a call
    /// runs only after the hook approved arguments that the tool accepts.
    ///
    /// The default refuses tools not offered in `ctx` and checks the
    /// arguments against the tool's JSON Schema; boxes that deserialize
    /// into Rust types (`#[tool_box]`, closure tools) override it with
    /// their deserializer.
    fn check(&self, name: &str, arguments: Arguments<'_>, ctx: &Context) -> Result<(), ToolError> {
        match self.specification(name, ctx) {
            Some(spec) => {
                let arguments = arguments.to_value()?;
                crate::schema::check_arguments(&spec.parameters, &arguments)
            }
            None if self.contains(name, ctx) => Err(ToolError::NotAvailable {
                name: name.to_owned(),
            }),
            None => Err(ToolError::unknown_tool(
                name,
                self.specifications(ctx).iter().map(|s| s.name.as_str()),
            )),
        }
    }

    /// Runs the tool `name` with the arguments as the caller sent them
    /// (take them in with [`Arguments::deserialize`] or
    /// [`Arguments::to_value`]). Raw: no events, no timing, no panic
    /// capture; those are the lifecycle's (a box that catches its tools'
    /// panics itself says so with [`catches_panics`](Self::catches_panics)).
    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a>;

    /// Whether [`dispatch`](Self::dispatch) never unwinds: every panic of
    /// the tool's own code (its argument types, its body, its result's
    /// `Serialize`, `Display` and `Drop`) is caught there and returned as
    /// [`ToolError::Panicked`]. The lifecycle then calls a quiet call's
    /// dispatch without a guard of its own. `#[tool_box]` and `#[tool]`
    /// boxes do; the default, `false`, is always safe.
    fn catches_panics(&self) -> bool {
        false
    }

    /// Releases what the box holds (sessions, child processes). Composed
    /// boxes close their children.
    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        Box::pin(std::future::ready(Ok(())))
    }
}

/// The listing half of a wrapper's `ToolBox` impl, forwarded to the box in
/// the field named: `specifications`, `specification`, `contains`,
/// `catalog` and `check`, so the wrapper offers what the wrapped box
/// offers, with its O(1) lookups. Pair it with [`forward_calls!`](crate::forward_calls) when the
/// calls are forwarded too, or write `dispatch` yourself (a decorator).
///
/// ```
/// use toolbox_core::{forward_calls, forward_listing, tool_fn, FnToolBox, ToolBox};
///
/// /// A box that carries what its owner needs beside the tools.
/// struct Labelled<B> {
///     label: &'static str,
///     inner: B,
/// }
///
/// impl<B: ToolBox> ToolBox for Labelled<B> {
///     forward_listing!(inner);
///     forward_calls!(inner);
/// }
///
/// let tools = FnToolBox::new([tool_fn("ping", "Answers pong.", |_: ()| async { "pong" })]).unwrap();
/// let labelled = Labelled { label: "health", inner: tools };
/// let ctx = toolbox_core::Context::new();
/// assert!(labelled.contains("ping", &ctx) && labelled.label == "health");
/// // Dispatch is the inner box's, so is its promise not to unwind.
/// assert_eq!(labelled.catches_panics(), labelled.inner.catches_panics());
/// ```
#[macro_export]
macro_rules! forward_listing {
    ($field:ident) => {
        fn specifications(
            &self,
            ctx: &$crate::Context,
        ) -> ::std::vec::Vec<$crate::ToolSpecification> {
            self.$field.specifications(ctx)
        }

        fn specification(
            &self,
            name: &str,
            ctx: &$crate::Context,
        ) -> ::core::option::Option<::std::borrow::Cow<'_, $crate::ToolSpecification>> {
            self.$field.specification(name, ctx)
        }

        fn contains(&self, name: &str, ctx: &$crate::Context) -> bool {
            self.$field.contains(name, ctx)
        }

        fn catalog(&self) -> ::std::vec::Vec<$crate::ToolSpecification> {
            self.$field.catalog()
        }

        fn check(
            &self,
            name: &str,
            arguments: $crate::Arguments<'_>,
            ctx: &$crate::Context,
        ) -> ::core::result::Result<(), $crate::ToolError> {
            self.$field.check(name, arguments, ctx)
        }
    };
}

/// The calling half of a wrapper's `ToolBox` impl, forwarded to the box in
/// the field named: `dispatch`, `close`, and `catches_panics`, which is
/// the wrapped box's answer because a dispatch forwarded unchanged runs no
/// code of the wrapper's that could unwind. A wrapper that adds code
/// around the call writes its own `dispatch` and keeps the default
/// `catches_panics` (`false`), unless that code can never panic. See
/// [`forward_listing!`](crate::forward_listing) for an example.
#[macro_export]
macro_rules! forward_calls {
    ($field:ident) => {
        fn dispatch<'a>(
            &'a self,
            name: &'a str,
            arguments: $crate::Arguments<'a>,
            ctx: &'a $crate::Context,
        ) -> $crate::dispatch::DispatchFuture<'a> {
            self.$field.dispatch(name, arguments, ctx)
        }

        fn catches_panics(&self) -> bool {
            self.$field.catches_panics()
        }

        fn close(
            &self,
        ) -> $crate::dispatch::BoxFuture<'_, ::core::result::Result<(), $crate::ToolError>> {
            self.$field.close()
        }
    };
}

macro_rules! forward_toolbox {
    ($($ptr:ty),*) => {$(
        impl<T: ToolBox + ?Sized> ToolBox for $ptr {
            fn specifications(&self, ctx: &Context) -> Vec<ToolSpecification> {
                (**self).specifications(ctx)
            }
            fn specification(&self, name: &str, ctx: &Context) -> Option<Cow<'_, ToolSpecification>> {
                (**self).specification(name, ctx)
            }
            fn contains(&self, name: &str, ctx: &Context) -> bool {
                (**self).contains(name, ctx)
            }
            fn catalog(&self) -> Vec<ToolSpecification> {
                (**self).catalog()
            }
            fn check(&self, name: &str, arguments: Arguments<'_>, ctx: &Context) -> Result<(), ToolError> {
                (**self).check(name, arguments, ctx)
            }
            fn dispatch<'a>(&'a self, name: &'a str, arguments: Arguments<'a>, ctx: &'a Context) -> DispatchFuture<'a> {
                (**self).dispatch(name, arguments, ctx)
            }
            fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
                (**self).close()
            }
            fn catches_panics(&self) -> bool {
                (**self).catches_panics()
            }
        }
    )*};
}

forward_toolbox!(Arc<T>, Box<T>, &T);

/// A box that knows its own name: what `#[tool_box]` generates (the snake
/// case of the type or module, or `name = "…"`). Registries and
/// [`MultiToolBoxBuilder::add_box`](crate::boxes::MultiToolBoxBuilder::add_box) use it.
pub trait NamedToolBox: ToolBox {
    /// The box's name.
    fn box_name(&self) -> &str;

    /// What the box is for (the doc comment of the annotated item).
    fn box_description(&self) -> Option<&str> {
        None
    }
}

impl<T: NamedToolBox + ?Sized> NamedToolBox for Arc<T> {
    fn box_name(&self) -> &str {
        (**self).box_name()
    }
    fn box_description(&self) -> Option<&str> {
        (**self).box_description()
    }
}

#[cfg(test)]
mod check_tests {
    use crate::args::Arguments;
    use crate::schema::check_arguments;
    use serde_json::{json, Value};

    /// What the default `ToolBox::check` does with the arguments as sent.
    fn check(arguments: Value, schema: &Value) -> Result<(), String> {
        let arguments = Arguments::from(&arguments)
            .to_value()
            .map_err(|e| e.to_string())?;
        check_arguments(schema, &arguments).map_err(|e| e.to_string())
    }

    #[test]
    fn arguments_are_checked_against_the_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 0, "maximum": 255},
                "unit": {"anyOf": [{"$ref": "#/$defs/Unit"}, {"type": "null"}]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "maybe": {"type": ["string", "null"]}
            },
            "required": ["n"],
            "additionalProperties": false,
            "$defs": {"Unit": {"type": "string", "enum": ["C", "F"]}}
        });
        assert!(check(
            json!({"n": 1, "unit": "C", "tags": ["a"], "maybe": null}),
            &schema
        )
        .is_ok());
        assert!(check(json!("{\"n\": 2}"), &schema).is_ok());
        assert_eq!(
            check(json!({"n": 300}), &schema).unwrap_err(),
            "invalid arguments at `n`: got `300`, which is out of the allowed range"
        );
        assert_eq!(
            check(json!({"n": 1.5}), &schema).unwrap_err(),
            "invalid arguments at `n`: got `1.5`, expected JSON type integer"
        );
        assert!(
            check(json!({"n": 1, "unit": "K"}), &schema).is_err(),
            "not in the enum behind the ref"
        );
        assert_eq!(
            check(json!({"n": 1, "tags": [1]}), &schema).unwrap_err(),
            "invalid arguments at `tags[0]`: got `1`, expected JSON type string"
        );
        assert_eq!(
            check(json!({"n": 1, "extra": true}), &schema).unwrap_err(),
            "invalid arguments at `extra`: unknown field `extra`, expected one of `n`, `unit`, `tags`, `maybe`"
        );
        assert_eq!(
            check(json!({"unit": "C"}), &schema).unwrap_err(),
            "invalid arguments: missing field `n`"
        );
        assert!(check(json!([1]), &schema).is_err(), "not an object");
    }
}
