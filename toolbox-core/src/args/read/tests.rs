//! The reader against serde_json, form by form.

use super::*;

/// A string literal's text is what serde_json reads from it, whatever
/// its escapes; a literal serde_json refuses (a lone surrogate) or
/// another kind of JSON gives none.
#[test]
fn a_string_literal_reads_as_serde_json_reads_it() {
    let literals = [
        r#""""#,
        r#""plain""#,
        r#""{\"a\": 40, \"b\": 2}""#,
        r#""\"\\\/\b\f\n\r\t""#,
        r#""tail\\""#,
        r#""\\\"""#,
        r#""caf\u00e9 \ud83d\ude00 and \"quoted\"""#,
        "\"caf\u{e9} \u{1F600} raw\"",
        r#""\u0041\n""#,
    ];
    for literal in literals {
        let expected: String = serde_json::from_str(literal).expect("a valid literal");
        assert_eq!(string_text(literal), Some(expected), "{literal}");
    }
    for refused in [
        r#""\ud800""#,
        r#""\udc00 and more""#,
        "{}",
        "12",
        "null",
        r#""open"#,
    ] {
        assert_eq!(string_text(refused), None, "{refused}");
    }
    // Every text serde_json writes comes back as it was.
    let mut text = String::new();
    for code in (0u32..0x2_0000).step_by(7) {
        if let Some(c) = char::from_u32(code) {
            text.push(c);
        }
        if code % 97 == 0 {
            text.push_str("\"\\/");
        }
    }
    let literal = serde_json::to_string(&text).expect("text serializes");
    assert_eq!(string_text(&literal).as_deref(), Some(text.as_str()));
}

/// A JSON string literal for `text`, each character written as it is,
/// with its short escape, or as `\u` escapes (a surrogate pair past
/// the BMP), as `choice` picks per character; and `\u` escapes of
/// lone or unpaired surrogates where `choice` says, which serde_json
/// refuses.
fn literal(text: &str, choices: &[u8]) -> String {
    let mut out = String::from("\"");
    let mut pick = choices.iter().copied().cycle();
    for c in text.chars() {
        let choice = pick.next().unwrap_or(0);
        match (c, choice % 8) {
            (_, 5) if choice > 250 => out.push_str("\\udc00"),
            (_, 6) if choice > 250 => out.push_str("\\ud83d\\u0041"),
            ('"', _) => out.push_str("\\\""),
            ('\\', _) => out.push_str("\\\\"),
            ('/', 1) => out.push_str("\\/"),
            ('\n', 1) => out.push_str("\\n"),
            ('\t', 1) => out.push_str("\\t"),
            ('\u{8}', 1) => out.push_str("\\b"),
            ('\u{c}', 1) => out.push_str("\\f"),
            ('\r', 1) => out.push_str("\\r"),
            (c, 2 | 3) | (c @ '\0'..='\u{1f}', _) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            (c, _) => out.push(c),
        }
    }
    out.push('"');
    out
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2_000))]

    /// Random text written with every kind of escape, and some lone
    /// surrogates: read as serde_json reads it, or refused where
    /// serde_json refuses it.
    #[test]
    fn any_string_literal_reads_as_serde_json_reads_it(
        text in "(?s)[\"\\\\/a-z \\x00-\\x1f\\u{e9}\\u{2028}\\u{1F600}\\u{10FFFF}]{0,40}",
        choices in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..8),
    ) {
        let raw = literal(&text, &choices);
        let expected = serde_json::from_str::<String>(&raw).ok();
        proptest::prop_assert_eq!(string_text(&raw), expected, "{}", raw);
    }
}
