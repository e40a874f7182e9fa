"""The fabric graph: built from facts, indexed for the hot paths, queried and exported."""
