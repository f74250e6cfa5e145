//! Recording calls to a JSON Lines tape, and replaying a tape without running
//! any tool: re-run a turn in a debugger, or pin a test to real traffic.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::toolbox::{BoxFuture, DispatchResult};
use crate::{Context, DispatchFuture, ToolBox, ToolError, ToolErrorKind, ToolResponse};

/// One recorded call: a line of the tape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TapeEntry {
    /// The provider's call id, if the caller set one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The argument object.
    pub arguments: Value,
    /// What the model got back.
    pub response: ToolResponse,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<TapeError>,
    /// How long the dispatch took, in microseconds.
    pub duration_us: u64,
}

/// A recorded failure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TapeError {
    /// The error's kind.
    pub kind: ToolErrorKind,
    /// The operator's report (full chain).
    pub detail: String,
    /// Whether a retry could help.
    pub retryable: bool,
}

/// Writes every call of the wrapped box — name, arguments, result or error,
/// duration, call id — as one JSON line, flushed per call so a crash loses
/// nothing. A write failure is logged and never fails the call.
pub struct RecordingToolBox<B> {
    inner: B,
    sink: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl<B: ToolBox> RecordingToolBox<B> {
    /// Records to any writer.
    pub fn new(inner: B, sink: impl Write + Send + 'static) -> Self {
        RecordingToolBox {
            inner,
            sink: Arc::new(Mutex::new(Box::new(sink))),
        }
    }

    /// Records to a file, appending.
    pub fn to_file(inner: B, path: impl AsRef<Path>) -> io::Result<Self> {
        let file = File::options().create(true).append(true).open(path)?;
        Ok(RecordingToolBox::new(inner, file))
    }

    fn write(
        &self,
        name: &str,
        arguments: &Value,
        ctx: &Context,
        result: &DispatchResult,
        micros: u64,
    ) {
        let (response, error) = match result {
            Ok(response) if response.is_error => (
                response.clone(),
                Some(TapeError {
                    kind: ToolErrorKind::Failed,
                    detail: response.content.clone(),
                    retryable: false,
                }),
            ),
            Ok(response) => (response.clone(), None),
            Err(error) => (
                ToolResponse::error(error.model_message()),
                Some(TapeError {
                    kind: error.kind(),
                    detail: error.report(),
                    retryable: error.is_retryable(),
                }),
            ),
        };
        let entry = TapeEntry {
            call_id: ctx.call_id().map(str::to_owned),
            name: name.to_owned(),
            arguments: arguments.clone(),
            response,
            error,
            duration_us: micros,
        };
        let written = serde_json::to_string(&entry)
            .map_err(io::Error::other)
            .and_then(|line| {
                let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
                sink.write_all(line.as_bytes())?;
                sink.write_all(b"\n")?;
                sink.flush()
            });
        if let Err(error) = written {
            tracing::warn!(tool = name, %error, "could not record a tool call");
        }
    }
}

impl<B: ToolBox> ToolBox for RecordingToolBox<B> {
    crate::toolbox::delegate_listing!(inner);

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a Value,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        DispatchFuture::new(async move {
            let started = std::time::Instant::now();
            let result = crate::lifecycle::guarded(&self.inner, name, arguments, ctx).await;
            let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            self.write(name, arguments, ctx, &result, micros);
            result
        })
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        self.inner.close()
    }
}

/// Reads a tape written by [`RecordingToolBox`]. A line that is not a tape
/// entry is an error naming the line.
pub fn read_tape(path: impl AsRef<Path>) -> io::Result<Vec<TapeEntry>> {
    let path = path.as_ref();
    let reader = BufReader::new(File::open(path)?);
    let mut entries = Vec::new();
    for (number, line) in reader.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let entry = serde_json::from_str(&line).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}:{}: not a tape entry: {e}", path.display(), number + 1),
            )
        })?;
        entries.push(entry);
    }
    Ok(entries)
}

/// Answers calls from a tape, in order, without running any tool. A call
/// whose name or arguments differ from the tape's next entry is drift: an
/// error naming the first difference, never a silent wrong answer. In
/// lenient mode a drifting call runs on the live box instead.
pub struct ReplayToolBox<B> {
    live: B,
    tape: Vec<TapeEntry>,
    position: Mutex<usize>,
    lenient: bool,
}

impl<B: ToolBox> ReplayToolBox<B> {
    /// Replays `tape`; `live` provides the specifications (and, when lenient,
    /// answers drifting calls).
    pub fn new(tape: Vec<TapeEntry>, live: B) -> Self {
        ReplayToolBox {
            live,
            tape,
            position: Mutex::new(0),
            lenient: false,
        }
    }

    /// Lets drifting calls fall through to the live box.
    pub fn lenient(mut self) -> Self {
        self.lenient = true;
        self
    }

    /// How many tape entries have been used.
    pub fn replayed(&self) -> usize {
        *self.position.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn next(&self, name: &str, arguments: &Value) -> Result<TapeEntry, String> {
        let mut position = self.position.lock().unwrap_or_else(|p| p.into_inner());
        let number = *position + 1;
        let Some(entry) = self.tape.get(*position) else {
            return Err(format!(
                "replay drift at call {number}: the tape holds {} calls; this extra call is `{name}`",
                self.tape.len()
            ));
        };
        if entry.name != name {
            return Err(format!(
                "replay drift at call {number}: the tape has `{}`, the call is `{name}`",
                entry.name
            ));
        }
        if let Some((path, taped, called)) =
            first_difference(&entry.arguments, arguments, String::new())
        {
            let at = if path.is_empty() {
                "the whole object".to_owned()
            } else {
                format!("`{path}`")
            };
            return Err(format!(
                "replay drift at call {number} (`{name}`): the arguments differ at {at}: the tape has {taped}, the call has {called}"
            ));
        }
        *position += 1;
        Ok(entry.clone())
    }
}

fn first_difference(
    taped: &Value,
    called: &Value,
    path: String,
) -> Option<(String, String, String)> {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (taped, called) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                match b.get(key) {
                    None => return Some((join(key), value.to_string(), "nothing".into())),
                    Some(other) => {
                        if let Some(found) = first_difference(value, other, join(key)) {
                            return Some(found);
                        }
                    }
                }
            }
            b.iter()
                .find(|(key, _)| !a.contains_key(*key))
                .map(|(key, value)| (join(key), "nothing".into(), value.to_string()))
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(x, y, format!("{path}[{i}]"))),
        (a, b) if a == b => None,
        (a, b) => Some((path, a.to_string(), b.to_string())),
    }
}

impl<B: ToolBox> ToolBox for ReplayToolBox<B> {
    crate::toolbox::delegate_listing!(live);

    fn dispatch<'a>(
        &'a self,
        name: &'a str,
        arguments: &'a Value,
        ctx: &'a Context,
    ) -> DispatchFuture<'a> {
        match self.next(name, arguments) {
            Ok(entry) => DispatchFuture::ready(match entry.error {
                None => Ok(entry.response),
                Some(error) => Err(ToolError::Failed {
                    message: entry.response.content,
                    retryable: error.retryable,
                    source: Some(format!("replayed {}: {}", error.kind, error.detail).into()),
                }),
            }),
            Err(_) if self.lenient => self.live.dispatch(name, arguments, ctx),
            Err(drift) => DispatchFuture::ready(Err(ToolError::failed(drift))),
        }
    }

    fn close(&self) -> BoxFuture<'_, Result<(), ToolError>> {
        self.live.close()
    }
}
