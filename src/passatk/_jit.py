"""The one place that imports numba and sets the jit options of every kernel.

Kernels are compiled with ``cache=True`` and ``nogil=True`` and never with ``fastmath``:
the error-free transformations of the double-double arithmetic rely on exact IEEE rounding.
"""

import importlib
import os

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


def jit(*args, parallel=False, **kwargs):
    """``numba.njit`` with the project's options: cache, nogil, no fastmath."""
    opts = {"cache": True, "nogil": True, "fastmath": False, "error_model": "numpy"}
    opts["parallel"] = parallel
    opts.update(kwargs)
    return numba.njit(*args, **opts)


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
