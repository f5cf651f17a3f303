"""``passatk warm``: compile, or load from the cache, every kernel, and say where it is kept.

Run once where passatk is installed (a Docker image build, a cluster image, a CI cache step):
every later process then loads the kernels instead of compiling them. The calls below go
through the public functions with inputs chosen to take every path (the exact small-input
path excepted), so the signatures compiled are the ones real calls use. Without
``NUMBA_CACHE_DIR`` and with a writable install, the kernels are kept in the package's
``__pycache__``, which later processes read even when the install is read-only and
``NUMBA_CACHE_DIR`` points elsewhere (docs/benchmarks.md, "Issue 20").
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable

__all__ = ["GROUPS", "warm"]

_BIG = 1 << 15  # above _api's serial cut-off: the threaded kernels


def _pass_at_k() -> None:
    import numpy as np

    import passatk

    rng = np.random.default_rng(0)
    few = np.full(_BIG, 200)
    spread = np.exp(rng.uniform(0.0, np.log(1e9), _BIG)).astype(np.int64) + 1
    for n in (few, spread, few[:100]):
        c = np.minimum(rng.integers(0, 201, n.size), n)
        k = np.minimum(rng.choice([1, 10, 100], n.size), n)
        for func in (passatk.pass_at_k, passatk.pass_hat_k, passatk.fail_at_k):
            func(n, c, k)
    passatk.pass_at_k(2000, 13, 10)  # a Python-int triple above the exact path
    passatk.pass_at_k_curve(np.full(100, 2000), np.arange(100), 10)


def _stats() -> None:
    import numpy as np

    import passatk
    from passatk import stats

    rng = np.random.default_rng(1)
    for size in (300, 5000):  # the serial and the threaded resampling kernels
        n = np.full(size, 2000)
        c = rng.integers(0, 2001, size)
        for interval in stats.INTERVALS:
            clusters = np.arange(size) % 7 if interval == "cluster" else None
            passatk.score(n, c, [1, 10], interval=interval, clusters=clusters,
                          n_resamples=2000, seed=0)
        for metric in stats.METRICS:  # bayes@n is defined for k = 1 only
            passatk.score(n, c, [1] if metric == "bayes@n" else [1, 10], metric=metric,
                          interval="t")
        passatk.compare(n, c, n, np.minimum(c + 3, n), [1, 10], seed=0, n_resamples=2000)
        passatk.compare(n[:12], c[:12], n[:12], c[:12][::-1].copy(), 1, seed=0)
    passatk.task_variance(np.full(100, 2000), np.arange(100), 10)


def _rl() -> None:
    import numpy as np

    from passatk import rl
    from passatk.rl import _advantages

    rng = np.random.default_rng(2)
    for shape in ((8, 16), (512, 64)):
        binary = (rng.random(shape) < 0.4).astype(np.float32)
        cont = rng.random(shape).astype(np.float32)
        for est in _advantages.ESTIMATORS:
            for norm in _advantages.NORMALIZE:
                if est == "grpo-passk" and norm != "none":
                    continue
                rl.advantages(binary, k=4, estimator=est, normalize=norm)
                rl.advantages(cont, k=4, estimator=est, normalize=norm)
        rl.group_metrics(binary)  # the default k ladder and metrics
        rl.group_metrics(cont, threshold=0.5)
        rl.group_metrics(binary.astype(bool), k=2)
        rl.advantages(binary.astype(np.float64), k=4)
        labels = np.repeat(np.arange(shape[0]), shape[1])
        rl.advantages(binary.reshape(-1), labels, k=2)
        answers = rng.integers(0, 4, shape)
        for estimator in ("unbiased", "verl"):
            rl.group_metrics(binary, k=[1, 4], metrics="all", answers=answers,
                             estimator=estimator)
            rl.group_metrics(cont, k=[1, 4], threshold=0.5, metrics="all", answers=answers,
                             estimator=estimator)


#: the groups of ``passatk warm --only``
GROUPS: dict[str, Callable[[], None]] = {"pass_at_k": _pass_at_k, "stats": _stats, "rl": _rl}


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def warm(groups: tuple[str, ...] = tuple(GROUPS)) -> dict:
    """Run the calls of ``groups``; return what was compiled, loaded and where.

    Returns a dict: ``kernels`` (jitted functions with a signature now), ``signatures``,
    ``loaded`` and ``compiled`` (signatures from the cache, and compiled here),
    ``cpu_s`` and ``wall_s`` (this process), ``cache`` (the folders written to),
    ``package_cache`` (the package's ``__pycache__``) and ``shipped`` (a line on the shipped
    kernel cache, ``data/kernel_cache.zip``).
    """
    from . import _jit

    cpu, wall = _cpu(), time.perf_counter()
    _jit.start()
    for name in groups:
        GROUPS[name]()
    disps = [d for d in _jit.dispatchers() if hasattr(d, "signatures")]
    sigs = loaded = 0
    folders = set()
    for disp in disps:
        sigs += len(disp.signatures)
        loaded += sum(disp.stats.cache_hits.values())
        if disp.signatures and getattr(disp, "_cache", None) is not None:
            path = getattr(disp._cache, "cache_path", None)
            if path:
                folders.add(path)
    return {
        "kernels": sum(1 for d in disps if d.signatures), "signatures": sigs,
        "loaded": loaded, "compiled": sigs - loaded,
        "cpu_s": _cpu() - cpu, "wall_s": time.perf_counter() - wall,
        "cache": sorted(folders), "package_cache": _jit.package_cache_dir(),
        "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR") or None,
        "shipped": _shipped(_jit),
    }


def _shipped(jit) -> str:
    """The shipped kernel cache's line: where it is, or why this process does not read it."""
    manifest = jit.shipped_manifest()
    if manifest is None:
        return f"no shipped kernel cache ({jit.SHIPPED_CACHE} is absent)"
    why = jit.shipped_usable(manifest)
    where = f"shipped kernel cache ({manifest['magic'][1]}): {jit.SHIPPED_CACHE}"
    return f"{where}, not read here: {why}" if why else f"{where}, read when the above miss"


def describe(result: dict) -> list[str]:
    """The lines ``passatk warm`` prints."""
    lines = [
        f"{result['kernels']} kernels, {result['signatures']} signatures: "
        f"{result['loaded']} loaded from the cache, {result['compiled']} compiled; "
        f"{result['cpu_s']:.1f} s CPU, {result['wall_s']:.1f} s wall"
    ]
    for path in result["cache"]:
        lines.append(f"cache: {path}")
    if result["package_cache"] not in result["cache"]:
        lines.append(f"(the package's own cache, read when the above misses: "
                     f"{result['package_cache']})")
    if result.get("shipped"):
        lines.append(result["shipped"])
    return lines
