//! One group's share of a link direction, as Python sees it (`correlator._wire.Share`):
//! one object holding the numbers as they were computed, each made a Python value only
//! when it is read. It behaves as the named tuple it replaces: its fields by name, by
//! index and unpacked, compared, hashed, printed and pickled as that tuple.

use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyFloat, PyInt, PyIterator, PyList, PyString, PyTuple, PyType};

use super::{any, bad, wide, Any};
use crate::attribute::Sums;
use crate::share::{apportion, Bytes, Counters};

const FIELDS: [&str; 10] =
    ["name", "samples", "share", "share_low", "share_high", "bytes", "low", "high", "packets", "exact"];

/// A group's sums as Python holds them: samples, estimated bytes, packets, variance.
type SumsTuple = (u64, u128, u128, u128);

/// A link direction's counters: bytes, the least and most the readings allow, disputed.
pub type CountersTuple = (f64, Option<(f64, f64)>, bool);

/// One group's part of a link direction in one interval (see the stub).
#[pyclass(module = "correlator._wire", name = "Share", frozen)]
pub struct PyShare {
    #[pyo3(get)]
    name: Py<PyString>,
    #[pyo3(get)]
    samples: u64,
    #[pyo3(get)]
    share: f64,
    #[pyo3(get)]
    share_low: f64,
    #[pyo3(get)]
    share_high: f64,
    bytes: Bytes,
    #[pyo3(get)]
    low: f64,
    #[pyo3(get)]
    high: f64,
    packets: u128,
}

impl PyShare {
    /// The fields' values in order, as the named tuple held them.
    fn values<'py>(&self, py: Python<'py>) -> PyResult<[Any<'py>; 10]> {
        Ok([
            self.name.bind(py).clone().into_any(),
            any(py, self.samples)?,
            any(py, self.share)?,
            any(py, self.share_low)?,
            any(py, self.share_high)?,
            self.bytes(py)?,
            any(py, self.low)?,
            any(py, self.high)?,
            wide(py, self.packets)?,
            any(py, self.exact())?,
        ])
    }

    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.values(py)?)
    }
}

/// The fields' names as Python strings, made once.
fn field_names(py: Python<'_>) -> PyResult<&[Py<PyString>]> {
    static NAMES: PyOnceLock<Vec<Py<PyString>>> = PyOnceLock::new();
    NAMES
        .get_or_try_init(py, || Ok(FIELDS.iter().map(|name| PyString::intern(py, name).unbind()).collect()))
        .map(Vec::as_slice)
}

#[pymethods]
impl PyShare {
    #[new]
    #[pyo3(signature = (name, samples, share, share_low, share_high, bytes, low, high, packets, exact))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: Bound<'_, PyString>,
        samples: u64,
        share: f64,
        share_low: f64,
        share_high: f64,
        bytes: Bound<'_, PyAny>,
        low: f64,
        high: f64,
        packets: u128,
        exact: bool,
    ) -> PyResult<Self> {
        let bytes = if bytes.is_instance_of::<PyFloat>() {
            Bytes::Apportioned(bytes.extract()?)
        } else if bytes.is_instance_of::<PyInt>() {
            Bytes::Estimated(bytes.extract()?)
        } else {
            return Err(bad(format!(
                "a share's bytes are a float or an int, not {}",
                bytes.get_type().name()?
            )));
        };
        let made =
            PyShare { name: name.unbind(), samples, share, share_low, share_high, bytes, low, high, packets };
        if made.exact() != exact {
            return Err(bad("a share is exact when its bytes are apportioned (a float), else not".into()));
        }
        Ok(made)
    }

    /// Whether the bytes were apportioned from the counters (else they are the estimate).
    #[getter]
    fn exact(&self) -> bool {
        matches!(self.bytes, Bytes::Apportioned(_))
    }

    /// Apportioned bytes (a float), or the sampled estimate (the core's integer).
    #[getter]
    fn bytes<'py>(&self, py: Python<'py>) -> PyResult<Any<'py>> {
        match self.bytes {
            Bytes::Apportioned(bytes) => any(py, bytes),
            Bytes::Estimated(bytes) => wide(py, bytes),
        }
    }

    #[getter]
    fn packets<'py>(&self, py: Python<'py>) -> PyResult<Any<'py>> {
        wide(py, self.packets)
    }

    #[classattr]
    fn _fields(py: Python<'_>) -> PyResult<Py<PyTuple>> {
        Ok(PyTuple::new(py, field_names(py)?)?.unbind())
    }

    fn _asdict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, value) in field_names(py)?.iter().zip(self.values(py)?) {
            dict.set_item(name.bind(py), value)?;
        }
        Ok(dict)
    }

    /// A new share with the fields named in `changes` replaced.
    #[pyo3(signature = (**changes))]
    fn _replace<'py>(slf: &Bound<'py, Self>, changes: Option<&Bound<'py, PyDict>>) -> PyResult<Any<'py>> {
        let fields = slf.get()._asdict(slf.py())?;
        for (name, value) in changes.into_iter().flat_map(|c| c.iter()) {
            if !fields.contains(&name)? {
                return Err(bad(format!("Got unexpected field names: [{}]", name.repr()?)));
            }
            fields.set_item(name, value)?;
        }
        slf.get_type().call((), Some(&fields))
    }

    fn __len__(&self) -> usize {
        FIELDS.len()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: Any<'py>) -> PyResult<Any<'py>> {
        self.fields(py)?.as_any().get_item(index)
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyIterator>> {
        self.fields(py)?.as_any().try_iter()
    }

    /// Compared as its fields' tuple, with another share or any tuple.
    fn __richcmp__<'py>(&self, py: Python<'py>, other: Any<'py>, op: CompareOp) -> PyResult<Any<'py>> {
        let theirs = match other.cast::<PyShare>() {
            Ok(share) => share.get().fields(py)?.into_any(),
            Err(_) if other.is_instance_of::<PyTuple>() => other,
            Err(_) => return Ok(py.NotImplemented().into_bound(py)),
        };
        self.fields(py)?.as_any().rich_compare(theirs, op)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        self.fields(py)?.hash()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut text = String::from("Share(");
        for (place, (name, value)) in FIELDS.iter().zip(self.fields(py)?.iter()).enumerate() {
            let separator = if place == 0 { "" } else { ", " };
            text.push_str(&format!("{separator}{name}={}", value.repr()?));
        }
        text.push(')');
        Ok(text)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyType>, Bound<'py, PyTuple>)> {
        Ok((slf.get_type(), slf.get().fields(slf.py())?))
    }
}

fn sums((samples, bytes, packets, variance): SumsTuple) -> Sums {
    Sums { samples, bytes, packets, variance }
}

pub fn counters(found: Option<CountersTuple>) -> Option<Counters> {
    found.map(|(exact, known, disputed)| Counters { exact, known, disputed })
}

/// The shares of `groups` (named, in order) of `total`, apportioned from `counters` when
/// given.
pub fn made<'py>(
    py: Python<'py>,
    groups: impl Iterator<Item = (Bound<'py, PyString>, Sums)>,
    total: Sums,
    counters: Option<Counters>,
) -> PyResult<Vec<Bound<'py, PyShare>>> {
    let (names, numbers): (Vec<Bound<'py, PyString>>, Vec<Sums>) = groups.unzip();
    if numbers.iter().any(|group| group.samples == 0) {
        return Err(bad("a group without samples has no share".into()));
    }
    let mut out = Vec::with_capacity(names.len());
    for ((name, group), found) in names.into_iter().zip(&numbers).zip(apportion(&numbers, total, counters)) {
        let share = PyShare {
            name: name.unbind(),
            samples: group.samples,
            share: found.share,
            share_low: found.share_low,
            share_high: found.share_high,
            bytes: found.bytes,
            low: found.low,
            high: found.high,
            packets: group.packets,
        };
        out.push(Bound::new(py, share)?);
    }
    Ok(out)
}

/// shares(groups, total, counters) -> [Share]: each named group's share of `total`.
#[pyfunction]
pub fn shares<'py>(
    py: Python<'py>,
    groups: Vec<(Bound<'py, PyString>, SumsTuple)>,
    total: SumsTuple,
    counters: Option<CountersTuple>,
) -> PyResult<Bound<'py, PyList>> {
    let groups = groups.into_iter().map(|(name, group)| (name, sums(group)));
    PyList::new(py, made(py, groups, sums(total), self::counters(counters))?)
}
