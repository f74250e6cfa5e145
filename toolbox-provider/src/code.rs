//! Programmatic tool calling as each provider spells it: the
//! `allowed_callers` list of a tool code may call, the hosted code
//! execution tool beside them, and the refusal of a code-only tool where
//! the provider runs no code.

use serde_json::Value;

use crate::{Provider, ProviderError};
use toolbox_core::spec::Callers;
use toolbox_core::ToolSpecification;

/// The code execution tool version toolbox offers Anthropic models.
pub const ANTHROPIC_CODE_EXECUTION: &str = "code_execution_20260120";

/// The provider's `allowed_callers` list, where the provider has
/// hosted code execution and the tool is not direct only.
pub(crate) fn allowed_callers(callers: Callers, provider: Provider) -> Option<Value> {
    if callers.is_direct_only() {
        return None;
    }
    let code = match provider {
        Provider::Anthropic { .. } => ANTHROPIC_CODE_EXECUTION,
        Provider::OpenAiResponses { .. } => "programmatic",
        _ => return None,
    };
    let mut list = Vec::with_capacity(2);
    if callers.direct() {
        list.push(Value::from("direct"));
    }
    if callers.code() {
        list.push(Value::from(code));
    }
    Some(Value::Array(list))
}

/// Whether a provider runs the model's code itself (its hosted code
/// execution calls the application's tools).
pub fn hosted(provider: Provider) -> bool {
    matches!(
        provider,
        Provider::Anthropic { .. } | Provider::OpenAiResponses { .. }
    )
}

/// The tool the provider's code execution is turned on with.
#[doc(hidden)]
pub fn hosted_tool(provider: Provider) -> Option<Value> {
    match provider {
        Provider::Anthropic { .. } => Some(serde_json::json!({
            "type": ANTHROPIC_CODE_EXECUTION, "name": "code_execution"
        })),
        Provider::OpenAiResponses { .. } => {
            Some(serde_json::json!({"type": "programmatic_tool_calling"}))
        }
        _ => None,
    }
}

/// The refusal, by name, of a tool only code may call where the provider
/// runs no code (MCP serves every tool: its client decides).
pub(crate) fn caller_refusal(
    provider: Provider,
    spec: &ToolSpecification,
) -> Option<ProviderError> {
    if hosted(provider) || matches!(provider, Provider::Mcp) || spec.callers.direct() {
        return None;
    }
    Some(ProviderError::Caller {
        tool: spec.name.clone(),
        provider: provider.name(),
    })
}
