"""structanon.querylogs: see docs/querylogs.md (work in progress)."""

__all__: list[str] = []
