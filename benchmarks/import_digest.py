"""One batched import of ``import_batch.py``'s records with a digest of what it left (stored bullets and
conflict records, without ids and times), so that two versions of memx can be compared on the same file:
run it twice at once, once with ``PYTHONPATH`` pointing at an export of the older ``src``, so that the
machine's load hits both alike. Also prints how many tokens the model's batches hold for each real token
(each batch is padded to its longest text) when the texts are sorted by characters and by tokens.

    python benchmarks/import_digest.py [--records 10000] [--embed-threads 2]
    PYTHONPATH=/tmp/old/src python benchmarks/import_digest.py      # the same on an older checkout
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable

import memx_mcp
from import_batch import build, run


def padding(texts: list[str], lengths: list[int], key: Callable[[int], int], batch: int = 256) -> float:
    """Padded tokens per real token: import batches of ``batch``, two sessions' shares, model batches of 32."""
    real = padded = 0
    for start in range(0, len(texts), batch):
        order = sorted(range(start, min(start + batch, len(texts))), key=key)
        for share in (order[0::2], order[1::2]):
            for k in range(0, len(share), 32):
                sizes = [lengths[i] for i in share[k : k + 32]]
                real, padded = real + sum(sizes), padded + max(sizes) * len(sizes)
    return padded / real


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--embed-threads", type=int, default=2)
    args = parser.parse_args()
    prefill, lines = build(args.records, 500, 21)
    result = run(lines, prefill, False, args.embed_threads)
    kept, conflicts = result.pop("state")
    digest = hashlib.sha256(json.dumps([sorted(map(repr, kept)), sorted(map(repr, conflicts))]).encode()).hexdigest()
    shown = {k: round(v, 1) if isinstance(v, float) else v for k, v in result.items()}
    print(json.dumps({"src": memx_mcp.__file__, **shown, "digest": digest[:16]}), flush=True)
    from tokenizers import Tokenizer

    from harness import _model_cache

    tokenizer = Tokenizer.from_file(str(_model_cache() / "all-MiniLM-L6-v2-int8" / "tokenizer.json"))
    tokenizer.no_padding()
    texts = [json.loads(line)["content"] for line in lines]
    lengths = [len(e.ids) for e in tokenizer.encode_batch(texts)]
    by_chars = padding(texts, lengths, lambda i: len(texts[i]))
    by_tokens = padding(texts, lengths, lambda i: lengths[i])
    print(f"padded tokens per real token: sorted by characters {by_chars:.3f}, by tokens {by_tokens:.3f}")


if __name__ == "__main__":
    main()
