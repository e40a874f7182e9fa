//! Sample values as the Prometheus text format writes them: the text prometheus-client's
//! `floatToGoString` makes of a float, built here for many values at once.
//!
//! That text is Python's `repr` (the shortest digits that read back as the same float,
//! positional when the decimal point falls within 16 digits left and 4 zeros right of
//! them, else `d.ddde±XX`), except that a positive value of 7 to 16 integer digits is
//! written in the exponent form too, as Go does; infinities are `+Inf` and `-Inf`.
//! Rust's `{:e}` gives the same shortest digits, the closest to the value among them,
//! except where two are equally close: Rust takes the greater, Python the even one
//! ([`even_tie`]). The rest is layout.

use std::fmt::Write;

/// The digits of Python's positional form of a positive value reach at most this many
/// places left of the decimal point (`repr` switches to an exponent past it).
const MAX_POSITIONAL: i32 = 16;
/// At most this many zeros follow the decimal point before the digits in `repr`.
const MAX_LEADING_ZEROS: i32 = 3;
/// Positive values with more integer digits than this are written as exponents.
const GO_MAX_POSITIONAL: i32 = 6;

/// Appends `value` as `floatToGoString(value)` writes it.
pub fn push(out: &mut String, value: f64, scratch: &mut String) {
    if value.is_nan() {
        out.push_str("NaN");
    } else if value.is_infinite() {
        out.push_str(if value > 0.0 { "+Inf" } else { "-Inf" });
    } else if value == 0.0 {
        out.push_str(if value.is_sign_negative() { "-0.0" } else { "0.0" });
    } else {
        scratch.clear();
        // the shortest round-trip digits as `d.ddde-N`: never fails into a String
        let _ = write!(scratch, "{:e}", value.abs());
        let (mantissa, exponent) = scratch.split_once('e').unwrap_or((scratch, "0"));
        let exponent: i32 = exponent.parse().unwrap_or(0);
        let (first, rest) = (&mantissa[..1], mantissa.get(2..).unwrap_or(""));
        let even = even_tie(value.abs(), first, rest, exponent);
        let (first, rest, exponent) = match &even {
            Some((digits, shift)) => (&digits[..1], &digits[1..], exponent + shift),
            None => (first, rest, exponent),
        };
        if value < 0.0 {
            out.push('-');
        }
        let widest = if value > 0.0 { GO_MAX_POSITIONAL } else { MAX_POSITIONAL };
        if exponent >= widest || exponent < -MAX_LEADING_ZEROS - 1 {
            exponential(out, first, rest, exponent);
        } else {
            positional(out, first, rest, exponent);
        }
    }
}

/// Where the digits `first rest` × 10^(`exponent` + 1 - their count) are one of two
/// digit strings of that length equally close to `value` (positive), both reading back
/// as it: the even one, and how much its exponent grew (a carry), if it is the other.
fn even_tie(value: f64, first: &str, rest: &str, exponent: i32) -> Option<(String, i32)> {
    let digits = first.bytes().chain(rest.bytes());
    if (digits.clone().last()? - b'0').is_multiple_of(2) {
        return None;
    }
    let count = 1 + rest.len() as i32;
    // at most 17 digits
    let whole = digits.fold(0u64, |whole, digit| 10 * whole + u64::from(digit - b'0'));

    // value = mantissa × 2^power exactly
    let bits = value.to_bits();
    let (biased, fraction) = ((bits >> 52) as i32, bits & ((1 << 52) - 1));
    let (mantissa, power) = match biased {
        0 => (fraction, -1074),
        _ => (fraction | (1 << 52), biased - 1075),
    };
    // the midpoints either side, 10 × whole ± 5, scaled by 10^scale
    let scale = exponent - count;
    for (midpoint, partner) in [(10 * whole - 5, whole - 1), (10 * whole + 5, whole + 1)] {
        if equal(mantissa, power, midpoint, scale) {
            let text = partner.to_string();
            let shift = text.len() as i32 - count;
            if format!("{text}e{}", scale + 1).parse::<f64>() == Ok(value) {
                return Some((text.trim_end_matches('0').to_string(), shift));
            }
        }
    }
    None
}

/// Whether `mantissa` × 2^`power` is `decimal` × 10^`scale` exactly.
fn equal(mantissa: u64, power: i32, decimal: u64, scale: i32) -> bool {
    // 5^27 exceeds any mantissa and decimal here: no equality beyond it
    if scale.unsigned_abs() > 27 {
        return false;
    }
    let fives = 5u128.pow(scale.unsigned_abs());
    // multiplied through by 5^-scale when it is negative: both sides integers × 2^n
    let (left, right) = if scale >= 0 {
        ((u128::from(mantissa), power), (u128::from(decimal) * fives, scale))
    } else {
        ((u128::from(mantissa) * fives, power), (u128::from(decimal), scale))
    };
    odd(left) == odd(right)
}

/// `n × 2^p` as its odd factor and power of two.
fn odd((n, p): (u128, i32)) -> (u128, i32) {
    let zeros = n.trailing_zeros().min(127);
    (n >> zeros, p + zeros as i32)
}

/// `d.ddde+XX`: the exponent signed and of two digits at least, no `.` for one digit.
fn exponential(out: &mut String, first: &str, rest: &str, exponent: i32) {
    out.push_str(first);
    if !rest.is_empty() {
        out.push('.');
        out.push_str(rest);
    }
    out.push_str(if exponent < 0 { "e-" } else { "e+" });
    let _ = write!(out, "{:02}", exponent.unsigned_abs());
}

/// The digits `first rest` × 10^`exponent` with a decimal point and a digit either side.
fn positional(out: &mut String, first: &str, rest: &str, exponent: i32) {
    if exponent < 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-exponent - 1) as usize));
        out.push_str(first);
        out.push_str(rest);
        return;
    }
    let whole = exponent as usize; // digits of the integer part after the first
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

#[cfg(test)]
mod tests {
    use super::push;

    fn text(value: f64) -> String {
        let (mut out, mut scratch) = (String::new(), String::new());
        push(&mut out, value, &mut scratch);
        out
    }

    #[test]
    fn as_floattogostring_writes() {
        // (value, what prometheus_client.utils.floatToGoString returns for it)
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (f64::INFINITY, "+Inf"),
            (f64::NEG_INFINITY, "-Inf"),
            (f64::NAN, "NaN"),
            (1.0, "1.0"),
            (-7.0, "-7.0"),
            (0.1, "0.1"),
            (-3.25, "-3.25"),
            (999999.0, "999999.0"),
            (1234567.5, "1.2345675e+06"),
            (1000000.0, "1e+06"),
            (-1000000.0, "-1000000.0"),
            (123456789.0, "1.23456789e+08"),
            (2.5e10, "2.5e+10"),
            (9999999999999998.0, "9.999999999999998e+15"),
            (-9999999999999998.0, "-9999999999999998.0"),
            (1e16, "1e+16"),
            (-1e16, "-1e+16"),
            (1.5e16, "1.5e+16"),
            (1e22, "1e+22"),
            (2f64.powi(70), "1.1805916207174113e+21"),
            (1e-4, "0.0001"),
            (-1.5e-4, "-0.00015"),
            (9.999e-5, "9.999e-05"),
            (1e-9, "1e-09"),
            (-1e-100, "-1e-100"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (5e-324, "5e-324"),
            // …981.25 and …981.75, halfway between two 17-digit strings: the even one
            (8799613587047850.0 / 8.0, "1.0999516983809812e+15"),
            (8799613587047854.0 / 8.0, "1.0999516983809818e+15"),
            (-8799613587047850.0 / 8.0, "-1099951698380981.2"),
        ];
        for &(value, expected) in cases {
            assert_eq!(text(value), expected, "{value:e}");
        }
    }
}
