//! What a provider is offered of a tool set, and what it refuses in it:
//! one screening that [`Provider::definitions`] answers with its first
//! refusal and `check_surface` reports
//! whole, so the CI check passes nothing the request refuses.

use std::borrow::Cow;

use serde_json::Value;

use super::check::{request_limits, validate_request, Violation};
use super::{code, Provider, ProviderError};
use toolbox_core::ToolSpecification;

/// A tool set screened for a provider (see [`Provider::screen`]).
pub struct Screened {
    /// Each tool, in order.
    pub tools: Vec<Screen>,
    /// The limits on one request the tools break together.
    pub request: Option<ProviderError>,
}

/// One tool screened for a provider.
pub struct Screen {
    /// Set when only code may call the tool and the provider runs none.
    pub caller: Option<ProviderError>,
    /// The tool's argument schema lowered for the provider, or why it
    /// cannot be.
    pub parameters: Result<Value, ProviderError>,
}

impl Screened {
    /// What [`Provider::definitions`] answers: every tool's lowered
    /// schema, or the first refusal: a tool only code may call, else a
    /// schema that cannot be lowered, else the request's limits.
    pub fn parameters(self) -> Result<Vec<Value>, ProviderError> {
        let mut tools = self.tools;
        if let Some(at) = tools.iter().position(|t| t.caller.is_some()) {
            if let Some(refusal) = tools.swap_remove(at).caller {
                return Err(refusal);
            }
        }
        let parameters = tools
            .into_iter()
            .map(|t| t.parameters)
            .collect::<Result<Vec<_>, _>>()?;
        match self.request {
            Some(refusal) => Err(refusal),
            None => Ok(parameters),
        }
    }
}

impl Provider {
    /// Whether this provider is offered `spec`: MCP serves every tool; a
    /// model provider is never offered an MCP Apps tool whose visibility
    /// leaves out the model.
    pub fn offers(self, spec: &ToolSpecification) -> bool {
        matches!(self, Provider::Mcp) || spec.for_model()
    }

    /// The tools of `specs` this provider is [offered](Self::offers), in
    /// order (borrowed when that is all of them).
    #[doc(hidden)]
    pub fn offered(self, specs: &[ToolSpecification]) -> Cow<'_, [ToolSpecification]> {
        if specs.iter().all(|s| self.offers(s)) {
            Cow::Borrowed(specs)
        } else {
            Cow::Owned(specs.iter().filter(|s| self.offers(s)).cloned().collect())
        }
    }

    /// Everything [`definitions`](Self::definitions) refuses in `specs`
    /// (tools it is offered), every refusal rather than the first: each
    /// tool only code may call where the provider runs no code, each
    /// schema that cannot be lowered, the limits on one request the
    /// lowered schemas break together (Anthropic strict).
    #[doc(hidden)]
    pub fn screen<'s>(self, specs: impl IntoIterator<Item = &'s ToolSpecification>) -> Screened {
        let tools: Vec<Screen> = specs
            .into_iter()
            .map(|spec| Screen {
                caller: code::caller_refusal(self, spec),
                parameters: self.parameters(spec),
            })
            .collect();
        let dialect = self.dialect();
        let request = request_limits(dialect).and_then(|_| {
            let lowered: Vec<Value> = tools
                .iter()
                .filter_map(|t| t.parameters.as_ref().ok().cloned())
                .collect();
            let problems = validate_request(&lowered, dialect);
            (!problems.is_empty()).then(|| ProviderError::Request {
                dialect: dialect.label(),
                problems,
            })
        });
        Screened { tools, request }
    }
}

impl ProviderError {
    /// This refusal as a surface check reports it: the tool, where, and
    /// the rule (one violation for each limit a request breaks).
    #[doc(hidden)]
    pub fn violations(&self) -> Vec<Violation> {
        let violation = |tool: &str, path: &str, rule: String| Violation {
            tool: tool.to_owned(),
            path: path.to_owned(),
            rule,
        };
        match self {
            ProviderError::Lower { tool, source, .. } => {
                vec![violation(tool, &source.path, source.message.clone())]
            }
            ProviderError::Request { problems, .. } => problems
                .iter()
                .map(|problem| violation("", "", problem.clone()))
                .collect(),
            ProviderError::Caller { tool, provider } => {
                vec![violation(tool, "", super::only_code(provider))]
            }
            ProviderError::Malformed { path, message, .. } => {
                vec![violation("", path, message.clone())]
            }
        }
    }
}
