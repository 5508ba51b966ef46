"""``structanon tabular``: anonymize a microdata table, or assess the risk of one."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd

from structanon import Hierarchy, InputError, Partition, Release
from structanon._engine import is_dask
from structanon._finish import Timings
from structanon._validation import (
    check_float,
    check_input_path,
    check_int,
    check_output_paths,
    duplicate_names,
    file_suffix,
)
from structanon.cli_support import (
    assess_options,
    assessment,
    check_engine_options,
    emit_assessment,
    emit_release,
    encoding_option,
    engine_context,
    engine_options,
    handle_errors,
    release_options,
    separator,
    show_progress,
    stack,
)
from structanon.errors import PublisherWarning, VerificationError
from structanon.io import is_parquet_path, read_table, release_key, staged_outputs
from structanon.models import (
    AlphaKAnonymity,
    BLikeness,
    DeltaDisclosure,
    DeltaPresence,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    MultipleSensitive,
    NTCloseness,
    PrivacyModel,
    ProbabilisticLDiversity,
    RecursiveCLDiversity,
    TCloseness,
    joint_sensitive,
)
from structanon.report import provenance, write_report

from . import io as tab_io
from . import risk as tab_risk
from ._anatomy import BucketRelease, anatomize
from ._anonymize import ALGORITHMS, anonymize
from ._figures import release_figures
from ._optimal import QUALITY_MODELS
from ._slicing import slice_table

__all__ = ["cli", "demo"]

DATA = Path(__file__).resolve().parent / "data"
DEMO_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
REPORT_EXTENSIONS = (".json", ".html", ".htm")


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else []


def _models(
    k: int | None,
    l_div: float | None,
    l_variant: str,
    c: float | None,
    t: float | None,
    t_distance: str,
    sensitive_hierarchy: str | None,
    sep: str,
    extra: dict[str, Any] | None = None,
) -> list[PrivacyModel]:
    extra = extra or {}
    models: list[PrivacyModel] = []
    alpha = extra.get("alpha")
    if k is not None and alpha is None:
        models.append(KAnonymity(check_int(k, "-k", min_value=1)))
    if alpha is not None:
        models.append(AlphaKAnonymity(alpha, 1 if k is None else check_int(k, "-k", min_value=1)))
    if l_div is not None:
        models.append(_l_diversity(l_div, l_variant, c))
    if t is not None:
        hierarchy = None
        if t_distance == "hierarchical":
            if sensitive_hierarchy is None:
                raise InputError("hierarchical t-closeness needs --sensitive-hierarchy")
            hierarchy = tab_io.read_hierarchy(sensitive_hierarchy, sep, None)
        n = extra.get("nt_n")
        if n is not None:
            models.append(
                NTCloseness(check_int(n, "--nt-closeness", min_value=1), t, t_distance, hierarchy)
            )
        else:
            models.append(TCloseness(t, t_distance, hierarchy))
    elif extra.get("nt_n") is not None:
        raise InputError("--nt-closeness N needs --t-closeness T")
    models += _other_models(extra)
    if not models:
        raise InputError(
            "give at least one privacy model: -k, --l-diversity, --t-closeness, "
            "--beta-likeness, --delta-disclosure, --delta-presence or --alpha"
        )
    return models


def _l_diversity(l_div: float, l_variant: str, c: float | None) -> PrivacyModel:
    l_div = check_float(l_div, "--l-diversity", min_value=1)
    if c is not None:
        c = check_float(c, "--c", min_value=0, include_min=False)
    if l_variant == "distinct":
        if float(l_div) != int(l_div):
            raise InputError(f"distinct l-diversity needs an integer l, got {l_div}")
        return DistinctLDiversity(int(l_div))
    if l_variant == "entropy":
        return EntropyLDiversity(l_div)
    if l_variant == "probabilistic":
        return ProbabilisticLDiversity(l_div)
    if c is None:
        raise InputError("recursive (c,l)-diversity needs --c")
    return RecursiveCLDiversity(c, int(l_div))


def _other_models(extra: dict[str, Any]) -> list[PrivacyModel]:
    """beta-likeness, delta-disclosure and delta-presence from their options."""
    models: list[PrivacyModel] = []
    if extra.get("beta") is not None:
        models.append(BLikeness(extra["beta"], enhanced=bool(extra.get("enhanced_beta"))))
    elif extra.get("enhanced_beta"):
        raise InputError("--enhanced-beta needs --beta-likeness BETA")
    if extra.get("delta") is not None:
        models.append(DeltaDisclosure(extra["delta"]))
    presence = extra.get("presence")
    if presence is not None:
        parts = presence.split(",")
        try:
            low, high = (float(v) for v in parts)
        except ValueError:
            raise InputError(
                f"--delta-presence must be MIN,MAX (e.g. 0,0.5), got {presence!r}"
            ) from None
        models.append(DeltaPresence(low, high, member=extra.get("member", "True")))
    return models


@click.group(name="tabular", context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """k-anonymity, l-diversity and t-closeness for microdata tables."""


def _table_options(func):
    """INPUT and the options that say how to read it (shared by anonymize and assess)."""
    options = [
        # a folder of Parquet files or a glob is read with --engine dask only (checked later)
        click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=True)),
        click.option(
            "--sep",
            default=None,
            show_default=False,
            help="Field separator of the input (default ','; tab for .tsv).",
        ),
        encoding_option(),
        click.option(
            "--qi", "qi", required=True, help="Quasi-identifier columns, comma-separated."
        ),
        click.option(
            "--sensitive",
            default=None,
            help="Sensitive column (anonymize: several, comma-separated, each held to "
            "every model of a sensitive attribute).",
        ),
    ]
    return stack(*options)(func)


def _hierarchy_options(func):
    options = [
        click.option(
            "--hierarchy",
            "hierarchy",
            multiple=True,
            metavar="COLUMN=FILE",
            help="ARX hierarchy file of a QI (repeatable).",
        ),
        click.option(
            "--hierarchy-dir",
            type=click.Path(file_okay=False),
            default=None,
            help="Folder with *hierarchy_<column>.csv files for the other QIs.",
        ),
        click.option(
            "--hierarchy-sep", default=";", show_default=True, help="Separator of hierarchy files."
        ),
        click.option(
            "--numeric",
            "numeric",
            default=None,
            help="QIs treated as numbers (Mondrian only: published as ranges "
            "'lo-hi'), comma-separated.",
        ),
        click.option(
            "--set-qi",
            "set_qi",
            default=None,
            help="Categorical QIs without hierarchy (Mondrian only: cut along their "
            "sorted values, published as value sets 'a,b'; values must not "
            "contain ','), comma-separated.",
        ),
    ]
    return stack(*options)(func)


def _model_options(func):
    options = [
        click.option("-k", "k", type=int, default=None, help="k of k-anonymity."),
        click.option(
            "--l-diversity",
            "l_div",
            type=float,
            default=None,
            help="l of l-diversity (of the --sensitive column).",
        ),
        click.option(
            "--l-variant",
            type=click.Choice(["distinct", "entropy", "recursive", "probabilistic"]),
            default="distinct",
            show_default=True,
            help="Which l-diversity: distinct values, entropy, recursive (c,l), or "
            "probabilistic (no value above 1/l of a class).",
        ),
        click.option("--c", "c", type=float, default=None, help="c of recursive (c,l)-diversity."),
        click.option("--t-closeness", "t", type=float, default=None, help="t of t-closeness."),
        click.option(
            "--t-distance",
            type=click.Choice(["equal", "ordered", "hierarchical"]),
            default="equal",
            show_default=True,
            help="Ground distance of t-closeness between sensitive values.",
        ),
        click.option(
            "--sensitive-hierarchy",
            type=click.Path(dir_okay=False),
            default=None,
            help="Hierarchy of the sensitive column (hierarchical t-closeness).",
        ),
        click.option(
            "--nt-closeness",
            "nt_n",
            type=int,
            default=None,
            metavar="N",
            help="(n,t)-closeness: a class smaller than N must be within --t-closeness of "
            "the table (which must hold N records).",
        ),
        click.option(
            "--beta-likeness",
            "beta",
            type=float,
            default=None,
            help="beta of beta-likeness (largest relative gain of a sensitive value).",
        ),
        click.option(
            "--enhanced-beta",
            is_flag=True,
            help="Enhanced beta-likeness: gain <= min(beta, -ln p).",
        ),
        click.option(
            "--delta-disclosure",
            "delta",
            type=float,
            default=None,
            help="delta of delta-disclosure privacy (|ln(q/p)| < delta).",
        ),
        click.option(
            "--alpha",
            "alpha",
            type=float,
            default=None,
            help="(alpha,k)-anonymity: no sensitive value above alpha of a class (with -k).",
        ),
        click.option(
            "--delta-presence",
            "presence",
            default=None,
            metavar="MIN,MAX",
            help="delta-presence: INPUT is the population and --sensitive its membership "
            "column; each class's share of members must lie in [MIN, MAX].",
        ),
        click.option(
            "--member",
            default="True",
            show_default=True,
            help="Value of the membership column that marks a released record (--delta-presence).",
        ),
    ]
    return stack(*options)(func)


def _algorithm_options(func):
    options = [
        click.option(
            "--suppression-limit",
            type=float,
            default=0.0,
            show_default=True,
            help="Largest share of records that may be suppressed.",
        ),
        click.option(
            "--algorithm",
            type=click.Choice(list(ALGORITHMS)),
            default="optimal",
            show_default=True,
            help="optimal: best full-domain generalization (lattice search); "
            "mondrian: multidimensional partitioning; datafly: greedy baseline.",
        ),
        click.option(
            "--metric",
            type=click.Choice(list(QUALITY_MODELS)),
            default="discernibility",
            show_default=True,
            help="Quality model the optimal search minimizes.",
        ),
        click.option(
            "--mondrian-criterion",
            type=click.Choice(["gain", "width"]),
            default=None,
            help="Mondrian: cut where the certainty penalty drops most (gain, the "
            "default) or along the widest normalized range (width, LeFevre).",
        ),
        click.option(
            "--relaxed/--strict",
            "relaxed",
            default=None,
            help="Mondrian: let a pool of rare values borrow records from a sibling "
            "(relaxed, the default; regions may overlap) or keep regions "
            "disjoint (strict).",
        ),
        click.option(
            "--identifier",
            "identifiers",
            multiple=True,
            help="Direct identifier column, pseudonymized with a keyed HMAC (repeatable).",
        ),
        click.option("--drop-identifiers", is_flag=True, help="Drop identifier columns instead."),
        click.option(
            "--local-suppression",
            is_flag=True,
            help="Blank QI cells of the last violating records instead of removing "
            "them (k-anonymity, optimal / datafly).",
        ),
        click.option(
            "--linkage",
            is_flag=True,
            help="Also run the record-linkage attack before/after (quadratic in records).",
        ),
        click.option(
            "--classifier",
            is_flag=True,
            help="Also measure a classifier's accuracy on the sensitive column, "
            "release vs original.",
        ),
    ]
    return stack(*options)(func)


@cli.command("anonymize")
@_table_options
@_hierarchy_options
@_model_options
@_algorithm_options
@engine_options()
@release_options
@handle_errors
def anonymize_command(
    input_path,
    sep,
    encoding,
    qi,
    sensitive,
    hierarchy,
    hierarchy_dir,
    hierarchy_sep,
    numeric,
    set_qi,
    k,
    l_div,
    l_variant,
    c,
    t,
    t_distance,
    sensitive_hierarchy,
    nt_n,
    beta,
    enhanced_beta,
    delta,
    alpha,
    presence,
    member,
    suppression_limit,
    algorithm,
    metric,
    mondrian_criterion,
    relaxed,
    identifiers,
    drop_identifiers,
    local_suppression,
    linkage,
    classifier,
    engine,
    workers,
    memory_limit,
    scheduler,
    output,
    report,
    seed,
    key_file,
    no_measures,
    quiet,
) -> None:
    """Anonymize INPUT and write the verified release to --output.

    Every option and path is checked before INPUT is read; the table and the report are
    written all-or-nothing.  Rows are published in an order drawn from the secret key.
    """
    show_progress(quiet)
    columns = _qi_columns(qi)
    if drop_identifiers and not identifiers:
        raise InputError("--drop-identifiers drops the --identifier columns; none is given")
    check_float(suppression_limit, "--suppression-limit", min_value=0, max_value=1)
    check_int(seed, "--seed", min_value=0)
    sep = _separator(sep, "--sep", single=False)
    hierarchy_sep = _separator(hierarchy_sep, "--hierarchy-sep")
    options = {
        name: value
        for name, value in (("criterion", mondrian_criterion), ("relaxed", relaxed))
        if value is not None
    }
    _check_algorithm(algorithm, options, engine, workers, memory_limit, scheduler)
    files = tab_io.parse_assignments(hierarchy, "--hierarchy")
    inputs = _check_inputs(
        input_path, files, hierarchy_dir, columns, sensitive_hierarchy, key_file, engine
    )
    check_output_paths(
        {"--output": output, "--report": report},
        inputs=[*inputs, Path(input_path)],  # a folder or pattern too: see check_output_paths
        extensions={"--output": tab_io.TABLE_EXTENSIONS, "--report": REPORT_EXTENSIONS},
    )
    _check_dask_output(engine, output)
    extra = {
        "nt_n": nt_n,
        "beta": beta,
        "enhanced_beta": enhanced_beta,
        "delta": delta,
        "alpha": alpha,
        "presence": presence,
        "member": member,
    }
    models = _models(
        k, l_div, l_variant, c, t, t_distance, sensitive_hierarchy, hierarchy_sep, extra
    )
    with _columns_in_file(input_path, sep, encoding, engine):
        specs = tab_io.load_hierarchies(
            columns, files, hierarchy_dir, hierarchy_sep, _split(numeric), _split(set_qi)
        )
    try:
        secret = release_key(key_file)
    except InputError as exc:
        raise InputError(f"--key-file: {exc.message}", path=exc.path or key_file) from None
    sensitive_columns = _split(sensitive)
    models, joint = _per_sensitive_column(models, sensitive_columns, t_distance)
    needed = columns + sensitive_columns + list(identifiers)
    steps = Timings()
    with steps("read"):
        # the columns the search encodes by their values (hierarchy quasi-identifiers,
        # sensitive columns) are read as categoricals: a few bytes a cell
        coded = [c for c in columns if isinstance(specs.get(c), Hierarchy)] + sensitive_columns
        cluster = (workers, memory_limit, scheduler)
        # the columns the search computes on are typed; every other column (identifiers
        # included) is read as text, as written, and published unchanged
        typed = columns + sensitive_columns
        df = _read_input(input_path, sep, needed, coded, engine, cluster, joint, typed, encoding)
        if joint is not None:
            if joint in df.columns:
                raise InputError("the table already has a column of this name", column=joint)
            df[joint] = joint_sensitive(df, sensitive_columns)
            sensitive = joint
    release = _run_anonymize(
        input_path,
        df,
        specs,
        sensitive,
        models,
        algorithm=algorithm,
        suppression_limit=suppression_limit,
        metric=metric,
        seed=seed,
        key=secret,
        identifiers=list(identifiers),
        drop_identifiers=drop_identifiers,
        local_suppression=local_suppression,
        linkage=linkage,
        classifier=classifier,
        measures=not no_measures,
        mondrian_options=options,
        input_sep=sep,
        input_encoding=encoding,
    )
    for warning in release.info.get("warnings", ()):  # printed even with --quiet
        click.echo(f"warning: {warning}", err=True)
    # the key file is secret: its name or hash in a report would link releases made with it
    release.provenance = provenance(
        [p for p in inputs if key_file is None or Path(p).resolve() != Path(key_file).resolve()]
    )
    with steps("write"), staged_outputs() as stage:
        if report is not None:
            html = Path(report).suffix.lower() in (".html", ".htm")
            # a lazy input gives no input distributions to the figures
            write_report(
                release,
                stage(report),
                release_figures(release, None if is_dask(df) else df) if html else (),
            )
        _write_published(
            release, stage(output), _output_separator(sep, output), (sensitive, models, joint)
        )
    emit_release(release, quiet=quiet, inputs=inputs)
    if not quiet:
        if report is not None:
            click.echo(f"report written to {report}")
        click.echo(f"anonymized table written to {output}")


def _write_published(
    release: Release, path: Path, sep: str | None, sensitive_models: tuple
) -> None:
    """The published table: a Dask release written by the workers (never collected),
    else the rows in memory (without the joint sensitive column)."""
    if is_dask(release.data):
        qis = list(release.parameters.get("quasi_identifiers", {}))
        _write_lazy(release, path, sep, qis)
        return
    sensitive, models, joint = sensitive_models
    published = _published_rows(release.data, sensitive, models)
    if joint is not None:
        published = published.drop(columns=[joint])
    tab_io.write_microdata(published, path, sep=sep)


def _write_lazy(release: Release, path: Path, sep: str | None, qis: list[str]) -> None:
    """The Dask release written partition by partition (:func:`tabular.io.
    write_microdata_dask`), then checked from what was written: every record of the
    release, and every published class of every written partition ``>= k`` records."""
    written = tab_io.write_microdata_dask(release.data, path, sep=sep, classes=qis)
    k = int(release.parameters.get("k", 1))
    if written["rows"] != release.n_individuals - release.suppressed:
        raise VerificationError(
            f"the written table holds {written['rows']} records, the release "
            f"{release.n_individuals - release.suppressed}"
        )
    if written["classes"] and written["smallest_class"] < k:
        raise VerificationError(
            f"a written class holds {written['smallest_class']} records, fewer than k={k}"
        )


def _check_dask_output(engine: str, output: str) -> None:
    """The Parquet output of the Dask engine is a new folder (checked before reading)."""
    if engine == "dask" and is_parquet_path(output) and Path(output).exists():
        raise InputError(
            "--output exists; the Dask engine writes Parquet as a folder of parts and never "
            "overwrites (remove it or choose another)",
            path=str(output),
        )


def _check_algorithm(
    algorithm: str,
    options: dict[str, Any],
    engine: str,
    workers: int | None,
    memory_limit: str | None,
    scheduler: str | None,
) -> None:
    """Options that apply to Mondrian only, and the ``--engine`` options (Dask runs
    Mondrian only), checked before INPUT is read."""
    if options and algorithm != "mondrian":
        raise InputError(
            "--mondrian-criterion and --relaxed/--strict apply to "
            f"--algorithm mondrian, not {algorithm}"
        )
    check_engine_options(engine, workers, memory_limit, scheduler)
    if engine == "dask" and algorithm != "mondrian":
        raise InputError(
            f"--engine dask runs --algorithm mondrian only, not {algorithm} (use --engine pandas)",
            value="--engine",
        )


def _read_input(
    input_path: str,
    sep: str | None,
    needed: list[str],
    coded: list[str],
    engine: str,
    cluster: tuple[int | None, str | None, str | None],
    joint: str | None,
    typed: list[str],
    encoding: str,
) -> Any:
    """INPUT read in memory by pandas, or lazily on a started Dask cluster; the columns
    ``typed`` typed, every other one kept as text."""
    if engine != "dask":
        return tab_io.read_microdata(
            input_path, sep=sep, columns=needed, categorical=coded, typed=typed, encoding=encoding
        )
    if joint is not None:
        raise InputError("several --sensitive columns need --engine pandas")
    _start_cluster(*cluster)
    return tab_io.read_microdata_dask(
        input_path, sep=sep, columns=needed, typed=typed, encoding=encoding
    )


def _start_cluster(workers: int | None, memory_limit: str | None, scheduler: str | None) -> None:
    """Start the Dask cluster (or connect to ``--scheduler``) for the rest of the command."""
    cluster = contextlib.ExitStack()  # the Dask cluster lives until the command ends
    click.get_current_context().call_on_close(cluster.close)
    cluster.enter_context(engine_context("dask", workers, memory_limit, scheduler))


def _per_sensitive_column(
    models: list[PrivacyModel], columns: list[str], t_distance: str
) -> tuple[list[PrivacyModel], str | None]:
    """With several ``--sensitive`` columns, every model of a sensitive attribute applies to
    each column (:class:`MultipleSensitive`, over a joint column named ``a+b`` that is not
    written); returns the models and the joint column's name (None for one column)."""
    if len(columns) < 2:
        return models, None
    twice = [c for i, c in enumerate(columns) if c in columns[:i]]
    if twice:
        raise InputError("--sensitive names a column twice", column=twice[0])
    per_column = [m for m in models if m.requires_sensitive]
    if any(isinstance(m, DeltaPresence) for m in per_column):
        raise InputError("--delta-presence takes one membership column as --sensitive")
    if t_distance == "hierarchical" and any(
        isinstance(m, (TCloseness, NTCloseness)) for m in per_column
    ):
        raise InputError("hierarchical t-closeness takes one --sensitive column")
    kept = [m for m in models if not m.requires_sensitive]
    if per_column:
        kept.append(MultipleSensitive({c: list(per_column) for c in columns}))
    return kept, "+".join(columns)


def _published_rows(data: pd.DataFrame, sensitive: str | None, models: list) -> pd.DataFrame:
    """The rows to write: with delta-presence, the released subset only (the membership
    column dropped); the population-wide classes were verified by the release."""
    presence = [m for m in models if isinstance(m, DeltaPresence)]
    if not presence or sensitive is None:
        return data
    member = data[sensitive].astype(str) == str(presence[0].member)
    return data[member.to_numpy()].drop(columns=[sensitive]).reset_index(drop=True)


def _run_anonymize(
    input_path: str,
    df: pd.DataFrame,
    *args: Any,
    input_sep: str | None = None,
    input_encoding: str = "utf-8",
    **kwargs: Any,
) -> Release:
    """:func:`tabular.anonymize`, with a data row in an error turned into its file line."""

    return _run_scheme(
        input_path,
        _without_warnings(anonymize),
        df,
        *args,
        input_sep=input_sep,
        input_encoding=input_encoding,
        **kwargs,
    )


def _without_warnings(function: Any) -> Any:
    """``function`` with its UserWarnings silenced (the CLI prints the release's once),
    except each :class:`PublisherWarning`, printed as ``warning: ...`` on stderr even with
    ``--quiet``: it names what the input holds, so no report copies it."""

    def run(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("always", PublisherWarning)
            result = function(*args, **kwargs)
        for w in seen:
            if issubclass(w.category, PublisherWarning):
                click.echo(f"warning: {w.message}", err=True)
            else:  # any other warning goes on as it would have
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return result

    return run


def _qi_columns(qi: str) -> list[str]:
    """The ``--qi`` columns: at least one, none twice."""
    columns = _split(qi)
    if not columns:
        raise InputError("--qi names no column")
    twice = [c for i, c in enumerate(columns) if c in columns[:i]]
    if twice:
        raise InputError("--qi names a column twice", column=twice[0])
    return columns


def _separator(sep: str | None, option: str, single: bool = True) -> str | None:
    """A field separator as typed (``\\t`` is a tab); empty, or longer than one character
    where only one is allowed, is an :class:`InputError`."""
    if sep is None:
        return None
    sep = separator(None, None, sep)
    if not sep or (single and len(sep) != 1):
        raise InputError(
            f"{option} must be {'one character' if single else 'non-empty'} "
            f"(e.g. ',', ';' or \\t for a tab), got {sep!r}"
        )
    return sep


def _output_separator(sep: str | None, output: str) -> str | None:
    """The input's separator for a text output (one character only), else the default."""
    if sep is None or len(sep) != 1 or file_suffix(output) in (".tsv", ".tab"):
        return None
    return sep


def _check_inputs(
    input_path: str,
    files: dict[str, str],
    hierarchy_dir: str | None,
    columns: list[str],
    sensitive_hierarchy: str | None,
    key_file: str | None,
    engine: str = "pandas",
) -> list[Path]:
    """Check that every file the command reads exists; return them all (with
    ``--engine dask`` INPUT may be a Parquet folder or a glob of files)."""
    if engine == "dask":
        inputs = [Path(f) for f in tab_io.lazy_input_files(input_path)]
    else:
        inputs = [check_input_path(input_path, "INPUT")]
    for column, path in files.items():
        inputs.append(check_input_path(path, f"--hierarchy {column}"))
    if hierarchy_dir is not None:
        if not Path(hierarchy_dir).is_dir():
            raise InputError("--hierarchy-dir: folder does not exist", path=str(hierarchy_dir))
        inputs += [p for c in columns if (p := tab_io.find_hierarchy(hierarchy_dir, c))]
    if sensitive_hierarchy is not None:
        inputs.append(check_input_path(sensitive_hierarchy, "--sensitive-hierarchy"))
    if key_file is not None:
        inputs.append(check_input_path(key_file, "--key-file", stream_ok=True))
    return inputs


@contextlib.contextmanager
def _columns_in_file(
    input_path: str, sep: str | None, encoding: str, engine: str = "pandas"
) -> Iterator[None]:
    """A quasi-identifier without a hierarchy that is no column of INPUT either is named as
    a column missing from the file (the hierarchies are read before the table: their
    faults are met before any data is; the header is read on this error path only)."""
    try:
        yield
    except InputError as exc:
        if exc.column is None or "has no hierarchy" not in exc.message:
            raise
        first = tab_io.lazy_input_files(input_path)[0] if engine == "dask" else input_path
        try:
            if is_parquet_path(Path(first)):
                import pyarrow.parquet as pq

                names = [str(c) for c in pq.read_schema(first).names]
            else:
                names = [str(c) for c in read_table(first, sep, nrows=0, encoding=encoding)]
        except (InputError, OSError, ValueError):
            raise exc from None
        if exc.column not in names:
            raise InputError(
                f"column not in the file (columns: {names})", column=exc.column, path=str(first)
            ) from None
        raise


def assess_table(
    df: pd.DataFrame,
    quasi_identifiers: list[str],
    sensitive: str | None = None,
    threshold: float = 0.2,
) -> dict[str, Any]:
    """Re-identification risk and privacy-model values of a raw table, each measure once.

    :func:`tabular.risk.assess` (records, classes, smallest class ``k``, prosecutor and
    marketer risk, sample uniques, share above ``threshold``; with ``sensitive``: the
    table's distinct and entropy l) plus, with ``sensitive``, the largest t of t-closeness
    (equal ground distance), the smallest beta of beta-likeness, delta of delta-disclosure,
    probabilistic l and alpha of (alpha, k)-anonymity the table satisfies.
    """
    out = tab_risk.assess(df, quasi_identifiers, sensitive, threshold=threshold)
    if sensitive is not None:
        partition = Partition.from_keys(df[quasi_identifiers])
        values = df[sensitive].to_numpy()
        out["t_equal"] = TCloseness(1.0).check(partition, values).worst
        out["beta_likeness"] = BLikeness(1.0).check(partition, values).worst
        out["delta_disclosure"] = DeltaDisclosure(1.0).check(partition, values).worst
        out["probabilistic_l"] = ProbabilisticLDiversity(1).check(partition, values).worst
        out["alpha"] = AlphaKAnonymity(1.0, 1).check(partition, values).worst
    return out


def _assessment_warnings(risk: dict[str, Any]) -> list[str]:
    found = []
    if risk.get("sample_uniques"):
        found.append(
            f"{risk['sample_uniques']} records are unique on the quasi-identifiers "
            "(k = 1): each can be re-identified by anyone who knows their values"
        )
    return found


@cli.command("assess")
@_table_options
@click.option(
    "--threshold",
    type=float,
    default=0.2,
    show_default=True,
    help="Risk threshold for the share of records above it.",
)
@assess_options
@handle_errors
def assess_command(
    input_path, sep, encoding, qi, sensitive, threshold, report, as_json, seed, quiet
) -> None:
    """Assess the re-identification risk of the raw table INPUT (before anonymization).

    Prints a table (with --json: the JSON document shared by every data type) and writes
    it as JSON to --report.
    """
    show_progress(quiet)
    columns = _qi_columns(qi)
    check_float(threshold, "--threshold", min_value=0, max_value=1)
    check_int(seed, "--seed", min_value=0)
    sep = _separator(sep, "--sep", single=False)
    check_output_paths(
        {"--report": report},
        inputs=[check_input_path(input_path, "INPUT")],
        extensions={"--report": (".json",)},
    )
    steps = Timings()
    with steps("read"):
        wanted = columns + ([sensitive] if sensitive else [])
        df = tab_io.read_microdata(
            input_path, sep=sep, columns=wanted, typed=wanted, encoding=encoding
        )
    if not df[columns].notna().all(axis=1).any():
        raise InputError(
            "no row has a value in every --qi column (an empty or malformed file? wrong --sep?)",
            path=str(input_path),
        )
    with steps("assess"):
        risk = assess_table(df, columns, sensitive, threshold)
    doc = assessment("tabular", input_path, risk, _assessment_warnings(risk))
    emit_assessment(doc, report, as_json=as_json, quiet=quiet)


def demo(output_dir: Path, seed: int = 0) -> Release:
    """Anonymize the bundled Adult sample (k=5, distinct 2-diversity, optimal, loss).

    Writes ``adult_anonymized.csv``, ``report.json`` and ``report.html`` (with the figures
    of :func:`tabular._figures.release_figures`) into ``output_dir`` and returns the
    verified release.
    """
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    source = DATA / "adult_sample.csv"
    df = tab_io.read_microdata(source, sep=";")
    specs = tab_io.load_hierarchies(DEMO_QIS, directory=DATA)
    release = anonymize(
        df,
        specs,
        "occupation",
        [KAnonymity(5), DistinctLDiversity(2)],
        algorithm="optimal",
        suppression_limit=0.02,
        metric="loss",
        seed=seed,
        linkage=True,
        classifier=True,
    )
    inputs = [source] + [p for c in DEMO_QIS if (p := tab_io.find_hierarchy(DATA, c))]
    release.provenance = provenance(inputs)
    with staged_outputs() as stage:
        tab_io.write_microdata(release.data, stage(output_dir / "adult_anonymized.csv"), sep=";")
        write_report(release, stage(output_dir / "report.json"))
        write_report(release, stage(output_dir / "report.html"), release_figures(release, df))
    return release


def _bucket_command_start(
    input_path: str,
    sep: str | None,
    qi: str,
    seed: int,
    outputs: dict[str, Any],
    key_file: str | None,
    extensions: dict[str, tuple[str, ...]],
) -> tuple[list[str], str | None, list[Path], Any]:
    """The shared first steps of ``anatomize`` and ``slice``: options, paths, key, in order."""
    columns = _qi_columns(qi)
    check_int(seed, "--seed", min_value=0)
    sep = _separator(sep, "--sep", single=False)
    inputs = _check_inputs(input_path, {}, None, columns, None, key_file)
    check_output_paths(outputs, inputs=inputs, extensions=extensions)
    try:
        secret = release_key(key_file)
    except InputError as exc:
        raise InputError(f"--key-file: {exc.message}", path=exc.path or key_file) from None
    return columns, sep, inputs, secret


def _bucket_table(
    input_path: str, sep: str | None, columns: list[str], sensitive: str, encoding: str
) -> pd.DataFrame:
    """The table ``anatomize`` and ``slice`` read: the QIs and the sensitive column typed,
    every other column as written."""
    needed = [*columns, sensitive]
    return tab_io.read_microdata(
        input_path, sep=sep, columns=needed, typed=needed, encoding=encoding
    )


def _run_scheme(
    input_path: str,
    function: Any,
    df: pd.DataFrame,
    *args: Any,
    input_sep: str | None = None,
    input_encoding: str = "utf-8",
    **kwargs: Any,
) -> Release:
    """``function(df, ...)``, with a data row in an error turned into its file line (of
    the input read with the separator ``input_sep`` and the encoding ``input_encoding``),
    or for a Parquet input into its 1-based row."""
    try:
        return function(df, *args, **kwargs)
    except InputError as exc:
        if is_dask(df):  # a row of one partition, or no row: found in the files again
            _raise_located(exc, input_path, input_sep, input_encoding)
        if exc.row is None:
            raise
        if is_parquet_path(Path(input_path)):  # no lines: its 1-based row
            raise InputError(
                exc.message,
                column=exc.column,
                row=int(exc.row) + 1,
                value=exc.value,
                path=str(input_path),
            ) from None
        line = tab_io.file_line(input_path, exc.row, input_sep, input_encoding)
        if line is None:
            raise
        raise InputError(
            exc.message, column=exc.column, line=line, value=exc.value, path=str(input_path)
        ) from None


def _raise_located(exc: InputError, input_path: str, sep: str | None, encoding: str) -> None:
    """Raise ``exc`` (an error of a Dask computation) with the input file and line where
    its column holds its value, when the text input files hold it; else as it is (a row
    of one partition is no file line: dropped)."""
    if exc.path is not None or exc.column is None:
        raise exc
    if isinstance(exc.value, np.generic):  # shown as the plain number or text
        exc.value = exc.value.item()
    missing = tab_io.is_missing(exc.value)
    if exc.value is not None or exc.message.startswith("missing"):
        found = tab_io.locate_value(
            tab_io.lazy_input_files(input_path), sep, exc.column, exc.value, encoding
        )
        if found is not None:
            raise InputError(
                exc.message,
                column=exc.column,
                line=found[1],
                value=None if missing else exc.value,
                path=found[0],
            ) from None
    raise InputError(
        exc.message, column=exc.column, value=None if missing else exc.value, path=str(input_path)
    ) from None


def _bucket_provenance(release: Release, inputs: list[Path], key_file: str | None) -> None:
    release.provenance = provenance(
        [p for p in inputs if key_file is None or Path(p).resolve() != Path(key_file).resolve()]
    )


@cli.command("anatomize")
@_table_options
@click.option(
    "-l", "l_value", type=int, required=True, help="l: records of distinct values per bucket."
)
@click.option(
    "--sensitive-output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write the sensitive table (bucket, value, count).",
)
@release_options
@handle_errors
def anatomize_command(
    input_path,
    sep,
    encoding,
    qi,
    sensitive,
    l_value,
    sensitive_output,
    output,
    report,
    seed,
    key_file,
    no_measures,
    quiet,
) -> None:
    """Bucketize INPUT with Anatomy: QIs unchanged in --output, linked by bucket ids to an
    l-diverse sensitive table in --sensitive-output.

    Bucket membership, bucket ids and row order are drawn from the secret key.  Every option
    and path is checked before INPUT is read; all outputs are written all-or-nothing.
    """
    show_progress(quiet)
    if sensitive is None:
        raise InputError("anatomize needs --sensitive")
    check_int(l_value, "-l", min_value=2)
    outputs = {"--output": output, "--sensitive-output": sensitive_output, "--report": report}
    extensions = {
        "--output": tab_io.TABLE_EXTENSIONS,
        "--sensitive-output": tab_io.TABLE_EXTENSIONS,
        "--report": (".json",),
    }
    columns, sep, inputs, secret = _bucket_command_start(
        input_path, sep, qi, seed, outputs, key_file, extensions
    )
    df = _bucket_table(input_path, sep, columns, sensitive, encoding)
    release = _run_scheme(
        input_path,
        anatomize,
        df,
        quasi_identifiers=columns,
        sensitive=sensitive,
        l=l_value,
        seed=seed,
        key=secret,
        measures=not no_measures,
        input_sep=sep,
        input_encoding=encoding,
    )
    assert isinstance(release, BucketRelease)
    _bucket_provenance(release, inputs, key_file)
    out_sep = _output_separator(sep, output)
    with staged_outputs() as stage:
        tab_io.write_microdata(release.data, stage(output), sep=out_sep)
        tab_io.write_microdata(
            release.sensitive_table,
            stage(sensitive_output),
            sep=_output_separator(sep, sensitive_output),
        )
        emit_release(release, report, quiet=quiet, inputs=inputs, stage=stage)
    if not quiet:
        click.echo(f"QI table written to {output}; sensitive table written to {sensitive_output}")


def _column_groups(value: str | None) -> list[list[str]] | None:
    """``--columns "age,sex;zip,disease"`` as lists of attributes."""
    if value is None:
        return None
    groups = [_split(part) for part in value.split(";")]
    if any(not g for g in groups):
        raise InputError(f"--columns must be groups of columns separated by ';', got {value!r}")
    return groups


@cli.command("slice")
@_table_options
@click.option(
    "-l",
    "l_value",
    type=int,
    required=True,
    help="l: no sensitive value above 1/l of the records a bucket could hold for anyone.",
)
@click.option(
    "--columns",
    "column_spec",
    default=None,
    metavar="A,B;C,D",
    help="The attribute partition, groups separated by ';' (default: phi^2 clustering).",
)
@click.option(
    "--n-columns", type=int, default=2, show_default=True, help="Number of column groups."
)
@click.option(
    "--sensitive-size",
    type=int,
    default=None,
    help="Attributes in the sensitive column (the sensitive one and its most correlated QIs).",
)
@release_options
@handle_errors
def slice_command(
    input_path,
    sep,
    encoding,
    qi,
    sensitive,
    l_value,
    column_spec,
    n_columns,
    sensitive_size,
    output,
    report,
    seed,
    key_file,
    no_measures,
    quiet,
) -> None:
    """Slice INPUT: correlated attributes stay together, column groups are permuted inside
    l-diverse buckets (--output holds the QIs, the sensitive column and the bucket id).

    Permutations, bucket ids and row order are drawn from the secret key.  Every option and
    path is checked before INPUT is read; all outputs are written all-or-nothing.
    """
    show_progress(quiet)
    if sensitive is None:
        raise InputError("slice needs --sensitive")
    check_int(l_value, "-l", min_value=2)
    check_int(n_columns, "--n-columns", min_value=1)
    if sensitive_size is not None:
        check_int(sensitive_size, "--sensitive-size", min_value=1)
    groups = _column_groups(column_spec)
    outputs = {"--output": output, "--report": report}
    extensions = {"--output": tab_io.TABLE_EXTENSIONS, "--report": (".json",)}
    columns, sep, inputs, secret = _bucket_command_start(
        input_path, sep, qi, seed, outputs, key_file, extensions
    )
    df = _bucket_table(input_path, sep, columns, sensitive, encoding)
    release = _run_scheme(
        input_path,
        slice_table,
        df,
        quasi_identifiers=columns,
        sensitive=sensitive,
        l=l_value,
        n_columns=n_columns,
        seed=seed,
        columns=groups,
        sensitive_size=sensitive_size,
        key=secret,
        measures=not no_measures,
        input_sep=sep,
        input_encoding=encoding,
    )
    _bucket_provenance(release, inputs, key_file)
    with staged_outputs() as stage:
        tab_io.write_microdata(release.data, stage(output), sep=_output_separator(sep, output))
        emit_release(release, report, quiet=quiet, inputs=inputs, stage=stage)
    if not quiet:
        click.echo(f"sliced table written to {output}")


# ------------------------------------------- statistical disclosure control by perturbation


def _sdc_options(func):
    """INPUT, --sep and the release options every perturbation command shares."""
    options = [
        # a folder of Parquet files or a glob is read with --engine dask only (checked later)
        click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=True)),
        click.option(
            "--sep",
            default=None,
            help="Field separator of the input (default ','; tab for .tsv).",
        ),
        encoding_option(),
    ]
    func = release_options(func)
    return stack(*options)(func)


def _sdc_run(
    input_path: str,
    needed: list[str],
    sep: str | None,
    output: Path,
    report: Path | None,
    seed: int,
    key_file: Path | None,
    quiet: bool,
    run: Any,
    encoding: str,
) -> None:
    """The common body: paths checked before reading, read, ``run(df, key)``, write all."""
    check_int(seed, "--seed", min_value=0)
    sep = _separator(sep, "--sep", single=False)
    inputs = [check_input_path(input_path, "INPUT")]
    if key_file is not None:
        inputs.append(check_input_path(key_file, "--key-file", stream_ok=True))
    check_output_paths(
        {"--output": output, "--report": report},
        inputs=inputs,
        extensions={"--output": tab_io.TABLE_EXTENSIONS, "--report": REPORT_EXTENSIONS},
    )
    try:
        secret = release_key(key_file)
    except InputError as exc:
        raise InputError(f"--key-file: {exc.message}", path=str(exc.path or key_file)) from None
    steps = Timings()
    with steps("read"):
        df = tab_io.read_microdata(
            input_path, sep=sep, columns=needed, typed=needed, encoding=encoding
        )
    release = _run_scheme(
        input_path,
        _without_warnings(run),
        df,
        secret,
        input_sep=sep,
        input_encoding=encoding,
    )
    for warning in release.info.get("warnings", ()):  # printed even with --quiet
        click.echo(f"warning: {warning}", err=True)
    release.provenance = provenance(inputs[:1])
    with steps("write"), staged_outputs() as stage:
        if report is not None:
            html = Path(report).suffix.lower() in (".html", ".htm")
            write_report(release, stage(report), release_figures(release) if html else ())
        tab_io.write_microdata(release.data, stage(output), sep=_output_separator(sep, str(output)))
    emit_release(release, quiet=quiet, inputs=inputs[:1])
    if not quiet:
        if report is not None:
            click.echo(f"report written to {report}")
        click.echo(f"released table written to {output}")


def _columns_option(help_text: str, required: bool = True):
    return click.option("--columns", "columns", required=required, default=None, help=help_text)


@cli.command("microaggregate")
@_columns_option("Numeric columns aggregated jointly, comma-separated.", required=False)
@click.option("-k", "k", type=int, required=True, help="Minimum group size.")
@click.option(
    "--method",
    type=click.Choice(["mdav", "mdav-generic"]),
    default="mdav",
    show_default=True,
    help="mdav: numeric columns; mdav-generic: also --nominal and --ordinal columns.",
)
@click.option("--nominal", default=None, help="Nominal columns (mdav-generic), comma-separated.")
@click.option("--ordinal", default=None, help="Ordinal columns (mdav-generic), comma-separated.")
@click.option(
    "--block-size",
    default="auto",
    show_default=True,
    help="Rows per block of the fast path ('auto': plain MDAV up to 200,000 rows; "
    "'none': always plain MDAV).",
)
@_sdc_options
@handle_errors
def microaggregate_command(
    columns, k, method, nominal, ordinal, block_size, input_path, sep, encoding, output, report,
    seed, key_file, no_measures, quiet,
) -> None:  # fmt: skip
    """Microaggregate INPUT (MDAV): groups of k..2k-1 similar records share their mean."""
    from ._microaggregate import microaggregate

    show_progress(quiet)
    names, nom, ordi = _split(columns), _split(nominal), _split(ordinal)
    check_int(k, "-k", min_value=1)
    block: int | str | None = block_size
    if block_size == "none":
        block = None
    elif block_size != "auto":
        try:
            block = int(block_size)
        except ValueError:
            raise InputError(
                f"--block-size must be 'auto', 'none' or an integer, got {block_size!r}"
            ) from None
    _sdc_run(
        input_path, names + nom + ordi, sep, output, report, seed, key_file, quiet,
        lambda df, key: microaggregate(
            df, names, k, method, nominal=nom, ordinal=ordi, block_size=block, seed=seed,
            key=key, measures=not no_measures,
        ),
        encoding=encoding,
    )  # fmt: skip


@cli.command("noise")
@_columns_option("Numeric columns to mask, comma-separated.")
@click.option(
    "--alpha", type=float, required=True, help="Noise level: Var(noise) = alpha * Var(column)."
)
@click.option(
    "--method",
    type=click.Choice(["uncorrelated", "correlated", "kim"]),
    default="uncorrelated",
    show_default=True,
    help="uncorrelated: independent noise per column; correlated: noise with the "
    "columns' covariance (correlations kept); kim: correlated noise, then Kim's linear "
    "transformation (means and covariances kept).",
)
@_sdc_options
@handle_errors
def noise_command(
    columns, alpha, method, input_path, sep, encoding, output, report, seed, key_file,
    no_measures, quiet,
) -> None:  # fmt: skip
    """Mask numeric columns of INPUT with additive noise drawn from the secret key."""
    from ._noise import add_noise

    show_progress(quiet)
    names = _split(columns)
    check_float(alpha, "--alpha", min_value=0, include_min=False)
    _sdc_run(
        input_path, names, sep, output, report, seed, key_file, quiet,
        lambda df, key: add_noise(
            df, names, alpha, method, seed=seed, key=key, measures=not no_measures
        ),
        encoding=encoding,
    )  # fmt: skip


@cli.command("rank-swap")
@_columns_option("Numeric columns, each swapped on its own, comma-separated.")
@click.option(
    "-p", "p", type=float, required=True, help="Largest rank distance of a swap, in % of records."
)
@_sdc_options
@handle_errors
def rank_swap_command(
    columns, p, input_path, sep, encoding, output, report, seed, key_file, no_measures, quiet
) -> None:
    """Rank-swap numeric columns of INPUT (values trade places within p % of ranks)."""
    from ._swap import rank_swap

    show_progress(quiet)
    names = _split(columns)
    check_float(p, "-p", min_value=0, max_value=100, include_min=False)
    _sdc_run(
        input_path, names, sep, output, report, seed, key_file, quiet,
        lambda df, key: rank_swap(df, names, p, seed=seed, key=key, measures=not no_measures),
        encoding=encoding,
    )  # fmt: skip


@cli.command("pram")
@_columns_option("Categorical columns, each randomized on its own, comma-separated.")
@click.option(
    "--keep",
    type=float,
    default=0.8,
    show_default=True,
    help="Probability that the basic matrix keeps a category.",
)
@click.option(
    "--invariant/--not-invariant",
    default=True,
    show_default=True,
    help="Make the matrix invariant (expected published counts equal the original ones).",
)
@click.option(
    "--transition",
    "transitions",
    multiple=True,
    metavar="[COLUMN=]FILE",
    help="Transition matrix of a column: a CSV with the categories as header and first "
    "column, rows summing to 1 (COLUMN= may be left out with one --columns); repeatable. "
    "Default: the basic matrix of --keep.",
)
@_sdc_options
@handle_errors
def pram_command(
    columns, keep, invariant, transitions, input_path, sep, encoding, output, report, seed,
    key_file, no_measures, quiet,
) -> None:  # fmt: skip
    """PRAM: randomize categorical columns of INPUT; the matrices go into the report."""
    from ._pram import match_transition, pram, read_transition

    show_progress(quiet)
    names = _split(columns)
    check_float(keep, "--keep", min_value=0, max_value=1, include_min=False)
    files = _transition_files(transitions, names)
    check_output_paths(
        {"--output": output, "--report": report},
        inputs=[check_input_path(f, "--transition") for f in files.values()],
    )
    matrices = {c: read_transition(f) for c, f in files.items()}

    def run(df: pd.DataFrame, key: Any) -> Release:
        given = {c: match_transition(m, df[c], c, files[c]) for c, m in matrices.items()}
        return pram(df, names, given, invariant, keep, seed=seed, key=key, measures=not no_measures)

    _sdc_run(input_path, names, sep, output, report, seed, key_file, quiet, run, encoding=encoding)


def _transition_files(items: tuple[str, ...], names: list[str]) -> dict[str, str]:
    """``--transition [COLUMN=]FILE`` items as column -> file."""
    out: dict[str, str] = {}
    for item in items:
        column, eq, file = item.partition("=")
        if eq and column.strip() in names:
            column, file = column.strip(), file.strip()
        elif len(names) == 1:
            column, file = names[0], item
        else:
            raise InputError(
                f"--transition {item!r}: write COLUMN=FILE with a column of --columns {names}"
            )
        if column in out:
            raise InputError(f"--transition: two matrices for column {column!r}")
        out[column] = file
    return out


def _thresholds(values: tuple[str, ...], option: str) -> dict[str, float]:
    out = {}
    for column, text in tab_io.parse_assignments(values, option).items():
        try:
            out[column] = float(text)
        except ValueError:
            raise InputError(f"{option} {column}: not a number: {text!r}") from None
    return out


def _recodings(values: tuple[str, ...]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for entry in values:
        column, sep, rule = entry.partition(":")
        old, eq, new = rule.partition("=")
        if not sep or not eq or not column or not old:
            raise InputError(f"--recode must be COLUMN:OLD=NEW, got {entry!r}")
        out.setdefault(column, {})[old] = new
    return out


@cli.command("recode")
@click.option("--top", multiple=True, metavar="COLUMN=VALUE", help="Top-code: >= VALUE.")
@click.option("--bottom", multiple=True, metavar="COLUMN=VALUE", help="Bottom-code: <= VALUE.")
@click.option(
    "--recode",
    "recodings",
    multiple=True,
    metavar="COLUMN:OLD=NEW",
    help="Global recoding of one category (repeatable).",
)
@click.option(
    "--sample",
    type=float,
    default=None,
    help="Publish each record with this probability (drawn from the secret key).",
)
@_sdc_options
@handle_errors
def recode_command(
    top, bottom, recodings, sample, input_path, sep, encoding, output, report, seed, key_file,
    no_measures, quiet,
) -> None:  # fmt: skip
    """Top/bottom coding, global recoding and sampling of INPUT."""
    from ._recode import recode

    show_progress(quiet)
    tops, bottoms, mapping = (
        _thresholds(top, "--top"),
        _thresholds(bottom, "--bottom"),
        _recodings(recodings),
    )
    if not (tops or bottoms or mapping or sample is not None):
        raise InputError("give at least one of --top, --bottom, --recode or --sample")
    if sample is not None:
        check_float(sample, "--sample", min_value=0, max_value=1, include_min=False)
    needed = list(dict.fromkeys([*tops, *bottoms, *mapping]))
    _sdc_run(
        input_path, needed, sep, output, report, seed, key_file, quiet,
        lambda df, key: recode(
            df, tops, bottoms, mapping, sample, seed=seed, key=key, measures=not no_measures
        ),
        encoding=encoding,
    )  # fmt: skip


@cli.command("safepub")
@_table_options
@_hierarchy_options
@click.option(
    "--epsilon", type=float, required=True, help="Privacy budget epsilon of (epsilon, delta)-DP."
)
@click.option(
    "--delta", type=float, default=1e-5, show_default=True, help="delta of (epsilon, delta)-DP."
)
@click.option(
    "--search-share",
    type=float,
    default=0.1,
    show_default=True,
    help="Share of epsilon spent choosing the generalization (exponential mechanism).",
)
@click.option(
    "--steps",
    type=int,
    default=100,
    show_default=True,
    help="Exponential-mechanism steps of SafePub's walk through the generalization lattice.",
)
@release_options
@handle_errors
def safepub_command(
    input_path, sep, encoding, qi, sensitive, hierarchy, hierarchy_dir, hierarchy_sep, numeric,
    set_qi, epsilon, delta, search_share, steps, output, report, seed, key_file, no_measures,
    quiet,
) -> None:  # fmt: skip
    """(epsilon, delta)-differentially private release of INPUT by SafePub: a secret random
    sample, generalized, classes below the implied k suppressed."""
    from ._safepub import MAX_EPSILON, DifferentialPrivacy

    show_progress(quiet)
    columns = _qi_columns(qi)
    if numeric or set_qi:
        raise InputError("safepub needs a hierarchy for every --qi (no --numeric / --set-qi)")
    check_int(seed, "--seed", min_value=0)
    model = DifferentialPrivacy(
        check_float(epsilon, "--epsilon", min_value=0, include_min=False, max_value=MAX_EPSILON),
        check_float(delta, "--delta", min_value=0, max_value=1, include_min=False),
        check_float(search_share, "--search-share", min_value=0, max_value=1, include_max=False),
        check_int(steps, "--steps", min_value=1),
    )
    sep = _separator(sep, "--sep", single=False)
    hierarchy_sep = _separator(hierarchy_sep, "--hierarchy-sep")
    files = tab_io.parse_assignments(hierarchy, "--hierarchy")
    inputs = _check_inputs(input_path, files, hierarchy_dir, columns, None, key_file)
    check_output_paths(
        {"--output": output, "--report": report},
        inputs=inputs,
        extensions={"--output": tab_io.TABLE_EXTENSIONS, "--report": REPORT_EXTENSIONS},
    )
    with _columns_in_file(input_path, sep, encoding):
        specs = tab_io.load_hierarchies(columns, files, hierarchy_dir, hierarchy_sep, [], [])
    try:
        secret = release_key(key_file)
    except InputError as exc:
        raise InputError(f"--key-file: {exc.message}", path=exc.path or key_file) from None
    steps = Timings()
    with steps("read"):
        wanted = columns + ([sensitive] if sensitive else [])
        df = tab_io.read_microdata(
            input_path, sep=sep, columns=wanted, typed=wanted, encoding=encoding
        )
    release = _run_anonymize(
        input_path, df, specs, sensitive, [model], seed=seed, key=secret,
        measures=not no_measures, input_sep=sep, input_encoding=encoding,
    )  # fmt: skip
    release.provenance = provenance(
        [p for p in inputs if key_file is None or Path(p).resolve() != Path(key_file).resolve()]
    )
    with steps("write"), staged_outputs() as stage:
        if report is not None:
            html = Path(report).suffix.lower() in (".html", ".htm")
            write_report(release, stage(report), release_figures(release) if html else ())
        tab_io.write_microdata(release.data, stage(output), sep=_output_separator(sep, output))
    emit_release(release, quiet=quiet, inputs=inputs)
    if not quiet:
        info = release.info
        click.echo(
            f"implied k = {info['implied_k']}, sampling rate = {info['sampling_rate']:.4f}; "
            f"released table written to {output}"
        )


@cli.command("dp-counts")
@click.argument("input_path", metavar="INPUT", type=click.Path(dir_okay=False))
@click.option("--sep", default=None, help="Field separator of the input.")
@encoding_option()
@click.option("--column", required=True, help="The column to count.")
@click.option(
    "--categories",
    required=True,
    help="The categories to count, fixed in advance, comma-separated (others are "
    "counted as '(other)').",
)
@click.option("--epsilon", type=float, required=True, help="Privacy budget of the histogram.")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
    help="Write the noisy counts as CSV (default: print them).",
)  # fmt: skip
@handle_errors
def dp_counts_command(input_path, sep, encoding, column, categories, epsilon, output) -> None:
    """Differentially private counts of one column of INPUT (OpenDP, discrete Laplace)."""
    from ._safepub import dp_counts

    check_float(epsilon, "--epsilon", min_value=0, include_min=False)
    labels = _split(categories)
    if not labels:
        raise InputError("--categories names no category")
    twice = duplicate_names(labels)
    if twice:
        raise InputError("--categories names a category twice", value=twice[0])
    sep = _separator(sep, "--sep", single=False)
    inputs = [check_input_path(input_path, "INPUT")]
    if output is not None:
        check_output_paths({"--output": output}, inputs=inputs, extensions={"--output": (".csv",)})
    df = tab_io.read_microdata(
        input_path, sep=sep, columns=[column], typed=[column], encoding=encoding
    )
    counts = dp_counts(df[column], epsilon, labels)
    table = counts.rename_axis(column).reset_index()
    if output is None:
        click.echo(table.to_csv(index=False), nl=False)
    else:
        with staged_outputs() as stage:
            tab_io.write_microdata(table, stage(output))
        click.echo(f"noisy counts written to {output}")
