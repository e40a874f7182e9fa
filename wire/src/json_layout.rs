//! The pieces of JSON text as Python's `json.dumps(value, indent=N)` writes them: numbers
//! as `repr` writes a float, strings escaped to ASCII (`ensure_ascii`), and line breaks
//! with their indent. `python/json_text.rs` walks Python values with them: the C encoder
//! writes only compact text, and Python's indenting encoder is pure Python, several times
//! slower.

use std::fmt::Write;

/// `x` as Python's `float.__repr__` (and so `json.dumps`) writes it: the shortest digits
/// that read back as `x`, positional from 1e-4 up to below 1e16 (with `.0` when whole),
/// else `d.ddde-05`, `de+16`; `NaN`, `Infinity` and `-Infinity` as `json.dumps` writes
/// them.
pub fn push_float(out: &mut String, x: f64) {
    if x.is_nan() {
        out.push_str("NaN");
        return;
    }
    if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    // Rust's `{:e}` writes the same shortest round-trip digits: `-d.ddde-N` (at most 25
    // characters for an f64)
    let mut buffer = [0u8; 32];
    let written = {
        let mut cursor = &mut buffer[..];
        let _ = std::io::Write::write_fmt(&mut cursor, format_args!("{x:e}"));
        32 - cursor.len()
    };
    let scientific = std::str::from_utf8(&buffer[..written]).unwrap_or("0e0");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if let Some(positive) = mantissa.strip_prefix('-') {
        out.push('-');
        push_digits(out, positive, exponent);
    } else {
        push_digits(out, mantissa, exponent);
    }
}

/// The digits of `mantissa` (`d` or `d.ddd`) times 10^`exponent`, as `repr` lays them out.
fn push_digits(out: &mut String, mantissa: &str, exponent: i32) {
    let (first, rest) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if !(-4..16).contains(&exponent) {
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let _ = write!(out, "e{}{:02}", if exponent < 0 { '-' } else { '+' }, exponent.unsigned_abs());
    } else if exponent < 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-exponent - 1) as usize));
        out.push_str(first);
        out.push_str(rest);
    } else {
        let whole = exponent as usize; // digits of `rest` before the point
        out.push_str(first);
        if rest.len() > whole {
            out.push_str(&rest[..whole]);
            out.push('.');
            out.push_str(&rest[whole..]);
        } else {
            out.push_str(rest);
            out.extend(std::iter::repeat_n('0', whole - rest.len()));
            out.push_str(".0");
        }
    }
}

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

    fn float(x: f64) -> String {
        let mut out = String::new();
        push_float(&mut out, x);
        out
    }

    #[test]
    fn floats_as_python_writes_them() {
        let cases = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1.5e300, "1.5e+300"),
            (1e16, "1e+16"),
            (9999999999999998.0, "9999999999999998.0"),
            (123456789.125, "123456789.125"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5e-7, "-2.5e-07"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
        ];
        for (x, expected) in cases {
            assert_eq!(float(x), expected, "{x:e}");
        }
    }

    #[test]
    fn strings_escaped_to_ascii() {
        let mut out = String::new();
        push_string(&mut out, "a\"\\\n\r\t\u{8}\u{c}\u{1}é€😀~");
        assert_eq!(out, r#""a\"\\\n\r\t\b\f\u0001\u00e9\u20ac\ud83d\ude00~""#);
    }
}
