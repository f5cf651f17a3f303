"""Units of work on a Dask cluster: a task per unit, retried when a worker is lost."""

import logging
import re
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from passatk._limits import check_worker_count
from passatk._show import show

RETRIES = 2  # a task that raises (a dropped connection) runs again; bad input is returned
_LOCAL = re.compile(r"local:(\d{1,4300})\Z")
_ADDRESS = re.compile(r"(tcp|tls|ucx|ws|wss|inproc)://\S+\Z")


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ValueError("a Dask scheduler needs the optional packages dask and distributed "
                         "(pip install 'passatk[dask]')") from None
    return distributed


def connect(scheduler: object) -> tuple[Any, Callable[[], None]]:
    """A Client for ``"local:N"``, ``"tcp://host:8786"`` or a Client, and what closes it."""
    if not isinstance(scheduler, str):
        if type(scheduler).__name__ == "Client" and isinstance(scheduler, _distributed().Client):
            return scheduler, lambda: None
        raise TypeError("scheduler must be an address str ('tcp://HOST:PORT', 'local:N') or "
                        f"a distributed.Client, got {type(scheduler).__name__}")
    text = scheduler.strip()
    if not (local := _LOCAL.match(text)) and not _ADDRESS.match(text):
        raise ValueError(f"scheduler must be 'tcp://HOST:PORT' or 'local:N', got {show(scheduler)}")
    if local:  # checked before anything starts: a huge N would build its worker specs first
        workers = check_worker_count(int(local.group(1)) or 1, "the N of scheduler 'local:N'")
        distributed = _distributed()
        if int(local.group(1)) < 1:
            raise ValueError(f"scheduler 'local:N' needs N >= 1, got {scheduler!r}")
        cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                           processes=True, dashboard_address=":0",
                                           silence_logs=logging.ERROR)
        client = distributed.Client(cluster)
        return client, lambda: (client.close(), cluster.close())
    try:
        client = _distributed().Client(text, timeout="10s")
    except (OSError, TimeoutError) as e:
        raise ValueError(f"cannot connect to the Dask scheduler at {text}: "
                         f"{' '.join(str(e).split())}") from None
    return client, client.close


def map_dask(fn: Callable[[Any], Any], units: Sequence[Any], *, scheduler: object,
             progress: Callable[[int, int], None] | None = None) -> list[Any]:
    """``[fn(u) for u in units]``, a Dask task per unit; ``progress(done, total)`` in tasks."""
    client, close = connect(scheduler)
    run = uuid.uuid4().hex[:12]
    try:
        futures = [client.submit(fn, unit, key=f"passatk-part-{run}-{i}", pure=False,
                                 retries=RETRIES) for i, unit in enumerate(units)]
        try:
            for done, _ in enumerate(_distributed().as_completed(futures), start=1):
                if progress is not None:
                    progress(done, len(futures))
            return [f.result() for f in futures]
        except (OSError, ValueError, TypeError):
            raise
        except Exception as e:  # KilledWorker, CancelledError, ...: one line, not a traceback
            raise OSError(f"the Dask run failed: {type(e).__name__}: "
                          f"{' '.join(str(e).split())[:300]}") from None
        finally:
            client.cancel(futures)
    finally:
        close()
