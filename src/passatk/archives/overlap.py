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
from passatk.archives.io.remote import is_url
from passatk.errors import Message, Option

SHOWN = 5


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


def repeated_records(files: list[str]) -> str | None:
    """A note when a JSON Lines record appears byte for byte in more than one of ``files``
    (local JSON Lines files only), else None.

    Not an error: two samples of a task may be the same text (a short completion, greedy
    decoding), but a record repeated across shards is what overlapping shards look like.
    Memory: 8 bytes per line (one hash), never the records.
    """
    import numpy as np

    lines = [f for f in files if logical_name(f).endswith((".jsonl", ".ndjson"))
             and is_regular(f) and not is_url(f)]
    if len(lines) < 2:
        return None
    blank = np.array([hash(b""), hash(b"\r")], dtype=np.int64)
    per_file = [np.setdiff1d(_line_hashes(f), blank) for f in lines]  # unique, sorted
    owner = np.concatenate([np.full(len(h), i) for i, h in enumerate(per_file)])
    every = np.concatenate(per_file)
    order = np.argsort(every, kind="stable")
    every, owner = every[order], owner[order]
    shared = np.flatnonzero(every[1:] == every[:-1])
    if not len(shared):
        return None
    pairs: dict = defaultdict(int)
    for i in shared.tolist():
        pairs[(int(owner[i]), int(owner[i + 1]))] += 1
    shown = ", ".join(f"{lines[a]} and {lines[b]} ({k})" for (a, b), k in
                      sorted(pairs.items(), key=lambda x: -x[1])[:3])
    return (f"{len(shared)} distinct record(s) appear byte for byte in more than one archive "
            f"pooled by merge: {shown}; if these are repeats rather than real samples, leave "
            "one archive out")


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
