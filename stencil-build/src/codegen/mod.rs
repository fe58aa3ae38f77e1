//! Code shared by the generators, and the generated Rust API.

pub mod expr;
pub mod index;
pub mod names;
pub mod rust;

/// `text` with its bidirectional control characters spelled as escapes:
/// rustc denies them in doc comments (`text_direction_codepoint_in_comment`)
/// and GCC warns of them in comments (`-Wbidi-chars`), since they can make
/// source read otherwise than it compiles.
pub fn visible_direction(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => {
                format!("\\u{{{:04X}}}", c as u32)
            }
            c => c.to_string(),
        })
        .collect()
}
