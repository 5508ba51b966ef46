"""structanon.location: see docs/location.md (work in progress)."""

__all__: list[str] = []
