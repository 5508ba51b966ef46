"""structanon.location: grid cloaking of GPS location logs (see docs/location.md).

Every published (region, time window) of a cloaked log covers at least ``k`` distinct
users; with ``linkage="trajectory"``, every published trajectory is shared by at least
``k`` pseudonyms.  Regions are cells of a pyramid of equal-area grids (fixed) or quadtree cells and
Casper half-cells (adaptive), published as shapely polygons in WGS84.

Public API: :func:`cloak`, also named :func:`anonymize` as in every package (pandas, GeoDataFrame or dask; it returns a
:class:`LocationRelease`, whose ``to_geodataframe()`` gives the regions in WGS84),
:func:`to_geodataframe`, :func:`verify_cloaked`, :func:`verify_trajectories` and the privacy
models :class:`WindowKAnonymity`, :class:`TrajectoryKAnonymity` and
:class:`OnePolygonPerRegion`, :func:`synthetic_log`, :func:`read_fixes`
(:func:`read_fixes_dask`) and :func:`write_cloaked` (as :mod:`location.io`), and the
modules :mod:`location.io`, :mod:`location.metrics`, :mod:`location.risk`.
"""

from . import io, metrics, risk, synthetic
from ._cloak import cloak
from ._geo import LocationRelease, to_geodataframe
from ._verify import (
    OnePolygonPerRegion,
    TrajectoryKAnonymity,
    WindowKAnonymity,
    verify_cloaked,
    verify_trajectories,
)
from .io import read_fixes, read_fixes_dask, write_cloaked
from .synthetic import synthetic_log

#: what ``structanon location anonymize`` runs: every package's ``anonymize(data, k, ...)``
anonymize = cloak

__all__ = [
    "anonymize",
    "cloak",
    "LocationRelease",
    "to_geodataframe",
    "verify_cloaked",
    "verify_trajectories",
    "WindowKAnonymity",
    "TrajectoryKAnonymity",
    "OnePolygonPerRegion",
    "synthetic_log",
    "read_fixes",
    "read_fixes_dask",
    "write_cloaked",
    "io",
    "metrics",
    "risk",
    "synthetic",
]
