"""The shards suite on the small ladder fabric: every metric, from real child processes
(``fabcorr attribute --shard`` per share, and the busiest shard's fabric built as
``fabcorr run --shard`` builds it, its live cache filled from the simulator's Kubernetes
API server, built again beside it (refreshes), its share attributed on it)."""

from benchmarks.shard_suite import measure


def test_the_suite_measures_every_share_and_the_busiest_shards_service_fabric():
    found = {r.metric: r.value for r in measure("small", 20_000, 3)}
    assert set(found) == {
        "samples", "shards", "snapshot_load_cpu_s", "busiest_shard_samples",
        "busiest_shard_cpu_s", "median_shard_cpu_s", "interval_vs_busiest_ratio",
        "shards_needed", "shards_needed_by_cpu", "peak_rss_per_shard_mib",
        "service_shard_cache_rss_mib", "service_shard_fabric_rss_mib",
        "service_shard_build_peak_rss_mib", "service_shard_rebuild_peak_rss_mib",
        "service_shard_refreshed_rss_mib", "service_shard_peak_rss_mib",
        "total_work_samples_per_cpu_s"}
    assert (found["samples"], found["shards"], found["shards_needed"]) == (20_000, 3, 1)
    # the small fabric's 16 leaves over 3 shards, 1,250 samples a leaf
    assert found["busiest_shard_samples"] % 1_250 == 0
    fabric = found["service_shard_fabric_rss_mib"]
    assert 0 < found["service_shard_cache_rss_mib"] < fabric
    assert fabric <= found["service_shard_build_peak_rss_mib"] < 1024
    assert fabric < found["service_shard_rebuild_peak_rss_mib"] < 1024
    # what a refresh freed may not be given back yet (jemalloc: after a second)
    assert 0 < found["service_shard_refreshed_rss_mib"] <= found[
        "service_shard_rebuild_peak_rss_mib"]
    assert fabric < found["service_shard_peak_rss_mib"] < 1024
