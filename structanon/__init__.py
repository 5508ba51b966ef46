"""structanon: structure-aware anonymization (shared core)."""

from .errors import InfeasibleError, InputError, StructanonError, VerificationError
from .partition import Partition
from .release import CheckResult, Release, Verification

__all__ = [
    "CheckResult",
    "InfeasibleError",
    "InputError",
    "Partition",
    "Release",
    "StructanonError",
    "Verification",
    "VerificationError",
]
__version__ = "0.1.0"
