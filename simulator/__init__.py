"""The embedded fabric: synthetic topologies and workloads for the demo, tests and benchmarks."""
