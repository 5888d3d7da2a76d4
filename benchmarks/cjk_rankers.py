"""Why memx trails character-bigram BM25 on JSQuAD / CMRC: rerank the same full-text candidates (the top 50
of LanceDB's BM25 over memx's tokens) with other lexical scores and compare recall@5 on every 4th question.

Rankers: `fts` (LanceDB's BM25 order of the candidates), `memx L1+L2` (what keyword-only recall uses:
the current L1, with BM25 term frequency and length for CJK terms),
`local BM25` (BM25 with term counts and lengths over the candidates, local IDF), `memx + fts` (the sum,
full-text score scaled to 0-15). An upper bound is also printed: the share of questions whose paragraph
is among the 50 candidates at all.

    python benchmarks/cjk_rankers.py
"""

from __future__ import annotations

from collections import Counter

from cjk import SETS, load_set
from harness import fresh_memory, load
from memx_mcp.engine.retrieval.generator import profile_of
from memx_mcp.engine.retrieval.layers import exact_score, fuzzy_score, local_idf
from memx_mcp.text.tokenize import query_terms, tokens

K1, B = 1.2, 0.75


def main() -> None:
    for name, path in SETS.items():
        rows, questions = load_set(name, path)
        questions = questions[::4]
        memory = fresh_memory()
        load(memory, rows)
        hits: Counter[str] = Counter()
        for question, gold in questions:
            terms = query_terms(question)
            found = memory.store.keyword_search(terms, [f"project:{name}"], 50)
            if not found:
                continue
            hits["in the 50 candidates"] += any(b.id == gold for b, _ in found)
            profiles = {b.id: profile_of(b) for b, _ in found}
            own = {i: p.terms for i, p in profiles.items()}
            counts = {b.id: Counter(tokens(b.content)) for b, _ in found}
            weights = local_idf(terms, list(own.values()))
            fts = {b.id: s for b, s in found}
            top_fts = max(fts.values()) or 1.0
            avg = sum(sum(c.values()) for c in counts.values()) / len(counts)

            lengths = {i: sum(c.values()) for i, c in counts.items()}
            mean = sum(p.length for p in profiles.values()) / len(profiles)
            memx = {
                i: exact_score(terms, p.terms, weights, p.cjk_counts, p.length / mean) + fuzzy_score(terms, p.terms)
                for i, p in profiles.items()
            }
            rankers: dict[str, dict[str, float]] = {
                "fts": fts,
                "memx L1+L2": memx,
                "local BM25": {
                    i: sum(weights[t] * c[t] * (K1 + 1) / (c[t] + K1 * (1 - B + B * lengths[i] / avg)) for t in terms)
                    for i, c in counts.items()
                },
                "memx + fts": {i: memx[i] + 15 * fts[i] / top_fts for i in own},
            }
            for label, scores in rankers.items():
                hits[label] += gold in sorted(own, key=lambda i, s=scores: -s[i])[:5]
        n = len(questions)
        print(f"{name} ({n} questions): " + ", ".join(f"{k} {v / n:.3f}" for k, v in hits.items()), flush=True)


if __name__ == "__main__":
    main()
