//! Each dialect's rules, in one table that lowering applies and validation
//! checks, so the two cannot disagree: what lowering refuses, drops,
//! renames or moves into the description is exactly what validation flags.

use toolbox_core::schema::Dialect;

/// What a dialect does with a keyword it does not take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fix {
    /// Cannot be expressed: lowering fails with the reason; validation flags it.
    Refuse(Reason),
    /// Another keyword says the same: lowering renames it.
    Rename(&'static str),
    /// Kept as text: lowering appends `{key: value}` to the description.
    Describe,
}

/// Why a keyword cannot be expressed, and what to do instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reason {
    /// Plainly unsupported.
    Unsupported,
    /// `allOf` of several branches: flatten the struct.
    Composition,
    /// A tuple: use a struct.
    Tuple,
    /// An object with arbitrary keys: use a list of key/value structs.
    Map,
}

impl Reason {
    /// The message lowering fails with, for `key` in `dialect`.
    pub(crate) fn message(self, key: &str, dialect: Dialect) -> String {
        let label = dialect.label();
        match self {
            Reason::Unsupported => format!("`{key}` is not supported by {label}"),
            Reason::Composition => format!("`{key}` is not supported by {label}; flatten the struct"),
            Reason::Tuple => {
                format!("a tuple (`prefixItems`) cannot be expressed in {label}; use a struct")
            }
            Reason::Map => format!(
                "a map (an object with arbitrary keys) cannot be expressed in {label}; use a list of key/value structs"
            ),
        }
    }
}

/// One dialect's table.
pub(crate) struct Rules {
    /// How violations are introduced (`OpenAI strict`).
    pub(crate) name: &'static str,
    /// How a flagged keyword is described, `{}` standing for it.
    pub(crate) verdict: &'static str,
    /// How a refused string format is described, `{}` standing for it.
    pub(crate) format_verdict: &'static str,
    /// Keywords the dialect does not take, and what lowering does.
    pub(crate) keywords: &'static [(&'static str, Fix)],
    /// The string formats it accepts (others are dropped); `None`: any.
    pub(crate) formats: Option<&'static [&'static str]>,
    /// The keys a schema node may have (others are dropped); `None`: any.
    pub(crate) keys: Option<&'static [&'static str]>,
}

impl Rules {
    /// What the table says of `key`.
    pub(crate) fn fix(&self, key: &str) -> Option<Fix> {
        self.keywords
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, fix)| *fix)
    }

    /// The rule a node breaks by carrying `key`, if it does.
    pub(crate) fn flags_key(&self, key: &str) -> Option<String> {
        (self.fix(key).is_some() || !self.accepts_key(key))
            .then(|| format!("{}: {}", self.name, self.verdict.replace("{}", key)))
    }

    /// Whether a string `format` is accepted.
    pub(crate) fn accepts_format(&self, format: &str) -> bool {
        self.formats.is_none_or(|formats| formats.contains(&format))
    }

    /// Whether a node may carry `key`.
    pub(crate) fn accepts_key(&self, key: &str) -> bool {
        self.keys.is_none_or(|keys| keys.contains(&key))
    }
}

const CONDITIONALS: [(&str, Fix); 6] = [
    ("not", Fix::Refuse(Reason::Unsupported)),
    ("if", Fix::Refuse(Reason::Unsupported)),
    ("then", Fix::Refuse(Reason::Unsupported)),
    ("else", Fix::Refuse(Reason::Unsupported)),
    ("dependentRequired", Fix::Refuse(Reason::Unsupported)),
    ("dependentSchemas", Fix::Refuse(Reason::Unsupported)),
];

/// Shapes neither strict mode can express: tuples and open maps.
const SHAPES: [(&str, Fix); 3] = [
    ("prefixItems", Fix::Refuse(Reason::Tuple)),
    ("patternProperties", Fix::Refuse(Reason::Map)),
    ("propertyNames", Fix::Refuse(Reason::Map)),
];

const OPENAI_STRICT: Rules = Rules {
    name: "OpenAI strict",
    verdict: "`{}` is not permitted",
    format_verdict: "`{}` is not a supported format",
    keywords: &[
        ("oneOf", Fix::Rename("anyOf")),
        ("allOf", Fix::Refuse(Reason::Composition)),
        CONDITIONALS[0],
        CONDITIONALS[1],
        CONDITIONALS[2],
        CONDITIONALS[3],
        CONDITIONALS[4],
        CONDITIONALS[5],
        SHAPES[0],
        SHAPES[1],
        SHAPES[2],
        ("default", Fix::Describe),
        ("minLength", Fix::Describe),
        ("maxLength", Fix::Describe),
        ("uniqueItems", Fix::Describe),
        ("minProperties", Fix::Describe),
        ("maxProperties", Fix::Describe),
    ],
    formats: Some(&[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uuid",
    ]),
    keys: None,
};

/// Keywords Anthropic strict mode does not support: lowering moves them into
/// the description.
const ANTHROPIC_STRICT: Rules = Rules {
    name: "Anthropic strict",
    verdict: "`{}` is not supported",
    format_verdict: "`{}` is not a supported format",
    keywords: &[
        ("oneOf", Fix::Rename("anyOf")),
        CONDITIONALS[0],
        CONDITIONALS[1],
        CONDITIONALS[2],
        CONDITIONALS[3],
        CONDITIONALS[4],
        CONDITIONALS[5],
        SHAPES[0],
        SHAPES[1],
        SHAPES[2],
        ("minimum", Fix::Describe),
        ("maximum", Fix::Describe),
        ("exclusiveMinimum", Fix::Describe),
        ("exclusiveMaximum", Fix::Describe),
        ("multipleOf", Fix::Describe),
        ("minLength", Fix::Describe),
        ("maxLength", Fix::Describe),
        ("pattern", Fix::Describe),
        ("maxItems", Fix::Describe),
        ("uniqueItems", Fix::Describe),
        ("minProperties", Fix::Describe),
        ("maxProperties", Fix::Describe),
    ],
    formats: Some(&[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "uri",
        "ipv4",
        "ipv6",
        "uuid",
    ]),
    keys: None,
};

const GEMINI_JSON_SCHEMA: Rules = Rules {
    name: "Gemini `parametersJsonSchema`",
    verdict: "`{}` is outside the supported subset",
    format_verdict: "format `{}` is undocumented",
    keywords: &[
        CONDITIONALS[0],
        CONDITIONALS[1],
        CONDITIONALS[2],
        CONDITIONALS[3],
        CONDITIONALS[4],
        CONDITIONALS[5],
        SHAPES[1],
        SHAPES[2],
        ("exclusiveMinimum", Fix::Describe),
        ("exclusiveMaximum", Fix::Describe),
        ("multipleOf", Fix::Describe),
    ],
    formats: Some(&[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "uuid",
        "int32",
        "int64",
        "float",
        "double",
    ]),
    keys: Some(&[
        "type",
        "format",
        "title",
        "description",
        "default",
        "items",
        "minItems",
        "maxItems",
        "enum",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "additionalProperties",
        "anyOf",
        "oneOf",
        "uniqueItems",
        "prefixItems",
        "$ref",
        "$defs",
        "propertyOrdering",
    ]),
};

const GEMINI_PARAMETERS: Rules = Rules {
    name: "Gemini `parameters`",
    verdict: "unknown key `{}`",
    format_verdict: "format `{}` is not supported",
    keywords: &[
        ("oneOf", Fix::Rename("anyOf")),
        CONDITIONALS[0],
        CONDITIONALS[1],
        CONDITIONALS[2],
        CONDITIONALS[3],
        CONDITIONALS[4],
        CONDITIONALS[5],
        SHAPES[0],
        SHAPES[1],
        SHAPES[2],
        ("exclusiveMinimum", Fix::Describe),
        ("exclusiveMaximum", Fix::Describe),
        ("multipleOf", Fix::Describe),
        ("uniqueItems", Fix::Describe),
    ],
    // Formats depend on the type here; see `gemini_parameter_format`.
    formats: None,
    keys: Some(&[
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "properties",
        "required",
        "propertyOrdering",
        "items",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
        "anyOf",
        "default",
        "example",
    ]),
};

const PLAIN: Rules = Rules {
    name: "",
    verdict: "",
    format_verdict: "",
    keywords: &[],
    formats: None,
    keys: None,
};

/// What the provider crate knows of each dialect the core crate names: its
/// table of rules and whether it takes a recursive schema.
pub(crate) trait DialectRules {
    /// This dialect's table.
    fn rules(self) -> &'static Rules;
    /// Whether the dialect takes a recursive schema.
    fn expresses_recursion(self) -> bool;
}

impl DialectRules for Dialect {
    fn rules(self) -> &'static Rules {
        match self {
            Dialect::OpenAiStrict => &OPENAI_STRICT,
            Dialect::AnthropicStrict => &ANTHROPIC_STRICT,
            Dialect::GeminiJsonSchema => &GEMINI_JSON_SCHEMA,
            Dialect::GeminiParameters => &GEMINI_PARAMETERS,
            Dialect::OpenAi | Dialect::Anthropic | Dialect::Mcp => &PLAIN,
        }
    }

    fn expresses_recursion(self) -> bool {
        !matches!(self, Dialect::AnthropicStrict | Dialect::GeminiParameters)
    }
}

/// Whether Gemini's `parameters` accepts `format` on `type`.
pub(crate) fn gemini_parameter_format(ty: Option<&str>, format: &str) -> bool {
    matches!(
        (ty, format),
        (Some("integer"), "int32" | "int64")
            | (Some("number"), "float" | "double")
            | (Some("string"), "date-time" | "enum")
    )
}

/// Whether `name` is a legal parameter name in Gemini's `parameters`.
pub(crate) fn is_gemini_parameter_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 64
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::super::{lower, validate, Dialect};
    use super::DialectRules;

    /// What lowering does with each keyword of a table is what validation
    /// expects: a refused keyword fails lowering, and every other one is
    /// gone (or renamed, or described) from the lowered schema, which then
    /// breaks no rule about it.
    #[test]
    fn lowering_and_validation_follow_one_table() {
        for dialect in Dialect::ALL {
            for (key, _) in dialect.rules().keywords {
                let sample = match *key {
                    "oneOf" | "allOf" | "prefixItems" => {
                        json!([{"type": "string"}, {"type": "integer"}])
                    }
                    "patternProperties" | "dependentSchemas" => json!({"^a": {"type": "string"}}),
                    "dependentRequired" => json!({"a": ["b"]}),
                    "not" | "if" | "then" | "else" | "propertyNames" => json!({"type": "string"}),
                    "uniqueItems" => Value::Bool(true),
                    "pattern" => json!("^a"),
                    "default" => json!("x"),
                    _ => json!(3),
                };
                let schema = json!({
                    "type": "object",
                    "properties": {"x": {"type": "string", *key: sample}},
                    "required": ["x"],
                    "additionalProperties": false
                });
                match lower(&schema, dialect) {
                    Err(error) => assert!(
                        error.message.contains(key)
                            || error.message.contains("cannot be expressed"),
                        "{dialect:?} `{key}`: {error}"
                    ),
                    Ok(lowered) => {
                        let flagged: Vec<String> = validate(&lowered, dialect)
                            .into_iter()
                            .filter(|v| v.rule.contains(&format!("`{key}`")))
                            .map(|v| format!("{}: {}", v.path, v.rule))
                            .collect();
                        assert!(
                            flagged.is_empty(),
                            "{dialect:?} `{key}`: {flagged:?} in {lowered}"
                        );
                    }
                }
            }
        }
    }
}
