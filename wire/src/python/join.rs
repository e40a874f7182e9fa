//! The join of an interval's flow tables to the fabric, and the shares of what it summed,
//! for Python (`correlator/attribution/attribute.py`): each link direction's counters,
//! handed in, are checked against its samples and apportioned among its groups as the
//! join finishes it; the direction comes back with its shares named, as `Share`s.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use super::share::made;
use super::{addr, any, bad, row, tuple, Any, ROW_SIZE};
use crate::accumulate::guarded;
use crate::attribute::{Claim, Cut, Index, Joiner, Link, Place, Tables};
use crate::hash::FastMap;
use crate::packet::{Addr, Traffic};
use crate::share::{counter_check, Check, Counters};

/// The name of the group a table's cut leaves over.
pub const OTHER: &str = "other";

/// A segment's flow table as `Accumulator.take` hands it over: start, agents, addresses,
/// rows (in pieces).
type SegmentTable<'py> = (f64, Vec<Bound<'py, PyBytes>>, Vec<Bound<'py, PyBytes>>, Vec<Bound<'py, PyBytes>>);

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
        counters: FastMap<(u32, u8), Counted>,
    ) -> PyResult<Any<'py>> {
        let py = slf.py();
        let join = slf.get();
        let mut joiner = Joiner::new(&join.index);
        let mut tables: Vec<&[u8]> = Vec::new(); // every piece, where the join reads its rows again
        for (at, agents, addresses, pieces) in &segments {
            let agents: Vec<Addr> = agents.iter().map(|a| Addr::from_slice(a.as_bytes())).collect();
            let addresses: Vec<Addr> = addresses.iter().map(|a| Addr::from_slice(a.as_bytes())).collect();
            let first = tables.len();
            tables.extend(pieces.iter().map(|piece| piece.as_bytes()));
            let these = &tables[first..];
            for rows in these {
                if rows.len() % ROW_SIZE != 0 {
                    return Err(bad(format!(
                        "flow rows of {} bytes: not whole rows of {ROW_SIZE}",
                        rows.len()
                    )));
                }
                if !rows.chunks_exact(ROW_SIZE).all(|raw| row(raw).is_some()) {
                    return Err(bad("a flow row names no direction or traffic class".into()));
                }
            }
            joiner.reserve(these.iter().map(|rows| rows.len() / ROW_SIZE).sum());
            let rows = these.iter().zip(first as u32..).flat_map(|(rows, number)| {
                rows.chunks_exact(ROW_SIZE)
                    .zip(0..)
                    .filter_map(move |(raw, at)| row(raw).map(|found| ((number, at), found)))
            });
            guarded(|| joiner.add(*at, &agents, &addresses, rows))
                .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("the join panicked"))?
                .map_err(bad)?;
        }
        let row_at = |(piece, at): Place| {
            let start = at as usize * ROW_SIZE;
            row(&tables[piece as usize][start..start + ROW_SIZE]).expect("rows checked as they came")
        };
        let joined = guarded(|| joiner.finish(top, row_at))
            .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("the join panicked"))?;
        let pairs = pair_names(py, &join.jobs, joined.links.iter().map(|link| &link.tables))?;
        let names = Names { join, pairs: &pairs };
        let links = PyList::empty(py);
        for link in &joined.links {
            links.append(link_tuple(py, link, &names, counters.get(&(link.port, link.direction as u8)))?)?;
        }
        let unknown = PyList::empty(py);
        for ((agent, ifindex), samples) in &joined.unknown {
            unknown.append((addr(py, agent), *ifindex, *samples))?;
        }
        tuple(py, vec![links.into_any(), unknown.into_any(), any(py, joined.unattributed)?])
    }
}

/// A link direction's counters as Python hands them to the join: its counter bytes, and
/// the least and the most its readings allow (or None).
type Counted = (f64, Option<(f64, f64)>);

/// The names of a join's groups: pods, jobs and tenants by id, pairs by key.
struct Names<'a> {
    join: &'a PyJoin,
    pairs: &'a FastMap<(u32, u32), Py<PyString>>,
}

/// (port id, direction, samples, estimated bytes, samples per traffic class by name,
/// counter check, tenants, jobs, pods, pairs, throttled jobs): one link direction of a
/// join, its shares apportioned from `counted` when given (unless the check finds them
/// outside the samples' bound: then the estimate, within the hull of both).
fn link_tuple<'py>(
    py: Python<'py>,
    link: &Link,
    names: &Names<'_>,
    counted: Option<&Counted>,
) -> PyResult<Any<'py>> {
    let total = &link.total;
    let check = counter_check(counted.map(|c| c.0), total.samples, total.bytes, total.variance);
    let counters =
        counted.map(|&(exact, known)| Counters { exact, known, disputed: check == Check::Outside });
    let mut traffic: Vec<(&str, u64)> = Traffic::ALL
        .iter()
        .zip(link.traffic)
        .filter(|(_, n)| *n > 0)
        .map(|(class, n)| (class.name(), n))
        .collect();
    traffic.sort_unstable();
    let classes = PyDict::new(py);
    for (class, n) in traffic {
        classes.set_item(class, n)?;
    }
    let pick = |found: &Vec<Py<PyString>>, k: u32| -> PyResult<Bound<'py, PyString>> {
        let name = found.get(k as usize).ok_or_else(|| bad(format!("no name for id {k}")))?;
        Ok(name.bind(py).clone())
    };
    let pair = |key: (u32, u32)| -> PyResult<Bound<'py, PyString>> {
        let name = names.pairs.get(&key).ok_or_else(|| bad(format!("no name for pair {key:?}")))?;
        Ok(name.bind(py).clone())
    };
    let (join, tables) = (names.join, &link.tables);
    tuple(
        py,
        vec![
            any(py, link.port)?,
            any(py, link.direction.name())?,
            any(py, total.samples)?,
            any(py, total.bytes as f64)?,
            classes.into_any(),
            any(py, check.name())?,
            named(py, &tables.tenants, |k| pick(&join.tenants, k), counters)?,
            named(py, &tables.jobs, |k| pick(&join.jobs, k), counters)?,
            named(py, &tables.pods, |k| pick(&join.pods, k), counters)?,
            named(py, &tables.pairs, pair, counters)?,
            named(py, &tables.throttled, |k| pick(&join.jobs, k), None)?,
        ],
    )
}

/// `a -> r` for every pair of jobs `a`, `r` (by id) that some table of `tables` lists.
fn pair_names<'a>(
    py: Python<'_>,
    jobs: &[Py<PyString>],
    tables: impl Iterator<Item = &'a Tables>,
) -> PyResult<FastMap<(u32, u32), Py<PyString>>> {
    let name = |k: u32| jobs.get(k as usize).ok_or_else(|| bad(format!("no name for id {k}")));
    let mut names = FastMap::default();
    for (key, _) in tables.flat_map(|t| &t.pairs.top) {
        if !names.contains_key(key) {
            let (a, r) = (name(key.0)?.bind(py), name(key.1)?.bind(py));
            names.insert(*key, PyString::new(py, &format!("{a} -> {r}")).unbind());
        }
    }
    Ok(names)
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
