//! One metric family's series lines of the `/metrics` text, rendered interval after
//! interval: each series' prefix (`name{labels} `) is rendered once, by Python, and kept;
//! an interval formats only the values.
//!
//! The prefixes of the last render are kept in its order, one after the other in one
//! string, beside its keys: a series whose key equals the last render's at its position
//! (the common case: the fabric's series come back in the same order) copies its prefix
//! from there, in order, without hashing its key. Other keys find their prefix in a dict
//! of every key seen, or have it rendered.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use crate::go_float;

/// The last render's keys in order and their prefixes, one after the other.
#[derive(Default)]
struct Last {
    keys: Vec<Py<PyAny>>,
    text: String,
    /// Where each key's prefix ends in `text`.
    ends: Vec<usize>,
}

impl Last {
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
}

#[pymethods]
impl SeriesLines {
    #[new]
    fn py_new(py: Python<'_>, new: Py<PyAny>) -> Self {
        SeriesLines { new, prefixes: PyDict::new(py).unbind(), last: Last::default() }
    }

    /// How many keys' prefixes are kept.
    #[getter]
    fn kept(&self, py: Python<'_>) -> usize {
        self.prefixes.bind(py).len()
    }

    fn render<'py>(
        &mut self,
        py: Python<'py>,
        keys: &Bound<'py, PyList>,
        values: &Bound<'py, PyList>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        if keys.len() != values.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "{} keys for {} values",
                keys.len(),
                values.len()
            )));
        }
        let prefixes = self.prefixes.bind(py);
        let mut out = String::with_capacity(self.last.text.len() + keys.len() * 24);
        let mut scratch = String::new();
        // the render's keys and prefixes, once one differs from the last render's
        let mut fresh: Option<Last> = None;
        for (at, (key, value)) in keys.iter().zip(values.iter()).enumerate() {
            let value: f64 = value.extract()?;
            let same = match self.last.keys.get(at) {
                Some(last) => last.is(&key) || last.bind(py).eq(&key)?,
                None => false,
            };
            if same {
                let prefix = self.last.prefix(at);
                out.push_str(prefix);
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
                out.push_str(prefix);
                fresh.get_or_insert_with(|| self.last.head(py, at)).push(key.unbind(), prefix);
            }
            go_float::push(&mut out, value, &mut scratch);
            out.push('\n');
        }
        match fresh {
            Some(fresh) => self.last = fresh,
            None => self.last.truncate(keys.len()),
        }
        if prefixes.len() > 2 * self.last.keys.len() + 64 {
            self.prune(py)?;
        }
        Ok(PyBytes::new(py, out.as_bytes()))
    }
}

impl SeriesLines {
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
