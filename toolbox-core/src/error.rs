//! Why a call failed, in two voices: a short text the model can act on and
//! the full chain the operator logs.

use std::error::Error as StdError;
use std::fmt::{self, Display};
use std::time::Duration;

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::echo::echo;

/// A boxed error carried as the operator-facing cause of a [`ToolError`].
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// Why a call failed.
///
/// [`ToolError::model_message`] is what the model reads: short, actionable,
/// free of internals. `Display` and [`ToolError::report`] are for the operator
/// and carry the full cause chain.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// No tool of that name exists in the box.
    #[error("unknown tool `{}`", echo(name))]
    UnknownTool {
        /// The name the caller asked for.
        name: String,
        /// The closest names the box does have, best first.
        suggestions: Vec<String>,
    },
    /// The tool exists but a condition hides it in this context.
    #[error("tool `{}` is not available in this context", echo(name))]
    NotAvailable {
        /// The hidden tool's name.
        name: String,
    },
    /// The arguments do not match the tool's parameters.
    #[error("invalid arguments{}: {reason}", at_path(path))]
    InvalidArguments {
        /// JSON path of the offending value (`filters.tags[0]`); empty for the whole object.
        path: String,
        /// What was wrong and what was expected.
        reason: String,
    },
    /// The tool ran and returned an error of its own.
    #[error("{message}")]
    Failed {
        /// The tool's error text, shown to the model.
        message: String,
        /// Whether calling again with other arguments can help.
        retryable: bool,
        /// The underlying error, for the operator.
        #[source]
        source: Option<BoxError>,
    },
    /// The tool panicked; the panic was caught and the box stays usable.
    #[error("the tool panicked: {message}")]
    Panicked {
        /// The panic payload, when it was a string.
        message: String,
    },
    /// The tool did not finish in time.
    #[error("the tool did not finish within {}", HumanDuration(*after))]
    TimedOut {
        /// The limit that was exceeded.
        after: Duration,
    },
    /// The caller cancelled the call through its [`Context`](crate::context::Context).
    #[error("the call was cancelled")]
    Cancelled,
    /// A remote tool's server refused the credentials (HTTP 401, or 403
    /// for missing scopes): a retry with the same credentials cannot help.
    #[error("unauthorized: {message}")]
    Unauthorized {
        /// What was refused and what the server asked for, for the operator.
        message: String,
        /// The server's `WWW-Authenticate` challenge, when it sent one.
        challenge: Option<String>,
        /// The underlying error.
        #[source]
        source: Option<BoxError>,
    },
    /// The application's own setup is wrong (a malformed token, two
    /// servers under one name, a pin file that cannot be read or written):
    /// no retry helps until the application changes its configuration.
    #[error("configuration error: {message}")]
    Configuration {
        /// What is wrong and what to change, for the operator.
        message: String,
        /// The underlying error.
        #[source]
        source: Option<BoxError>,
    },
    /// A remote tool could not be reached (MCP).
    #[error("transport error: {message}")]
    Transport {
        /// What failed, for the operator.
        message: String,
        /// The underlying error.
        #[source]
        source: Option<BoxError>,
    },
}

/// The kind of a [`ToolError`], a stable lower-case name usable as the
/// OpenTelemetry `error.type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolErrorKind {
    /// See [`ToolError::UnknownTool`].
    UnknownTool,
    /// See [`ToolError::NotAvailable`].
    NotAvailable,
    /// See [`ToolError::InvalidArguments`].
    InvalidArguments,
    /// See [`ToolError::Failed`]. Written `tool_failed` everywhere (spans,
    /// tapes); tapes that say `failed` still read.
    #[serde(rename = "tool_failed", alias = "failed")]
    Failed,
    /// See [`ToolError::Panicked`].
    Panicked,
    /// See [`ToolError::TimedOut`].
    TimedOut,
    /// See [`ToolError::Cancelled`].
    Cancelled,
    /// See [`ToolError::Transport`].
    Transport,
    /// See [`ToolError::Unauthorized`].
    Unauthorized,
    /// See [`ToolError::Configuration`].
    Configuration,
}

impl ToolErrorKind {
    /// The kind's stable name, e.g. `invalid_arguments`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ToolErrorKind::UnknownTool => "unknown_tool",
            ToolErrorKind::NotAvailable => "not_available",
            ToolErrorKind::InvalidArguments => "invalid_arguments",
            ToolErrorKind::Failed => "tool_failed",
            ToolErrorKind::Panicked => "panicked",
            ToolErrorKind::TimedOut => "timed_out",
            ToolErrorKind::Cancelled => "cancelled",
            ToolErrorKind::Transport => "transport",
            ToolErrorKind::Unauthorized => "unauthorized",
            ToolErrorKind::Configuration => "configuration",
        }
    }
}

impl Display for ToolErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ToolError {
    /// A tool's own failure, not retryable, whose text the model reads.
    pub fn failed(message: impl Display) -> Self {
        ToolError::Failed {
            message: message.to_string(),
            retryable: false,
            source: None,
        }
    }

    /// A tool's own failure that the model may fix by calling again with
    /// other arguments ("no customer with that id; list customers first").
    pub fn retryable(message: impl Display) -> Self {
        ToolError::Failed {
            message: message.to_string(),
            retryable: true,
            source: None,
        }
    }

    /// A tool's failure from any error: the model reads its `Display`, the
    /// operator gets the whole `source()` chain.
    pub fn from_error(error: impl Into<BoxError>) -> Self {
        let source = error.into();
        ToolError::Failed {
            message: source.to_string(),
            retryable: false,
            source: Some(source),
        }
    }

    /// Invalid arguments at a JSON path (`""` for the whole object).
    pub fn invalid_arguments(path: impl Into<String>, reason: impl Into<String>) -> Self {
        ToolError::InvalidArguments {
            path: path.into(),
            reason: reason.into(),
        }
    }

    /// A mistake in the application's own setup, with what to change.
    pub fn configuration(message: impl Display) -> Self {
        ToolError::Configuration {
            message: message.to_string(),
            source: None,
        }
    }

    /// An unknown tool, with suggestions picked from `available` by edit distance.
    pub fn unknown_tool<'a>(name: &str, available: impl IntoIterator<Item = &'a str>) -> Self {
        ToolError::UnknownTool {
            name: name.to_owned(),
            suggestions: closest_names(name, available),
        }
    }

    /// This error's kind.
    pub fn kind(&self) -> ToolErrorKind {
        match self {
            ToolError::UnknownTool { .. } => ToolErrorKind::UnknownTool,
            ToolError::NotAvailable { .. } => ToolErrorKind::NotAvailable,
            ToolError::InvalidArguments { .. } => ToolErrorKind::InvalidArguments,
            ToolError::Failed { .. } => ToolErrorKind::Failed,
            ToolError::Panicked { .. } => ToolErrorKind::Panicked,
            ToolError::TimedOut { .. } => ToolErrorKind::TimedOut,
            ToolError::Cancelled => ToolErrorKind::Cancelled,
            ToolError::Transport { .. } => ToolErrorKind::Transport,
            ToolError::Unauthorized { .. } => ToolErrorKind::Unauthorized,
            ToolError::Configuration { .. } => ToolErrorKind::Configuration,
        }
    }

    /// Whether calling again, with other arguments or another tool name, can
    /// help. Hidden tools, panics, timeouts and transport failures are not
    /// retryable by the model.
    pub fn is_retryable(&self) -> bool {
        match self {
            ToolError::UnknownTool { .. } | ToolError::InvalidArguments { .. } => true,
            ToolError::Failed { retryable, .. } => *retryable,
            _ => false,
        }
    }

    /// The text the model reads: short, actionable and without internals
    /// (a panic's message or a transport error's cause stay with the operator).
    pub fn model_message(&self) -> String {
        match self {
            ToolError::UnknownTool { name, suggestions } => {
                match (echo(name), suggestions.as_slice()) {
                    (name, []) => format!("unknown tool `{name}`"),
                    (name, [one]) => format!("unknown tool `{name}`; did you mean `{one}`?"),
                    (name, many) => {
                        let list: Vec<String> = many.iter().map(|s| format!("`{s}`")).collect();
                        format!(
                            "unknown tool `{name}`; did you mean one of {}?",
                            list.join(", ")
                        )
                    }
                }
            }
            ToolError::Panicked { .. } => {
                "the tool failed with an internal error; do not retry this call".to_owned()
            }
            ToolError::Transport { .. } => {
                "the tool's server could not be reached; try again later".to_owned()
            }
            ToolError::Unauthorized { .. } => {
                "the tool's server refused the credentials; do not retry this call: the application must fix its credentials".to_owned()
            }
            ToolError::Configuration { .. } => {
                "the tool is not set up correctly; do not retry this call: the application must fix its configuration".to_owned()
            }
            other => other.to_string(),
        }
    }

    /// The operator's view: this error and every `source()` below it, joined
    /// by `": "`.
    pub fn report(&self) -> String {
        let mut out = self.to_string();
        let mut next = StdError::source(self);
        while let Some(cause) = next {
            let text = cause.to_string();
            if !out.ends_with(&text) {
                out.push_str(": ");
                out.push_str(&text);
            }
            next = cause.source();
        }
        out
    }
}

/// The name under which a [`ToolError`] serializes itself (a newtype
/// struct, transparent to JSON), so a tool that returns one (a closure
/// tool's `Result<T, ToolError>`) answers with its model message, never
/// with the operator's detail.
pub(crate) const ERROR_TOKEN: &str = "$toolbox::ToolError";

impl Serialize for ToolError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_struct(ERROR_TOKEN, &ErrorFields(self))
    }
}

/// A [`ToolError`]'s fields: kind, the model's message, the operator's
/// detail, whether a retry can help.
struct ErrorFields<'e>(&'e ToolError);

impl Serialize for ErrorFields<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let error = self.0;
        let mut s = serializer.serialize_struct("ToolError", 4)?;
        s.serialize_field("kind", &error.kind())?;
        s.serialize_field("message", &error.model_message())?;
        s.serialize_field("detail", &error.report())?;
        s.serialize_field("retryable", &error.is_retryable())?;
        s.end()
    }
}

fn at_path(path: &str) -> String {
    if path.is_empty() || path == "." {
        String::new()
    } else {
        format!(" at `{path}`")
    }
}

/// A duration printed the way a person writes it: `5s`, `250ms`, `1.5s`.
pub(crate) struct HumanDuration(pub(crate) Duration);

impl Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d.subsec_nanos() == 0 {
            write!(f, "{}s", d.as_secs())
        } else if d < Duration::from_secs(1) && d.subsec_nanos().is_multiple_of(1_000_000) {
            write!(f, "{}ms", d.as_millis())
        } else {
            write!(f, "{:?}", d)
        }
    }
}

/// Up to three names from `available` closest to `name`, best first: by
/// edit distance (at most a third of the name's length, and at least 2),
/// also when the model dropped, added or misspelled a box prefix or a
/// module alias (`get_custmer` finds `crm_get_customer`), or names that
/// contain it. This is how unknown-tool errors pick their suggestions.
///
/// The cost is bounded: each comparison is a capped edit distance, and a
/// name longer than any tool name can be (over 96 characters) is not
/// compared at all.
pub fn closest_names<'a>(name: &str, available: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    if name.is_empty() || name.len() > 96 {
        return Vec::new();
    }
    let wanted_text = name.to_lowercase();
    let wanted: Vec<char> = wanted_text.chars().collect();
    let wanted_suffixes: Vec<&[char]> = suffixes(&wanted).collect();
    let limit = |len: usize| (len / 3).max(2);
    let mut scored: Vec<(usize, usize, &str)> = available
        .into_iter()
        .filter_map(|candidate| {
            if candidate.len() > 96 {
                return None;
            }
            let lower_text = candidate.to_lowercase();
            let lower: Vec<char> = lower_text.chars().collect();
            let whole = capped_distance(&wanted, &lower, limit(wanted.len()));
            // The model dropped a prefix (`get_custmer` for `crm_get_customer`)…
            let dropped = suffixes(&lower)
                .filter_map(|suffix| capped_distance(&wanted, suffix, limit(wanted.len())))
                .min();
            // …or added one (`crm_get_customer` for `get_customer`).
            let added = wanted_suffixes
                .iter()
                .filter_map(|suffix| capped_distance(suffix, &lower, limit(suffix.len())))
                .min();
            let best = [whole, dropped.map(|d| d + 1), added.map(|d| d + 1)]
                .into_iter()
                .flatten()
                .min();
            match best {
                Some(score) => Some((score, whole.unwrap_or(usize::MAX), candidate)),
                None => {
                    if lower_text.contains(&wanted_text)
                        || (lower_text.len() >= 3 && wanted_text.contains(&lower_text))
                    {
                        Some((limit(wanted.len()) + 2, usize::MAX, candidate))
                    } else {
                        None
                    }
                }
            }
        })
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then_with(|| a.2.cmp(b.2)));
    scored.dedup_by(|a, b| a.2 == b.2);
    scored
        .into_iter()
        .take(3)
        .map(|(_, _, n)| n.to_owned())
        .collect()
}

/// The parts of a name after each `_` (or `-`), at least three characters long.
fn suffixes(name: &[char]) -> impl Iterator<Item = &[char]> {
    name.iter()
        .enumerate()
        .filter(|(_, c)| **c == '_' || **c == '-')
        .map(move |(i, _)| &name[i + 1..])
        .filter(|rest| rest.len() >= 3)
}

/// The edit distance of `a` and `b` when it is at most `cap`, else `None`;
/// stops as soon as every path exceeds the cap.
fn capped_distance(a: &[char], b: &[char], cap: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > cap {
        return None;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        let mut row_min = current[0];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
            row_min = row_min.min(current[j + 1]);
        }
        if row_min > cap {
            return None;
        }
        std::mem::swap(&mut previous, &mut current);
    }
    Some(previous[b.len()]).filter(|d| *d <= cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_close_names() {
        let names = ["math_add", "math_sub", "text_upper", "weather_get"];
        assert_eq!(closest_names("math_ad", names), vec!["math_add"]);
        assert_eq!(closest_names("math_sbu", names), vec!["math_sub"]);
        assert_eq!(closest_names("weather", names), vec!["weather_get"]);
        assert!(closest_names("zzzzzz", names).is_empty());
    }

    #[test]
    fn suggestions_cross_box_prefixes() {
        let names = ["crm_get_customer", "crm_list_orders", "orders_get_order"];
        // Dropped prefix, misspelled rest.
        assert_eq!(
            closest_names("get_custmer", names),
            vec!["crm_get_customer"]
        );
        // Misspelled prefix.
        assert_eq!(
            closest_names("crn_get_customer", names)[0],
            "crm_get_customer"
        );
        // Added prefix to a bare name.
        assert_eq!(
            closest_names("crm_get_customer", ["get_customer", "now"]),
            vec!["get_customer"]
        );
        // Names no tool can match are not compared.
        assert!(closest_names(&"a_".repeat(50_000), names).is_empty());
    }

    #[test]
    fn model_message_hides_internals_and_report_has_the_chain() {
        let io = std::io::Error::other("connection refused by 10.0.0.7");
        let error = ToolError::Transport {
            message: "mcp server `files` is gone".into(),
            source: Some(Box::new(io)),
        };
        assert!(!error.model_message().contains("10.0.0.7"));
        assert_eq!(
            error.report(),
            "transport error: mcp server `files` is gone: connection refused by 10.0.0.7"
        );
        let panic = ToolError::Panicked {
            message: "secret=hunter2".into(),
        };
        assert!(!panic.model_message().contains("hunter2"));
        assert!(panic.report().contains("hunter2"));
    }

    #[test]
    fn retryable_follows_the_kind() {
        assert!(ToolError::invalid_arguments("a", "b").is_retryable());
        assert!(ToolError::retryable("again").is_retryable());
        assert!(!ToolError::failed("no").is_retryable());
        assert!(!ToolError::NotAvailable { name: "x".into() }.is_retryable());
        assert!(!ToolError::TimedOut {
            after: Duration::from_secs(5)
        }
        .is_retryable());
    }

    #[test]
    fn texts_name_the_path_and_the_limit() {
        assert_eq!(
            ToolError::invalid_arguments("filters.tags[0]", "expected a string").to_string(),
            "invalid arguments at `filters.tags[0]`: expected a string"
        );
        assert_eq!(
            ToolError::TimedOut {
                after: Duration::from_millis(250)
            }
            .to_string(),
            "the tool did not finish within 250ms"
        );
        assert_eq!(
            ToolError::TimedOut {
                after: Duration::from_secs(5)
            }
            .to_string(),
            "the tool did not finish within 5s"
        );
    }
}

/// A box or tool definition that cannot be built, with every problem found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", problems.join("; "))]
pub struct DefinitionError {
    problems: Vec<String>,
}

impl DefinitionError {
    /// An error listing these problems.
    pub fn new(problems: Vec<String>) -> Self {
        DefinitionError { problems }
    }

    /// Each problem, in the order found.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}
