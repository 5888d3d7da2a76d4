"""The learned ranking: one pure function of a candidate's features, its weights shipped in the package,
and SPEC's formula one setting away."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from memx_mcp.config import Settings
from memx_mcp.domain.errors import InvalidInputError
from memx_mcp.domain.models import Bullet
from memx_mcp.engine.retrieval.fusion import FusionParams, fuse, fuse_learned
from memx_mcp.engine.retrieval.ranking import (
    FEATURES,
    RankingWeights,
    bm25_share,
    bm25_stats,
    relevance,
)
from memx_mcp.memory import Memory
from memx_mcp.text.stems import STOP_LIST, names, query_stems, stem_counts
from memx_mcp.usecases.deps import retrieval_params, shipped_ranking, with_learned_ranking

WEIGHTS = Path(__file__).parents[3] / "src" / "memx_mcp" / "engine" / "retrieval" / "ranking_weights.json"


def model(**named: float) -> RankingWeights:
    return RankingWeights.from_json({"intercept": -1.0, "weights": {f: named.get(f, 0.0) for f in FEATURES}})


def features(**named: float) -> tuple[float, ...]:
    return tuple(named.get(f, 0.0) for f in FEATURES)


def test_relevance_is_the_logistic_of_the_weighted_features() -> None:
    m = model(exact=2.0, semantic=3.0)
    assert relevance(features(), m) == pytest.approx(1 / (1 + 2.718281828459045))
    assert relevance(features(exact=0.5, semantic=1 / 3), m) == pytest.approx(0.7310585786)  # sigmoid(1)
    scaled = RankingWeights(m.weights, m.intercept, scale=2.0, shift=0.5)
    assert relevance(features(exact=0.5, semantic=1 / 3), scaled) == pytest.approx(1 / (1 + 2.718281828459045**-2.5))


def test_a_feature_with_a_positive_weight_only_ever_raises_relevance() -> None:
    m = shipped_ranking()
    for i, name in enumerate(FEATURES):
        low, high = [0.2] * len(FEATURES), [0.2] * len(FEATURES)
        high[i] = 0.8
        # (a weight within 1e-9 of 0: a feature that never varies in training, keyword_only; it moves nothing)
        if m.weights[i] > 1e-9:
            assert relevance(high, m) > relevance(low, m), name
        elif m.weights[i] < -1e-9:
            assert relevance(high, m) < relevance(low, m), name


def test_weights_for_other_features_are_refused_with_the_missing_names() -> None:
    with pytest.raises(ValueError, match="no weight for semantic"):
        RankingWeights.from_json({"intercept": 0.0, "weights": {f: 1.0 for f in FEATURES if f != "semantic"}})
    with pytest.raises(ValueError, match="2 weights"):
        RankingWeights((1.0, 2.0), 0.0)


def test_the_shipped_weights_name_every_feature_their_version_and_how_they_were_fitted() -> None:
    data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    assert set(data["weights"]) == set(FEATURES)
    assert data["version"] and "fit_ranking.py" in data["command"]
    assert shipped_ranking().version == data["version"]
    assert shipped_ranking() is shipped_ranking()  # read once


def test_the_learned_score_is_multiplied_by_decay_recency_and_scope_as_spec_multiplies_blended() -> None:
    p = FusionParams()
    s = fuse_learned(10.0, 5.0, 0.0, 0.7, 0.6, decay=0.5, recency=1.05, scope=1.3, params=p)
    assert s.blended == 0.6
    assert s.final == pytest.approx(0.6 * s.decay_effect * 1.05 * 1.3)
    assert s.decay_effect == fuse(10.0, 5.0, 0.0, 0.7, 0.5, 1.05, 1.3, p).decay_effect


def test_bm25_counts_stems_without_stop_words_and_the_neighbours_at_half_weight() -> None:
    assert len(STOP_LIST) == 179
    q = query_stems("What did Caroline paint for the show?")
    assert q == ("carolin", "paint", "show")
    docs = [stem_counts(t) for t in ("Caroline: I painted a sunrise", "Mel: the show was great", "Mel: lunch")]
    stats = bm25_stats(q, docs)
    own = bm25_share(q, docs[0], stats)
    assert 0 < own < 1
    assert bm25_share(q, docs[2], stats) == 0.0
    assert bm25_share(q, docs[0], stats, context=docs[1]) > own  # "show" is in the neighbour
    assert bm25_share(q, docs[2], stats, context=docs[0]) < own  # a neighbour's words count less


def test_names_are_the_capitalised_words_inside_a_sentence() -> None:
    assert names("When did Caroline go to the LGBTQ support group with Melanie?") == {"caroline", "melanie"}
    assert names("Which port does Redis use?") == {"redis"}


def test_the_ranking_setting_chooses_the_learned_weights_or_spec(tmp_path: Path) -> None:
    assert retrieval_params(Settings(home=tmp_path, ranking="learned")).ranking == shipped_ranking()
    assert retrieval_params(Settings(home=tmp_path)).ranking is None  # until the floors are calibrated for it
    with pytest.raises(InvalidInputError, match="ranking must be learned or spec"):
        Settings(home=tmp_path, ranking="bm25")


def test_both_rankings_put_the_bullet_that_answers_first_and_explain_a_final_score_that_multiplies(
    memory: Memory,
) -> None:
    memory.remember("Use pytest -n auto (pytest-xdist) to run the test suite in parallel", scope="project:demo")
    memory.remember("The staging database is reset every Sunday night", scope="project:demo")
    memory.remember("Deploys go through the release branch, never main", scope="project:demo")
    for ranking in ("learned", "spec"):
        memory.settings = Settings(home=memory.settings.home, scope="project:demo", ranking=ranking)
        assert (memory.deps.retrieval.ranking is None) == (ranking == "spec")
        hits = memory.recall("how do I run the tests in parallel?", reinforce=False).hits
        assert hits and "pytest-xdist" in hits[0].bullet.content, ranking
        s = hits[0].score
        assert s.final == pytest.approx(s.blended * s.decay_effect * s.recency * s.scope)


def test_a_candidate_with_no_evidence_scores_under_the_learned_rankings_own_relevance_floor(tmp_path: Path) -> None:
    # fitted on the score memx ranks by, the intercept is free: nothing matched means a score under the floor
    # shipped with the weights, which takes the place of min_relevance (on SPEC's scale) under the learned ranking
    learned = retrieval_params(Settings(home=tmp_path, ranking="learned"))
    floor = shipped_ranking().min_relevance
    assert floor is not None and learned.min_relevance == floor
    assert retrieval_params(Settings(home=tmp_path)).min_relevance == Settings(home=tmp_path).min_relevance
    assert with_learned_ranking(retrieval_params(Settings(home=tmp_path))) == learned
    assert relevance(features(), shipped_ranking()) < floor
    assert relevance(features(semantic=0.6, bm25_context=0.5, exact=0.5), shipped_ranking()) > floor


def test_the_fit_reads_each_candidates_features_and_the_multipliers_its_relevance_is_ranked_by(
    memory: Memory,
) -> None:
    memory.remember("Use pytest -n auto (pytest-xdist) to run the test suite in parallel", scope="project:demo")
    memory.remember("The staging database is reset every Sunday night", scope="project:demo")
    seen: dict[str, tuple[tuple[float, ...], float]] = {}

    def trace(bullet: Bullet, f: Sequence[float], multiplier: float) -> None:
        seen[bullet.content] = (tuple(f), multiplier)

    memory.settings = Settings(home=memory.settings.home, scope="project:demo", ranking="learned")
    memory.deps.retrieval = dataclasses.replace(memory.deps.retrieval, trace=trace, min_relevance=0.0)
    hits = memory.recall("how do I run the tests in parallel?", reinforce=False).hits
    assert {h.bullet.content for h in hits} <= set(seen)
    for h in hits:
        f, multiplier = seen[h.bullet.content]
        assert len(f) == len(FEATURES)
        assert h.score.blended == pytest.approx(relevance(f, shipped_ranking()))
        assert h.score.final == pytest.approx(h.score.blended * multiplier)
    best = seen[hits[0].bullet.content][0]
    assert "pytest-xdist" in hits[0].bullet.content
    assert best[FEATURES.index("semantic")] > 0.3 and best[FEATURES.index("bm25")] > 0
