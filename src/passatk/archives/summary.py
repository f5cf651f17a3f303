"""Summary files beside archives: skipped with one note; their pass@k numbers kept for check."""

import os

from passatk.archives.context import Context
from passatk.archives.counts import StoredMetric
from passatk.archives.errors import location
from passatk.archives.harnesses._patterns import SUMMARY_PASS_KEY
from passatk.archives.io.opening import is_file
from passatk.archives.io.remote import is_url

#: containers whose keys say nothing about which run a number belongs to
_GENERIC = frozenset({"results", "result", "metrics", "metric", "scores", "summary", "eval",
                      "pass@k", "pass_at_k"})
_DEPTH = 4
SHOWN = 10


def numbers(doc: object, path: tuple = ()) -> list[tuple[tuple, int, float, tuple[str, ...]]]:
    """The pass@k numbers of a summary: (JSON path, k, value, labels naming the run)."""
    out: list = []
    for key, value in doc.items() if isinstance(doc, dict) and len(path) < _DEPTH else ():
        if not isinstance(key, str):
            continue
        k, extra = _k_of(key, path)
        if k is not None and isinstance(value, (int, float)) and not isinstance(value, bool) \
                and 0 <= value <= 100:
            labels = tuple(p for p in (*path, *extra) if p.lower() not in _GENERIC)
            out.append(((*path, key), k, float(value), labels))
        elif isinstance(value, dict):
            out += numbers(value, (*path, key))
    return out


def _k_of(key: str, path: tuple) -> tuple[int | None, tuple[str, ...]]:
    m = SUMMARY_PASS_KEY.match(key)
    if m:
        return int(m.group("k")), tuple(x for x in (m.group("pre"), m.group("post")) if x)
    if path and path[-1].lower() in ("pass@k", "pass_at_k") and key.isdigit() and key != "0":
        return int(key), ()
    return None, ()


def _match(labels: tuple[str, ...], candidates: list, one_label_set: bool) -> tuple | None:
    if len(candidates) == 1 and one_label_set:
        return candidates[0]
    hits = [g for g in candidates if all(any(str(v) == x for _, v in g) for x in labels)]
    return hits[0] if labels and len(hits) == 1 else None


def use(summaries: list[tuple[str, object]], groups: dict[str, set], ctx: Context) -> list:
    """Stored numbers from the summaries that match a run of their folder; one note."""
    stored: list = []
    kept = []
    for file, doc in summaries:
        folder = os.path.dirname(os.path.abspath(file))
        candidates = sorted({g for archive, gs in groups.items()
                             if _folder(archive) == folder for g in gs}, key=repr)
        found = numbers(doc)
        percent = any(v > 1 for _, _, v, _ in found)
        one = len({labels for _, _, _, labels in found}) <= 1
        used = [StoredMetric(group, "pass@k", k, value / 100 if percent else value,
                             location(file, path=path), "percent" if percent else "fraction")
                for path, k, value, labels in found
                if (group := _match(labels, candidates, one)) is not None]
        if used:
            kept.append(f"{os.path.basename(file)} ({len(used)} pass@k number(s) kept for check)")
        stored += used
    more = f" and {len(summaries) - SHOWN} more" if len(summaries) > SHOWN else ""
    ctx.notes.append(f"skipped {len(summaries)} JSON file(s) that no reader recognizes "
                     "(summaries, configs; name a file to read it): "
                     + ", ".join(f for f, _ in summaries[:SHOWN]) + more
                     + (f"; used {', '.join(kept)}" if kept else ""))
    return stored


def _folder(archive: str) -> str:
    full = os.path.abspath(archive)
    if is_url(archive):  # a URL folder (a MultiPL-E run) is no local directory
        return os.path.dirname(full) if is_file(archive) else full
    return full if os.path.isdir(full) else os.path.dirname(full)
