"""The pure-Python join of flow keys to pod interfaces that the Rust core replaced: the
reference the core's join is tested against."""
