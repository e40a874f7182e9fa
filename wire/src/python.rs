//! The Python module `correlator._wire` (documented in `correlator/_wire.pyi`): a decode
//! function for tests and tools, and the accumulator the receiver feeds. Python gets
//! compact tables per interval, never an object per flow sample.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use pyo3::IntoPyObjectExt;
use std::sync::mpsc;

use std::net::{IpAddr, SocketAddr};

use crate::accumulate::{self, guarded, Interval, Limits};
use crate::admission::{Admission, Refusal, Relay};
use crate::agent_flows::AgentFlows;
use crate::attribute::Row;
use crate::capture::{Capture, OpenError, Udp};
use crate::collector::{Closed, Collector, Totals};
use crate::datagram::{self, Counts, Datagram, Level, Sample};
use crate::discard_sample::DiscardSample;
use crate::flow_sample::FlowSample;
use crate::forward::{self, Forwarding};
use crate::loss::Loss;
use crate::packet::{Addr, Packet, Traffic};
use crate::receive::{Receiving, Request};
use crate::reject::Reject;
use crate::route::{self, Routes};

/// One row of a segment's flow table (little-endian): agent index, ifIndex, sampling
/// rate, source and destination address indexes, direction index, traffic index, two
/// pad bytes, samples, sum of frame lengths, sum of squares (low, high 64 bits).
const ROW_FORMAT: &str = "<5I2B2x4Q";
const ROW_SIZE: usize = 56;

mod counter_samples;
mod interval_rates;
mod join;
mod json_text;
mod series;
mod share;
mod timeline;

type Any<'py> = Bound<'py, PyAny>;

fn tuple<'py>(py: Python<'py>, items: Vec<Any<'py>>) -> PyResult<Any<'py>> {
    Ok(PyTuple::new(py, items)?.into_any())
}

fn any<'py, T: IntoPyObjectExt<'py>>(py: Python<'py>, value: T) -> PyResult<Any<'py>> {
    value.into_bound_py_any(py)
}

fn addr<'py>(py: Python<'py>, a: &Addr) -> Any<'py> {
    PyBytes::new(py, a.as_bytes()).into_any()
}

fn packet<'py>(py: Python<'py>, p: &Option<Packet>) -> PyResult<Any<'py>> {
    let Some(p) = p else { return Ok(py.None().into_bound(py)) };
    tuple(
        py,
        vec![
            any(py, p.traffic.name())?,
            any(py, p.vlan)?,
            any(py, p.ip_version)?,
            addr(py, &p.src_ip),
            addr(py, &p.dst_ip),
            any(py, p.dscp)?,
            any(py, p.ecn)?,
            any(py, p.protocol)?,
            any(py, p.src_port)?,
            any(py, p.dst_port)?,
            any(py, p.opcode)?,
            any(py, p.dest_qp)?,
            any(py, p.psn)?,
            any(py, p.becn)?,
        ],
    )
}

fn flow<'py>(py: Python<'py>, f: &FlowSample) -> PyResult<Any<'py>> {
    tuple(
        py,
        vec![
            any(py, f.seq)?,
            any(py, f.source_type)?,
            any(py, f.source_index)?,
            any(py, f.sampling_rate)?,
            any(py, f.sample_pool)?,
            any(py, f.drops)?,
            any(py, f.input)?,
            any(py, f.output)?,
            any(py, f.frame_length)?,
            any(py, f.stripped)?,
            packet(py, &f.packet)?,
            any(py, f.src_vlan)?,
            any(py, f.dst_vlan)?,
        ],
    )
}

fn discard<'py>(py: Python<'py>, d: &DiscardSample) -> PyResult<Any<'py>> {
    tuple(
        py,
        vec![
            any(py, d.seq)?,
            any(py, d.source_type)?,
            any(py, d.source_index)?,
            any(py, d.drops)?,
            any(py, d.input)?,
            any(py, d.output)?,
            any(py, d.reason)?,
            any(py, d.frame_length)?,
            packet(py, &d.packet)?,
        ],
    )
}

fn datagram_tuple<'py>(py: Python<'py>, d: &Datagram) -> PyResult<Any<'py>> {
    let samples = PyList::empty(py);
    for s in &d.samples {
        let (kind, fields) = match s {
            Sample::Flow(f) => ("flow", flow(py, f)?),
            Sample::Counters(c) => ("counters", counter_samples::sample_tuple(py, c)?),
            Sample::Discard(x) => ("discard", discard(py, x)?),
        };
        samples.append((kind, fields))?;
    }
    tuple(
        py,
        vec![
            addr(py, &d.agent),
            any(py, d.sub_agent)?,
            any(py, d.seq)?,
            any(py, d.uptime_ms)?,
            samples.into_any(),
        ],
    )
}

fn counts_dict<'py>(py: Python<'py>, c: &Counts) -> PyResult<Bound<'py, PyDict>> {
    let samples = PyDict::new(py); // by name: a printed dict reads the same every time
    for (name, n) in [("counters", c.counters), ("discard", c.discard), ("flow", c.flow)] {
        if n > 0 {
            samples.set_item(name, n)?;
        }
    }
    let rejects = PyDict::new(py);
    for reason in Reject::ALL {
        let n = c.rejects[reason.index()];
        if n > 0 {
            rejects.set_item(reason.name(), n)?;
        }
    }
    for refusal in Refusal::ALL {
        let n = c.refused[refusal.index()];
        if n > 0 {
            rejects.set_item(refusal.name(), n)?;
        }
    }
    let skipped = PyDict::new(py);
    for ((level, format), n) in c.skipped.iter() {
        let level = match level {
            Level::Sample => "sample",
            Level::Record => "record",
        };
        skipped.set_item(format!("{level}/{}:{}", format >> 12, format & 0xFFF), n)?;
    }
    let out = PyDict::new(py);
    out.set_item("datagrams", c.datagrams)?;
    out.set_item("samples", samples)?;
    out.set_item("rejects", rejects)?;
    out.set_item("skipped", skipped)?;
    Ok(out)
}

fn interval_tuple<'py>(py: Python<'py>, interval: Interval) -> PyResult<Any<'py>> {
    let segments = PyList::empty(py);
    for segment in interval.segments {
        let agents = PyList::empty(py);
        for a in std::iter::once(&Addr::NONE).chain(&segment.agents) {
            agents.append(PyBytes::new(py, a.as_bytes()))?;
        }
        let addresses = PyList::empty(py);
        for a in &segment.addresses {
            addresses.append(PyBytes::new(py, a.as_bytes()))?;
        }
        let (start, pieces) = (segment.start, PyList::empty(py));
        // a piece per agent's table, each table freed as soon as its rows are made: the
        // interval's tables and its rows never all held at once
        for table in segment.into_tables().filter(|table| !table.is_empty()) {
            pieces.append(rows(py, &table)?)?;
        }
        segments.append((start, agents, addresses, pieces))?;
    }
    let counters = Bound::new(py, counter_samples::PyCounterArrivals { items: interval.counters })?;
    let discards = PyList::empty(py);
    for ((agent, port, reason, src, dst), n) in &interval.discards {
        discards.append((addr(py, agent), *port, *reason, addr(py, src), addr(py, dst), *n))?;
    }
    let overflow = PyDict::new(py);
    overflow.set_item("flows", interval.overflow.flows)?;
    overflow.set_item("counters", interval.overflow.counters)?;
    overflow.set_item("discards", interval.overflow.discards)?;
    tuple(
        py,
        vec![
            any(py, interval.start)?,
            any(py, interval.end)?,
            segments.into_any(),
            counters.into_any(),
            discards.into_any(),
            overflow.into_any(),
        ],
    )
}

/// A flow table's rows, `ROW_SIZE` bytes each.
fn rows<'py>(py: Python<'py>, table: &AgentFlows) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, table.len() * ROW_SIZE, |buffer| {
        for ((key, sums), out) in table.iter().zip(buffer.chunks_exact_mut(ROW_SIZE)) {
            let squares = sums.squares();
            let words = [key.agent, key.ifindex, key.rate, key.src, key.dst];
            let longs = [sums.samples, sums.bytes, squares as u64, (squares >> 64) as u64];
            for (word, place) in words.iter().zip(out[..20].chunks_exact_mut(4)) {
                place.copy_from_slice(&word.to_le_bytes());
            }
            out[20..24].copy_from_slice(&[key.direction as u8, key.traffic as u8, 0, 0]);
            for (long, place) in longs.iter().zip(out[24..].chunks_exact_mut(8)) {
                place.copy_from_slice(&long.to_le_bytes());
            }
        }
        Ok(())
    })
}

/// decode(data) -> (datagram tuple or None, counts): one datagram, for tests and tools.
#[pyfunction]
fn decode<'py>(py: Python<'py>, data: &[u8]) -> PyResult<(Any<'py>, Bound<'py, PyDict>)> {
    let mut counts = Counts::default();
    let mut out = Datagram::default();
    let decoded = match guarded(|| datagram::decode(data, &mut out, &mut counts)) {
        Ok(Ok(())) => datagram_tuple(py, &out)?,
        Ok(Err(_)) => py.None().into_bound(py),
        Err(reason) => {
            counts.reject(reason);
            py.None().into_bound(py)
        }
    };
    Ok((decoded, counts_dict(py, &counts)?))
}

/// Decodes datagrams and sums their samples per interval (see the stub).
#[pyclass(module = "correlator._wire", name = "Accumulator")]
struct PyAccumulator {
    inner: accumulate::Accumulator,
}

#[pymethods]
impl PyAccumulator {
    #[new]
    #[pyo3(signature = (start, max_flows = Limits::default().flows,
                        max_counters = Limits::default().counters,
                        max_discards = Limits::default().discards))]
    fn new(start: f64, max_flows: usize, max_counters: usize, max_discards: usize) -> Self {
        let limits = Limits { flows: max_flows, counters: max_counters, discards: max_discards };
        PyAccumulator { inner: accumulate::Accumulator::new(start, limits) }
    }

    fn add(&mut self, data: &[u8], at: f64) -> bool {
        self.inner.add(data, at)
    }

    fn add_many(&mut self, datagrams: &Bound<'_, PyAny>) -> PyResult<usize> {
        let mut accepted = 0;
        for item in datagrams.try_iter()? {
            let (at, data): (f64, Bound<'_, PyBytes>) = item?.extract()?;
            accepted += usize::from(self.inner.add(data.as_bytes(), at));
        }
        Ok(accepted)
    }

    fn cut(&mut self, at: f64) {
        self.inner.cut(at);
    }

    fn take<'py>(&mut self, py: Python<'py>, end: f64) -> PyResult<Any<'py>> {
        interval_tuple(py, self.inner.take(end))
    }

    fn take_counts<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        counts_dict(py, &self.inner.take_counts())
    }
}

fn totals_dict<'py>(py: Python<'py>, t: &Totals) -> PyResult<Bound<'py, PyDict>> {
    let out = counts_dict(py, &t.counts)?;
    out.del_item("skipped")?;
    let l = &t.loss;
    out.set_item("datagrams", l.datagrams)?;
    out.set_item("bytes", l.bytes)?;
    out.set_item("lost_datagrams", l.lost_datagrams)?;
    out.set_item("agent_restarts", l.agent_restarts)?;
    out.set_item("agent_drops", l.agent_drops)?;
    out.set_item("kernel_drops", t.kernel_drops)?;
    out.set_item("interleaved", l.interleaved)?;
    let evictions = PyDict::new(py);
    for (table, n) in
        [("sequences", t.evicted_sequences), ("sources", t.evicted_sources), ("formats", t.evicted_formats)]
    {
        if n > 0 {
            evictions.set_item(table, n)?;
        }
    }
    out.set_item("evictions", evictions)?;
    let named = PyList::empty(py);
    for (agent, sub_agent) in &l.named {
        named.append((addr(py, agent), *sub_agent))?;
    }
    out.set_item("named", named)?;
    Ok(out)
}

fn closed_tuple<'py>(py: Python<'py>, closed: Closed) -> PyResult<Any<'py>> {
    let totals = totals_dict(py, &closed.totals)?.into_any();
    tuple(py, vec![interval_tuple(py, closed.interval)?, totals])
}

fn peek_dict<'py>(
    py: Python<'py>,
    (counts, loss, sizes): &(Counts, Loss, [usize; 3]),
) -> PyResult<Bound<'py, PyDict>> {
    let out = counts_dict(py, counts)?;
    out.del_item("skipped")?;
    out.set_item("datagrams", loss.datagrams)?;
    let tables = PyDict::new(py);
    for (table, n) in ["sequences", "sources", "formats"].into_iter().zip(sizes) {
        tables.set_item(table, n)?;
    }
    out.set_item("tables", tables)?;
    Ok(out)
}

fn ip_address(packed: &[u8]) -> PyResult<IpAddr> {
    match packed.len() {
        4 => Ok(IpAddr::from(<[u8; 4]>::try_from(packed).unwrap_or_default())),
        16 => Ok(IpAddr::from(<[u8; 16]>::try_from(packed).unwrap_or_default())),
        n => Err(pyo3::exceptions::PyValueError::new_err(format!("an address is 4 or 16 bytes, not {n}"))),
    }
}

fn ended() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("the sFlow receiving thread has ended")
}

/// A known agent (packed) and the addresses (packed) it may send from.
type AgentSources = (Vec<u8>, Vec<Vec<u8>>);

/// Where a collector's work happens: here, or in its receiving thread.
enum State {
    Here(Box<Collector>),
    Receiving(Receiving),
    Gone,
}

/// Admission, decoding, loss accounting and accumulation per interval (see the stub).
#[pyclass(module = "correlator._wire", name = "Collector")]
struct PyCollector {
    state: State,
}

impl PyCollector {
    fn here(&mut self) -> PyResult<&mut Collector> {
        match &mut self.state {
            State::Here(collector) => Ok(collector),
            State::Receiving(_) => {
                Err(pyo3::exceptions::PyRuntimeError::new_err("the collector is receiving from a socket"))
            }
            State::Gone => Err(ended()),
        }
    }

    /// `request` for the thread, or `here` on the collector when there is no thread.
    fn ask<T: Send>(
        &mut self,
        py: Python<'_>,
        request: impl FnOnce(mpsc::Sender<T>) -> Request + Send,
        here: impl FnOnce(&mut Collector) -> T,
    ) -> PyResult<T> {
        match &mut self.state {
            State::Here(collector) => Ok(here(collector)),
            State::Receiving(receiving) => py
                .detach(|| {
                    let (reply, answer) = mpsc::channel();
                    if receiving.ask(request(reply)) {
                        answer.recv().ok()
                    } else {
                        None
                    }
                })
                .ok_or_else(ended),
            State::Gone => Err(ended()),
        }
    }
}

#[pymethods]
impl PyCollector {
    #[new]
    #[pyo3(signature = (start, interval_s, max_agents = crate::loss::MAX_AGENTS,
                        max_sources = crate::loss::MAX_SOURCES, max_flows = Limits::default().flows,
                        max_counters = Limits::default().counters,
                        max_discards = Limits::default().discards))]
    fn new(
        start: f64,
        interval_s: f64,
        max_agents: usize,
        max_sources: usize,
        max_flows: usize,
        max_counters: usize,
        max_discards: usize,
    ) -> PyResult<Self> {
        if !(interval_s > 0.0 && interval_s.is_finite() && start.is_finite()) {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "start and interval_s must be finite, interval_s > 0",
            ));
        }
        let limits = Limits { flows: max_flows, counters: max_counters, discards: max_discards };
        let collector = Collector::new(start, interval_s, max_agents, max_sources, limits);
        Ok(PyCollector { state: State::Here(Box::new(collector)) })
    }

    #[getter]
    fn end(&self) -> PyResult<f64> {
        match &self.state {
            State::Here(collector) => Ok(collector.end),
            State::Receiving(receiving) => Ok(receiving.end()),
            State::Gone => Err(ended()),
        }
    }

    #[pyo3(signature = (agents, relays = Vec::new()))]
    fn admit(
        &mut self,
        py: Python<'_>,
        agents: Option<Vec<AgentSources>>,
        relays: Vec<(Vec<u8>, u8)>,
    ) -> PyResult<()> {
        let admission = match agents {
            None => None,
            Some(agents) => {
                let mut known = Vec::with_capacity(agents.len());
                for (agent, sources) in agents {
                    let sources = sources.iter().map(|s| ip_address(s)).collect::<PyResult<Vec<_>>>()?;
                    known.push((crate::packet::Addr::from_slice(&agent), sources));
                }
                let relays = relays
                    .iter()
                    .map(|(network, prefix)| Ok(Relay { network: ip_address(network)?, prefix: *prefix }))
                    .collect::<PyResult<Vec<_>>>()?;
                Some(Admission::new(known, relays))
            }
        };
        match &mut self.state {
            State::Here(collector) => collector.admit(admission),
            State::Receiving(receiving) => {
                if !py.detach(|| receiving.ask(Request::Admit(admission))) {
                    return Err(ended());
                }
            }
            State::Gone => return Err(ended()),
        }
        Ok(())
    }

    fn watch(&mut self, inode: u64) -> PyResult<()> {
        self.here()?.watch(inode);
        Ok(())
    }

    #[pyo3(signature = (data, at, source = ""))]
    fn handle(&mut self, data: &[u8], at: f64, source: &str) -> PyResult<bool> {
        let source = source.parse::<IpAddr>().ok();
        Ok(self.here()?.handle(data, at, source))
    }

    fn handle_many(&mut self, datagrams: &Bound<'_, PyAny>) -> PyResult<usize> {
        let collector = self.here()?;
        let mut accepted = 0;
        for item in datagrams.try_iter()? {
            let (at, data): (f64, Bound<'_, PyBytes>) = item?.extract()?;
            accepted += usize::from(collector.handle(data.as_bytes(), at, None));
        }
        Ok(accepted)
    }

    /// Handles the datagrams of `capture` that arrived before `until`; how many.
    fn handle_capture(&mut self, capture: &Bound<'_, PyCapture>, until: f64) -> PyResult<usize> {
        let collector = self.here()?;
        let mut capture = capture.borrow_mut();
        let mut handled = 0;
        while let Some(at) = capture.peek()? {
            if at >= until {
                break;
            }
            collector.handle(&capture.next.payload, at, None);
            capture.pending = false;
            handled += 1;
        }
        Ok(handled)
    }

    fn cut(&mut self, py: Python<'_>, at: f64) -> PyResult<()> {
        match &mut self.state {
            State::Here(collector) => collector.cut(at),
            State::Receiving(receiving) => {
                if !py.detach(|| receiving.ask(Request::Cut(at))) {
                    return Err(ended());
                }
            }
            State::Gone => return Err(ended()),
        }
        Ok(())
    }

    fn close<'py>(&mut self, py: Python<'py>, now: f64) -> PyResult<Bound<'py, PyList>> {
        let closed = self.ask(py, |reply| Request::Close(now, reply), |c| c.close(now))?;
        let out = PyList::empty(py);
        for c in closed {
            out.append(closed_tuple(py, c)?)?;
        }
        Ok(out)
    }

    fn take<'py>(&mut self, py: Python<'py>, end: f64) -> PyResult<Any<'py>> {
        let closed = self.ask(py, |reply| Request::Take(end, reply), |c| c.take(end))?;
        closed_tuple(py, closed)
    }

    fn peek<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let peeked = self.ask(py, Request::Peek, |c| c.peek())?;
        peek_dict(py, &peeked)
    }

    #[pyo3(signature = (fd, batch = 64))]
    fn receive(&mut self, fd: i32, batch: usize) -> PyResult<()> {
        match std::mem::replace(&mut self.state, State::Gone) {
            State::Here(collector) => match Receiving::start(*collector, fd, batch) {
                Ok(receiving) => self.state = State::Receiving(receiving),
                Err(error) => return Err(pyo3::exceptions::PyOSError::new_err(error.to_string())),
            },
            other => {
                self.state = other;
                return Err(pyo3::exceptions::PyRuntimeError::new_err("the collector is not idle"));
            }
        }
        Ok(())
    }

    fn stop(&mut self, py: Python<'_>) -> PyResult<()> {
        match std::mem::replace(&mut self.state, State::Gone) {
            State::Receiving(receiving) => match py.detach(|| receiving.stop()) {
                Some(collector) => self.state = State::Here(Box::new(collector)),
                None => return Err(ended()),
            },
            other => self.state = other,
        }
        Ok(())
    }

    #[getter]
    fn receiving(&self) -> bool {
        matches!(self.state, State::Receiving(_))
    }
}

/// A capture file's UDP datagrams (see the stub).
#[pyclass(module = "correlator._wire", name = "Capture")]
struct PyCapture {
    inner: Capture<std::fs::File>,
    port: Option<u16>,
    next: Udp,
    pending: bool,
}

impl PyCapture {
    /// The time of the next datagram (to `port`, if given) without taking it; None at
    /// the end. A panic of the reader is a ValueError, not a crash.
    fn peek(&mut self) -> PyResult<Option<f64>> {
        while !self.pending {
            let (inner, next) = (&mut self.inner, &mut self.next);
            match guarded(|| inner.next_udp(next)) {
                Ok(Ok(true)) => self.pending = self.port.is_none_or(|port| port == self.next.dport),
                Ok(Ok(false)) => return Ok(None),
                Ok(Err(error)) => return Err(error.into()),
                Err(_) => return Err(bad("the capture reader panicked".into())),
            }
        }
        Ok(Some(self.next.at))
    }
}

#[pymethods]
impl PyCapture {
    #[new]
    #[pyo3(signature = (path, port = None))]
    fn new(path: std::path::PathBuf, port: Option<u16>) -> PyResult<Self> {
        let file = std::fs::File::open(&path).map_err(|e| os_error(&e, &path))?;
        let inner = Capture::open(file).map_err(|e| match e {
            OpenError::Io(e) => os_error(&e, &path),
            OpenError::Format(message) => bad(message),
        })?;
        Ok(PyCapture { inner, port, next: Udp::default(), pending: false })
    }

    #[pyo3(name = "peek")]
    fn py_peek(&mut self) -> PyResult<Option<f64>> {
        self.peek()
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Any<'py>>> {
        if self.peek()?.is_none() {
            return Ok(None);
        }
        self.pending = false;
        let n = &self.next;
        let item = (n.at, PyBytes::new(py, &n.source), n.sport, n.dport, PyBytes::new(py, &n.payload));
        Ok(Some(item.into_bound_py_any(py)?))
    }

    fn skipped<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (reason, n) in self.inner.skipped().filter(|(_, n)| *n > 0) {
            out.set_item(reason.name(), n)?;
        }
        Ok(out)
    }
}

/// An OSError as Python's `open` raises it: errno, strerror, filename.
fn os_error(error: &std::io::Error, path: &std::path::Path) -> PyErr {
    let text = error.to_string();
    let strerror = text.split(" (os error").next().unwrap_or_default().to_owned();
    match error.raw_os_error() {
        Some(code) => pyo3::exceptions::PyOSError::new_err((code, strerror, path.to_path_buf())),
        None => pyo3::exceptions::PyOSError::new_err(text),
    }
}

/// One row of `ROW_FORMAT`, its direction and traffic indexes checked.
fn row(raw: &[u8]) -> Option<Row> {
    let word = |at: usize| u32::from_le_bytes(raw[at..at + 4].try_into().unwrap_or_default());
    let long = |at: usize| u64::from_le_bytes(raw[at..at + 8].try_into().unwrap_or_default());
    let direction = [accumulate::Direction::In, accumulate::Direction::Out].get(usize::from(raw[20]))?;
    let traffic = Traffic::ALL.get(usize::from(raw[21]))?;
    let squares = u128::from(long(40)) | u128::from(long(48)) << 64;
    Some(Row {
        agent: word(0),
        ifindex: word(4),
        direction: *direction,
        src: word(12),
        dst: word(16),
        traffic: *traffic,
        rate: word(8),
        samples: long(24),
        length: long(32),
        squares,
    })
}

fn bad(message: String) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(message)
}

/// A 128-bit sum as a Python int: by way of 64 bits when it fits (the abi3 conversion of
/// a u128 is a slow one, and nearly every sum fits).
fn wide<'py>(py: Python<'py>, n: u128) -> PyResult<Any<'py>> {
    match u64::try_from(n) {
        Ok(small) => any(py, small),
        Err(_) => any(py, n),
    }
}

/// A known agent (packed), the addresses (packed) it may send from, and its shard.
type AgentRoute = (Vec<u8>, Vec<Vec<u8>>, usize);

fn inlet_ended() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("the inlet's forwarding thread has ended")
}

/// The inlet's forwarding thread (see the stub).
#[pyclass(module = "correlator._wire", name = "Inlet")]
struct PyInlet {
    forwarding: Option<Forwarding>,
}

impl PyInlet {
    /// Asks the thread `request`, made with the reply's sender; its answer.
    fn ask<T: Send>(
        &self,
        py: Python<'_>,
        request: impl FnOnce(mpsc::Sender<T>) -> forward::Request + Send,
    ) -> PyResult<T> {
        let forwarding = self.forwarding.as_ref().ok_or_else(inlet_ended)?;
        py.detach(|| {
            let (reply, answer) = mpsc::channel();
            if forwarding.ask(request(reply)) {
                answer.recv().ok()
            } else {
                None
            }
        })
        .ok_or_else(inlet_ended)
    }
}

#[pymethods]
impl PyInlet {
    #[new]
    #[pyo3(signature = (fd, batch = 64))]
    fn new(fd: i32, batch: usize) -> PyResult<Self> {
        let forwarding = Forwarding::start(fd, batch)?;
        Ok(PyInlet { forwarding: Some(forwarding) })
    }

    fn route(&self, py: Python<'_>, agents: Vec<AgentRoute>) -> PyResult<()> {
        let mut known = Vec::with_capacity(agents.len());
        for (agent, sources, shard) in agents {
            let sources = sources.iter().map(|s| ip_address(s)).collect::<PyResult<Vec<_>>>()?;
            known.push((Addr::from_slice(&agent), sources, shard));
        }
        let routes = Routes::new(known);
        self.ask(py, |reply| forward::Request::Routes(routes, reply))
    }

    fn shards(&self, py: Python<'_>, addresses: Vec<Option<(Vec<u8>, u16)>>) -> PyResult<()> {
        let addresses = addresses
            .into_iter()
            .map(|a| a.map(|(ip, port)| Ok(SocketAddr::new(ip_address(&ip)?, port))).transpose())
            .collect::<PyResult<Vec<_>>>()?;
        self.ask(py, |reply| forward::Request::Shards(addresses, reply))
    }

    fn counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let counts = self.ask(py, forward::Request::Counts)?;
        let out = PyDict::new(py);
        out.set_item("forwarded", counts.forwarded)?;
        out.set_item("samples", counts.samples)?;
        out.set_item("dropped", counts.dropped.iter().map(|d| d.to_vec()).collect::<Vec<_>>())?;
        out.set_item("unrouted", counts.unrouted.to_vec())?;
        Ok(out)
    }

    fn stop(&mut self, py: Python<'_>) {
        if let Some(forwarding) = self.forwarding.take() {
            py.detach(|| forwarding.stop());
        }
    }
}

#[pymodule]
fn _wire(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_class::<series::SeriesLines>()?;
    m.add_function(wrap_pyfunction!(series::exposition, m)?)?;
    m.add_function(wrap_pyfunction!(json_text::json_text, m)?)?;
    m.add_function(wrap_pyfunction!(share::shares, m)?)?;
    m.add_class::<share::PyShare>()?;
    m.add_class::<PyAccumulator>()?;
    m.add_class::<PyCollector>()?;
    m.add_class::<join::PyJoin>()?;
    m.add_class::<timeline::PyCounterTimeline>()?;
    m.add_class::<interval_rates::PyIntervalRates>()?;
    m.add_class::<counter_samples::PyCounterArrivals>()?;
    m.add_class::<counter_samples::PySampledPorts>()?;
    m.add_class::<counter_samples::PyAgentClocks>()?;
    m.add_class::<PyInlet>()?;
    m.add("DROPS", route::Cause::ALL.map(route::Cause::name))?;
    m.add_class::<PyCapture>()?;
    m.add("ROW_FORMAT", ROW_FORMAT)?;
    m.add("MAX_FLOWS", Limits::default().flows)?;
    m.add("Z95", crate::share::Z95)?;
    m.add("FEW_SAMPLES", crate::share::FEW_SAMPLES)?;
    m.add("CHECKS", PyTuple::new(m.py(), crate::share::Check::NAMES)?)?;
    m.add("OTHER", join::OTHER)?;
    m.add("TRAFFIC", Traffic::ALL.map(Traffic::name))?;
    m.add("DIRECTIONS", [accumulate::Direction::In.name(), accumulate::Direction::Out.name()])?;
    m.add("REJECTS", Reject::ALL.map(Reject::name))?;
    m.add("REFUSALS", Refusal::ALL.map(Refusal::name))?;
    m.add("FORMATS_KEPT", datagram::MAX_SKIPPED_FORMATS)?;
    Ok(())
}
