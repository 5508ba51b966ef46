"""Test-suite wide settings: hypothesis without deadlines (CI machines are shared)."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "structanon", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("structanon")
