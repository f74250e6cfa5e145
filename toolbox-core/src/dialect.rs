//! The schema dialects: the JSON Schema subset each provider accepts. A
//! leaf: lowering (`provider`) and argument normalization (`normalize`)
//! both speak it.

/// A schema dialect: the JSON Schema subset a provider accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI Structured Outputs (`strict: true`).
    OpenAiStrict,
    /// OpenAI without strict mode.
    OpenAi,
    /// Anthropic strict tool use.
    AnthropicStrict,
    /// Anthropic `input_schema` without strict mode.
    Anthropic,
    /// Gemini `parametersJsonSchema`.
    GeminiJsonSchema,
    /// Gemini's legacy `parameters` (an OpenAPI 3.0 subset).
    GeminiParameters,
    /// MCP `inputSchema` (JSON Schema 2020-12).
    Mcp,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Dialect; 7] = [
        Dialect::OpenAiStrict,
        Dialect::OpenAi,
        Dialect::AnthropicStrict,
        Dialect::Anthropic,
        Dialect::GeminiJsonSchema,
        Dialect::GeminiParameters,
        Dialect::Mcp,
    ];

    /// Whether the dialect can close an object (`additionalProperties:
    /// false`); where it cannot, a model may add keys the tool never
    /// declared, and [`normalize`](crate::args::normalize) drops them.
    pub fn closes_objects(self) -> bool {
        self != Dialect::GeminiParameters
    }

    /// A readable name.
    pub fn label(self) -> &'static str {
        match self {
            Dialect::OpenAiStrict => "OpenAI strict mode",
            Dialect::OpenAi => "OpenAI",
            Dialect::AnthropicStrict => "Anthropic strict tool use",
            Dialect::Anthropic => "Anthropic",
            Dialect::GeminiJsonSchema => "Gemini `parametersJsonSchema`",
            Dialect::GeminiParameters => "Gemini `parameters`",
            Dialect::Mcp => "MCP",
        }
    }
}
