//! An interval's sFlow counter samples for Python, kept in the core: the engine hands them
//! back to its interval rates in one call (`IntervalRates.add_sflow`), dated by the
//! agents' clocks and named by the fabric's ports here, never one object per sample.

use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyIterator, PyList, PyString, PyTuple};

use super::{addr, any, bad, tuple, Any};
use crate::clock::AgentClocks;
use crate::counters_sample::{CounterSample, InterfaceCounters, ETHERNET_COUNTERS_WORDS};
use crate::hash::FastMap;
use crate::packet::Addr;

/// A counter sample as it came: its agent, sub-agent, when it was received, the agent's
/// uptime in its datagram (ms), the sample.
pub type Arrival = (Addr, u32, f64, u32, CounterSample);

/// A counters sample as Python reads it (`CounterTuple` of the stub).
pub fn sample_tuple<'py>(py: Python<'py>, c: &CounterSample) -> PyResult<Any<'py>> {
    let interface = match &c.interface {
        None => py.None().into_bound(py),
        Some(i) => {
            let mut items = vec![
                any(py, i.ifindex)?,
                any(py, i.if_type)?,
                any(py, i.speed)?,
                any(py, i.direction)?,
                any(py, i.status)?,
                any(py, i.in_octets)?,
            ];
            for n in i.in_counts {
                items.push(any(py, n)?);
            }
            items.push(any(py, i.out_octets)?);
            for n in i.out_counts {
                items.push(any(py, n)?);
            }
            tuple(py, items)?
        }
    };
    let ethernet = match &c.ethernet {
        None => py.None().into_bound(py),
        Some(words) => PyTuple::new(py, words)?.into_any(),
    };
    tuple(py, vec![any(py, c.seq)?, any(py, c.source_type)?, any(py, c.source_index)?, interface, ethernet])
}

/// The sample of a `CounterTuple` (or a `CounterSample` record, a tuple of the same).
fn sample(found: &Bound<'_, PyAny>) -> PyResult<CounterSample> {
    let (seq, source_type, source_index, interface, ethernet): (
        u32,
        u32,
        u32,
        Option<Vec<u64>>,
        Option<Vec<u32>>,
    ) = found.extract()?;
    let interface = match interface {
        None => None,
        Some(n) if n.len() == 19 => {
            let narrow = |n: u64| u32::try_from(n).map_err(|_| bad(format!("{n} is not a 32-bit counter")));
            let counts = |at: &[u64]| -> PyResult<[u32; 6]> {
                let mut out = [0; 6];
                for (place, n) in out.iter_mut().zip(at) {
                    *place = narrow(*n)?;
                }
                Ok(out)
            };
            Some(InterfaceCounters {
                ifindex: narrow(n[0])?,
                if_type: narrow(n[1])?,
                speed: n[2],
                direction: narrow(n[3])?,
                status: narrow(n[4])?,
                in_octets: n[5],
                in_counts: counts(&n[6..12])?,
                out_octets: n[12],
                out_counts: counts(&n[13..])?,
            })
        }
        Some(n) => return Err(bad(format!("interface counters of {} fields, not 19", n.len()))),
    };
    let ethernet = match ethernet {
        None => None,
        Some(words) => Some(<[u32; ETHERNET_COUNTERS_WORDS]>::try_from(words).map_err(|w| {
            bad(format!("ethernet counters of {} words, not {ETHERNET_COUNTERS_WORDS}", w.len()))
        })?),
    };
    Ok(CounterSample { seq, source_type, source_index, interface, ethernet })
}

/// An interval's counter samples in the order they came (see the stub).
#[pyclass(module = "correlator._wire", name = "CounterArrivals", frozen)]
pub struct PyCounterArrivals {
    pub items: Vec<Arrival>,
}

impl PyCounterArrivals {
    /// Each arrival as (agent, sub-agent, received at, uptime ms, `CounterTuple`).
    fn tuples<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for (agent, sub_agent, received, uptime_ms, found) in &self.items {
            out.append((addr(py, agent), *sub_agent, *received, *uptime_ms, sample_tuple(py, found)?))?;
        }
        Ok(out)
    }
}

#[pymethods]
impl PyCounterArrivals {
    #[new]
    #[pyo3(signature = (arrivals = None))]
    fn new(arrivals: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let mut items = Vec::new();
        for found in arrivals.map(PyIterator::from_object).transpose()?.into_iter().flatten() {
            let found = found?;
            let (agent, sub_agent, received, uptime_ms, raw): (
                Bound<'_, PyBytes>,
                u32,
                f64,
                u32,
                Bound<'_, PyAny>,
            ) = found.extract()?;
            items.push((Addr::from_slice(agent.as_bytes()), sub_agent, received, uptime_ms, sample(&raw)?));
        }
        Ok(PyCounterArrivals { items })
    }

    /// Those of `parts`, one after another.
    #[staticmethod]
    fn joined(parts: Vec<PyRef<'_, Self>>) -> Self {
        PyCounterArrivals { items: parts.iter().flat_map(|part| part.items.iter().cloned()).collect() }
    }

    fn __len__(&self) -> usize {
        self.items.len()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyIterator>> {
        PyIterator::from_object(self.tuples(py)?.as_any())
    }

    /// Pickled as the tuples it is made from (intervals cross between processes).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyList>,))> {
        Ok((slf.get_type().into_any(), (slf.get().tuples(slf.py())?,)))
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let Ok(other) = other.cast::<Self>() else { return Ok(py.NotImplemented()) };
        let same = self.items == other.get().items;
        match op {
            CompareOp::Eq => Ok(same.into_pyobject(py)?.to_owned().into_any().unbind()),
            CompareOp::Ne => Ok((!same).into_pyobject(py)?.to_owned().into_any().unbind()),
            _ => Ok(py.NotImplemented()),
        }
    }

    fn __repr__(&self) -> String {
        format!("CounterArrivals(<{} samples>)", self.items.len())
    }
}

/// The switch and port name an sFlow agent means by an ifIndex, for a fabric (see the
/// stub).
#[pyclass(module = "correlator._wire", name = "SampledPorts", frozen)]
pub struct PySampledPorts {
    pub ports: FastMap<(Addr, u32), (Py<PyString>, Py<PyString>)>,
}

#[pymethods]
impl PySampledPorts {
    #[new]
    fn new(ports: Vec<(Bound<'_, PyBytes>, u32, Bound<'_, PyString>, Bound<'_, PyString>)>) -> Self {
        let ports = ports
            .into_iter()
            .map(|(agent, ifindex, switch, name)| {
                ((Addr::from_slice(agent.as_bytes()), ifindex), (switch.unbind(), name.unbind()))
            })
            .collect();
        PySampledPorts { ports }
    }

    fn __len__(&self) -> usize {
        self.ports.len()
    }
}

/// The agents' clocks (see the stub).
#[pyclass(module = "correlator._wire", name = "AgentClocks")]
pub struct PyAgentClocks {
    pub core: AgentClocks,
}

#[pymethods]
impl PyAgentClocks {
    #[new]
    #[pyo3(signature = (kept = crate::clock::KEPT))]
    fn new(kept: usize) -> PyResult<Self> {
        if kept == 0 {
            return Err(bad("an agent's clock keeps at least one guess".into()));
        }
        Ok(PyAgentClocks { core: AgentClocks::new(kept) })
    }

    fn date(&mut self, agent: &[u8], sub_agent: u32, arrival: f64, uptime_ms: u32) -> PyResult<f64> {
        let address = Addr::from_slice(agent);
        if address == Addr::NONE {
            return Err(bad(format!("an agent's address is 4 or 16 bytes, not {}", agent.len())));
        }
        Ok(self.core.date(address, sub_agent, arrival, uptime_ms))
    }
}
