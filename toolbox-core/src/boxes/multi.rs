//! `MultiToolBox`: named boxes merged into one, each tool exposed as
//! `{box}_{tool}`.

use std::collections::HashMap;
use std::sync::Arc;

use crate::dispatch::BoxFuture;
use crate::dispatch::DispatchFuture;
use crate::spec::tool_name_problem;
use crate::{
    args::Arguments, context::Context, error::DefinitionError, error::ToolError,
    spec::ToolSpecification, toolbox::NamedToolBox, toolbox::ToolBox,
};
use rustc_hash::FxHashMap;

/// Named boxes merged into one. A tool `get` of box `crm` is exposed as
/// `crm_get`, so two boxes may both have a `get`. Calls are routed back by
/// the prefix in O(1) of the number of boxes. `close()` closes every child.
///
/// ```
/// use toolbox_core::{EmptyToolBox, MultiToolBox};
/// let merged = MultiToolBox::builder()
///     .add("crm", EmptyToolBox)
///     .add("orders", EmptyToolBox)
///     .build()
///     .unwrap();
/// assert_eq!(merged.box_names().collect::<Vec<_>>(), ["crm", "orders"]);
/// ```
pub struct MultiToolBox {
    children: Vec<Child>,
    by_name: FxHashMap<Box<str>, usize>,
}

struct Child {
    name: String,
    toolbox: Arc<dyn ToolBox>,
}

/// Collects the boxes of a [`MultiToolBox`]; [`build`](Self::build) checks them.
#[derive(Default)]
pub struct MultiToolBoxBuilder {
    children: Vec<Child>,
}

impl MultiToolBoxBuilder {
    /// Adds a box under `name`.
    pub fn add(self, name: impl Into<String>, toolbox: impl ToolBox + 'static) -> Self {
        self.add_shared(name, Arc::new(toolbox))
    }

    /// Adds a box under its own name (`#[tool_box]` boxes know theirs).
    pub fn add_box(self, toolbox: impl NamedToolBox + 'static) -> Self {
        let name = toolbox.box_name().to_owned();
        self.add(name, toolbox)
    }

    /// Adds a shared box under `name`.
    pub fn add_shared(mut self, name: impl Into<String>, toolbox: Arc<dyn ToolBox>) -> Self {
        self.children.push(Child {
            name: name.into(),
            toolbox,
        });
        self
    }

    /// Builds the merged box. Fails, listing every problem at once, when two
    /// boxes share a name, a box name is illegal, or an exposed name collides
    /// with another or breaks the providers' name rules. Every tool a box can
    /// ever offer counts (its [`catalog`](ToolBox::catalog)), so a merge
    /// cannot collide only in some contexts.
    pub fn build(self) -> Result<MultiToolBox, DefinitionError> {
        let mut problems = Vec::new();
        let mut by_name = FxHashMap::default();
        let mut exposed: HashMap<String, (String, String)> = HashMap::new();
        for (position, child) in self.children.iter().enumerate() {
            if child.name.is_empty() {
                problems.push("a box name must not be empty".to_owned());
            } else if let Some(problem) = tool_name_problem(&child.name) {
                problems.push(format!("box name: {problem}"));
            }
            if by_name
                .insert(child.name.clone().into_boxed_str(), position)
                .is_some()
            {
                problems.push(format!("two boxes are named `{}`", child.name));
            }
            for spec in child.toolbox.catalog() {
                let name = exposed_name(&child.name, &spec.name);
                if let Some(problem) = tool_name_problem(&name) {
                    problems.push(format!(
                        "tool `{}` of box `{}` is exposed as `{name}`, which is illegal: {problem}",
                        spec.name, child.name
                    ));
                }
                if let Some((other_box, other_tool)) = exposed.get(&name) {
                    problems.push(format!(
                        "exposed name `{name}` collides: tool `{other_tool}` of box `{other_box}` and tool `{}` of box `{}`",
                        spec.name, child.name
                    ));
                } else {
                    exposed.insert(name, (child.name.clone(), spec.name));
                }
            }
        }
        if problems.is_empty() {
            Ok(MultiToolBox {
                children: self.children,
                by_name,
            })
        } else {
            Err(DefinitionError::new(problems))
        }
    }
}

fn exposed_name(box_name: &str, tool: &str) -> String {
    let mut name = String::with_capacity(box_name.len() + 1 + tool.len());
    name.push_str(box_name);
    name.push('_');
    name.push_str(tool);
    name
}

impl MultiToolBox {
    /// Starts a merge.
    pub fn builder() -> MultiToolBoxBuilder {
        MultiToolBoxBuilder::default()
    }

    /// The names of the merged boxes, in the order they were added.
    pub fn box_names(&self) -> impl Iterator<Item = &str> {
        self.children.iter().map(|c| c.name.as_str())
    }

    /// The child box and where the tool name starts within an exposed name.
    /// Only the `_` positions of the name are tried, each one hash lookup.
    fn route(&self, name: &str, ctx: &Context) -> Option<(&Child, usize)> {
        // A box name is at most 64 characters: later `_`s cannot end one,
        // so a name full of `_` costs at most 64 short lookups.
        let mut candidates = name
            .match_indices('_')
            .take_while(|(split, _)| *split <= 64)
            .filter_map(|(split, _)| {
                Some((
                    &self.children[*self.by_name.get(&name[..split])?],
                    split + 1,
                ))
            });
        let first = candidates.next()?;
        if first.0.toolbox.contains(&name[first.1..], ctx) {
            return Some(first);
        }
        // Several boxes can be prefixes of one name (`a` and `a_b`): the one
        // holding the tool wins; `build` refused true collisions.
        candidates.find(|(child, start)| child.toolbox.contains(&name[*start..], ctx))
    }

    /// Every child's tools, as `list` gives them, under their exposed names.
    fn exposed(
        &self,
        list: impl Fn(&dyn ToolBox) -> Vec<ToolSpecification>,
    ) -> Vec<ToolSpecification> {
        let mut specs = Vec::new();
        for child in &self.children {
            specs.extend(list(&*child.toolbox).into_iter().map(|mut spec| {
                spec.name = exposed_name(&child.name, &spec.name);
                spec
            }));
        }
        specs
    }

    /// A child's refusal as the caller must read it: the exposed name, and
    /// suggestions among the exposed names of every box.
    fn exposed_error(&self, error: ToolError, name: &str, ctx: &Context) -> ToolError {
        match error {
            ToolError::UnknownTool { .. } => self.unknown(name, ctx),
            ToolError::NotAvailable { .. } => ToolError::NotAvailable {
                name: name.to_owned(),
            },
            other => other,
        }
    }

    fn unknown(&self, name: &str, ctx: &Context) -> ToolError {
        let names: Vec<String> = self
            .specifications(ctx)
            .into_iter()
            .map(|s| s.name)
            .collect();
        ToolError::unknown_tool(name, names.iter().map(String::as_str))
    }
}

impl ToolBox for MultiToolBox {
    fn specifications(&self, ctx: &Context) -> Vec<ToolSpecification> {
        self.exposed(|toolbox| toolbox.specifications(ctx))
    }

    fn contains(&self, name: &str, ctx: &Context) -> bool {
        self.route(name, ctx).is_some()
    }

    fn catalog(&self) -> Vec<ToolSpecification> {
        self.exposed(|toolbox| toolbox.catalog())
    }

    fn check(&self, name: &str, arguments: Arguments<'_>, ctx: &Context) -> Result<(), ToolError> {
        match self.route(name, ctx) {
            Some((child, start)) => child
                .toolbox
                .check(&name[start..], arguments, ctx)
                .map_err(|error| self.exposed_error(error, name, ctx)),
            None => Err(self.unknown(name, ctx)),
        }
    }

    fn specification(
        &self,
        name: &str,
        ctx: &Context,
    ) -> Option<std::borrow::Cow<'_, ToolSpecification>> {
        let (child, start) = self.route(name, ctx)?;
        let mut spec = child
            .toolbox
            .specification(&name[start..], ctx)?
            .into_owned();
        spec.name = name.to_owned();
        Some(std::borrow::Cow::Owned(spec))
    }

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: Arguments<'a>,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        match self.route(name, ctx) {
            Some((child, start)) => {
                match child
                    .toolbox
                    .dispatch(&name[start..], arguments, ctx)
                    .into_ready()
                {
                    // Refusals come back at once: they name the tool as the
                    // caller called it, never as the child knows it.
                    Ok(Err(error)) => {
                        DispatchFuture::ready(Err(self.exposed_error(error, name, ctx)))
                    }
                    Ok(result) => DispatchFuture::ready(result),
                    Err(pending) => pending,
                }
            }
            None => DispatchFuture::ready(Err(self.unknown(name, ctx))),
        }
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        Box::pin(async move {
            let mut first_error = None;
            for child in &self.children {
                if let Err(error) = child.toolbox.close().await {
                    first_error.get_or_insert(error);
                }
            }
            first_error.map_or(Ok(()), Err)
        })
    }
}

impl std::fmt::Debug for MultiToolBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiToolBox")
            .field("boxes", &self.box_names().collect::<Vec<_>>())
            .finish()
    }
}
