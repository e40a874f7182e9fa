//! The pieces of JSON text as Python's `json.dumps(value, indent=N)` writes them: strings
//! escaped to ASCII (`ensure_ascii`), and line breaks with their indent. `python/json_text.rs` walks Python values with them: the C encoder
//! writes only compact text, and Python's indenting encoder is pure Python, several times
//! slower.

use std::fmt::Write;

/// `text` quoted and escaped as `json.dumps` does with `ensure_ascii`: `\"`, `\\`,
/// `\n`, `\r`, `\t`, `\b`, `\f`, every other character below a space or above `~` as
/// `\u00e9` (a surrogate pair above the Basic Multilingual Plane).
pub fn push_string(out: &mut String, text: &str) {
    out.push('"');
    let mut units = [0u16; 2];
    for c in text.chars() {
        for unit in c.encode_utf16(&mut units) {
            push_unit(out, *unit);
        }
    }
    out.push('"');
}

/// A string given as UTF-16 code units (one Python cannot hand over as UTF-8: a lone
/// surrogate), quoted and escaped as [`push_string`] does.
pub fn push_units(out: &mut String, units: impl IntoIterator<Item = u16>) {
    out.push('"');
    for unit in units {
        push_unit(out, unit);
    }
    out.push('"');
}

fn push_unit(out: &mut String, unit: u16) {
    match unit {
        0x22 => out.push_str("\\\""),
        0x5C => out.push_str("\\\\"),
        0x0A => out.push_str("\\n"),
        0x0D => out.push_str("\\r"),
        0x09 => out.push_str("\\t"),
        0x08 => out.push_str("\\b"),
        0x0C => out.push_str("\\f"),
        0x20..=0x7E => out.push(char::from(unit as u8)),
        _ => {
            let _ = write!(out, "\\u{unit:04x}");
        }
    }
}

/// A line break and the indent of `depth` levels of `width` spaces.
pub fn push_line(out: &mut String, depth: usize, width: usize) {
    out.push('\n');
    out.extend(std::iter::repeat_n(' ', depth * width));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escaped_to_ascii() {
        let mut out = String::new();
        push_string(&mut out, "a\"\\\n\r\t\u{8}\u{c}\u{1}é€😀~");
        assert_eq!(out, r#""a\"\\\n\r\t\b\f\u0001\u00e9\u20ac\ud83d\ude00~""#);
    }
}
