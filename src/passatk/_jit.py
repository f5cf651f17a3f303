"""The one place that imports numba and sets the jit options of every kernel.

Kernels are compiled with ``cache=True`` and ``nogil=True`` and never with ``fastmath``:
the error-free transformations of the double-double arithmetic rely on exact IEEE rounding.
"""

import importlib
import os
import warnings

import numba
import numba.extending


def _threadsafe_layer_available():
    for name in ("numba.np.ufunc.omppool", "numba.np.ufunc.tbbpool"):
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        return True
    return False


# The default "workqueue" layer aborts the process when two Python threads enter a parallel
# kernel at once; training loops do exactly that. "threadsafe" picks TBB or OpenMP. Without
# either (no libgomp, no tbb package), numba's default stays; docs/api.md says what that means.
if "NUMBA_THREADING_LAYER" not in os.environ and _threadsafe_layer_available():
    numba.config.THREADING_LAYER = "threadsafe"

prange = numba.prange
get_num_threads = numba.get_num_threads
set_num_threads = numba.set_num_threads

# GNU OpenMP aborts a fork()ed child at its first parallel region when the parent had started
# its threads ("fork() called from a process already using GNU OpenMP"), and a multiprocessing
# Pool then hangs. Such a child runs the serial kernels instead (same results, one thread).
_threads_usable = True


def _after_fork_in_child():
    global _threads_usable
    try:
        layer = numba.threading_layer()
    except ValueError:  # the parent never started numba's threads: the child may
        return
    if layer == "omp":
        _threads_usable = False


os.register_at_fork(after_in_child=_after_fork_in_child)


def threads_usable():
    """False in a forked child whose parent started OpenMP threads: use the serial kernels."""
    return _threads_usable


# cache=True needs a writable __pycache__ or user cache directory. A read-only install with an
# unwritable HOME has neither; numba then raises at decoration time, so compile in memory.
_cache_ok = True
_NO_CACHE_NOTE = (
    "numba cannot write its cache ({}); passatk's kernels are compiled in memory for this "
    "process. Set NUMBA_CACHE_DIR to a private writable directory to keep them."
)


def jit(*args, parallel=False, **kwargs):
    """``numba.njit`` with the project's options: cache, nogil, no fastmath."""
    opts = {"cache": _cache_ok, "nogil": True, "fastmath": False, "error_model": "numpy"}
    opts["parallel"] = parallel
    opts.update(kwargs)
    if args and callable(args[0]):
        return _njit(args[0], opts)
    return lambda func: _njit(func, opts)


def _njit(func, opts):
    global _cache_ok
    try:
        return numba.njit(**opts)(func)
    except RuntimeError as exc:
        if not opts["cache"] or "no locator available" not in str(exc):
            raise
    _cache_ok = False
    warnings.warn_explicit(_NO_CACHE_NOTE.format("no writable cache directory"),
                           RuntimeWarning, "passatk", 0, module="passatk")
    return numba.njit(**{**opts, "cache": False})(func)


@numba.extending.intrinsic
def _fma(typingctx, a, b, c):
    sig = numba.types.float64(numba.types.float64, numba.types.float64, numba.types.float64)

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return sig, codegen


@jit(inline="always")
def fma(a, b, c):
    """a * b + c with one rounding (llvm.fma: the FMA instruction, or libm's exact fma)."""
    return _fma(float(a), float(b), float(c))
