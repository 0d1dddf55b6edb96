"""A local Argilla stack for tests and benchmarks (redis-server, osmem-server, argilla-server)."""
