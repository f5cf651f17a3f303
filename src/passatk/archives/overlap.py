"""Archives that repeat one another under ``merge=True`` (a merged file beside its shards, a
copied run): refused, not counted twice (docs/formats.md, "Several archives")."""

from collections import defaultdict
from collections.abc import Iterator

from passatk.archives.counts import Tally
from passatk.archives.errors import ArchiveError
from passatk.archives.io.lines import blocks
from passatk.archives.io.opening import is_regular, logical_name, open_binary
from passatk.errors import Message, Option

SHOWN = 5
#: shared hashes whose records are held at once while one is confirmed on the bytes
BATCH = 1024
_FIX = ("Leave one out, or pass ", Option("merge", "allow-duplicates"),
        " if the repeats are real samples")


def check_overlap(runs: dict[str, Tally]) -> None:
    """Raise ArchiveError when an archive's counts are the union of those that share a task."""
    owners: dict = defaultdict(list)  # (group, task) -> indices of the archives that have it
    archives = list(runs)
    for i, archive in enumerate(archives):
        for key in runs[archive]:
            owners[key].append(i)
    for i, archive in enumerate(archives):
        others = sorted({j for key in runs[archive] for j in owners[key] if j != i})
        if others and _is_union(runs[archive], [runs[archives[j]] for j in others]):
            names = ", ".join(archives[j] for j in others[:SHOWN]) + (
                f" and {len(others) - SHOWN} more" if len(others) > SHOWN else "")
            what = "as" if len(others) == 1 else "as these together:"
            raise ArchiveError(archive, Message(
                f"holds the same tasks and samples {what} {names} (a merged file beside its "
                "shards, or a copy?); pooled, they would count every sample twice. ", *_FIX))


def _is_union(whole: Tally, parts: list[Tally]) -> bool:
    sums: dict = {}
    have = set(whole)  # rows and the pyarrow readers' blocks (Tally.find sees rows only)
    for part in parts:
        for key, (n, c) in part.items():
            if key not in have:
                return False  # a part holds a task the whole lacks: no union
            m, d = sums.get(key, (0, 0))
            sums[key] = (m + n, d + c)
    return all(sums.get(key) == (n, c) for key, (n, c) in whole.items())


def check_repeated_records(files: list[str], runs: dict[str, Tally]) -> None:
    """Raise ArchiveError when a JSON Lines record (not blank) is byte for byte in two archives
    that share a (group, task) and can be read again; one 8-byte hash per line is held."""
    import numpy as np
    lines = [f for f in files if f in runs and is_regular(f)  # a URL is read again too
             and logical_name(f).endswith((".jsonl", ".ndjson"))]
    if len(lines) < 2:
        return
    per_file = [np.unique(np.fromiter(map(hash, _lines(f)), np.int64)) for f in lines]
    per_file = [h[(h != hash(b"")) & (h != hash(b"\r"))] for h in per_file]
    every = np.concatenate(per_file)
    order = np.argsort(every, kind="stable")
    every = every[order]
    owner = np.repeat(np.arange(len(lines)), [len(h) for h in per_file])[order]  # increasing
    _, starts, length = np.unique(every, return_index=True, return_counts=True)
    starts, length = starts[length > 1], length[length > 1]
    apart: dict = {}  # (a, b) -> whether the two archives share no (group, task)
    for x, y in ((i, j) for j in range(1, int(length.max(initial=1))) for i in range(j)):
        at = starts[length > y]  # the hashes held by at least y + 1 files
        key = owner[at + x] * len(lines) + owner[at + y]
        for k in np.unique(key).tolist():
            a, b = divmod(k, len(lines))
            if apart.setdefault((a, b), _apart(runs[lines[a]], runs[lines[b]])):
                continue
            found = _first_repeat(lines[a], lines[b], every[at[key == k]].tolist())
            if found is not None:
                both = np.intersect1d(per_file[a], per_file[b], assume_unique=True).size
                raise ArchiveError(lines[b], Message(
                    f"this record is also {lines[a]}:{found[1]}, byte for byte ({both} "
                    "distinct record(s) appear in both); pooled by merge, a repeated record "
                    "counts twice (overlapping shards, or a merged file beside a shard?). ",
                    *_FIX), line=found[0])


def _apart(one: Tally, other: Tally) -> bool:
    small, large = sorted((one, other), key=len)
    return set(small).isdisjoint(large)  # rows and blocks (Tally.find sees rows only)


def _first_repeat(first: str, later: str, shared: list[int]) -> tuple[int, int] | None:
    """(line in ``later``, line in ``first``) of the first shared record; None: collisions."""
    for at in range(0, len(shared), BATCH):
        wanted = set(shared[at:at + BATCH])
        held: dict[bytes, int] = {}
        for number, line in enumerate(_lines(first), 1):
            if hash(line) in wanted:
                held.setdefault(line, number)
        for number, line in enumerate(_lines(later), 1):
            if hash(line) in wanted and line in held and line.strip():
                return number, held[line]
    return None


def _lines(file: str) -> Iterator[bytes]:
    """The lines of ``file``, without their newlines (hashed and kept: bytes)."""
    with open_binary(file) as f:
        for _, buf in blocks(f.stream, file):
            yield from bytes(buf).removesuffix(b"\n").split(b"\n")
