//! OpenAI Responses' `namespace` tools: the functions of a namespace sent
//! inside it, with or without a catalogue.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{Provider, ProviderError};
use toolbox_core::ToolSpecification;

/// OpenAI Responses tools: functions in their namespaces (in the order of
/// each namespace's first tool), the deferred ones `defer_loading`.
#[doc(hidden)]
pub fn responses_tools(
    provider: Provider,
    specs: &[&ToolSpecification],
) -> Result<Vec<Value>, ProviderError> {
    let defined = specs
        .iter()
        .map(|spec| Ok((*spec, provider.definition(spec)?)))
        .collect::<Result<Vec<_>, ProviderError>>()?;
    Ok(place(defined))
}

/// Each tool's OpenAI Responses definition placed in its namespace (in
/// the order of each namespace's first tool), the deferred ones
/// `defer_loading`.
pub(super) fn place<'s>(
    defined: impl IntoIterator<Item = (&'s ToolSpecification, Value)>,
) -> Vec<Value> {
    let mut tools: Vec<Value> = Vec::new();
    let mut slots: HashMap<&str, usize> = HashMap::new();
    for (spec, mut definition) in defined {
        if spec.deferred {
            definition["defer_loading"] = Value::Bool(true);
        }
        match &spec.namespace {
            None => tools.push(definition),
            Some(namespace) => {
                let slot = *slots.entry(&namespace.name).or_insert_with(|| {
                    tools.push(json!({
                        "type": "namespace",
                        "name": namespace.name,
                        "description": namespace.description,
                        "tools": []
                    }));
                    tools.len() - 1
                });
                if let Some(Value::Array(members)) = tools[slot].get_mut("tools") {
                    members.push(definition);
                }
            }
        }
    }
    tools
}
