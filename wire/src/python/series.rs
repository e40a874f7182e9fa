//! One metric family's series lines of the `/metrics` text, rendered interval after
//! interval: each series' prefix (`name{labels} `) is rendered once, by Python, and kept;
//! an interval formats only the values.
//!
//! The prefixes of the last render are kept in its order, one after the other in one
//! string, beside its keys. The render walks them as it goes: a series whose key equals
//! the next one there (the common case: the fabric's series come back in the same order)
//! copies its prefix from there, in order, without hashing its key; a few series gone
//! since are skipped ([`LOOKAHEAD`]). Other keys (new, or moved back) find their prefix in
//! a dict of every key seen, or have it rendered, and the walk goes on where it was.
//!
//! The text of an exposition is written once, into the bytes Python gets ([`exposition`]):
//! headers and the families' prefixes and values, side by side.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use std::io::Write;

use crate::go_float;

/// How many series of the last render may be gone at one place for the walk to find
/// the next one.
const LOOKAHEAD: usize = 8;

/// The last render's keys in order and their prefixes, one after the other.
#[derive(Default)]
struct Last {
    keys: Vec<Py<PyAny>>,
    text: String,
    /// Where each key's prefix ends in `text`.
    ends: Vec<usize>,
}

impl Last {
    /// Where `key` is among the keys from `from` on, looking [`LOOKAHEAD`] keys ahead.
    fn find(&self, py: Python<'_>, key: &Bound<'_, PyAny>, from: usize) -> PyResult<Option<usize>> {
        for (at, last) in self.keys.iter().enumerate().skip(from).take(LOOKAHEAD + 1) {
            if last.is(key) || last.bind(py).eq(key)? {
                return Ok(Some(at));
            }
        }
        Ok(None)
    }

    fn prefix(&self, at: usize) -> &str {
        let start = if at == 0 { 0 } else { self.ends[at - 1] };
        &self.text[start..self.ends[at]]
    }

    fn push(&mut self, key: Py<PyAny>, prefix: &str) {
        self.keys.push(key);
        self.text.push_str(prefix);
        self.ends.push(self.text.len());
    }

    /// The first `count` keys and their prefixes.
    fn head(&self, py: Python<'_>, count: usize) -> Last {
        let end = if count == 0 { 0 } else { self.ends[count - 1] };
        let mut text = String::with_capacity(self.text.len().max(end));
        text.push_str(&self.text[..end]);
        Last {
            keys: self.keys[..count].iter().map(|k| k.clone_ref(py)).collect(),
            text,
            ends: self.ends[..count].to_vec(),
        }
    }

    fn truncate(&mut self, count: usize) {
        self.keys.truncate(count);
        self.ends.truncate(count);
        self.text.truncate(self.ends.last().copied().unwrap_or(0));
    }
}

/// `prefix value\n` per series of a family, the prefixes kept between renders.
#[pyclass(module = "correlator._wire", name = "SeriesLines")]
pub struct SeriesLines {
    new: Py<PyAny>,
    /// Every key of the last render (and maybe earlier ones) -> its prefix.
    prefixes: Py<PyDict>,
    last: Last,
    /// The last render's values as text, each with its newline.
    values: String,
    /// Where each value ends in `values`.
    value_ends: Vec<usize>,
}

#[pymethods]
impl SeriesLines {
    #[new]
    fn py_new(py: Python<'_>, new: Py<PyAny>) -> Self {
        SeriesLines {
            new,
            prefixes: PyDict::new(py).unbind(),
            last: Last::default(),
            values: String::new(),
            value_ends: Vec::new(),
        }
    }

    /// How many keys' prefixes are kept.
    #[getter]
    fn kept(&self, py: Python<'_>) -> usize {
        self.prefixes.bind(py).len()
    }

    /// The family's series for the next [`exposition`].
    fn update<'py>(
        &mut self,
        py: Python<'py>,
        keys: &Bound<'py, PyList>,
        values: &Bound<'py, PyList>,
    ) -> PyResult<()> {
        if keys.len() != values.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "{} keys for {} values",
                keys.len(),
                values.len()
            )));
        }
        let prefixes = self.prefixes.bind(py);
        let mut scratch = String::new();
        // taken while the render goes on: a render that fails leaves no values to write
        let (mut text, mut ends) = (std::mem::take(&mut self.values), std::mem::take(&mut self.value_ends));
        text.clear();
        ends.clear();
        // the render's keys and prefixes, once they differ from the last render's
        let mut fresh: Option<Last> = None;
        // where the walk through the last render is
        let mut next = 0;
        for (at, (key, value)) in keys.iter().zip(values.iter()).enumerate() {
            let value: f64 = value.extract()?;
            if let Some(found) = self.last.find(py, &key, next)? {
                next = found + 1;
                let prefix = self.last.prefix(found);
                if found != at && fresh.is_none() {
                    fresh = Some(self.last.head(py, at));
                }
                if let Some(fresh) = fresh.as_mut() {
                    fresh.push(key.unbind(), prefix);
                }
            } else {
                let prefix = match prefixes.get_item(&key)? {
                    Some(prefix) => prefix,
                    None => {
                        let prefix = self.new.bind(py).call1((&key,))?;
                        prefixes.set_item(&key, &prefix)?;
                        prefix
                    }
                };
                let prefix = prefix.cast::<PyString>()?.to_str()?;
                fresh.get_or_insert_with(|| self.last.head(py, at)).push(key.unbind(), prefix);
            }
            go_float::push(&mut text, value, &mut scratch);
            text.push('\n');
            ends.push(text.len());
        }
        match fresh {
            Some(fresh) => self.last = fresh,
            None => self.last.truncate(keys.len()),
        }
        (self.values, self.value_ends) = (text, ends);
        if prefixes.len() > 2 * self.last.keys.len() + 64 {
            self.prune(py)?;
        }
        Ok(())
    }
}

impl SeriesLines {
    /// Bytes of the text of the last render.
    fn len(&self) -> usize {
        let prefixes = self.value_ends.len().checked_sub(1).map_or(0, |at| self.last.ends[at]);
        prefixes + self.values.len()
    }

    /// Writes the text of the last render: each prefix and its value.
    fn write(&self, out: &mut impl Write) -> std::io::Result<()> {
        let mut start = 0;
        for (at, &end) in self.value_ends.iter().enumerate() {
            out.write_all(self.last.prefix(at).as_bytes())?;
            out.write_all(&self.values.as_bytes()[start..end])?;
            start = end;
        }
        Ok(())
    }

    /// Keeps the prefixes of the last render's keys only.
    fn prune(&mut self, py: Python<'_>) -> PyResult<()> {
        let kept = PyDict::new(py);
        for (at, key) in self.last.keys.iter().enumerate() {
            kept.set_item(key.bind(py), self.last.prefix(at))?;
        }
        self.prefixes = kept.unbind();
        Ok(())
    }
}

/// The exposition's text: `parts` (bytes, and families' series as last updated) one
/// after the other.
#[pyfunction]
pub fn exposition<'py>(py: Python<'py>, parts: &Bound<'py, PyList>) -> PyResult<Bound<'py, PyBytes>> {
    let mut size = 0;
    for part in parts.iter() {
        size += match part.cast::<PyBytes>() {
            Ok(bytes) => bytes.as_bytes().len(),
            Err(_) => part.cast::<SeriesLines>()?.borrow().len(),
        };
    }
    // written in place: the text is tens of MiB at a medium fabric
    PyBytes::new_with(py, size, |mut out: &mut [u8]| {
        for part in parts.iter() {
            match part.cast::<PyBytes>() {
                Ok(bytes) => out.write_all(bytes.as_bytes())?,
                Err(_) => part.cast::<SeriesLines>()?.borrow().write(&mut out)?,
            }
        }
        match out.is_empty() {
            true => Ok(()),
            false => Err(pyo3::exceptions::PyRuntimeError::new_err("the exposition fell short")),
        }
    })
}
