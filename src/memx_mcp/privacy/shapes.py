"""What a value looks like, for the PrivacySanitizer: random key material, a placeholder, a name written in
words, a card number. Pure functions of the value alone; the sanitizer weighs them against the context
(the key name, the provider prefix, a URL)."""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from itertools import pairwise

from ..text.tokenize import CAMEL_PARTS

_PLACEHOLDER = re.compile(
    r"(?i)^(?:\$.*|<[^>]*>?|%\(?\w+\)?s?|\{.*\}|`.*|\*+|\[redacted.*)$|xxxx|\*\*\*\*|####|example|sample|"
    r"placeholder|your[_-]?|changeme|dummy|_here|(?-i:(?<=[a-z])Here$)|[\[<(]redacted|"
    r"^my[-_]?(?:secret|token|key|api[-_]?key|password|pass|pwd|client[-_]?secret)s?$"  # my_token, my-secret
)


def entropy(text: str) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(text)
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def looks_placeholder(value: str) -> bool:
    """xxxx, <your token>, ${VAR}, EXAMPLE, PUT_TOKEN_HERE, ...: a stand-in that says it is one."""
    core = re.sub(r"[^A-Za-z0-9]", "", value)
    if len(core) >= 4 and len(set(core.lower())) <= 3:
        return True  # xxxxxxxx, 00000000, aaaaaaa
    if not core and ("..." in value or "…" in value):
        return True  # secret_key_base: ..., :... (an elided value)
    return bool(_PLACEHOLDER.search(value))


def random_looking(token: str) -> bool:
    """Random key material rather than a word, identifier, path or hash name: mixed classes that change
    often, and high entropy."""
    core = token.strip("=.-~")
    parts = [p for p in re.split(r"[_-]", core) if p]
    if len(parts) >= 3 and sum(p.isalpha() or p.isdigit() for p in parts) * 2 >= len(parts):
        return False  # SN_id_Gost28147_89_None_KeyMeshing: an identifier made of words
    uppers = sum(c.isupper() for c in core)
    lowers = sum(c.islower() for c in core)
    digits = sum(c.isdigit() for c in core)
    if uppers < 2 or lowers < 2 or digits < 2:
        return False
    classes = ["u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else "o" for c in core]
    changes = sum(a != b for a, b in pairwise(classes)) / max(1, len(core) - 1)
    return changes >= 0.3 and entropy(core) >= 3.5 and not made_of_words(core)


@functools.cache
def _wordpieces() -> tuple[frozenset[str], frozenset[str], int]:
    """English words and word endings: the WordPiece vocabulary of the embedding model memx ships
    (all-MiniLM-L6-v2, Apache-2.0), read once from its tokenizer file."""
    import json  # here, not at import: start-up pays for importlib.resources only when a value needs it
    from importlib import resources

    path = resources.files("memx_mcp") / "adapters" / "minilm" / "tokenizer.json"
    vocab = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    words = frozenset(w for w in vocab if w.isascii() and w.isalpha())
    endings = frozenset(w[2:] for w in vocab if w.startswith("##") and w[2:].isascii() and w[2:].isalpha())
    return words, endings, max(map(len, words | endings))


def _pieces(word: str) -> int:
    """How many WordPiece pieces spell ``word`` (longest match first); a large number if none do. No piece
    is longer than the longest in the vocabulary, so none is looked for (a 100,000-letter word was sliced
    100,000 ways from each position)."""
    words, endings, longest = _wordpieces()
    word, count, i = word.lower(), 0, 0
    while i < len(word):
        known = words if count == 0 else endings
        end = next((j for j in range(min(len(word), i + longest), i, -1) if word[i:j] in known), 0)
        if not end:
            return len(word) + 1
        count, i = count + 1, end
    return count


@functools.lru_cache(maxsize=4096)
def made_of_words(token: str) -> bool:
    """A name written in words: half its letters or more lie in CamelCase or snake_case parts of four or
    more letters that English WordPieces spell in few pieces (``BetaCodeExecutionTool20250825Param``,
    ``all-MiniLM-L6-v2``). Random key material almost never does: ``benchmarks/sanitizer.py --words``."""
    parts = CAMEL_PARTS.findall(token)
    letters = sum(len(p) for p in parts if p.isalpha())
    wordy = sum(len(p) for p in parts if p.isalpha() and len(p) >= 4 and _pieces(p) <= max(1, len(p) / 3.5))
    return letters > 0 and wordy >= 0.5 * letters
