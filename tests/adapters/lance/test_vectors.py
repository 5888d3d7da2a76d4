from __future__ import annotations

import numpy as np

from memx_mcp.adapters.lance.vectors import _BLOCK, quantize, scan


def unit_rows(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_codes_rebuild_each_unit_vector_within_half_a_step() -> None:
    vectors = unit_rows(50) * 7.0  # not normalised yet: quantize normalises
    codes, scales = quantize(vectors)
    assert codes.dtype == np.int8 and scales.dtype == np.float32
    assert np.abs(codes).max(axis=1).tolist() == [127] * 50  # each row uses the whole int8 range
    error = np.abs(codes * scales[:, None] - vectors / 7.0)
    assert (error <= scales[:, None] / 2 + 1e-7).all()


def test_a_zero_vector_stays_zero_and_an_empty_batch_is_empty() -> None:
    codes, scales = quantize(np.zeros((2, 4), np.float32))
    assert not codes.any() and (scales > 0).all()
    codes, scales = quantize(np.zeros((0, 4), np.float32))
    assert codes.shape == (0, 4) and scales.shape == (0,)


def test_a_scan_across_several_blocks_matches_the_exact_cosine() -> None:
    vectors = unit_rows(2 * _BLOCK + 7)
    query = unit_rows(1, seed=1)[0]
    codes, scales = quantize(vectors)
    sims = scan(codes, scales, query)
    exact = vectors @ query
    assert sims.shape == exact.shape
    assert np.abs(sims - exact).max() < 0.003
    assert set(np.argsort(-sims)[:10]) == set(np.argsort(-exact)[:10])
    assert scan(codes[:0], scales[:0], query).shape == (0,)
