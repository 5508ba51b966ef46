"""structanon.tabular: see docs/tabular.md (work in progress)."""

__all__: list[str] = []
