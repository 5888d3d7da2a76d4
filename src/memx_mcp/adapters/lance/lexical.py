"""A process-local inverted index over the stored ``terms`` of the active bullets: keyword candidates and
their BM25 scores without a query to LanceDB.

The same tokens as LanceDB's full-text index read (``rows.index_text``: code parts, CJK characters and
bigrams, split on whitespace, lower-cased, tokens of 64 bytes or more left out) and the same BM25 (k1 1.2,
b 0.75, ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``), with its statistics — the number of bullets, their
mean length, each term's document frequency — over every active bullet of the store, whatever its scope:
the scope filter picks the candidates, not the weights.

Postings are numpy arrays (one sorted block for all terms, ``starts`` giving each term's slice), built at
once from the stored column; bullets written later go to a small appendix of postings, and removed ones are
only marked until they are many; then both are folded into a new block. A query touches the postings of its
own terms only (a few arrays), never every bullet."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

K1 = 1.2
B = 0.75
MAX_TOKEN_BYTES = 64  # LanceDB's index was made with max_token_length=64: tokens this long or longer are dropped
_FOLD_SHARE = 8  # the appendix is folded in once it holds more than 1/8 of the bullets (and at least _FOLD_MIN)
_FOLD_MIN = 512
_DEAD_SHARE = 4  # removed bullets are compacted away once they are more than 1/4 of the slots


def split_terms(text: str) -> list[str]:
    """The tokens the index keeps of a ``terms`` string."""
    return [t for t in text.lower().split() if len(t.encode("utf-8")) < MAX_TOKEN_BYTES]


class LexicalIndex:
    """Not thread-safe on its own: its owner (``VectorIndex``) calls it under its lock."""

    def __init__(self) -> None:
        self._term_ids: dict[str, int] = {}
        # the block: postings of slots [0, _base) sorted by term, then slot
        self._starts = np.zeros(1, np.int64)
        self._slots = np.zeros(0, np.int32)
        self._tfs = np.zeros(0, np.float32)
        self._base = 0
        # the appendix: postings of slots written since the block was made
        self._extra: dict[int, tuple[list[int], list[float]]] = {}
        self._extra_slots: list[tuple[list[int], list[int]]] = []  # per appended slot: its term ids and counts
        # per slot (a bullet's place; a removed bullet's slot stays until the next fold)
        self._ids: list[str] = []
        self._where: dict[str, int] = {}
        self._lengths = np.zeros(0, np.float64)
        self._alive = np.zeros(0, bool)
        self._scope_codes = np.zeros(0, np.int32)
        self._scope_index: dict[str, int] = {}
        self._live = 0
        self._total_length = 0.0

    # -- building -----------------------------------------------------------------------------------

    def build(self, ids: Sequence[str], scopes: Sequence[str], terms: pa.Array | pa.ChunkedArray) -> None:
        """The index of these bullets (their stored ``terms``), in one pass of arrow and numpy kernels."""
        n = len(ids)
        if isinstance(terms, pa.ChunkedArray):
            terms = terms.combine_chunks() if terms.num_chunks else pa.array([], pa.string())
        lists = pc.utf8_split_whitespace(pc.utf8_lower(terms.fill_null("")))
        flat = pc.list_flatten(lists)
        owner = np.repeat(np.arange(n, dtype=np.int64), pc.list_value_length(lists).to_numpy(zero_copy_only=False))
        size = pc.binary_length(flat).to_numpy(zero_copy_only=False)
        keep = (size > 0) & (size < MAX_TOKEN_BYTES)
        flat, owner = flat.filter(pa.array(keep)), owner[keep]
        encoded = flat.dictionary_encode()
        words = encoded.dictionary.to_pylist()
        term = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        self._term_ids = {w: k for k, w in enumerate(words)}
        self._ids = list(ids)
        self._where = {i: k for k, i in enumerate(self._ids)}
        self._scope_index = {}
        self._scope_codes = self._codes(scopes)
        self._lengths = np.bincount(owner, minlength=n).astype(np.float64)
        self._alive = np.ones(n, bool)
        self._live, self._total_length = n, float(self._lengths.sum())
        self._set_block(owner, term, np.ones(len(term), np.float32), n, len(words))

    def _set_block(self, slot: np.ndarray, term: np.ndarray, tf: np.ndarray, slots: int, vocabulary: int) -> None:
        """The block from (slot, term, count) triples, repeats summed."""
        key = term * max(1, slots) + slot
        unique, inverse = np.unique(key, return_inverse=True)
        counts = np.bincount(inverse, weights=tf, minlength=len(unique)).astype(np.float32)
        terms = unique // max(1, slots)
        self._slots = (unique % max(1, slots)).astype(np.int32)
        self._tfs = counts
        self._starts = np.zeros(vocabulary + 1, np.int64)
        np.cumsum(np.bincount(terms, minlength=vocabulary), out=self._starts[1:])
        self._base = slots
        self._extra, self._extra_slots = {}, []

    def _codes(self, scopes: Sequence[str]) -> np.ndarray:
        return np.fromiter(
            (self._scope_index.setdefault(sc, len(self._scope_index)) for sc in scopes), np.int32, len(scopes)
        )

    def update(self, added: Sequence[tuple[str, str, str]], removed: Sequence[str]) -> None:
        """``added``: (id, scope, terms) of bullets now active (a bullet already held is replaced);
        ``removed``: ids no longer active."""
        for i in (*removed, *(a[0] for a in added)):
            slot = self._where.pop(i, None)
            if slot is not None and self._alive[slot]:
                self._alive[slot] = False
                self._live -= 1
                self._total_length -= float(self._lengths[slot])
        for i, scope, text in added:
            self._append(i, scope, text)
        dead = len(self._ids) - self._live
        if len(self._extra_slots) > max(_FOLD_MIN, self._live // _FOLD_SHARE) or dead > max(
            _FOLD_MIN, len(self._ids) // _DEAD_SHARE
        ):
            self._fold()

    def _append(self, i: str, scope: str, text: str) -> None:
        counts = Counter(split_terms(text))
        slot = len(self._ids)
        self._ids.append(i)
        self._where[i] = slot
        length = float(sum(counts.values()))
        self._lengths = _grown(self._lengths, slot, length)
        self._alive = _grown(self._alive, slot, True)
        self._scope_codes = _grown(self._scope_codes, slot, int(self._codes([scope])[0]))
        self._live += 1
        self._total_length += length
        term_ids, tfs = [], []
        for word, tf in counts.items():
            t = self._term_ids.setdefault(word, len(self._term_ids))
            slots, freqs = self._extra.setdefault(t, ([], []))
            slots.append(slot)
            freqs.append(float(tf))
            term_ids.append(t)
            tfs.append(tf)
        self._extra_slots.append((term_ids, tfs))

    def _fold(self) -> None:
        """One block again, of the live bullets only (slots renumbered)."""
        n = len(self._ids)
        per_term = np.diff(self._starts)
        term = np.repeat(np.arange(len(per_term), dtype=np.int64), per_term)
        slot, tf = self._slots.astype(np.int64), self._tfs
        if self._extra_slots:
            extra_slot = np.repeat(np.arange(self._base, n, dtype=np.int64), [len(ts) for ts, _ in self._extra_slots])
            extra_term = np.fromiter((t for ts, _ in self._extra_slots for t in ts), np.int64, len(extra_slot))
            extra_tf = np.fromiter((f for _, fs in self._extra_slots for f in fs), np.float32, len(extra_slot))
            slot = np.concatenate([slot, extra_slot])
            term = np.concatenate([term, extra_term])
            tf = np.concatenate([tf, extra_tf])
        alive = self._alive[:n]
        renumber = np.cumsum(alive) - 1
        keep = alive[slot]
        slot, term, tf = renumber[slot[keep]], term[keep], tf[keep]
        live = np.flatnonzero(alive)
        self._ids = [self._ids[k] for k in live]
        self._where = {i: k for k, i in enumerate(self._ids)}
        self._lengths = self._lengths[live]
        self._scope_codes = self._scope_codes[live]
        self._alive = np.ones(len(live), bool)
        self._live = len(live)
        self._total_length = float(self._lengths.sum())
        self._set_block(slot, term, tf, len(live), len(self._term_ids))

    # -- searching ----------------------------------------------------------------------------------

    def _postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        if term + 1 < len(self._starts):
            a, b = self._starts[term], self._starts[term + 1]
            slots, tfs = self._slots[a:b], self._tfs[a:b]
        else:
            slots, tfs = self._slots[:0], self._tfs[:0]
        extra = self._extra.get(term)
        if extra is not None:
            slots = np.concatenate([slots, np.asarray(extra[0], np.int32)])
            tfs = np.concatenate([tfs, np.asarray(extra[1], np.float32)])
        return slots, tfs

    def search(self, terms: Sequence[str], scopes: Sequence[str], limit: int) -> list[tuple[str, float]]:
        """The ``limit`` best live bullets of ``scopes`` by BM25 of ``terms`` (each counted once), best
        first, ties by id; only bullets with at least one of the terms."""
        codes = [self._scope_index[sc] for sc in scopes if sc in self._scope_index]
        n = self._live
        if not codes or not n or limit <= 0:
            return []
        mean = self._total_length / n or 1.0
        size = len(self._ids)
        alive, lengths = self._alive[:size], self._lengths[:size]
        scores = np.zeros(size, np.float64)
        for word in dict.fromkeys(split_terms(" ".join(terms))):
            t = self._term_ids.get(word)
            if t is None:
                continue
            slots, counts = self._postings(t)
            tfs = counts.astype(np.float64)
            live = alive[slots]
            if not live.all():
                slots, tfs = slots[live], tfs[live]
            df = len(slots)
            if not df:
                continue
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            norm = K1 * (1.0 - B + B * lengths[slots] / mean)
            scores[slots] += idf * tfs * (K1 + 1.0) / (tfs + norm)
        found = np.flatnonzero(scores > 0)
        if not len(found):
            return []
        in_scope = self._scope_codes[found] == codes[0] if len(codes) == 1 else np.isin(self._scope_codes[found], codes)
        found = found[in_scope]
        best = scores[found]
        if len(found) > limit:  # the limit-th score, and every bullet tied with it (ties are cut by id below)
            cut = -np.partition(-best, limit - 1)[limit - 1]
            keep = best >= cut
            found, best = found[keep], best[keep]
        ids = self._ids
        ranked = sorted(zip(found.tolist(), best.tolist(), strict=True), key=lambda x: (-x[1], ids[x[0]]))
        return [(ids[k], s) for k, s in ranked[:limit]]

    def __len__(self) -> int:
        return self._live

    def document_frequency(self, term: str) -> int:
        """How many live bullets hold ``term`` (for the learned ranking's store-level statistics)."""
        t = self._term_ids.get(term)
        if t is None:
            return 0
        slots, _ = self._postings(t)
        return int(self._alive[slots].sum())

    def mean_length(self) -> float:
        return self._total_length / self._live if self._live else 0.0


def _grown(array: np.ndarray, at: int, value: object) -> np.ndarray:
    """``array`` with ``value`` at ``at`` (its end), its capacity doubled when full."""
    if at >= len(array):
        bigger = np.zeros(max(16, 2 * len(array)), array.dtype)
        bigger[: len(array)] = array
        array = bigger
    array[at] = value
    return array
