"""Attribution: whose traffic fills each link direction, and which link directions are hot.

Pure functions and plain data: sFlow samples are accumulated per interval
(:mod:`.accumulate`), resolved to ports, pods, jobs and tenants and apportioned over the
exact counter bytes (:mod:`.attribute`, :mod:`.estimate`), and judged against thresholds
(:mod:`.hotspots`).
"""
