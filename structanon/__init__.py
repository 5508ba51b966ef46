"""structanon: structure-aware anonymization (shared core)."""

from . import distances, io, metrics, models, report, risk
from .errors import (
    InfeasibleError,
    InputError,
    PublisherWarning,
    StructanonError,
    VerificationError,
)
from .hierarchy import Hierarchy
from .partition import Partition
from .release import CheckResult, Release, Verification

__all__ = [
    "CheckResult",
    "Hierarchy",
    "InfeasibleError",
    "InputError",
    "Partition",
    "PublisherWarning",
    "Release",
    "StructanonError",
    "Verification",
    "VerificationError",
    "distances",
    "io",
    "metrics",
    "models",
    "report",
    "risk",
]
__version__ = "0.1.0"
