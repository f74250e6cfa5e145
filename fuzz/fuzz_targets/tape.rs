//! Reading any bytes as a tape: every complete entry and the defects, never
//! a panic; entries and defects together never outnumber the lines.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("toolbox-fuzz-tape-{}.jsonl", std::process::id()));
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(data).unwrap();
    drop(file);
    let tape = toolbox::boxes::read_tape(&path).unwrap();
    let lines = data
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    assert!(tape.entries.len() + tape.defects.len() <= lines);
});
