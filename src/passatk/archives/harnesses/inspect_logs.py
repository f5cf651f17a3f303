"""Inspect AI logs, ``.json`` (one ``EvalLog``) and ``.eval`` (a zip of JSON members): n = the
epochs of a sample; groups ``task``, ``model``, ``scorer`` (docs/formats.md)."""

import contextlib
import io
import json
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

from passatk.archives.context import BadRecord, Context, group_from, task_id
from passatk.archives.errors import ArchiveError
from passatk.archives.harnesses._typed import begin, fatal, whole
from passatk.archives.harnesses._writers import WriteOptions, atomic_stream, dump_json
from passatk.archives.harnesses.registry import FormatInfo, FormatSpec, register
from passatk.archives.io.opening import ZIP_MAGIC, max_record_bytes, open_binary
from passatk.archives.io.views import decoded, view
from passatk.errors import Message, Option

_LETTERS = {"C": 1.0, "I": 0.0, "N": 0.0, "P": 0.5}  # Inspect's CORRECT, INCORRECT, ...
ZIP_ZSTANDARD = 93  # the method Inspect writes with (zipfile_zstd; the stdlib from 3.14)
_UNREADABLE = (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, EOFError,
               ValueError, zlib.error, lzma.LZMAError)


class _Spec(msgspec.Struct):
    task: str
    model: str


class _Header(msgspec.Struct):
    eval: _Spec
    status: str | None = None  # absent from _journal/start.json: the run was not finished


class _Score(msgspec.Struct):
    value: Any = None


class _Sample(msgspec.Struct):
    id: str | int
    epoch: int
    scores: dict[str, _Score] | None = None
    error: Any = None


class View(msgspec.Struct):  # a whole ``.json`` log; the messages and events are skipped
    version: msgspec.Raw
    status: Any
    eval: _Spec
    samples: list[_Sample]


typed_view = whole(View, b'"epoch"')
_HEADER = msgspec.json.Decoder(_Header)
_SAMPLE = msgspec.json.Decoder(_Sample)


def _status_note(file: str, ctx: Context, status: str | None) -> None:
    if status != "success":
        said = f"status {status!r}" if status else "no header.json (the run did not finish)"
        ctx.notes.append(f"{file}: an Inspect log with {said}: only the samples it holds "
                         "are counted")


def _passed(value: object, threshold: float | None) -> bool:
    x = _LETTERS.get(value, value) if isinstance(value, str) else value
    if isinstance(x, bool):
        return x
    if not isinstance(x, (int, float)):
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


def _add_sample(ctx: Context, sample: _Sample, pathvals: dict, base: tuple) -> None:
    """Add one sample's scores, all or none: a bad scorer skips the whole sample."""
    if not sample.scores:
        why = " (the sample ended with an error)" if sample.error else ""
        raise BadRecord(f"sample {sample.id!r} epoch {sample.epoch} has no scores{why}")
    task, o, rows = task_id(sample.id, "id"), ctx.options, []
    for scorer, score in sample.scores.items():
        try:
            ok = _passed(score.value, o.threshold)
        except BadRecord as e:
            raise BadRecord(e.what, ("scores", scorer, *(e.path or ()))) from None
        rows.append((group_from(o.by, pathvals, {"epoch": sample.epoch},
                                (*base, ("scorer", scorer)), "sample"), ok))
    for group, ok in rows:
        ctx.add(group, task, 1, int(ok))


def _spec(doc: dict) -> dict:
    """``task`` and ``model`` of the header's ``eval`` (read, when streamed, until found)."""
    out = {}
    for key, value in doc["eval"].items():
        if key in ("task", "model"):
            out[key] = value
            if len(out) == 2:
                break
    return out


def _is_header(doc: object) -> bool:
    return (isinstance(doc, dict) and "status" in doc and "version" in doc
            and isinstance(doc.get("eval"), dict) and len(spec := _spec(doc)) == 2
            and all(isinstance(v, str) for v in spec.values()))


def _log_summary(file: str, doc: object) -> str | None:
    return ("an Inspect log without samples (written with --no-log-samples, or a header): only "
            "aggregate results; passatk needs the samples") if _is_header(doc) and not \
        isinstance(doc.get("samples"), list) else None


def matches(doc: object, file: str = "") -> bool:
    return _is_header(doc) and isinstance(doc.get("samples"), list)


def read_json(file: str, ctx: Context, doc: dict | View) -> None:
    _, pathvals = begin(ctx, file)
    typed = isinstance(doc, View)
    with fatal(file):
        spec = doc.eval if typed else view({"eval": _spec(doc)}, _Header).eval
    status = doc.status if typed else doc.get("status")
    _status_note(file, ctx, status if isinstance(status, str) else "?")
    for i, raw in enumerate(doc.samples if typed else doc["samples"]):
        try:
            _add_sample(ctx, raw if typed else view(raw, _Sample), pathvals,
                        (("task", spec.task), ("model", spec.model)))
        except BadRecord as e:
            ctx.bad(file, e.what, path=("samples", i, *(e.path or ())))


def probe_zip(head: bytes, file: str = "") -> bool:
    """Whether the first member (named in its local file header) is one of Inspect's."""
    if not head.startswith(ZIP_MAGIC) or len(head) < 30:
        return False
    name = head[30:30 + int.from_bytes(head[26:28], "little")].decode("utf-8", "replace")
    return name.startswith(("_journal/", "samples/")) or name in ("header.json", "summaries.json")


@contextlib.contextmanager
def _seekable(file: str) -> Iterator[Any]:
    """The zip as a seekable file: itself, or a copy on disk (a pipe, a compressed file)."""
    with open_binary(file) as f:
        if f.compression is None and f.stream.seekable():
            yield f.stream
            return
        with tempfile.TemporaryFile() as spool:
            shutil.copyfileobj(f.stream, spool, 1 << 20)
            spool.seek(0)
            yield spool


def _member(file: str, z: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, at most the record-length cap (a zip bomb stops there)."""
    cap, name = max_record_bytes(), info.filename
    if info.file_size > cap:
        raise ArchiveError(file, f"member {name} is {info.file_size} bytes, over the "
                           f"record-length cap of {cap} (PASSATK_MAX_RECORD_BYTES)")
    zstandard = sys.modules.get("zstandard")  # a zipfile given zstd (by inspect_ai) raises it
    zstd_errors = (zstandard.ZstdError,) if zstandard is not None else ()
    try:
        if info.compress_type == ZIP_ZSTANDARD and getattr(zipfile, "ZIP_ZSTANDARD",
                                                           None) != ZIP_ZSTANDARD:
            data = _zstd_member(file, z, info, cap)
        else:
            with z.open(info) as f:
                data = f.read(cap + 1)
    except _UNREADABLE + zstd_errors as e:  # a corrupt, encrypted or unsupported member
        raise ArchiveError(file, f"member {name}: cannot read it ({e})") from None
    if len(data) > cap:
        raise ArchiveError(file, f"member {name} is over the record-length cap")
    return data


def _zstd_member(file: str, z: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes:
    """A zstd member where zipfile lacks zstd: its raw bytes, decompressed, the CRC checked."""
    from passatk.archives.io.opening import _zstandard

    z.fp.seek(info.header_offset)
    local = z.fp.read(30)
    if local[:4] != ZIP_MAGIC:
        raise zipfile.BadZipFile("bad local file header")
    z.fp.seek(info.header_offset + 30 + int.from_bytes(local[26:28], "little")
              + int.from_bytes(local[28:30], "little"))
    raw = z.fp.read(info.compress_size)
    zstandard = _zstandard(file)
    try:
        data = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True).read(
            cap + 1)
    except zstandard.ZstdError as e:
        raise zipfile.BadZipFile(f"cannot decompress: {e}") from None
    if len(data) <= cap and zlib.crc32(data) != info.CRC:
        raise zipfile.BadZipFile("CRC check failed")
    return data


def read_zip(file: str, ctx: Context) -> None:
    _, pathvals = begin(ctx, file)
    with _seekable(file) as raw:
        try:
            z = zipfile.ZipFile(raw)
        except _UNREADABLE as e:
            raise ArchiveError(file, f"not a readable zip archive ({e})") from None
        with z:
            name = next((n for n in ("header.json", "_journal/start.json") if n in z.namelist()),
                        None)
            if name is None:
                raise ArchiveError(file, "a zip archive without header.json or "
                                   "_journal/start.json is no Inspect log")
            with fatal(f"{file}: {name}"):
                header = decoded(_HEADER, _member(file, z, z.getinfo(name)))
            _status_note(file, ctx, header.status)
            base = (("task", header.eval.task), ("model", header.eval.model))
            for info in z.infolist():
                if info.filename.startswith("samples/") and info.filename.endswith(".json"):
                    try:
                        _add_sample(ctx, decoded(_SAMPLE, _member(file, z, info)), pathvals, base)
                    except BadRecord as e:
                        ctx.bad(f"{file}: {info.filename}", e.what, path=e.path)


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
    header, samples = _log(tasks, flags)
    return dump_json(path, {**header, "samples": samples})


def write_zip(path: str, tasks: list, flags: list, opts: WriteOptions) -> list[str]:
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
SPEC = register(FormatSpec(FormatInfo(
    "inspect-ai", "Inspect AI", "*.json log",
    'JSON object with "version", "status", "eval" {"task", "model"} and "samples"', _PASSES),
    kind="document", read=read_json, write=write_json, probe=matches, summary=_log_summary,
    view=typed_view, aliases=("inspect", "inspect_ai"), column_options=("threshold",), priority=4))
ZIP_SPEC = register(FormatSpec(FormatInfo(
    "inspect-ai-eval", "Inspect AI", "*.eval log (zip)",
    "a zip archive whose first member is _journal/..., header.json or samples/...", _PASSES),
    kind="zip", read=read_zip, write=write_zip, probe=probe_zip, aliases=("inspect-eval",),
    names=("*.eval",), column_options=("threshold",)))
