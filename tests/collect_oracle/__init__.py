"""The pure-Python counter timelines and interval rates that the Rust core replaced: the
reference the core is tested against."""
