"""Text renderings of a leaderboard that the shared output formats lack: a booktabs LaTeX
table and the pairwise matrix as records."""

from __future__ import annotations

from typing import Any

_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}


def latex_escape(text: str) -> str:
    r"""``text`` with LaTeX's special characters escaped; control characters are dropped.

    >>> latex_escape("pass@k_1 & 50% {x}")
    'pass@k\\_1 \\& 50\\% \\{x\\}'
    """
    out = []
    for ch in str(text):
        if ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ch.isprintable():
            out.append(ch)
    return "".join(out)


def letters(i: int) -> str:
    """Group number 1, 2, ... as a, b, ..., z, aa, ab, ...

    >>> [letters(i) for i in (1, 2, 26, 27, 28)]
    ['a', 'b', 'z', 'aa', 'ab']
    """
    s = ""
    while i > 0:
        i, r = divmod(i - 1, 26)
        s = chr(ord("a") + r) + s
    return s


def _num(v: Any, decimals: int) -> str:
    return "--" if v is None else f"{v:.{decimals}f}"


def latex_table(result: Any, k: int | None = None, decimals: int = 3) -> str:
    """A booktabs table (needs ``\\usepackage{booktabs}``) of a LeaderboardResult."""
    rows = [r for r in result.rows if k is None or r.k == k]
    if not rows:
        raise ValueError(f"k={k} is not in this leaderboard")
    level = f"{100 * result.confidence:g}\\%"
    lines = [
        "\\begin{tabular}{lrrcrl}",
        "\\toprule",
        f"Model & $k$ & {latex_escape(result.metric)} & {level} CI & Rank & Group \\\\",
        "\\midrule",
    ]
    last = None
    for r in rows:
        if last is not None and r.k != last:
            lines.append("\\midrule")
        last = r.k
        rank = str(r.rank_low) if r.rank_low == r.rank_high else f"{r.rank_low}--{r.rank_high}"
        ci = f"[{_num(r.ci_low, decimals)}, {_num(r.ci_high, decimals)}]"
        grp = "".join(letters(g) for g in r.groups)
        lines.append(f"{latex_escape(r.model)} & {r.k} & {_num(r.value, decimals)} & {ci} & "
                     f"{rank} & {grp} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def matrix_records(result: Any, k: int, what: str = "diff") -> list[dict[str, Any]]:
    """The pairwise matrix at ``k`` as records: one per row model, a column per model."""
    import math

    names, mat = result.matrix(k, what)
    out = []
    for i, name in enumerate(names):
        rec: dict[str, Any] = {"model": name}
        for j, other in enumerate(names):
            v = float(mat[i, j])
            rec[other] = None if math.isnan(v) else v
        out.append(rec)
    return out
