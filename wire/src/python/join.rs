//! The join of an interval's flow tables to the fabric, and the shares of what it summed,
//! for Python (`correlator/attribution/attribute.py`): a link direction's tables stay
//! here, ranked and cut, until Python asks for their shares with the direction's
//! counters; they come back named, as `Share`s.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

use super::share::{counters, made, CountersTuple};
use super::{addr, any, bad, row, tuple, wide, Any, ROW_SIZE};
use crate::accumulate::guarded;
use crate::attribute::{Claim, Cut, Index, Joiner, Link, Tables};
use crate::hash::FastMap;
use crate::packet::Addr;
use crate::share::Counters;

/// The name of the group a table's cut leaves over.
pub const OTHER: &str = "other";

/// A segment's flow table as `Accumulator.take` hands it over: start, agents, addresses,
/// rows.
type SegmentTable<'py> = (f64, Vec<Bound<'py, PyBytes>>, Vec<Bound<'py, PyBytes>>, Bound<'py, PyBytes>);

/// The join of flow tables to a fabric's ports and pod interfaces (see the stub).
#[pyclass(module = "correlator._wire", name = "Join", frozen)]
pub struct PyJoin {
    index: Index,
    pods: Vec<Py<PyString>>,
    jobs: Vec<Py<PyString>>,
    tenants: Vec<Py<PyString>>,
}

/// Each name's place among `names` sorted (as Python sorts str: by code point).
fn ranks(names: &[String]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|a, b| names[*a].cmp(&names[*b]));
    let mut ranks = vec![0; names.len()];
    for (place, id) in order.into_iter().enumerate() {
        ranks[id] = place as u32;
    }
    ranks
}

fn strings(py: Python<'_>, names: &[String]) -> Vec<Py<PyString>> {
    names.iter().map(|name| PyString::new(py, name).unbind()).collect()
}

#[pymethods]
impl PyJoin {
    #[new]
    fn new(
        py: Python<'_>,
        ports: Vec<(Bound<'_, PyBytes>, u32, u32)>,
        owners: Vec<(u32, u32, u32)>,
        claims: Vec<(Bound<'_, PyBytes>, f64, Option<f64>, u32)>,
        pods: Vec<String>,
        jobs: Vec<String>,
        tenants: Vec<String>,
    ) -> PyResult<Self> {
        let ports = ports
            .into_iter()
            .map(|(agent, ifindex, port)| (Addr::from_slice(agent.as_bytes()), ifindex, port));
        let owners = owners.into_iter().map(|(pod, job, tenant)| [pod, job, tenant]).collect();
        let claims = claims.into_iter().map(|(address, from, until, owner)| {
            (
                Addr::from_slice(address.as_bytes()),
                Claim { from, until: until.unwrap_or(f64::INFINITY), owner },
            )
        });
        let index = Index::new(ports, owners, claims)
            .and_then(|i| i.ranked(ranks(&pods), ranks(&jobs), ranks(&tenants)))
            .map_err(bad)?;
        Ok(PyJoin {
            index,
            pods: strings(py, &pods),
            jobs: strings(py, &jobs),
            tenants: strings(py, &tenants),
        })
    }

    fn attribute<'py>(
        slf: &Bound<'py, Self>,
        segments: Vec<SegmentTable<'py>>,
        top: usize,
    ) -> PyResult<Any<'py>> {
        let py = slf.py();
        let index = &slf.get().index;
        let mut joiner = Joiner::new(index);
        for (at, agents, addresses, rows) in &segments {
            let agents: Vec<Addr> = agents.iter().map(|a| Addr::from_slice(a.as_bytes())).collect();
            let addresses: Vec<Addr> = addresses.iter().map(|a| Addr::from_slice(a.as_bytes())).collect();
            let rows = rows.as_bytes();
            if rows.len() % ROW_SIZE != 0 {
                return Err(bad(format!("flow rows of {} bytes: not whole rows of {ROW_SIZE}", rows.len())));
            }
            if !rows.chunks_exact(ROW_SIZE).all(|raw| row(raw).is_some()) {
                return Err(bad("a flow row names no direction or traffic class".into()));
            }
            guarded(|| joiner.add(*at, &agents, &addresses, rows.chunks_exact(ROW_SIZE).filter_map(row)))
                .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("the join panicked"))?
                .map_err(bad)?;
        }
        let joined = guarded(|| joiner.finish(top))
            .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("the join panicked"))?;
        let links = PyList::empty(py);
        let mut tables = Vec::with_capacity(joined.links.len());
        for link in joined.links {
            links.append(link_tuple(py, &link)?)?;
            tables.push(link.tables);
        }
        let unknown = PyList::empty(py);
        for ((agent, ifindex), samples) in &joined.unknown {
            unknown.append((addr(py, agent), *ifindex, *samples))?;
        }
        let pairs = pair_names(py, &slf.get().jobs, &tables)?;
        let found = Bound::new(py, PyJoined { join: slf.clone().unbind(), tables, pairs })?;
        tuple(py, vec![found.into_any(), links.into_any(), unknown.into_any(), any(py, joined.unattributed)?])
    }
}

/// (port id, direction index, samples, estimated bytes, variance, samples per traffic
/// index): one link direction of a join.
fn link_tuple<'py>(py: Python<'py>, link: &Link) -> PyResult<Any<'py>> {
    let traffic = PyList::empty(py);
    for (i, n) in link.traffic.iter().enumerate().filter(|(_, n)| **n > 0) {
        traffic.append((i, *n))?;
    }
    let total = &link.total;
    tuple(
        py,
        vec![
            any(py, link.port)?,
            any(py, link.direction as u8)?,
            any(py, total.samples)?,
            wide(py, total.bytes)?,
            wide(py, total.variance)?,
            traffic.into_any(),
        ],
    )
}

/// `a -> r` for every pair of jobs `a`, `r` (by id) that some table of `tables` lists.
fn pair_names(
    py: Python<'_>,
    jobs: &[Py<PyString>],
    tables: &[Tables],
) -> PyResult<FastMap<(u32, u32), Py<PyString>>> {
    let name = |k: u32| jobs.get(k as usize).ok_or_else(|| bad(format!("no name for id {k}")));
    let mut names = FastMap::default();
    for (key, _) in tables.iter().flat_map(|t| &t.pairs.top) {
        if !names.contains_key(key) {
            let (a, r) = (name(key.0)?.bind(py), name(key.1)?.bind(py));
            names.insert(*key, PyString::new(py, &format!("{a} -> {r}")).unbind());
        }
    }
    Ok(names)
}

/// The link directions of one join, their tables kept for their shares (see the stub).
#[pyclass(module = "correlator._wire", name = "Joined", frozen)]
pub struct PyJoined {
    join: Py<PyJoin>,
    tables: Vec<Tables>,
    /// The name of every (sender job, receiver job) pair some table lists, made once.
    pairs: FastMap<(u32, u32), Py<PyString>>,
}

/// `found`'s groups named by `name`, the rest as [`OTHER`], shares made by [`made`].
fn named<'py, K: Copy>(
    py: Python<'py>,
    found: &Cut<K>,
    name: impl Fn(K) -> PyResult<Bound<'py, PyString>>,
    counters: Option<Counters>,
) -> PyResult<Any<'py>> {
    let mut groups = Vec::with_capacity(found.top.len() + 1);
    for (key, sums) in &found.top {
        groups.push((name(*key)?, *sums));
    }
    if let Some(other) = found.other {
        groups.push((PyString::new(py, OTHER), other));
    }
    Ok(PyTuple::new(py, made(py, groups.into_iter(), found.total, counters)?)?.into_any())
}

#[pymethods]
impl PyJoined {
    /// The shares of link direction `link` (its place in the join's links): tenants,
    /// jobs, pods and pairs apportioned from `counters` when given, throttled jobs among
    /// the CNPs alone.
    fn shares<'py>(
        &self,
        py: Python<'py>,
        link: usize,
        counters: Option<CountersTuple>,
    ) -> PyResult<Any<'py>> {
        let tables = self
            .tables
            .get(link)
            .ok_or_else(|| pyo3::exceptions::PyIndexError::new_err(format!("no link direction {link}")))?;
        let join = self.join.get();
        let pick = |names: &Vec<Py<PyString>>, k: u32| -> PyResult<Bound<'py, PyString>> {
            let found = names.get(k as usize).ok_or_else(|| bad(format!("no name for id {k}")))?;
            Ok(found.bind(py).clone())
        };
        let pair = |key: (u32, u32)| -> PyResult<Bound<'py, PyString>> {
            let found = self.pairs.get(&key).ok_or_else(|| bad(format!("no name for pair {key:?}")))?;
            Ok(found.bind(py).clone())
        };
        let counters = self::counters(counters);
        tuple(
            py,
            vec![
                named(py, &tables.tenants, |k| pick(&join.tenants, k), counters)?,
                named(py, &tables.jobs, |k| pick(&join.jobs, k), counters)?,
                named(py, &tables.pods, |k| pick(&join.pods, k), counters)?,
                named(py, &tables.pairs, pair, counters)?,
                named(py, &tables.throttled, |k| pick(&join.jobs, k), None)?,
            ],
        )
    }
}
