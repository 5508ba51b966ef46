"""structanon.graphs: see docs/graphs.md (work in progress)."""

__all__: list[str] = []
