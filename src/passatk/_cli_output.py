"""What the command line writes around the library's records: the output format (from
``--format`` or the extension of ``-o``), the unit of ``--percent``, the JSON envelope with the
inputs and the seed, and CSV safety.

Kept out of :mod:`passatk.cli`, which only parses, calls the library and hands records here.

>>> output_format(None, "scores.json"), output_format("csv", None), output_format(None, None)
('json', 'csv', 'table')
>>> output_format("table", "scores.json")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: --format table does not match -o 'scores.json', whose extension .json means ...
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

#: the output format an extension of ``-o`` names
EXTENSIONS = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv",
              ".md": "markdown", ".markdown": "markdown", ".txt": "table"}

#: fields scaled by --percent (all are fractions of tasks solved, or differences of them)
SCALED = (
    "value", "se", "ci_low", "ci_high", "se_super", "se_fixed", "se_cluster", "sd_between",
    "percentile_low", "percentile_high", "bca_low", "bca_high", "posterior_sd",
    "diff", "value_a", "value_b", "boot_low", "boot_high", "band_low", "band_high",
)
#: the suffix of a field scaled by --percent: the unit is in the name, in every format
PERCENT_SUFFIX = "_pct"


def varying_labels(paths: Sequence[str]) -> list[str]:
    """Short labels for ``paths``: the parts of the path that differ between them (the
    common leading and trailing parts dropped), or the whole path where that leaves nothing.

    >>> varying_labels(["runs/coder-34b/samples.jsonl_results.jsonl",
    ...                 "runs/coder-7b/samples.jsonl_results.jsonl"])
    ['coder-34b', 'coder-7b']
    >>> varying_labels(["a/x.jsonl", "a/y.jsonl"]), varying_labels(["one/x.jsonl"])
    (['x.jsonl', 'y.jsonl'], ['x.jsonl'])
    """
    parts = [[p for p in str(path).replace(os.sep, "/").split("/") if p] for path in paths]
    if len(parts) < 2 or not all(parts):
        return [p[-1] if p else str(path) for p, path in zip(parts, paths, strict=True)]
    head = _common(parts)
    tail = _common([p[head:][::-1] for p in parts])
    labels = ["/".join(p[head:len(p) - tail]) for p in parts]
    if len(set(labels)) < len(labels):
        return [str(path) for path in paths]
    return labels


def _common(parts: Sequence[Sequence[str]]) -> int:
    """How many leading parts all of ``parts`` share, leaving at least one part of each."""
    n = 0
    while all(len(p) > n + 1 for p in parts) and len({p[n] for p in parts}) == 1:
        n += 1
    return n


def output_format(fmt: str | None, output: str | None) -> str:
    """The output format: ``--format`` when given, else the one ``-o``'s extension names,
    else ``table``; a ``--format`` that contradicts the extension is an error."""
    implied = None
    if output is not None and output != "-":
        implied = EXTENSIONS.get(os.path.splitext(str(output))[1].lower())
    if fmt is None:
        return implied or "table"
    if implied is not None and implied != fmt:
        ext = os.path.splitext(str(output))[1]
        raise ValueError(f"--format {fmt} does not match -o {output!r}, whose extension {ext} "
                         f"means --format {implied}; drop --format or rename the file")
    return fmt


def csv_safe_default(flag: bool | None, output: str | None) -> bool:
    """``--csv-safe``: as given, else on when writing a ``.csv`` file (a spreadsheet opens it)."""
    if flag is not None:
        return flag
    return output is not None and str(output).lower().endswith(".csv")


def to_terminal(output: str | None) -> bool:
    """Whether the output goes to a terminal (standard output that is a tty)."""
    if output is not None and output != "-":
        return False
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def percent(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` in percent: each scaled field times 100, renamed ``<field>_pct``.

    >>> percent({"k": 1, "value": 0.5, "se": None})
    {'k': 1, 'value_pct': 50.0, 'se_pct': None}
    """
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key in SCALED:
            out[key + PERCENT_SUFFIX] = value * 100.0 if isinstance(value, float) else value
        else:
            out[key] = value
    return out


def percent_columns(columns: Sequence[str]) -> list[str]:
    """The names of ``columns`` after :func:`percent`."""
    return [c + PERCENT_SUFFIX if c in SCALED else c for c in columns]


def seed_arg(text: str) -> int:
    """``--seed``: a non-negative integer, or ``random`` for a fresh one (recorded in the
    output like any other)."""
    import argparse

    if text == "random":
        import secrets

        return secrets.randbelow(2**32)
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer or 'random'") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must not be negative")
    return value


def inputs(files: Sequence[tuple[str | None, str]]) -> list[dict[str, Any]]:
    """The ``inputs`` of the envelope: path, bytes and SHA-256 of every file read, in order
    (``run`` is ``"a"``/``"b"`` for compare)."""
    from ._output import input_record

    out = []
    for run, path in files:
        record = input_record(path)
        if run is not None:
            record = {"run": run, **record}
        out.append(record)
    return out


def cli_envelope(command: str, records: Sequence[Mapping[str, Any]], *,
                 files: Sequence[tuple[str | None, str]] = (), seed: int | None = None,
                 argv: Sequence[str] | None = None, unit: str | None = None,
                 **fields: Any) -> dict[str, Any]:
    """The JSON envelope of a command's output (docs/cli.md, "JSON output")."""
    from ._output import envelope

    extra: dict[str, Any] = {}
    if argv is not None:
        extra["argv"] = ["passatk", *argv]
    if unit is not None:
        extra["unit"] = unit
    return envelope(command, records, inputs=inputs(files), seed=seed, **extra, **fields)
