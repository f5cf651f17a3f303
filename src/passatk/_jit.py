"""The one place that imports numba and sets the jit options of every kernel.

Kernels are compiled with ``cache=True`` and ``nogil=True`` and never with ``fastmath``:
the error-free transformations of the double-double arithmetic rely on exact IEEE rounding.

numba is imported at the first call of a kernel, not when a kernel module is imported, so
that a command that computes nothing (``--help``), or only small inputs (the exact path of
``_api``), never pays numba's 0.3-0.5 s start. Until then :func:`jit` hands out
:class:`Kernel` placeholders; the first call of any of them (:func:`start`) imports numba,
makes every placeholder a numba dispatcher and puts the dispatchers in place of the
placeholders in passatk's modules, so that kernels calling kernels see dispatchers.

The cache, in this order: numba's own choice (``NUMBA_CACHE_DIR``, else the package's
``__pycache__`` when writable, else numba's user-wide folder); the package's ``__pycache__``
read-only, where ``passatk warm`` (run once per install, e.g. in a Docker image build) leaves
every kernel; then the shipped cache, ``data/kernel_cache.zip``, every kernel built for the
CPU level x86-64-v3 by ``python -m passatk._ship``, so that a fresh install compiles nothing
(``PASSATK_SHIPPED_CACHE=0`` leaves it out). The entries are keyed on the source's content
hash, the signature and the CPU, not on the install path, so a read-only install finds them.
"""

import importlib
import io
import os
import pickle
import sys
import threading
import warnings

_numba = None  # the numba module, once imported
_started = False  # every placeholder is a dispatcher (set last, under the lock)
_lock = threading.RLock()
_kernels = []  # every Kernel placeholder made before the start
_dispatchers = []  # every dispatcher made, for ``passatk warm``


class _Prange:
    """Stands for ``numba.prange`` until numba is started (then replaced in the modules)."""

    def __call__(self, *args):
        return range(*args)


prange = _Prange()


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
# The layer is chosen at passatk's first parallel call, not at import, so that importing passatk
# leaves the process's numba alone; an explicit choice (environment or numba.config) is kept.
_layer_chosen = False


def _choose_threading_layer():
    global _layer_chosen
    numba = start()
    _layer_chosen = True
    if "NUMBA_THREADING_LAYER" in os.environ or numba.config.THREADING_LAYER != "default":
        return
    try:
        numba.threading_layer()
        return  # threads were launched already (by other code): the layer is fixed
    except ValueError:
        pass
    if _threadsafe_layer_available():
        numba.config.THREADING_LAYER = "threadsafe"


def get_num_threads():
    """``numba.get_num_threads()`` (starts numba)."""
    return start().get_num_threads()


def set_num_threads(n):
    """``numba.set_num_threads(n)`` (starts numba)."""
    return start().set_num_threads(n)


# GNU OpenMP aborts a fork()ed child at its first parallel region when the parent had started
# its threads ("fork() called from a process already using GNU OpenMP"), and a multiprocessing
# Pool then hangs. Such a child runs the serial kernels instead (same results, one thread).
_threads_usable = True


def _after_fork_in_child():
    global _threads_usable
    numba = sys.modules.get("numba")
    if numba is None:
        return
    try:
        layer = numba.threading_layer()
    except ValueError:  # the parent never started numba's threads: the child may
        return
    if layer == "omp":
        _threads_usable = False


os.register_at_fork(after_in_child=_after_fork_in_child)


def threads_usable():
    """False in a forked child whose parent started OpenMP threads: use the serial kernels.

    Called before every parallel kernel; the first call chooses the threading layer.
    """
    if not _layer_chosen:
        _choose_threading_layer()
    return _threads_usable


# cache=True needs a writable __pycache__ or user cache directory. A read-only install with an
# unwritable HOME has neither; numba then raises at decoration time, so compile in memory.
_cache_ok = True
_NO_CACHE_NOTE = (
    "numba cannot write its cache ({}); passatk's kernels are compiled in memory for this "
    "process. Set NUMBA_CACHE_DIR to a private writable directory to keep them."
)


class Kernel:
    """A kernel before numba is started: calling it starts numba, then calls the kernel.

    After the start every module of passatk holds the dispatcher instead, so this object is
    only called through references taken before (``f = module.kernel``).
    """

    def __init__(self, func, opts):
        self.py_func = func
        self.opts = opts
        self.dispatcher = None
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__module__ = func.__module__
        self.__doc__ = func.__doc__
        self.__wrapped__ = func

    def __call__(self, *args):
        if self.dispatcher is None:
            start()
        return self.dispatcher(*args)

    def __getattr__(self, name):  # signatures, stats, inspect_*: those of the dispatcher
        if name.startswith("__"):
            raise AttributeError(name)
        if self.dispatcher is None:
            start()
        return getattr(self.dispatcher, name)


def jit(*args, parallel=False, **kwargs):
    """``numba.njit`` with the project's options: cache, nogil, no fastmath.

    Before numba is started it returns a :class:`Kernel` placeholder.
    """
    opts = {"cache": True, "nogil": True, "fastmath": False, "error_model": "numpy"}
    opts["parallel"] = parallel
    opts.update(kwargs)
    if args and callable(args[0]):
        return _make(args[0], opts)
    return lambda func: _make(func, opts)


def _make(func, opts):
    with _lock:
        if _started:
            return _njit(func, opts)
        kernel = Kernel(func, opts)
        _kernels.append(kernel)
        return kernel


def start():
    """Import numba and turn every :class:`Kernel` placeholder into its dispatcher; returns
    the numba module. Cheap once started."""
    if _started:
        return _numba
    with _lock:
        if not _started:
            _start()
    return _numba


def _start():
    global _numba, _started, prange
    import numba
    import numba.extending

    g = globals()
    g["_fma"] = numba.extending.intrinsic(_fma_intrinsic)
    prange_placeholder = prange
    prange = numba.prange
    _numba = numba
    for kernel in _kernels:
        kernel.dispatcher = _njit(kernel.py_func, kernel.opts)
    swap = {id(k): k.dispatcher for k in _kernels}
    swap[id(prange_placeholder)] = numba.prange
    homes = {k.py_func.__module__ for k in _kernels}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "passatk" or name.startswith("passatk.")
                                  or name in homes):
            continue
        space = vars(module)
        for key, value in list(space.items()):
            new = swap.get(id(value))
            if new is not None:
                space[key] = new
    _kernels.clear()
    _started = True


def dispatchers():
    """Every numba dispatcher passatk made so far (after :func:`start`)."""
    return list(_dispatchers)


def _njit(func, opts):
    disp = _njit_one(func, opts)
    _dispatchers.append(disp)
    return disp


def _njit_one(func, opts):
    global _cache_ok
    numba = _numba
    opts = {**opts, "cache": opts["cache"] and _cache_ok}
    if not opts["cache"]:
        return numba.njit(**opts)(func)
    try:
        disp = numba.njit(**opts)(func)
    except RuntimeError as exc:
        if "no locator available" not in str(exc):
            raise
    else:
        if hasattr(disp, "_cache"):  # not under NUMBA_DISABLE_JIT (a plain function then)
            disp._cache = _layered_cache(disp._cache, func)
        return disp
    _cache_ok = False
    warnings.warn_explicit(_NO_CACHE_NOTE.format("no writable cache directory"),
                           RuntimeWarning, "passatk", 0, module="passatk")
    return numba.njit(**{**opts, "cache": False})(func)


def package_cache_dir():
    """The package's ``__pycache__``, where ``passatk warm`` leaves the kernels for every
    later process (read-only is fine for loading)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")


def _layered_cache(cache, func):
    """numba's cache of ``func``, which on a miss also reads the package's ``__pycache__``
    (built for this CPU by ``passatk warm``), then the shipped cache (a named CPU)."""
    from numba.core.caching import IndexDataCacheFile

    tree = os.path.join(os.path.dirname(os.path.abspath(func.__code__.co_filename)),
                        "__pycache__")
    impl = cache._impl
    own = os.path.realpath(tree) == os.path.realpath(cache.cache_path)
    shipped = None if own else IndexDataCacheFile(tree, impl.filename_base,
                                                  impl.locator.get_source_stamp())
    own_load = cache._load_overload

    def load(sig, target_context):
        data = own_load(sig, target_context)
        if data is not None or not cache._enabled:
            return data
        raw = None
        if shipped is not None:
            try:
                raw = shipped.load(cache._index_key(sig, target_context.codegen()))
            except (OSError, EOFError, ValueError, pickle.UnpicklingError):  # none, or partial
                raw = None
        if raw is None:
            raw = _shipped_entry(cache, func, sig, target_context.codegen())
        return None if raw is None else impl.rebuild(target_context, raw)

    cache._load_overload = load
    cache.shipped_path = tree
    return cache


# The shipped cache: every kernel compiled for a named CPU level (x86-64-v3: AVX2 and FMA, which
# the double-double arithmetic uses) by ``python -m passatk._ship``, in one zip of package data.
# numba keys an entry on the CPU that loads it; these entries are looked up under the CPU they
# were built for, and only where this processor has every feature that code may use, with the
# same numba, llvmlite and Python, and an unchanged kernel source (the index's content hash).
SHIPPED_CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                             "kernel_cache.zip")
_shipped = None  # (zipfile, manifest, pid) once opened; False when unusable here


def _shipped_archive():
    global _shipped
    # a forked child opens its own: a shared file offset would interleave the two's reads
    if _shipped is None or (_shipped and _shipped[2] != os.getpid()):
        with _lock:
            if _shipped is None or (_shipped and _shipped[2] != os.getpid()):
                _shipped = _open_shipped() or False
    return _shipped or None


def shipped_manifest(path=SHIPPED_CACHE):
    """The manifest of a shipped kernel cache (a dict), or None when there is none."""
    import json
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            return json.loads(archive.read("MANIFEST.json"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None


def shipped_usable(manifest):
    """Why the shipped cache of ``manifest`` cannot run in this process ('' when it can)."""
    import llvmlite
    import llvmlite.binding as ll

    numba = start()
    if os.environ.get("PASSATK_SHIPPED_CACHE", "1") == "0":
        return "PASSATK_SHIPPED_CACHE=0"
    if numba.config.CPU_NAME is not None or numba.config.CPU_FEATURES is not None:
        return "NUMBA_CPU_NAME or NUMBA_CPU_FEATURES is set"
    here = {"numba": numba.__version__, "llvmlite": llvmlite.__version__,
            "python": sys.implementation.cache_tag}
    for key, value in here.items():
        if manifest.get(key) != value:
            return f"built with {key} {manifest.get(key)}, this is {value}"
    host = ll.get_host_cpu_features()
    missing = [f for f in manifest["needs"] if not host.get(f, False)]
    return f"this CPU lacks {', '.join(missing)}" if missing else ""


def _open_shipped():
    import zipfile

    manifest = shipped_manifest()
    if manifest is None or shipped_usable(manifest):
        return None
    try:
        return zipfile.ZipFile(SHIPPED_CACHE), manifest, os.getpid()
    except (OSError, zipfile.BadZipFile):
        return None


def _member(func):
    """The zip member prefix of ``func``'s cache files: its folder in the package, its base."""
    root = os.path.dirname(os.path.abspath(__file__))
    folder = os.path.relpath(os.path.dirname(os.path.abspath(func.__code__.co_filename)), root)
    return "" if folder == "." else folder.replace(os.sep, "/") + "/"


def _shipped_entry(cache, func, sig, codegen):
    import zipfile
    import zlib

    shipped = _shipped_archive()
    if shipped is None:
        return None
    archive, manifest, _ = shipped
    magic = tuple(manifest["magic"])
    if codegen.magic_tuple()[0] != magic[0]:  # another target triple
        return None
    key = cache._index_key(sig, codegen)
    key = (key[0], magic, key[2])
    name = _member(func) + cache._impl.filename_base
    try:
        index = io.BytesIO(archive.read(name + ".nbi"))
        if pickle.load(index) != manifest["numba"]:
            return None
        stamp, overloads = pickle.loads(index.read())
        if stamp != cache._impl.locator.get_source_stamp() or key not in overloads:
            return None
        return pickle.loads(archive.read(_member(func) + overloads[key]))
    except (KeyError, OSError, EOFError, ValueError, pickle.UnpicklingError, zlib.error,
            zipfile.BadZipFile):  # none, or damaged: compiled instead
        return None


def write_shipped(path, needs):
    """Write every kernel compiled in this process, with its index, into the zip ``path``.

    Called by ``python -m passatk._ship`` in a process whose numba builds for a named CPU
    (``NUMBA_CPU_NAME``, ``NUMBA_CPU_FEATURES``) into an empty ``NUMBA_CACHE_DIR``; ``needs``
    is the list of CPU features that code may use. Returns the number of signatures written.
    """
    import json
    import zipfile

    import llvmlite

    numba = start()
    from numba.core.registry import cpu_target

    magic = cpu_target.target_context.codegen().magic_tuple()
    count = 0
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for disp in _dispatchers:
            cache = getattr(disp, "_cache", None)
            if not getattr(disp, "signatures", None) or cache is None:
                continue
            base = cache._impl.filename_base
            prefix = _member(disp.py_func)
            index = os.path.join(cache.cache_path, base + ".nbi")
            if not os.path.exists(index):
                continue
            archive.write(index, prefix + base + ".nbi")
            with open(index, "rb") as f:
                pickle.load(f)
                _, overloads = pickle.loads(f.read())
            for data in overloads.values():
                archive.write(os.path.join(cache.cache_path, data), prefix + data)
            count += len(overloads)
        manifest = {"numba": numba.__version__, "llvmlite": llvmlite.__version__,
                    "python": sys.implementation.cache_tag, "magic": list(magic),
                    "needs": list(needs), "signatures": count}
        archive.writestr("MANIFEST.json", json.dumps(manifest, indent=1))
    return count


def _fma_intrinsic(typingctx, a, b, c):
    numba = _numba
    sig = numba.types.float64(numba.types.float64, numba.types.float64, numba.types.float64)

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return sig, codegen


_fma = None  # numba's intrinsic of _fma_intrinsic, made at the start


@jit(inline="always")
def fma(a, b, c):
    """a * b + c with one rounding (llvm.fma: the FMA instruction, or libm's exact fma)."""
    return _fma(float(a), float(b), float(c))
