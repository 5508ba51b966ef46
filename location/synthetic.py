"""Seeded synthetic location logs: users commuting around a few city centres."""

from __future__ import annotations

import numpy as np
import pandas as pd

from structanon.errors import InputError

from ._grid import EARTH_RADIUS

__all__ = ["synthetic_log", "DEFAULT_CENTRES"]

#: (latitude, longitude, spread in metres) of the default city centres (around Beijing).
DEFAULT_CENTRES = (
    (39.9042, 116.4074, 6000.0),
    (39.9929, 116.3100, 3000.0),
    (39.8650, 116.2860, 2500.0),
    (40.0700, 116.6000, 4000.0),
)


def synthetic_log(
    n_fixes: int,
    n_users: int,
    centres=DEFAULT_CENTRES,
    days: float = 1.0,
    start: str = "2024-05-01T00:00:00Z",
    seed: int = 0,
) -> pd.DataFrame:
    """A seeded synthetic location log (columns ``user``, ``time``, ``lat``, ``lon``).

    Each user belongs to one centre (chosen with weights proportional to its spread) and
    has a home and a work place drawn around it (normal, sigma = the centre's spread);
    fixes at night (20:00-07:00) are near home, by day near work, some (20 %) anywhere
    on the way between, all with 150 m of noise.  Activity per user is heavy-tailed
    (log-normal), times uniform over ``days`` days.

    Examples
    --------
    >>> log = synthetic_log(1000, 50, seed=1)
    >>> len(log), log["user"].nunique() <= 50, list(log.columns)
    (1000, True, ['user', 'time', 'lat', 'lon'])
    """
    if n_fixes < 1 or n_users < 1:
        raise InputError("n_fixes and n_users must be positive", value=(n_fixes, n_users))
    rng = np.random.default_rng(seed)
    c = np.asarray(centres, dtype=np.float64)
    home_centre = rng.choice(len(c), n_users, p=c[:, 2] / c[:, 2].sum())

    def around(lat, lon, sigma_m, size):
        dlat = np.degrees(rng.normal(0, 1, size) * sigma_m / EARTH_RADIUS)
        dlon = np.degrees(rng.normal(0, 1, size) * sigma_m / EARTH_RADIUS) / np.cos(np.radians(lat))
        return lat + dlat, lon + dlon

    home = around(c[home_centre, 0], c[home_centre, 1], c[home_centre, 2], n_users)
    work = around(c[home_centre, 0], c[home_centre, 1], c[home_centre, 2], n_users)
    activity = rng.lognormal(0, 1, n_users)
    user = rng.choice(n_users, n_fixes, p=activity / activity.sum())
    t0 = pd.Timestamp(start)
    offset = rng.uniform(0, days * 86400.0, n_fixes)
    hour = (offset / 3600.0) % 24
    at_home = (hour >= 20) | (hour < 7)
    mix = np.where(rng.random(n_fixes) < 0.2, rng.random(n_fixes), np.where(at_home, 0.0, 1.0))
    lat = home[0][user] * (1 - mix) + work[0][user] * mix
    lon = home[1][user] * (1 - mix) + work[1][user] * mix
    lat, lon = around(lat, lon, 150.0, n_fixes)
    time = t0 + pd.to_timedelta(np.round(offset * 1e9).astype(np.int64), unit="ns")
    return pd.DataFrame({"user": user.astype(np.int64), "time": time, "lat": lat, "lon": lon})
