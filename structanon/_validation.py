"""Parameter and path validation shared by every public function and command line.

In the spirit of scikit-learn's ``check_scalar``: each check names the parameter, the value
it got and what it accepts, and raises :class:`~structanon.errors.InputError` (a
``ValueError``) before any input is read or any output written.
"""

from __future__ import annotations

import fnmatch
import glob
import numbers
import os
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import InputError

__all__ = [
    "first_few",
    "check_int",
    "check_float",
    "check_choice",
    "check_encoding",
    "check_on_bad_lines",
    "ON_BAD_LINES",
    "check_columns",
    "check_names",
    "check_path",
    "check_input_path",
    "check_output_paths",
    "file_suffix",
]


def check_int(
    value: Any, name: str, *, min_value: int | None = None, max_value: int | None = None
) -> int:
    """``value`` as an ``int`` within ``[min_value, max_value]``.

    Examples
    --------
    >>> check_int(5, "k", min_value=1)
    5
    >>> check_int(0, "k", min_value=1)
    Traceback (most recent call last):
    ...
    structanon.errors.InputError: k must be an integer >= 1, got 0
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if (
            not isinstance(value, bool)
            and isinstance(value, numbers.Real)
            and float(value).is_integer()
        ):
            value = int(float(value))
        else:
            raise InputError(
                f"{name} must be an integer{_range(min_value, max_value)}, got {value!r}"
            )
    value = int(value)
    if (min_value is not None and value < min_value) or (
        max_value is not None and value > max_value
    ):
        raise InputError(f"{name} must be an integer{_range(min_value, max_value)}, got {value}")
    return value


def check_float(
    value: Any,
    name: str,
    *,
    min_value: float | None = None,
    max_value: float | None = None,
    include_min: bool = True,
    include_max: bool = True,
) -> float:
    """``value`` as a finite ``float`` within the given bounds.

    Examples
    --------
    >>> check_float(0.5, "suppression_limit", min_value=0, max_value=1)
    0.5
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or value != value
        or value in (float("inf"), float("-inf"))
    ):
        raise InputError(
            f"{name} must be a finite number{_range(min_value, max_value)}, got {value!r}"
        )
    value = float(value)
    low_bad = min_value is not None and (
        value < min_value or (not include_min and value == min_value)
    )
    high_bad = max_value is not None and (
        value > max_value or (not include_max and value == max_value)
    )
    if low_bad or high_bad:
        low = "" if min_value is None else f"{'>=' if include_min else '>'} {min_value:g}"
        high = "" if max_value is None else f"{'<=' if include_max else '<'} {max_value:g}"
        raise InputError(
            f"{name} must be {' and '.join(x for x in (low, high) if x)}, got {value:g}"
        )
    return value


def check_choice(value: Any, name: str, choices: Iterable[Any]) -> Any:
    """``value`` if it is one of ``choices``.

    Examples
    --------
    >>> check_choice("dp", "method", ("dp", "greedy"))
    'dp'
    """
    choices = list(choices)
    if value not in choices:
        raise InputError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


#: What a reader does with a line (row) whose values cannot be read.
ON_BAD_LINES = ("raise", "drop")


def check_on_bad_lines(
    value: Any,
    former: Mapping[str, str] | None = None,
    drop_invalid: Any = None,
    name: str = "on_bad_lines",
) -> str:
    """``value`` if it is one of :data:`ON_BAD_LINES`.  Former spellings are read as their
    new value with a :class:`DeprecationWarning`: a reader's former values (``former``:
    old -> new), and ``drop_invalid`` (a bool, ``None`` when not given), the former name of
    ``on_bad_lines="drop"``, which may not contradict ``value``.  ``"raise"``, the
    readers' default, cannot be told from a ``value`` not given, so it yields to
    ``drop_invalid=True``.

    Examples
    --------
    >>> check_on_bad_lines("drop"), check_on_bad_lines("raise")
    ('drop', 'raise')
    """
    if isinstance(value, str) and former and value in former:
        new = former[value]
        warnings.warn(
            f"{name}={value!r} is a former value, read as {new!r} (dropped lines are "
            "counted, and named in a warning)",
            DeprecationWarning,
            stacklevel=4,
        )
        value = new
    value = check_choice(value, name, ON_BAD_LINES)
    if drop_invalid is None:
        return str(value)
    check_choice(drop_invalid, "drop_invalid", (True, False))
    if not drop_invalid and value == "drop":
        raise InputError(
            f"drop_invalid=False contradicts {name}='drop'; give {name} only "
            "(drop_invalid is its former name)"
        )
    if drop_invalid:
        warnings.warn(
            f"drop_invalid=True is the former spelling of {name}='drop', read as such",
            DeprecationWarning,
            stacklevel=4,
        )
        return "drop"
    return str(value)


def check_encoding(value: Any, name: str = "encoding") -> str:
    """``value`` if it names a text encoding Python can decode (``"utf-8"``, ``"latin-1"``,
    ``"cp1252"``, ...); an unknown name, or a codec that is not a text encoding
    (``"base64"``), is an :class:`InputError` naming ``name``.

    Examples
    --------
    >>> check_encoding("latin-1")
    'latin-1'
    >>> check_encoding("latin-9x", "--encoding")
    Traceback (most recent call last):
    ...
    structanon.errors.InputError: --encoding: unknown text encoding 'latin-9x' (e.g. utf-8, latin-1, cp1252)
    """
    if not isinstance(value, str) or not value:
        raise InputError(
            f"{name} must be the name of a text encoding (e.g. utf-8, latin-1, cp1252), "
            f"got {value!r}"
        )
    try:
        "".encode(value)
        b"".decode(value)
    except (LookupError, UnicodeError):
        raise InputError(
            f"{name}: unknown text encoding {value!r} (e.g. utf-8, latin-1, cp1252)"
        ) from None
    return value


def first_few(values: Sequence[Any], limit: int = 10) -> str:
    """The first ``limit`` of ``values`` joined by commas, and how many more there are.

    >>> first_few(["a", "b", "c"], 2)
    'a, b (and 1 more)'
    """
    more = len(values) - limit
    return ", ".join(map(str, values[:limit])) + (f" (and {more} more)" if more > 0 else "")


def duplicate_names(names: Iterable[str]) -> list[str]:
    """The names that repeat an earlier one, in order of their repetition.

    Examples
    --------
    >>> duplicate_names(["a", "b", "a", "c", "b", "a"])
    ['a', 'b', 'a']
    """
    seen: set[str] = set()
    return [n for n in names if n in seen or seen.add(n)]  # type: ignore[func-returns-value]


def warn_repeated_labels(frame: Any, what: str = "table") -> None:
    """Warn (a Python warning, never in a release or report) when the index of the pandas
    ``frame`` repeats labels: ``release.source_index`` holds input labels, and
    ``df.loc[release.source_index]`` then returns every row of each repeated label."""
    index = getattr(frame, "index", None)
    if (
        index is None
        or not hasattr(index, "is_unique")
        or type(frame).__module__.startswith("dask")
    ):
        return
    if not index.is_unique:
        label = index[index.duplicated()][0]
        warnings.warn(
            f"the {what}'s index repeats labels (e.g. {label!r}): release.source_index holds "
            "input labels, so df.loc[release.source_index] will not line up with the "
            "release; call df.reset_index(drop=True) first to link published rows to yours",
            UserWarning,
            stacklevel=3,
        )


def check_columns(frame: Any, columns: Iterable[str], *, what: str = "table") -> list[str]:
    """Check that ``frame`` has unique column names and holds every name in ``columns``.

    Examples
    --------
    >>> import pandas as pd
    >>> check_columns(pd.DataFrame({"a": [1], "b": [2]}), ["a"])
    ['a']
    >>> check_columns(pd.DataFrame([[1, 2]], columns=["a", "a"]), ["a"])
    Traceback (most recent call last):
    ...
    structanon.errors.InputError: the table has duplicate column names: 'a' (column 'a')
    """
    names = [str(c) for c in frame.columns]
    duplicates = duplicate_names(names)
    if duplicates:
        raise InputError(
            f"the {what} has duplicate column names: "
            f"{', '.join(map(repr, dict.fromkeys(duplicates)))}",
            column=duplicates[0],
        )
    wanted = list(columns)
    for column in wanted:
        if column not in frame.columns:
            raise InputError(f"column not found; the {what} has {names}", column=column)
    return wanted


def _range(low: Any, high: Any) -> str:
    if low is not None and high is not None:
        return f" in [{low}, {high}]"
    if low is not None:
        return f" >= {low}"
    if high is not None:
        return f" <= {high}"
    return ""


def check_names(value: Any, name: str) -> list[Any]:
    """``value`` as a list of column or item names (an iterable of hashables, not one string).

    Examples
    --------
    >>> check_names(("age", "sex"), "columns")
    ['age', 'sex']
    >>> check_names("age", "columns")
    Traceback (most recent call last):
    ...
    structanon.errors.InputError: columns must be a list of names, got 'age'
    """
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise InputError(f"{name} must be a list of names, got {value!r}")
    names = list(value)
    for item in names:
        if not isinstance(item, Hashable) or item is None:
            raise InputError(f"{name} must hold names, got {item!r}")
    return names


def check_path(path: Any, name: str = "path") -> Path:
    """``path`` (a ``str`` or path-like, not empty) as a :class:`~pathlib.Path`.

    Examples
    --------
    >>> check_path(5, "path")
    Traceback (most recent call last):
    ...
    structanon.errors.InputError: path must be a file path (str or os.PathLike), got 5
    """
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)) or not str(path):
        raise InputError(f"{name} must be a file path (str or os.PathLike), got {path!r}")
    return Path(path)


def check_input_path(
    path: str | Path, name: str = "input", *, directory_ok: bool = False, stream_ok: bool = False
) -> Path:
    """An existing, readable input file (or directory, where ``directory_ok``).

    A pipe, FIFO or device (``<(zcat log.gz)``, ``/dev/stdin``) is refused unless
    ``stream_ok`` (a key file, read once): the readers open an input more than once (its
    first bytes tell its format, a first pass checks its lines), and a stream gives each
    opening what the last left, so the data would lose its start, or a reader wait forever
    on a FIFO no one writes to again."""
    path = check_path(path, name)
    if not path.exists():
        raise InputError(f"{name} not found", path=str(path))
    if path.is_dir() and not directory_ok:
        raise InputError(f"{name} is a directory, not a file", path=str(path))
    if not path.is_dir() and not path.is_file() and not stream_ok:
        raise InputError(
            f"{name} is a pipe, FIFO or device, not a regular file, and is read more than "
            "once: save it to a file first (a gzip, bz2, xz or zip file is read as it is)",
            path=str(path),
        )
    if not os.access(path, os.R_OK):
        raise InputError(f"{name} is not readable", path=str(path))
    return path


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_output_paths(
    outputs: Mapping[str, str | Path | None],
    inputs: Sequence[str | Path | None] = (),
    extensions: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Path]:
    """Check every output path before any work: writable, not an input, not each other.

    Parameters
    ----------
    outputs : mapping
        Option name (as the user typed it, e.g. ``"--output"``) to path; ``None`` is skipped.
    inputs : sequence of paths
        Every file the command reads; an output that resolves to one of them (same inode,
        or the same path) is refused, so an input is never overwritten.  A folder or a glob
        pattern (a lazy reader's INPUT) stands for the files in it: an output inside the
        folder, or matching the pattern, is refused too.
    extensions : mapping, optional
        Option name to the accepted suffixes (lower case, with the dot); compressed
        suffixes (``.gz``) are looked through.

    Raises
    ------
    InputError
        Naming the option and path: a directory, a missing or unwritable folder, an input
        file, two options naming one file, or an unsupported extension.
    """
    checked: dict[str, Path] = {}
    input_paths = [Path(p) for p in inputs if p is not None]
    # a lazy reader's INPUT may be a folder or a glob pattern: the files in it are inputs
    input_paths += [Path(f) for p in input_paths if _is_pattern(p) for f in glob.glob(str(p))]
    for option, value in outputs.items():
        if value is not None:
            path = Path(value)
            _check_output_path(option, path, input_paths, checked, (extensions or {}).get(option))
            checked[option] = path
    return checked


def _check_output_path(
    option: str,
    path: Path,
    inputs: Sequence[Path],
    checked: Mapping[str, Path],
    allowed: Sequence[str] | None,
) -> None:
    """One output of :func:`check_output_paths`."""
    if path.is_dir():
        raise InputError(f"{option} names a directory, not a file", path=str(path))
    _check_not_an_input(option, path, inputs)
    for other, seen in checked.items():
        if seen.resolve() == path.resolve():
            raise InputError(f"{option} and {other} name the same file", path=str(path))
    packed = path.suffix.lower()
    if allowed and packed in (".bz2", ".xz", ".zip"):
        raise InputError(
            f"{option}: {packed} compression is not written (it would be plain text under "
            f"a {packed} name); drop {packed}, or use .gz",
            path=str(path),
        )
    if allowed and file_suffix(path) not in allowed:
        raise InputError(
            f"{option} must end in {', '.join(allowed)}; got {file_suffix(path) or 'no extension'}",
            path=str(path),
        )
    existing = path.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(f"{option}: folder {str(path.parent)!r} cannot be created", path=str(path))
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f"{option}: folder {str(existing)!r} is not writable", path=str(path))
    if path.exists() and not os.access(path, os.W_OK):
        raise InputError(f"{option}: file is not writable", path=str(path))


def _check_not_an_input(option: str, path: Path, inputs: Sequence[Path]) -> None:
    """Refuse an output that is an input file, lies in an INPUT folder or matches an INPUT
    pattern (:func:`check_output_paths`)."""
    for source in inputs:
        if _same_file(path, source) or path.resolve() == source.resolve():
            raise InputError(
                f"{option} names an input file; it would be overwritten", path=str(path)
            )
    for source in inputs:
        if source.is_dir() and path.resolve().is_relative_to(source.resolve()):
            raise InputError(
                f"{option} lies inside the INPUT folder {str(source)!r}, which is read as "
                "the input (it could overwrite a part of it, or be read as one next time)",
                path=str(path),
            )
        if _is_pattern(source) and fnmatch.fnmatchcase(
            str(path.resolve()), str(source.parent.resolve() / source.name)
        ):
            raise InputError(
                f"{option} matches the INPUT pattern {str(source)!r}: it would overwrite an "
                "input file, or be read as one next time",
                path=str(path),
            )


def _is_pattern(path: Path) -> bool:
    """A glob pattern (a lazy reader's INPUT) rather than a file that exists."""
    return any(c in str(path) for c in "*?[") and not path.exists()


def file_suffix(path: str | Path) -> str:
    """The format suffix of ``path``, lower case, looking through ``.gz``/``.bz2``/...

    Examples
    --------
    >>> file_suffix("log.TSV.gz")
    '.tsv'
    """
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] in (".gz", ".bz2", ".zip", ".xz"):
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""
