//! `json_text(value, width)`: a Python value (dicts, lists, tuples, strings, ints, floats,
//! booleans, None) as `json.dumps(value, indent=width)` writes it, character for
//! character, written here in one walk of the value (the pieces: `json_layout`).

use std::fmt::Write;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::json_layout::{push_line, push_string, push_units};

/// How deep a value may nest (Python's encoder stops at its recursion limit).
const MAX_DEPTH: usize = 900;

/// json_text(value, width) -> str (see the stub).
#[pyfunction]
pub fn json_text(value: &Bound<'_, PyAny>, width: usize) -> PyResult<String> {
    let mut out = String::new();
    write_value(&mut out, value, 0, width)?;
    Ok(out)
}

fn write_value(out: &mut String, value: &Bound<'_, PyAny>, depth: usize, width: usize) -> PyResult<()> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err("a value nested too deep (or a circular reference)"));
    }
    if let Ok(text) = value.cast::<PyString>() {
        write_string(out, text)?;
    } else if push_scalar(out, value)? {
    } else if let Ok(items) = value.cast::<PyList>() {
        write_items(out, items.iter(), items.len(), depth, width)?;
    } else if let Ok(items) = value.cast::<PyTuple>() {
        write_items(out, items.iter(), items.len(), depth, width)?;
    } else if let Ok(table) = value.cast::<PyDict>() {
        if table.is_empty() {
            out.push_str("{}");
            return Ok(());
        }
        out.push('{');
        for (n, (key, member)) in table.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            push_line(out, depth + 1, width);
            write_key(out, &key)?;
            out.push_str(": ");
            write_value(out, &member, depth + 1, width)?;
        }
        push_line(out, depth, width);
        out.push('}');
    } else {
        let kind = value.get_type().name()?;
        return Err(PyTypeError::new_err(format!("Object of type {kind} is not JSON serializable")));
    }
    Ok(())
}

fn write_items<'py>(
    out: &mut String,
    items: impl Iterator<Item = Bound<'py, PyAny>>,
    len: usize,
    depth: usize,
    width: usize,
) -> PyResult<()> {
    if len == 0 {
        out.push_str("[]");
        return Ok(());
    }
    out.push('[');
    for (n, item) in items.enumerate() {
        if n > 0 {
            out.push(',');
        }
        push_line(out, depth + 1, width);
        write_value(out, &item, depth + 1, width)?;
    }
    push_line(out, depth, width);
    out.push(']');
    Ok(())
}

/// A dict key as `json.dumps` writes it: a string as itself, a number, boolean or None
/// as its JSON text in quotes.
fn write_key(out: &mut String, key: &Bound<'_, PyAny>) -> PyResult<()> {
    if let Ok(text) = key.cast::<PyString>() {
        return write_string(out, text);
    }
    let mut text = String::new();
    if !push_scalar(&mut text, key)? {
        let kind = key.get_type().name()?;
        return Err(PyTypeError::new_err(format!("keys must be str, int, float, bool or None, not {kind}")));
    }
    push_string(out, &text);
    Ok(())
}

/// None, a bool, an int or a float as its JSON text; false (nothing written) for
/// anything else.
fn push_scalar(out: &mut String, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    if value.is_none() {
        out.push_str("null");
    } else if let Ok(flag) = value.cast::<PyBool>() {
        out.push_str(if flag.is_true() { "true" } else { "false" });
    } else if let Ok(number) = value.cast::<PyInt>() {
        push_int(out, number)?;
    } else if let Ok(number) = value.cast::<PyFloat>() {
        push_float(out, number)?;
    } else {
        return Ok(false);
    }
    Ok(true)
}

/// A str, or the UTF-16 units of one holding a lone surrogate (not UTF-8).
fn write_string(out: &mut String, text: &Bound<'_, PyString>) -> PyResult<()> {
    match text.to_str() {
        Ok(text) => push_string(out, text),
        Err(_) => {
            let encoded = text.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
            let bytes = encoded.cast::<PyBytes>()?.as_bytes();
            push_units(out, bytes.chunks_exact(2).map(|pair| u16::from_le_bytes([pair[0], pair[1]])));
        }
    }
    Ok(())
}

/// A float as `json.dumps` writes it: `float.__repr__`'s text (`NaN`, `Infinity`,
/// `-Infinity` aside), whatever its subclass says.
fn push_float(out: &mut String, number: &Bound<'_, PyFloat>) -> PyResult<()> {
    let x = number.value();
    if x.is_nan() {
        out.push_str("NaN");
    } else if x.is_infinite() {
        out.push_str(if x > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        push_repr(out, x);
    }
    Ok(())
}

/// A finite float as Python's `repr` writes it: the shortest digits that read back as
/// `x`, the nearest to it, an exact tie to the even digit (Ryū's, as David Gay's `dtoa`
/// that CPython calls), laid out as CPython's `'r'` format does: positional when the
/// decimal point falls within the 16 places from the first digit (with `.0` when
/// nothing follows it), else `d.ddde±XX`.
fn push_repr(out: &mut String, x: f64) {
    let mut buffer = ryu::Buffer::new();
    let text = buffer.format_finite(x);
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match text.split_once('e') {
        Some((mantissa, exponent)) => (mantissa, exponent.parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let whole = mantissa.find('.').unwrap_or(mantissa.len());
    let mut all = [b'0'; 24]; // Ryū writes at most 17 digits
    let mut count = 0;
    for digit in mantissa.bytes().filter(|b| *b != b'.') {
        all[count] = digit;
        count += 1;
    }
    let all = std::str::from_utf8(&all[..count]).unwrap_or("");
    let digits = all.trim_start_matches('0');
    // the decimal point's place after the first significant digit
    let point = whole as i32 - (all.len() - digits.len()) as i32 + exponent;
    let digits = digits.trim_end_matches('0');
    if negative {
        out.push('-');
    }
    if digits.is_empty() {
        out.push_str("0.0");
    } else if point > -4 && point <= 16 {
        if point <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-point) as usize));
            out.push_str(digits);
        } else if point as usize >= digits.len() {
            out.push_str(digits);
            out.extend(std::iter::repeat_n('0', point as usize - digits.len()));
            out.push_str(".0");
        } else {
            let (head, tail) = digits.split_at(point as usize);
            out.push_str(head);
            out.push('.');
            out.push_str(tail);
        }
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let _ = write!(out, "e{}{:02}", if point - 1 < 0 { '-' } else { '+' }, (point - 1).abs());
    }
}

/// An int's decimal digits (as `int.__repr__`, whatever its subclass says).
fn push_int(out: &mut String, number: &Bound<'_, PyInt>) -> PyResult<()> {
    if let Ok(small) = number.extract::<i64>() {
        let _ = write!(out, "{small}");
    } else {
        let digits = number.py().get_type::<PyInt>().call_method1("__repr__", (number,))?;
        out.push_str(digits.cast::<PyString>()?.to_str()?);
    }
    Ok(())
}
