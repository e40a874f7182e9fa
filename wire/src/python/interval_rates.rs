//! Every port's interval rates for Python (`correlator/collect/interval_rates.py`): the
//! core's [`IntervalRates`] by port ID and counter name, an interval's sFlow counter
//! samples in one call (dated and named here), and the `Rates` of a span made here.

use std::cmp::Ordering;
use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator, PyString, PyTuple};

use super::counter_samples::{Arrival, PyAgentClocks, PyCounterArrivals, PySampledPorts};
use super::{any, Any};
use crate::counters_sample::interface_counter;
use crate::interval_rates::{Family, IntervalRates, NoBounds, Reading, Skip};

/// A port as Python names it: its ID (`port:{switch}/{port}`), switch and name.
struct Names {
    key: Py<PyString>,
    switch: Py<PyString>,
    port: Py<PyString>,
}

/// IntervalRates(slack, octets, frames, rates, ambiguous, implausible) (see the stub).
#[pyclass(module = "correlator._wire", name = "IntervalRates")]
pub struct PyIntervalRates {
    core: IntervalRates,
    octets: Vec<String>,
    frames: Vec<String>,
    /// Counter name -> its id, and the names by id.
    ids: HashMap<String, usize>,
    names: Vec<Py<PyString>>,
    /// Port ID -> its id, and the names by id.
    ports: HashMap<String, usize>,
    port_names: Vec<Names>,
    /// `Rates`, `Skip.AMBIGUOUS`, `Skip.IMPLAUSIBLE`.
    rates: Py<PyAny>,
    ambiguous: Py<PyAny>,
    implausible: Py<PyAny>,
}

impl PyIntervalRates {
    fn name_id(&mut self, py: Python<'_>, name: &str) -> usize {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let family = if self.octets.iter().any(|n| n == name) {
            Family::Octets
        } else if self.frames.iter().any(|n| n == name.split('/').next().unwrap_or(name)) {
            Family::Frames
        } else {
            Family::Other
        };
        let id = self.core.name(family);
        self.ids.insert(name.to_owned(), id);
        self.names.push(PyString::new(py, name).unbind());
        id
    }

    fn port_id(&mut self, switch: &Bound<'_, PyString>, port: &Bound<'_, PyString>) -> PyResult<usize> {
        let key = format!("port:{}/{}", switch.to_str()?, port.to_str()?);
        if let Some(&id) = self.ports.get(&key) {
            return Ok(id);
        }
        let id = self.core.port();
        let names = Names {
            key: PyString::new(switch.py(), &key).unbind(),
            switch: switch.clone().unbind(),
            port: port.clone().unbind(),
        };
        self.ports.insert(key, id);
        self.port_names.push(names);
        Ok(id)
    }

    /// The `Rates` of port `id` over `[start, end)`, when known.
    fn port_rates<'py>(
        &mut self,
        py: Python<'py>,
        id: usize,
        start: f64,
        end: f64,
    ) -> PyResult<Option<Any<'py>>> {
        let found = match self.core.rates(id, start, end) {
            Ok(Some(found)) => found,
            Ok(None) => return Ok(None),
            Err(NoBounds) => {
                return Err(pyo3::exceptions::PyTypeError::new_err(
                    "cannot unpack non-iterable NoneType object",
                ))
            }
        };
        let (per_second, ranges, skipped) = (PyDict::new(py), PyDict::new(py), PyDict::new(py));
        let (mut in_octets, mut out_octets) = (None, None);
        for &(name, rate) in &found.per_second {
            let key = self.names[name].bind(py);
            per_second.set_item(key, rate)?;
            match key.to_str()? {
                "in_octets" => in_octets = Some(rate),
                "out_octets" => out_octets = Some(rate),
                _ => {}
            }
        }
        for &(name, range) in &found.ranges {
            ranges.set_item(self.names[name].bind(py), range)?;
        }
        for &(name, why) in &found.skipped {
            let why = match why {
                Skip::Ambiguous => &self.ambiguous,
                Skip::Implausible => &self.implausible,
            };
            skipped.set_item(self.names[name].bind(py), why.bind(py))?;
        }
        let utilization =
            |octets: Option<f64>| found.speed.and_then(|speed| octets.map(|o| o * 8.0 / speed as f64));
        let names = &self.port_names[id];
        let empty = PyTuple::empty(py).into_any();
        let fields = PyTuple::new(
            py,
            [
                names.switch.bind(py).clone().into_any(),
                names.port.bind(py).clone().into_any(),
                any(py, end)?,
                any(py, end - start)?,
                per_second.into_any(),
                skipped.into_any(),
                empty.clone(),
                empty,
                any(py, found.speed)?,
                any(py, utilization(in_octets))?,
                any(py, utilization(out_octets))?,
                any(py, found.provisional)?,
                ranges.into_any(),
            ],
        )?;
        Ok(Some(self.rates.bind(py).call1(fields)?))
    }
}

#[pymethods]
impl PyIntervalRates {
    #[new]
    fn new(
        slack: f64,
        octets: Vec<String>,
        frames: Vec<String>,
        rates: Py<PyAny>,
        ambiguous: Py<PyAny>,
        implausible: Py<PyAny>,
    ) -> Self {
        PyIntervalRates {
            core: IntervalRates::new(slack),
            octets,
            frames,
            ids: HashMap::new(),
            names: Vec::new(),
            ports: HashMap::new(),
            port_names: Vec::new(),
            rates,
            ambiguous,
            implausible,
        }
    }

    #[getter]
    fn slack(&self) -> f64 {
        self.core.slack
    }

    #[getter]
    fn slowest_refresh_s(&self) -> f64 {
        self.core.slowest_refresh_s
    }

    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        py: Python<'_>,
        switch: &Bound<'_, PyString>,
        port: &Bound<'_, PyString>,
        at: f64,
        values: &Bound<'_, PyDict>,
        bits: &Bound<'_, PyDict>,
        speed: Option<u64>,
        uptime: Option<f64>,
        last_clear: Option<f64>,
        stamped: bool,
    ) -> PyResult<()> {
        let id = self.port_id(switch, port)?;
        let mut counted = Vec::with_capacity(values.len());
        for (name, value) in values.iter() {
            let width = match bits.get_item(&name)? {
                Some(width) => width.extract()?,
                None => 64,
            };
            let name = self.name_id(py, name.cast::<PyString>()?.to_str()?);
            counted.push((name, value.extract()?, width));
        }
        let reading = Reading { at, values: counted, speed, uptime, last_clear, stamped };
        self.core.add(id, &reading);
        Ok(())
    }

    fn add_sflow(
        &mut self,
        py: Python<'_>,
        names: Vec<String>,
        arrivals: &Bound<'_, PyCounterArrivals>,
        clocks: &Bound<'_, PyAgentClocks>,
        ports: &Bound<'_, PySampledPorts>,
    ) -> PyResult<()> {
        let mut counters = Vec::with_capacity(names.len());
        for name in &names {
            let (read, width) = interface_counter(name).ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err(format!("no sFlow interface counter {name:?}"))
            })?;
            counters.push((self.name_id(py, name), read, width));
        }
        let arrivals = &arrivals.get().items;
        let mut order: Vec<&Arrival> = arrivals.iter().collect();
        order.sort_by(|a, b| a.2.partial_cmp(&b.2).unwrap_or(Ordering::Equal));
        let clocks = &mut clocks.borrow_mut().core;
        let ports = &ports.get().ports;
        for (agent, sub_agent, received, uptime_ms, sample) in order {
            let at = clocks.date(*agent, *sub_agent, *received, *uptime_ms);
            let Some(interface) = &sample.interface else { continue };
            let Some((switch, port)) = ports.get(&(*agent, interface.ifindex)) else { continue };
            let id = self.port_id(switch.bind(py), port.bind(py))?;
            let values = counters
                .iter()
                .map(|&(name, read, width)| (name, i128::from(read(interface)), width))
                .collect();
            let speed = (interface.speed != 0).then_some(interface.speed);
            let reading = Reading { at, values, speed, uptime: None, last_clear: None, stamped: true };
            self.core.add(id, &reading);
        }
        Ok(())
    }

    #[pyo3(signature = (end, since = None))]
    fn covered(&mut self, end: f64, since: Option<f64>) -> bool {
        self.core.covered(end, since)
    }

    #[pyo3(signature = (port, start, end, published = None))]
    fn keep(
        &mut self,
        port: &str,
        start: f64,
        end: f64,
        published: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let Some(&id) = self.ports.get(port) else { return Ok(()) };
        let mut rates = Vec::new();
        for (name, rate) in published.into_iter().flat_map(|found| found.iter()) {
            if let Some(&name) = self.ids.get(name.cast::<PyString>()?.to_str()?) {
                if !rate.is_none() {
                    rates.push((name, rate.extract()?));
                }
            }
        }
        self.core.keep(id, start, end, &rates);
        Ok(())
    }

    #[pyo3(signature = (start, end, ports = None))]
    fn rates<'py>(
        &mut self,
        py: Python<'py>,
        start: f64,
        end: f64,
        ports: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let found = PyDict::new(py);
        match ports {
            None => {
                for id in 0..self.port_names.len() {
                    if let Some(rates) = self.port_rates(py, id, start, end)? {
                        found.set_item(self.port_names[id].key.bind(py), rates)?;
                    }
                }
            }
            Some(ports) => {
                for key in PyIterator::from_object(ports)? {
                    let key = key?;
                    let Some(&id) = self.ports.get(key.cast::<PyString>()?.to_str()?) else { continue };
                    if let Some(rates) = self.port_rates(py, id, start, end)? {
                        found.set_item(key, rates)?;
                    }
                }
            }
        }
        Ok(found)
    }
}
