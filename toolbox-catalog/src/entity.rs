//! Identifiers in a query read as what they are, not as words: an issue
//! key (`ABC-123`) points at an issue tracker, `#general` at a chat
//! channel, `@maria` or a chat's user id (`U024BE7LH`) at a person,
//! `data.xlsx` at a spreadsheet, a URL at
//! the web, an address at mail. Each is taken out of the query's words
//! (`API-10` must not match a tool named `API-retrieve-a-block`, nor
//! `config.yaml` a tool about configuration) and stands for the words of
//! its kind ([`kind_words`]), which count as evidence for the tools whose
//! names, namespaces or descriptions use them.
//!
//! A sentence model reads the same identifiers spelled out
//! ([`spelled_out`]): `WEB-77` as `issue WEB-77`, not as the word `web`
//! and a number.
//!
//! The rules come from what these identifiers mean wherever they appear,
//! never from a particular task.

use std::borrow::Cow;

/// What an identifier is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `ABC-123`: an issue tracker's key (Jira, Linear, YouTrack …).
    IssueKey,
    /// `#123`: an issue or pull request number.
    IssueNumber,
    /// `#general`: a chat channel; `C0123ABCD45`, a chat's id for one.
    Channel,
    /// `#FF0000`, `#fa0`: a colour.
    Color,
    /// `@maria`: a person, as chat and code hosts mention them; `U024BE7LH`,
    /// a chat's id for one.
    Mention,
    /// `https://…`, `www.…`: a web address.
    Url,
    /// `maria@example.com`.
    Email,
    /// `/var/log`, `~/Downloads`, `./src`: a path on disk.
    Path,
    /// `report.pdf`, `data.xlsx`: a file, by its extension's kind.
    File(FileKind),
}

/// What a file's extension says it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileKind {
    Spreadsheet,
    Pdf,
    Document,
    Slides,
    Text,
    Markdown,
    Image,
    Media,
    Code,
    Data,
    Archive,
}

/// The words each kind of identifier stands for (stemmed as indexed words
/// are); words no tool uses cost nothing.
pub(crate) fn kind_words(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::IssueKey => &["issue", "ticket", "jira", "linear", "tracker"],
        Kind::IssueNumber => &["issue", "pull"],
        Kind::Channel => &["channel", "slack", "chat", "message"],
        Kind::Color => &["color", "colour"],
        Kind::Mention => &["user", "mention", "member", "people"],
        Kind::Url => &["url", "link", "web", "page", "fetch"],
        Kind::Email => &["email", "mail", "gmail", "inbox"],
        Kind::Path => &["file", "directory", "path"],
        Kind::File(file) => match file {
            FileKind::Spreadsheet => &["file", "spreadsheet", "sheet", "excel", "workbook"],
            FileKind::Pdf => &["file", "pdf", "document"],
            FileKind::Document => &["file", "document", "docx", "word"],
            FileKind::Slides => &["file", "presentation", "slide"],
            FileKind::Text => &["file", "text"],
            FileKind::Markdown => &["file", "markdown", "text"],
            FileKind::Image => &["file", "image", "picture", "photo"],
            FileKind::Media => &["file", "media", "audio", "video"],
            FileKind::Code => &["file", "code", "source"],
            FileKind::Data => &["file", "json", "yaml"],
            FileKind::Archive => &["file", "archive", "zip"],
        },
    }
}

/// The kind of file an extension names, if it is a known one.
fn file_kind(extension: &str) -> Option<FileKind> {
    let extension = extension.to_ascii_lowercase();
    Some(match extension.as_str() {
        "xlsx" | "xls" | "xlsm" | "ods" | "csv" | "tsv" | "numbers" => FileKind::Spreadsheet,
        "pdf" => FileKind::Pdf,
        "doc" | "docx" | "odt" | "rtf" | "pages" => FileKind::Document,
        "ppt" | "pptx" | "odp" | "key" => FileKind::Slides,
        "txt" | "log" => FileKind::Text,
        "md" | "markdown" | "mdx" | "rst" => FileKind::Markdown,
        "png" | "jpg" | "jpeg" | "gif" | "svg" | "webp" | "bmp" | "tiff" | "heic" => {
            FileKind::Image
        }
        "mp3" | "wav" | "flac" | "ogg" | "m4a" | "mp4" | "mov" | "avi" | "mkv" | "webm" => {
            FileKind::Media
        }
        "rs" | "py" | "js" | "ts" | "tsx" | "jsx" | "go" | "java" | "kt" | "c" | "h" | "cpp"
        | "hpp" | "cs" | "rb" | "php" | "swift" | "sh" | "sql" | "html" | "css" | "vue" => {
            FileKind::Code
        }
        "json" | "yaml" | "yml" | "toml" | "xml" | "ini" | "env" | "cfg" | "conf" | "lock" => {
            FileKind::Data
        }
        "zip" | "tar" | "gz" | "tgz" | "bz2" | "xz" | "7z" | "rar" => FileKind::Archive,
        _ => return None,
    })
}

/// An identifier found in a query: its kind, and for a web address the
/// site's name (`github` of `https://github.com/…`), which is a word the
/// query means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entity {
    pub(crate) kind: Kind,
    pub(crate) site: Option<String>,
}

/// Cuts `query`'s identifiers out: the rest of the text (the words), and
/// the identifiers found, in order.
pub(crate) fn entities(query: &str) -> (String, Vec<Entity>) {
    let mut rest = String::with_capacity(query.len());
    let mut found = Vec::new();
    for token in query.split_whitespace() {
        match classify(token) {
            Some(entity) => found.push(entity),
            None => {
                rest.push_str(token);
                rest.push(' ');
            }
        }
    }
    (rest, found)
}

/// What the model reads for an identifier of each kind: the words of what
/// it is. A sentence model splits `WEB-77` into `web`, `-`, `77` and reads
/// a web request; an issue is what the writer meant.
fn spoken(kind: Kind) -> &'static str {
    match kind {
        Kind::IssueKey | Kind::IssueNumber => "issue",
        Kind::Channel => "channel",
        Kind::Color => "color",
        Kind::Mention => "user",
        Kind::Url => "web page",
        Kind::Email => "email address",
        Kind::Path => "folder or file",
        Kind::File(file) => match file {
            FileKind::Spreadsheet => "spreadsheet",
            FileKind::Pdf => "pdf file",
            FileKind::Document => "document",
            FileKind::Slides => "presentation",
            FileKind::Text => "text file",
            FileKind::Markdown => "markdown file",
            FileKind::Image => "image",
            FileKind::Media => "audio or video file",
            FileKind::Code => "source file",
            FileKind::Data => "data file",
            FileKind::Archive => "archive",
        },
    }
}

/// `query` as a sentence model should read it: each identifier given the
/// words of what it is ([`spoken`]), the identifier kept after them where
/// [`kept`] says so (`can WEB-77 go to Done` → `can issue WEB-77 go to
/// Done`) and replaced by them otherwise (`#general` → `channel`,
/// `data.xlsx` → `spreadsheet`, a web address → its site's name and `web
/// page`); the quotes and punctuation around each kept. Borrowed when the
/// query holds no identifier; otherwise its tokens joined by single
/// spaces. Linear in the query.
pub(crate) fn spelled_out(query: &str) -> Cow<'_, str> {
    // Written only from the first identifier on; each token classified once.
    let mut out: Option<String> = None;
    for token in query.split_whitespace() {
        let entity = classify(token);
        let out = match (&mut out, &entity) {
            (Some(out), _) => out,
            (None, None) => continue,
            (None, Some(_)) => {
                // `token` is a subslice of `query`: the tokens before it.
                let start = token.as_ptr() as usize - query.as_ptr() as usize;
                let before: Vec<&str> = query[..start].split_whitespace().collect();
                out.insert(before.join(" "))
            }
        };
        if !out.is_empty() {
            out.push(' ');
        }
        let Some(entity) = entity else {
            out.push_str(token);
            continue;
        };
        let core = trimmed(token);
        // `core` is a subslice of `token`: what stood before and after it.
        let start = core.as_ptr() as usize - token.as_ptr() as usize;
        out.push_str(&token[..start]);
        if let Some(site) = &entity.site {
            out.push_str(site);
            out.push(' ');
        }
        out.push_str(spoken(entity.kind));
        if kept(entity.kind) {
            out.push(' ');
            out.push_str(core);
        }
        out.push_str(&token[start + core.len()..]);
    }
    out.map_or(Cow::Borrowed(query), Cow::Owned)
}

/// Whether an identifier of `kind` stays beside its words for the model:
/// an issue key or number, whose shape is also a name's or a rank's
/// (`MERS-2`, not listed in [`NOT_PROJECTS`]; `the #1 song`), and which
/// costs nothing where it is one.
/// The others are replaced: kept, a code file's name cost the model alone
/// 1 task at 1 on the search benchmark's tune part and 15 of
/// MCPToolBench++'s 699, a channel's 1 and 2 more (BENCHMARKS.md), so
/// `server.js` reads as `source file` and `#AI` as `channel`.
fn kept(kind: Kind) -> bool {
    matches!(kind, Kind::IssueKey | Kind::IssueNumber)
}

/// A token without the quotes, brackets and punctuation around it.
fn trimmed(token: &str) -> &str {
    token
        .trim_start_matches(['"', '\'', '(', '[', '<', '`', '“', '‘'])
        .trim_end_matches([
            '"', '\'', ')', ']', '>', '`', ',', '.', '?', '!', ':', ';', '”', '’',
        ])
}

/// What a whitespace-separated token of a query is, if an identifier.
fn classify(token: &str) -> Option<Entity> {
    let token = trimmed(token);
    let kind = |kind| Some(Entity { kind, site: None });
    let lower = token.to_ascii_lowercase();
    if let Some(address) = ["https://", "http://", "www."]
        .iter()
        .find_map(|scheme| lower.strip_prefix(scheme))
    {
        let host = address.split(['/', '?', '#', ':']).next().unwrap_or("");
        let host = host.strip_prefix("www.").unwrap_or(host);
        let labels: Vec<&str> = host.split('.').filter(|l| !l.is_empty()).collect();
        // The site's name: the label before the top-level domain, or
        // before a second-level one (`bbc` of `bbc.co.uk`); an address by
        // number has none.
        let mut name = labels.len().checked_sub(2);
        if let Some(i) = name.filter(|&i| i > 0 && SECOND_LEVEL.contains(&labels[i])) {
            name = Some(i - 1);
        }
        let site = name
            .map(|i| labels[i])
            .filter(|s| s.len() > 1 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
            .filter(|s| s.chars().any(|c| c.is_ascii_alphabetic()))
            .map(|s| s.replace('-', " "));
        return Some(Entity {
            kind: Kind::Url,
            site,
        });
    }
    if let Some(name) = token.strip_prefix('#') {
        // `#000` and `#333333` are colours (read first): no issue's number
        // starts with 0, and none has six or eight digits all alike.
        if is_hex_color(name) {
            return kind(Kind::Color);
        }
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_digit()) {
            return (!name.starts_with('0')).then_some(Entity {
                kind: Kind::IssueNumber,
                site: None,
            });
        }
        if name.chars().next().is_some_and(char::is_alphanumeric)
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return kind(Kind::Channel);
        }
        return None;
    }
    if let Some(name) = token.strip_prefix('@') {
        // `@channel`, `@here`, `@everyone`: a chat's broadcast to a
        // channel, not a person.
        if BROADCASTS.contains(&name.to_ascii_lowercase().as_str()) {
            return kind(Kind::Channel);
        }
        // `@10am` is a time.
        if name.chars().next().is_some_and(char::is_alphabetic)
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return kind(Kind::Mention);
        }
        return None;
    }
    if let Some((local, domain)) = token.split_once('@') {
        // `logo@2x.png` is an image (a scale, not a domain, after the `@`).
        if is_scale(domain) {
            if let Some(file) = file_extension(domain).and_then(file_kind) {
                return kind(Kind::File(file));
            }
        }
        if !local.is_empty()
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && token
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '@'))
        {
            return kind(Kind::Email);
        }
        return None;
    }
    if is_issue_key(token) {
        // `PR-42`: a pull request's number.
        if token.starts_with("PR-") {
            return kind(Kind::IssueNumber);
        }
        return kind(Kind::IssueKey);
    }
    if let Some(chat) = chat_id(token) {
        return kind(chat);
    }
    if token.starts_with('/') || token.starts_with("~/") || token.starts_with("./") {
        let kind_of_file = file_extension(token).and_then(file_kind);
        // `/giphy`, `/remind`: a chat's command, not a path.
        let command = token
            .strip_prefix('/')
            .is_some_and(|name| CHAT_COMMANDS.contains(&name.to_ascii_lowercase().as_str()));
        if token.len() > 1 && !command {
            return kind(kind_of_file.map_or(Kind::Path, Kind::File));
        }
        return None;
    }
    if LIBRARIES.contains(&lower.as_str()) {
        return None;
    }
    if let Some(file) = file_extension(token).and_then(file_kind) {
        return kind(Kind::File(file));
    }
    None
}

/// A chat's broadcast mentions (Slack's, Discord's): they notify a
/// channel's members, not one person.
const BROADCASTS: &[&str] = &["channel", "everyone", "here"];

/// JavaScript libraries and runtimes named with a file's extension
/// (`Node.js`): products, not files.
const LIBRARIES: &[&str] = &[
    "angular.js",
    "backbone.js",
    "chart.js",
    "d3.js",
    "deno.js",
    "ember.js",
    "express.js",
    "next.js",
    "node.js",
    "nuxt.js",
    "react.js",
    "three.js",
    "vue.js",
];

/// A colour's hex digits after `#`: three, four, six or eight of them,
/// with a digit among them, or all capitals, or all alike (`ff0000`,
/// `FFF`, `fff`, `0af`), but digits alone only from 0 or six or eight
/// alike (`000`, `333333`: `#333` is an issue's number);
/// three or four with a letter on each side of a digit are a channel's
/// name (`#e2e`, `#b2b`), as are hex words (`#add`, `#decade`).
fn is_hex_color(name: &str) -> bool {
    let bytes = name.as_bytes();
    let digit = bytes.iter().any(u8::is_ascii_digit);
    let word_shape = bytes.len() <= 4
        && bytes.windows(3).any(|w| {
            w[0].is_ascii_alphabetic() && w[1].is_ascii_digit() && w[2].is_ascii_alphabetic()
        });
    let alike = bytes.iter().all(|&b| b == bytes[0]);
    if bytes.iter().all(u8::is_ascii_digit) {
        return matches!(bytes.len(), 3 | 4 | 6 | 8)
            && (bytes[0] == b'0' || alike && bytes.len() >= 6);
    }
    bytes.iter().all(u8::is_ascii_hexdigit)
        && matches!(bytes.len(), 3 | 4 | 6 | 8)
        && (digit && !word_shape || bytes.iter().all(u8::is_ascii_uppercase) || alike)
}

/// A chat workspace's id for a person (`U024BE7LH`, `W012A3CDE`) or a
/// conversation (`C0123ABCD45`, `G…`, `D…`), as Slack's API writes them:
/// the kind's capital, then 8 to 12 capitals and digits, a digit first
/// and a letter among them (`US0378331005`, an ISIN, and `D12345678`, an
/// order, are not).
fn chat_id(token: &str) -> Option<Kind> {
    let mut chars = token.chars();
    let kind = match chars.next()? {
        'U' | 'W' => Kind::Mention,
        'C' | 'G' | 'D' => Kind::Channel,
        _ => return None,
    };
    let rest = chars.as_str();
    ((8..=12).contains(&rest.len())
        && rest
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && rest.starts_with(|c: char| c.is_ascii_digit())
        && rest.chars().any(|c| c.is_ascii_uppercase()))
    .then_some(kind)
}

/// Names with an issue key's shape that are not keys: standards,
/// encodings, hashes, models, product lines (`UTF-8`, `SHA-256`,
/// `ISO-8601`, `GPT-4`, `COVID-19`, `RTX-4090`), whatever their number.
const NOT_PROJECTS: &[&str] = &[
    "AES", "ANSI", "CVE", "COVID", "ECMA", "GPT", "GTX", "IEEE", "ISO", "PEP", "RFC", "RSA", "RTX",
    "SARS", "SHA", "TLS", "UTF",
];

/// Names of a key's shape only with a one-digit number, a version or a
/// generation (`ES-6`, `MD-5`, `MP-4`, `WIFI-6`, `HTML-5`: `MP-142` is a
/// project's issue).
const NOT_PROJECTS_OF_ONE_DIGIT: &[&str] = &[
    "CSS", "DDR", "ES", "HDMI", "HTML", "HTTP", "MD", "MP", "PCIE", "USB", "WIFI",
];

/// Periods of a key's shape with a year's number (`Q3-2024`, `FY-24`).
const PERIODS: &[&str] = &["FY", "H1", "H2", "Q1", "Q2", "Q3", "Q4"];

/// Whether `project`-`number` is a name of a key's shape, not a key.
fn not_a_key(project: &str, number: &str) -> bool {
    NOT_PROJECTS.contains(&project)
        || NOT_PROJECTS_OF_ONE_DIGIT.contains(&project) && number.len() == 1
        || PERIODS.contains(&project) && matches!(number.len(), 2 | 4)
}

/// Commands a chat's message box takes (`/giphy`, `/remind`), not root
/// folders.
const CHAT_COMMANDS: &[&str] = &[
    "away", "collapse", "dm", "dnd", "expand", "giphy", "invite", "leave", "me", "msg", "mute",
    "poll", "remind", "shrug", "topic", "who",
];

/// `2x.png`, `1.5x.png`: an image's scale after the `@` of `logo@2x.png`.
fn is_scale(after_at: &str) -> bool {
    let scale = after_at.split_once("x.").map_or("", |(scale, _)| scale);
    !scale.is_empty()
        && scale.starts_with(|c: char| c.is_ascii_digit())
        && scale.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// Second-level labels a site's name stands before (`bbc.co.uk`).
const SECOND_LEVEL: &[&str] = &["ac", "co", "com", "edu", "gov", "net", "org"];

/// `ABC-123`: two to ten capitals or digits starting with a capital, a
/// hyphen, and a number.
fn is_issue_key(token: &str) -> bool {
    let Some((project, number)) = token.split_once('-') else {
        return false;
    };
    !not_a_key(project, number)
        && (2..=10).contains(&project.len())
        && project.starts_with(|c: char| c.is_ascii_uppercase())
        && project
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && !number.is_empty()
        && number.len() <= 9
        && number.chars().all(|c| c.is_ascii_digit())
}

/// The extension of a file name (`data.xlsx` → `xlsx`): a name of word
/// characters before the last dot.
fn file_extension(token: &str) -> Option<&str> {
    let (name, extension) = token.rsplit_once('.')?;
    let base = name.rsplit('/').next().unwrap_or(name);
    let valid = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.');
    // `4.c` is a clause (`2024.csv`, `2024-05-01.md` are files), `done.Go`
    // a missing space,
    // `wait...go` an ellipsis.
    let one_case = extension.chars().all(|c| !c.is_ascii_uppercase())
        || extension.chars().all(|c| !c.is_ascii_lowercase());
    (!extension.is_empty()
        && extension.chars().all(|c| c.is_ascii_alphanumeric())
        && one_case
        && base.chars().all(valid)
        && !base.ends_with('.')
        && if base.is_empty() {
            name.is_empty()
        } else {
            extension.len() >= 3
                || base.len() >= 4
                || base
                    .chars()
                    .any(|c| c.is_alphabetic() || c == '-' || c == '_')
        })
    .then_some(extension)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(query: &str) -> (String, Vec<Kind>) {
        let (rest, found) = entities(query);
        (
            rest.trim_end().to_owned(),
            found.into_iter().map(|e| e.kind).collect(),
        )
    }

    #[test]
    fn identifiers_are_taken_out_of_the_words() {
        assert_eq!(
            kinds("mark in Jira that API-10 blocks API-12."),
            (
                "mark in Jira that blocks".to_owned(),
                vec![Kind::IssueKey, Kind::IssueKey]
            )
        );
        assert_eq!(
            kinds("drop a note in #general that the office is closed"),
            (
                "drop a note in that the office is closed".to_owned(),
                vec![Kind::Channel]
            )
        );
        assert_eq!(kinds("ask @maria.k").1, [Kind::Mention]);
        assert_eq!(kinds("mail bob@example.com").1, [Kind::Email]);
        assert_eq!(
            kinds("make the header row of data.xlsx bold").1,
            [Kind::File(FileKind::Spreadsheet)]
        );
        assert_eq!(
            kinds("read (notes.md) and report.PDF").1,
            [Kind::File(FileKind::Markdown), Kind::File(FileKind::Pdf)]
        );
        assert_eq!(kinds("what's in ~/Downloads").1, [Kind::Path]);
        assert_eq!(kinds("close #42").1, [Kind::IssueNumber]);
        assert_eq!(
            kinds("who is U024BE7LH, and what is C0123ABCD45?"),
            (
                "who is and what is".to_owned(),
                vec![Kind::Mention, Kind::Channel]
            )
        );
        assert_eq!(
            kinds("paint it #FF0000, then #fa0 in #add and #general").1,
            [Kind::Color, Kind::Color, Kind::Channel, Kind::Channel]
        );
        let (_, found) = entities("summarize https://www.github.com/a/b?x=1");
        assert_eq!(found[0].kind, Kind::Url);
        assert_eq!(found[0].site.as_deref(), Some("github"));
    }

    #[test]
    fn a_model_reads_what_an_identifier_is() {
        assert_eq!(
            spelled_out("can WEB-77 go straight to Done?"),
            "can issue WEB-77 go straight to Done?"
        );
        assert_eq!(
            spelled_out("drop a note in #general, then ping @maria."),
            "drop a note in channel, then ping user."
        );
        assert_eq!(
            spelled_out("make the header row of (data.xlsx) bold"),
            "make the header row of (spreadsheet) bold"
        );
        assert_eq!(
            spelled_out("summarize \"https://www.github.com/a/b?x=1\" for me"),
            "summarize \"github web page\" for me"
        );
        assert_eq!(
            spelled_out("what's in ~/Downloads"),
            "what's in folder or file"
        );
        // No identifier: the query itself, not a copy.
        assert!(matches!(
            spelled_out("list the  files\tin a folder"),
            Cow::Borrowed("list the  files\tin a folder")
        ));
        // A long query of identifiers: one rewrite each.
        let long = "a.pdf ".repeat(10_000);
        assert_eq!(spelled_out(&long).matches("pdf file").count(), 10_000);
    }

    #[test]
    fn names_with_an_identifiers_shape_are_not_misread() {
        assert_eq!(
            spelled_out("the #1 song, ping @maria, post with #AI"),
            "the issue #1 song, ping user, post with channel"
        );
        for query in [
            "see clause 4.c",
            "I'm done.Go ahead",
            "wait...go",
            "encode as UTF-8, hash with SHA-256",
            "dates in ISO-8601 for the Q3-2024 report",
            "compare GPT-4 and RTX-4090",
            "a WIFI-6 router with USB-3, HDMI-2 and DDR-5, pages in HTML-5 and CSS-3",
            "floats as IEEE-754, JavaScript as ECMA-262",
            "schedule a call @10am",
            "use /giphy in slack, or run /remind",
            "ISIN US0378331005 and DE0005140008, order D12345678",
        ] {
            assert!(matches!(spelled_out(query), Cow::Borrowed(_)), "{query}");
        }
        assert_eq!(spelled_out("upload logo@2x.png"), "upload image");
        assert_eq!(spelled_out("export 2024.csv"), "export spreadsheet");
        assert_eq!(
            spelled_out("set it to #fff, #FFF, #fa0, #0af or #FF0000"),
            "set it to color, color, color, color or color"
        );
        // Digits alone: a colour from 0 or six alike, else an issue.
        assert_eq!(
            kinds("paint it #000, #000000 or #333333, not #333 or #1024").1,
            [
                Kind::Color,
                Kind::Color,
                Kind::Color,
                Kind::IssueNumber,
                Kind::IssueNumber
            ]
        );
        assert_eq!(kinds("see #0 and #0042").1, [Kind::Color]);
        // A pull request's key; a chat's broadcast; a library, not a file.
        assert_eq!(
            kinds("review PR-42, tell @channel and @Here, ping @maria").1,
            [
                Kind::IssueNumber,
                Kind::Channel,
                Kind::Channel,
                Kind::Mention
            ]
        );
        assert_eq!(
            kinds("upgrade Node.js and next.js, then edit server.js").1,
            [Kind::File(FileKind::Code)]
        );
        // Near misses of those shapes are still what they were.
        assert_eq!(
            kinds("make backups under /data, run ls /tmp. then /r/rust"),
            (
                "make backups under run ls then".to_owned(),
                vec![Kind::Path, Kind::Path, Kind::Path]
            )
        );
        assert_eq!(
            kinds(
                "move MP-142 to Done, close ES-311 and CSS-120, but MD-5 and FY-2024 are no keys"
            )
            .1,
            [Kind::IssueKey, Kind::IssueKey, Kind::IssueKey]
        );
        assert_eq!(
            kinds("rename 2024-05-01.md and 20240501.md").1,
            [
                Kind::File(FileKind::Markdown),
                Kind::File(FileKind::Markdown)
            ]
        );
        assert_eq!(
            kinds("post in #e2e, #b2b or #decade").1,
            [Kind::Channel, Kind::Channel, Kind::Channel]
        );
        assert_eq!(
            kinds("mail petar@firma.rs and hello@acme.sh").1,
            [Kind::Email, Kind::Email]
        );
        assert_eq!(
            spelled_out("read https://bbc.co.uk/news and http://10.0.10.1/admin"),
            "read bbc web page and web page"
        );
        assert_eq!(spelled_out("list /r/rust"), "list folder or file");
    }

    #[test]
    fn ordinary_words_stay_words() {
        for query in [
            "open a new issue",
            "e.g. this, that",
            "the end.",
            "x-ray the api",
            "# heading",
            "a and/or b",
            "version 1.2.3",
            "UNDERSTOOD, USB3 and CAPS",
        ] {
            let (_, found) = entities(query);
            assert!(found.is_empty(), "{query}: {found:?}");
        }
        // `COVID-19` has a key's shape and is known not to be one; a name
        // of that shape not listed is read as a key.
        assert_eq!(kinds("COVID-19 cases").1, []);
        assert_eq!(kinds("MERS-2 cases").1, [Kind::IssueKey]);
    }
}
