"""Inspect AI logs: ``.eval`` (a zip archive of JSON) and ``.json`` (one ``EvalLog``).

As Inspect's log format documents them: a ``.json`` log is ``{"version", "status", "eval":
{"task", "model", ...}, "results", "samples": [{"id", "epoch", "scores": {scorer: {"value",
...}}, ...}]}``; a ``.eval`` log holds the same header in ``header.json`` (``_journal/start.json``
while the run is going) and each sample in ``samples/<id>_epoch_<epoch>.json``. n = the epochs
of a sample; every row carries the group fields ``task`` and ``model`` (from the header) and
``scorer``. A score passes when its value is ``"C"`` (Inspect's CORRECT) or ``true``; ``"I"``
and ``"N"`` fail; ``"P"`` (partial, 0.5) and other numbers need ``threshold`` (value >=
threshold), except the flags 0 and 1.
"""

from __future__ import annotations

import contextlib
import io
import lzma
import math
import shutil
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from typing import Any

import msgspec

from passatk.archives.context import BadRecord, Context, group_from, path_groups, task_id
from passatk.archives.errors import ArchiveError
from passatk.archives.harnesses._writers import WriteOptions, atomic_stream
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.opening import ZIP_MAGIC, max_record_bytes, open_binary
from passatk.archives.io.views import decoded, view
from passatk.errors import Message, Option

_LETTERS = {"C": 1.0, "I": 0.0, "N": 0.0, "P": 0.5}  # Inspect's CORRECT, INCORRECT, ...
_Value = str | bool | int | float | list | dict | None


class _Spec(msgspec.Struct):
    task: str
    model: str


class _Header(msgspec.Struct):
    eval: _Spec
    status: str | None = None  # absent from _journal/start.json: the run was not finished


def _status_note(file: str, ctx: Context, status: str | None) -> None:
    if status != "success":
        said = f"status {status!r}" if status else "no header.json (the run did not finish)"
        ctx.notes.append(f"{file}: an Inspect log with {said}: only the samples it holds "
                         "are counted")


class _Score(msgspec.Struct):
    value: _Value = None


class _Sample(msgspec.Struct):
    id: str | int
    epoch: int
    scores: dict[str, _Score] | None = None
    error: Any = None


def _passed(value: object, threshold: float | None) -> bool:
    x = _LETTERS.get(value, value) if isinstance(value, str) else value
    if isinstance(x, bool):
        return x
    if not isinstance(x, (int, float)) or isinstance(x, str):
        raise BadRecord(f"a score value must be \"C\", \"I\", \"P\", \"N\", true/false or a "
                        f"number, got {value!r}"[:160], ("value",))
    if threshold is not None:
        if not math.isfinite(x):
            raise BadRecord(f"a score value must be finite, got {value!r}", ("value",))
        return x >= threshold
    if x in (0, 1):
        return x == 1
    raise BadRecord(Message(f"score value {value!r} is neither correct nor incorrect; give ",
                            Option("threshold"), " (a sample passes when value >= it)"),
                    ("value",))


def _group_base(file: str, header: object) -> tuple:
    try:
        spec = view(header, _Header).eval
    except BadRecord as e:
        raise ArchiveError(file, e.what, path=e.path) from None
    return (("task", spec.task), ("model", spec.model))


def _add_sample(ctx: Context, sample: _Sample, pathvals: dict, base: tuple) -> None:
    """Add one sample's scores to ``ctx``; raises BadRecord."""
    if not sample.scores:
        why = " (the sample ended with an error)" if sample.error else ""
        raise BadRecord(f"sample {sample.id!r} epoch {sample.epoch} has no scores{why}")
    task = task_id(sample.id, "id")
    o = ctx.options
    rows = []
    for scorer, score in sample.scores.items():
        try:
            ok = _passed(score.value, o.threshold)
        except BadRecord as e:
            raise BadRecord(e.what, ("scores", scorer, *(e.path or ()))) from None
        extras = (*base, ("scorer", scorer))
        rows.append((group_from(o.by, pathvals, {"epoch": sample.epoch}, extras, "sample"),
                     ok))
    for group, ok in rows:  # all or nothing: a bad scorer skips the whole sample
        ctx.add(group, task, 1, int(ok))


def _log_summary(file: str, doc: object) -> str | None:
    if _is_header(doc) and not isinstance(doc.get("samples"), list):
        return ("an Inspect log without samples (written with --no-log-samples, or a header): "
                "only aggregate results; passatk needs the samples")
    return None


def _spec(doc: dict) -> dict:
    """``task`` and ``model`` of the header's ``eval``; a streamed object (``eval`` is
    streamed for EvalPlus) is read only until both are found, near the file's start."""
    out = {}
    for key, value in doc["eval"].items():
        if key in ("task", "model"):
            out[key] = value
            if len(out) == 2:
                break
    return out


def _is_header(doc: object) -> bool:
    if not (isinstance(doc, dict) and "status" in doc and "version" in doc
            and isinstance(doc.get("eval"), dict)):
        return False
    spec = _spec(doc)
    return isinstance(spec.get("task"), str) and isinstance(spec.get("model"), str)


def matches(doc: object, file: str = "") -> bool:
    return _is_header(doc) and isinstance(doc.get("samples"), list)


class View(msgspec.Struct):
    """The typed view of a whole ``.json`` log: the messages and events are skipped."""

    version: msgspec.Raw
    status: _Value
    eval: _Spec
    samples: list[_Sample]


_DECODER = msgspec.json.Decoder(View)


def typed_view(data: bytes) -> View | None:
    """The typed view of an Inspect ``.json`` log; None when the bytes are not (cleanly) one,
    not tried without "epoch" in the first MiB."""
    if data.find(b'"epoch"', 0, 1 << 20) < 0:
        return None
    try:
        return _DECODER.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return None


def read_json(file: str, ctx: Context, doc: dict | View) -> None:
    ctx.set_metric("pass@k", file)
    typed = isinstance(doc, View)
    base = (("task", doc.eval.task), ("model", doc.eval.model)) if typed else \
        _group_base(file, {"eval": _spec(doc)})
    status = doc.status if typed else doc.get("status")
    _status_note(file, ctx, status if isinstance(status, str) else "?")
    pathvals = path_groups(ctx.options.by, file)
    for i, raw in enumerate(doc.samples if typed else doc["samples"]):
        try:
            _add_sample(ctx, raw if typed else view(raw, _Sample), pathvals, base)
        except BadRecord as e:
            ctx.bad(file, e.what, path=("samples", i, *(e.path or ())))


# ------------------------------------------------------------------ .eval (zip)
def probe_zip(head: bytes, file: str = "") -> bool:
    """The first member of an Inspect ``.eval`` zip is ``_journal/...``, ``header.json`` or a
    sample (from the local file header's name field)."""
    if not head.startswith(ZIP_MAGIC) or len(head) < 30:
        return False
    size = int.from_bytes(head[26:28], "little")
    name = head[30:30 + size].decode("utf-8", "replace")
    return name.startswith(("_journal/", "samples/")) or name in ("header.json",
                                                                  "summaries.json")


@contextlib.contextmanager
def _seekable(file: str) -> Iterator[Any]:
    """A seekable binary file of the zip: the file itself, or a spooled copy on disk (a pipe,
    a compressed file)."""
    with open_binary(file) as f:
        if f.compression is None and f.stream.seekable():
            yield f.stream
            return
        with tempfile.TemporaryFile() as spool:
            shutil.copyfileobj(f.stream, spool, 1 << 20)
            spool.seek(0)
            yield spool


ZIP_ZSTANDARD = 93  # the method Inspect writes with (zipfile_zstd; the stdlib from 3.14)
_UNREADABLE = (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, EOFError,
               ValueError, zlib.error, lzma.LZMAError)


def _member(file: str, z: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, at most the record-length cap (a zip bomb stops there)."""
    cap = max_record_bytes()
    if info.file_size > cap:
        raise ArchiveError(file, f"member {info.filename} is {info.file_size} bytes, over the "
                           f"record-length cap of {cap} (PASSATK_MAX_RECORD_BYTES)")
    try:
        if info.compress_type == ZIP_ZSTANDARD and ZIP_ZSTANDARD not in _stdlib_methods():
            data = _zstd_member(file, z, info, cap)
        else:
            with z.open(info) as f:
                data = f.read(cap + 1)
    except _UNREADABLE + _zstd_errors() as e:  # a corrupt, encrypted or unsupported member
        raise ArchiveError(file, f"member {info.filename}: cannot read it ({e})") from None
    if len(data) > cap:
        raise ArchiveError(file, f"member {info.filename} is over the record-length cap")
    return data


def _zstd_errors() -> tuple:
    """zstandard's error, once it is imported: a zipfile given zstd by another package
    (importing inspect_ai patches it in) raises it from ``z.open`` on a corrupt member."""
    zstandard = sys.modules.get("zstandard")
    return (zstandard.ZstdError,) if zstandard is not None else ()


def _stdlib_methods() -> set:
    return {getattr(zipfile, "ZIP_ZSTANDARD", None)} - {None}


def _zstd_member(file: str, z: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes:
    """A zstd member on Pythons whose zipfile lacks zstd: the raw bytes after the local
    header, decompressed by zstandard (passatk's zstd extra), the CRC checked."""
    import struct

    from passatk.archives.io.opening import _zstandard

    fp = z.fp
    fp.seek(info.header_offset)
    local = fp.read(30)
    if local[:4] != ZIP_MAGIC:
        raise zipfile.BadZipFile("bad local file header")
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    fp.seek(info.header_offset + 30 + name_len + extra_len)
    raw = fp.read(info.compress_size)
    zstandard = _zstandard(file)
    try:
        data = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True).read(
            cap + 1)
    except zstandard.ZstdError as e:
        raise zipfile.BadZipFile(f"cannot decompress: {e}") from None
    if len(data) <= cap and zlib.crc32(data) != info.CRC:
        raise zipfile.BadZipFile("CRC check failed")
    return data


_HEADER = msgspec.json.Decoder(_Header)
_SAMPLE = msgspec.json.Decoder(_Sample)


def _zip_header(file: str, ctx: Context, z: zipfile.ZipFile) -> tuple:
    names = set(z.namelist())
    for name in ("header.json", "_journal/start.json"):
        if name in names:
            try:
                header = decoded(_HEADER, _member(file, z, z.getinfo(name)))
            except BadRecord as e:
                raise ArchiveError(f"{file}: {name}", e.what, path=e.path) from None
            _status_note(file, ctx, header.status)
            return (("task", header.eval.task), ("model", header.eval.model))
    raise ArchiveError(file, "a zip archive without header.json or _journal/start.json is no "
                       "Inspect log")


def read_zip(file: str, ctx: Context) -> None:
    ctx.set_metric("pass@k", file)
    pathvals = path_groups(ctx.options.by, file)
    with _seekable(file) as raw:
        try:
            z = zipfile.ZipFile(raw)
        except _UNREADABLE as e:
            raise ArchiveError(file, f"not a readable zip archive ({e})") from None
        with z:
            base = _zip_header(file, ctx, z)
            for info in z.infolist():
                if info.filename.startswith("samples/") and info.filename.endswith(".json"):
                    _zip_sample(file, ctx, z, info, pathvals, base)


def _zip_sample(file: str, ctx: Context, z, info, pathvals: dict, base: tuple) -> None:
    where = f"{file}: {info.filename}"
    try:
        _add_sample(ctx, decoded(_SAMPLE, _member(file, z, info)), pathvals, base)
    except BadRecord as e:
        ctx.bad(where, e.what, path=e.path)


# ------------------------------------------------------------------ writers (tests, simulate)
def _log(tasks: list, flags: list) -> tuple[dict, list]:
    header = {"version": 2, "status": "success",
              "eval": {"eval_id": "e0", "run_id": "r0", "created": "2025-01-01T00:00:00+00:00",
                       "task": "demo", "task_id": "t0", "task_version": 0,
                       "dataset": {"name": "demo", "samples": len(tasks)},
                       "model": "openai/model", "config": {"epochs": max(map(len, flags))}},
              "plan": {"name": "plan", "steps": []},
              "results": {"total_samples": len(tasks), "completed_samples": len(tasks),
                          "scores": []},
              "stats": {"started_at": "", "completed_at": ""}}
    samples = [{"id": t, "epoch": j + 1, "input": "q", "target": "a", "messages": [],
                "output": {"model": "model", "choices": []},
                "scores": {"match": {"value": "C" if x else "I", "answer": "a"}}}
               for t, p in zip(tasks, flags, strict=True) for j, x in enumerate(p)]
    return header, samples


def write_json(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    import json

    header, samples = _log(tasks, flags)
    with atomic_stream(path) as f:
        f.write(json.dumps({**header, "samples": samples}, indent=2).encode())
    return [path]


def write_zip(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
    import json

    header, samples = _log(tasks, flags)
    buf = io.BytesIO()  # a compressing stream is not seekable: the zip is built first
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("_journal/start.json", json.dumps({k: header[k] for k in
                                                      ("version", "eval", "plan")}))
        for s in samples:
            z.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
        z.writestr("header.json", json.dumps(header))
    with atomic_stream(path) as f:
        f.write(buf.getvalue())
    return [path]


_PASSES = ('a score passes when its value is "C" or true ("I", "N" fail); "P" and other '
           "numbers need threshold; n = epochs; groups task, model, scorer")
SPEC = register(FormatSpec(
    FormatInfo("inspect-ai", "Inspect AI", "*.json log",
               'JSON object with "version", "status", "eval" {"task", "model"} and "samples"',
               _PASSES),
    kind="document", read=read_json, write=write_json, probe=matches, summary=_log_summary,
    view=typed_view,
    aliases=("inspect", "inspect_ai"), column_options=("threshold",), priority=4,
))
ZIP_SPEC = register(FormatSpec(
    FormatInfo("inspect-ai-eval", "Inspect AI", "*.eval log (zip)",
               "a zip archive whose first member is _journal/..., header.json or samples/...",
               _PASSES),
    kind="zip", read=read_zip, write=write_zip, probe=probe_zip,
    aliases=("inspect-eval",), names=("*.eval",), column_options=("threshold",),
))
