//! JSON laid out as Python's `json.dumps(value, indent=N)` lays it out, from the compact
//! text its C encoder writes with `separators=(",", ": ")`: Python's own indenting
//! encoder is pure Python, several times slower than the C one, for the same text.
//!
//! Outside strings, each `[` or `{` that is not empty opens a level and a new line, each
//! `,` ends a line, each `]` or `}` closes a level on a line of its own; `[]` and `{}`
//! stay as they are. Strings (with their escapes) are copied untouched.

/// `compact` (the C encoder's text with `separators=(",", ": ")`) indented by `width`
/// spaces a level, as `json.dumps(..., indent=width)` writes it.
pub fn indent(compact: &str, width: usize) -> String {
    let bytes = compact.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(compact.len() + compact.len() / 2);
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        i += 1;
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                out.push(b);
            }
            b'[' | b'{' => {
                let close = if b == b'[' { b']' } else { b'}' };
                out.push(b);
                if bytes.get(i) == Some(&close) {
                    out.push(close);
                    i += 1;
                } else {
                    depth += 1;
                    new_line(&mut out, depth * width);
                }
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                new_line(&mut out, depth * width);
                out.push(b);
            }
            b',' => {
                out.push(b);
                new_line(&mut out, depth * width);
            }
            _ => out.push(b),
        }
    }
    // only ASCII bytes were added, and whole UTF-8 sequences copied
    String::from_utf8(out).unwrap_or_default()
}

fn new_line(out: &mut Vec<u8>, spaces: usize) {
    out.push(b'\n');
    out.resize(out.len() + spaces, b' ');
}

#[cfg(test)]
mod tests {
    use super::indent;

    #[test]
    fn as_python_lays_it_out() {
        let compact = r#"{"a": [1,{"b": "x,[\"]{}"}],"c": {},"d": [],"é": [[]]}"#;
        let expected = "{\n  \"a\": [\n    1,\n    {\n      \"b\": \"x,[\\\"]{}\"\n    }\n  ],\n  \
                        \"c\": {},\n  \"d\": [],\n  \"é\": [\n    []\n  ]\n}";
        assert_eq!(indent(compact, 2), expected);
        assert_eq!(indent("[]", 2), "[]");
        assert_eq!(indent("\"a\\\\\"", 4), "\"a\\\\\"");
    }
}
