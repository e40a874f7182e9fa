//! One counter's timeline for Python (`correlator/collect/timeline.py`): the
//! [`Timeline`] of the core behind the API of the Python class it replaced.

use pyo3::prelude::*;

use crate::timeline::Timeline;

/// CounterTimeline(bits=64, fresh=False): the known moments of one counter (see the stub).
#[pyclass(module = "correlator._wire", name = "CounterTimeline")]
pub struct PyCounterTimeline(Timeline);

#[pymethods]
impl PyCounterTimeline {
    #[new]
    #[pyo3(signature = (bits = 64, fresh = false))]
    fn new(bits: u32, fresh: bool) -> Self {
        PyCounterTimeline(Timeline::new(bits, fresh))
    }

    #[pyo3(signature = (at, value, max_rate = None))]
    fn add(&mut self, at: f64, value: i128, max_rate: Option<f64>) {
        self.0.add(at, value, max_rate);
    }

    fn restart(&mut self) {
        self.0.restart();
    }

    fn moments(&self) -> Vec<(f64, i128)> {
        self.0.moments()
    }

    #[pyo3(signature = (at, extrapolate = false))]
    fn value_at(&self, at: f64, extrapolate: bool) -> Option<f64> {
        self.0.value_at(at, extrapolate)
    }

    #[pyo3(signature = (at, extrapolate = false))]
    fn bounds(&self, at: f64, extrapolate: bool) -> Option<(f64, f64)> {
        self.0.bounds(at, extrapolate)
    }

    fn unknown_in(&self, start: f64, end: f64) -> bool {
        self.0.unknown_in(start, end)
    }

    #[pyo3(signature = (start, end, extrapolate = false))]
    fn increase_bounds(&self, start: f64, end: f64, extrapolate: bool) -> Option<(f64, f64)> {
        self.0.increase_bounds(start, end, extrapolate)
    }

    #[pyo3(signature = (start, end, extrapolate = false))]
    fn increase(&mut self, start: f64, end: f64, extrapolate: bool) -> Option<f64> {
        self.0.increase(start, end, extrapolate)
    }

    #[pyo3(signature = (at, since = None, counted = 0.0))]
    fn keep(&mut self, at: f64, since: Option<f64>, counted: f64) {
        self.0.keep(at, since, counted);
    }

    #[getter]
    fn bits(&self) -> u32 {
        self.0.bits
    }

    #[getter]
    fn fresh(&self) -> bool {
        self.0.fresh
    }

    #[getter]
    fn times(&self) -> Vec<f64> {
        self.0.times.clone()
    }

    #[getter]
    fn values(&self) -> Vec<f64> {
        self.0.values.clone()
    }

    #[getter]
    fn slack(&self) -> Vec<f64> {
        self.0.slack.clone()
    }

    #[getter]
    fn unknown(&self) -> Vec<(f64, f64)> {
        self.0.unknown.clone()
    }

    #[getter]
    fn period(&self) -> Option<f64> {
        self.0.period
    }

    #[getter]
    fn covered_until(&self) -> f64 {
        self.0.covered_until
    }
}
