"""structanon.transactions: see docs/transactions.md (work in progress)."""

__all__: list[str] = []
