"""Archives that repeat one another under ``merge=True``: refused, not counted twice.

A folder that holds a merged file and the shards it was made from (as MapCoder-style
harnesses leave it), or the same run copied, double-counts when pooled: one sample per task
becomes two, and pass@2 is reported for a run that has none. An archive A repeats others when
every (group, task) of the archives that share a task with A is in A, and A's n and c are
their sums for every task: A is their union (a copy is the union of one). Shards of one run
that split the samples of each task in turn never pass this test unless their counts agree
on every task, which ``merge="allow-duplicates"`` accepts.
"""

from __future__ import annotations

from collections import defaultdict

from passatk.archives.counts import Tally
from passatk.archives.errors import ArchiveError
from passatk.archives.io.opening import is_regular, logical_name, open_binary
from passatk.errors import Message, Option

SHOWN = 5
#: shared hashes whose records are held at once while one is confirmed on the bytes
BATCH = 1024


def check_overlap(runs: dict[str, Tally]) -> None:
    """Raise ArchiveError when one archive's counts are the union of others' (see above)."""
    owners: dict = defaultdict(list)  # (group, task) -> indices of the archives that have it
    archives = list(runs)
    for i, archive in enumerate(archives):
        for key in runs[archive]:
            owners[key].append(i)
    for i, archive in enumerate(archives):
        others = sorted({j for key in runs[archive] for j in owners[key] if j != i})
        if others and _is_union(runs[archive], [runs[archives[j]] for j in others]):
            raise ArchiveError(archive, _message([archives[j] for j in others]))


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


def _message(others: list[str]) -> Message:
    shown = ", ".join(others[:SHOWN]) + (f" and {len(others) - SHOWN} more"
                                         if len(others) > SHOWN else "")
    what = "as" if len(others) == 1 else "as these together:"
    return Message(f"holds the same tasks and samples {what} {shown} (a merged file beside "
                   "its shards, or a copy?); pooled, they would count every sample twice. "
                   "Leave one out, or pass ", Option("merge", "allow-duplicates"),
                   " if the repeats are real samples")


def check_repeated_records(files: list[str], runs: dict[str, Tally]) -> None:
    """Raise ArchiveError when a JSON Lines record appears byte for byte in two archives of
    ``runs`` (each a file of ``files``) that share a (group, task): JSON Lines files and
    objects that can be read again (not standard input or a pipe), blank lines aside.
    Archives that share no (group, task), such as two lm-eval tasks or runs kept apart by a
    path spec in ``by``, pool nothing twice whatever their records.

    Two samples may be the same text (a short completion, greedy decoding), but a record
    repeated across shards is what overlapping shards look like, and pooled it counts twice:
    ``merge="allow-duplicates"`` says the repeats are real samples. Memory: 8 bytes per line
    (one hash), never the records; a shared hash is confirmed on the bytes before it is named.
    """
    import numpy as np

    lines = [f for f in files if f in runs and is_regular(f)  # a URL is read again too
             and logical_name(f).endswith((".jsonl", ".ndjson"))]
    if len(lines) < 2:
        return
    per_file = [h[(h != hash(b"")) & (h != hash(b"\r"))] for h in map(_line_hashes, lines)]
    owner = np.concatenate([np.full(len(h), i) for i, h in enumerate(per_file)])
    every = np.concatenate(per_file)
    order = np.argsort(every, kind="stable")
    every, owner = every[order], owner[order]  # a hash's files in increasing order
    starts = np.flatnonzero(np.r_[True, every[1:] != every[:-1]])
    length = np.diff(np.r_[starts, len(every)])
    starts, length = starts[length > 1], length[length > 1]
    apart: dict = {}  # (a, b) -> whether the two archives share no (group, task)
    for x, y in ((i, j) for j in range(1, int(length.max(initial=1))) for i in range(j)):
        at = starts[length > y]  # the hashes held by at least y + 1 files
        key = owner[at + x] * len(lines) + owner[at + y]
        for k in np.unique(key).tolist():
            a, b = divmod(k, len(lines))
            if apart.setdefault((a, b), not _share_a_task(runs[lines[a]], runs[lines[b]])):
                continue
            found = _first_repeat(lines[a], lines[b], every[at[key == k]].tolist())
            if found is not None:
                both = np.intersect1d(per_file[a], per_file[b], assume_unique=True).size
                raise ArchiveError(lines[b], _repeat_message(lines[a], found[1], both),
                                   line=found[0])


def _share_a_task(one: Tally, other: Tally) -> bool:
    small, large = (one, other) if len(one) <= len(other) else (other, one)
    have = set(small)  # rows and the table readers' blocks (Tally.find sees rows only)
    return any(key in have for key in large)


def _first_repeat(first: str, later: str, shared: list[int]) -> tuple[int, int] | None:
    """(line in ``later``, line in ``first``) of the first record of ``later`` that ``first``
    holds byte for byte, among lines whose hash is in ``shared``; None when every shared hash
    was a collision. Holds at most ``BATCH`` records at once."""
    for at in range(0, len(shared), BATCH):
        wanted = set(shared[at:at + BATCH])
        held = {}
        for number, line in _lines(first):
            if hash(line) in wanted:
                held.setdefault(line, number)
        for number, line in _lines(later):
            if hash(line) in wanted and line in held and line.strip():
                return number, held[line]
    return None


def _repeat_message(first: str, line: int, shared: int) -> Message:
    return Message(f"this record is also {first}:{line}, byte for byte ({shared} distinct "
                   "record(s) appear in both); pooled by merge, a repeated record counts "
                   "twice (overlapping shards, or a merged file beside a shard?). Leave one "
                   "out, or pass ", Option("merge", "allow-duplicates"),
                   " if the repeats are real samples")


def _lines(file: str):
    """(1-based number, bytes) of each line of ``file``, without the newline."""
    number = 0
    with open_binary(file) as f:
        rest = b""
        while block := f.stream.read(1 << 23):
            block = rest + block
            cut = block.rfind(b"\n") + 1
            rest = block[cut:]
            for line in block[:cut].split(b"\n")[:-1]:
                number += 1
                yield number, line
        if rest:
            yield number + 1, rest


def _line_hashes(file: str):
    import numpy as np

    out = []
    with open_binary(file) as f:
        rest = b""
        while block := f.stream.read(1 << 23):
            block = rest + block
            cut = block.rfind(b"\n") + 1
            rest = block[cut:]
            out.append(np.fromiter(map(hash, block[:cut].split(b"\n")), dtype=np.int64))
        if rest:
            out.append(np.array([hash(rest)], dtype=np.int64))
    return np.unique(np.concatenate(out)) if out else np.zeros(0, dtype=np.int64)
