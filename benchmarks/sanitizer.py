"""PrivacySanitizer on public secret-detection corpora.

Positives: gitleaks `tp` rows and detect-secrets rows labelled True. A positive counts as masked when its
secret no longer appears in the output: the `expected_secret` span where the corpus gives one, the whole
text for bare values, the span gitleaks' own rule regex extracts (gitleaks.toml) for its literal rows,
else the longest secret-looking token of the line (8+ characters of key material with a digit, or 20+
characters); a line with no such token must at least change. Negatives: `negatives/` rows and gitleaks
`fp` rows, which must come out byte-identical.

    python benchmarks/sanitizer.py [--show-misses N]
"""

from __future__ import annotations

import argparse
import json
import re
import tomllib
from pathlib import Path

from memx_mcp.reflector.sanitizer import PrivacySanitizer, looks_placeholder

DATA = Path(__file__).parent / "data" / "secrets"
TOKEN = re.compile(r"[A-Za-z0-9+/=_\-.]{8,}")


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def secret_tokens(text: str) -> list[str]:
    out = []
    for t in TOKEN.findall(text):
        t = t.strip(".=-")
        if (len(t) >= 8 and re.search(r"\d", t) and re.search(r"[A-Za-z]", t)) or len(t) >= 20:
            out.append(t)
    return out


def gitleaks_rules() -> dict[str, re.Pattern[str]]:
    """gitleaks' own regexes (RE2, mostly valid Python), to find the secret span of each `tp` row as gitleaks
    does: its secretGroup, else the first non-empty group, else the whole match."""
    config = tomllib.loads((DATA / "gitleaks" / "gitleaks.toml").read_text(encoding="utf-8"))
    compiled = {}
    for rule in config.get("rules", []):
        pattern = str(rule.get("regex", "")).replace(r"\z", r"\Z")
        if not pattern:
            continue
        try:
            compiled[rule["id"]] = (re.compile(pattern), int(rule.get("secretGroup", 0)))
        except re.error:
            try:
                compiled[rule["id"]] = (
                    re.compile("(?i)" + pattern.replace("(?i)", "")),
                    int(rule.get("secretGroup", 0)),
                )
            except re.error:
                continue
    return compiled


def gitleaks_secret(rules: dict, rule_id: str, text: str) -> str | None:
    if rule_id not in rules:
        return None
    regex, group = rules[rule_id]
    m = regex.search(text)
    if not m:
        return None
    if group and m.group(group):
        return m.group(group)
    return next((g for g in m.groups() if g), m.group(0))


def masked(original: str, output: str, secret: str | None) -> bool:
    if secret:
        return secret not in output
    tokens = secret_tokens(original)
    if not tokens:
        return output != original
    return max(tokens, key=len) not in output  # the longest key-like token is taken to be the secret


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--show-misses", type=int, default=0)
    args = parser.parse_args()
    s = PrivacySanitizer()
    results: dict[str, list[bool]] = {
        "gitleaks tp": [],
        "detect-secrets True": [],
        "negatives": [],
        "gitleaks fp": [],
        "detect-secrets False": [],
    }
    misses: dict[str, list[str]] = {k: [] for k in results}
    placeholder_misses = 0

    def record(group: str, ok: bool, text: str, secret: str | None = None) -> None:
        nonlocal placeholder_misses
        results[group].append(ok)
        if not ok:
            misses[group].append(text)
            placeholder_misses += secret is not None and looks_placeholder(secret)

    rules = gitleaks_rules()
    for r in rows(DATA / "gitleaks" / "rule_samples.jsonl"):
        out = s.mask(r["text"])
        if r["label"] == "tp":
            secret = r["text"] if r["kind"] == "bare_secret_value" else gitleaks_secret(rules, r["rule_id"], r["text"])
            record("gitleaks tp", masked(r["text"], out, secret), f"{r['rule_id']}: {r['text'][:160]!r}", secret)
        else:
            record("gitleaks fp", out == r["text"], f"{r['rule_id']}: {r['text'][:160]!r} -> {out[:160]!r}")
    for r in rows(DATA / "detect_secrets" / "plugin_cases.jsonl"):
        out = s.mask(r["line"])
        if r["label"]:
            record(
                "detect-secrets True",
                masked(r["line"], out, r.get("expected_secret")),
                f"{r['plugin']}: {r['line'][:160]!r}",
                r.get("expected_secret") or r["line"],
            )
        else:
            record("detect-secrets False", out == r["line"], f"{r['plugin']}: {r['line'][:160]!r} -> {out[:160]!r}")
    for r in rows(DATA / "negatives" / "negatives.jsonl"):
        out = s.mask(r["text"])
        record("negatives", out == r["text"], f"{r['text'][:160]!r} -> {out[:160]!r}")

    positives = results["gitleaks tp"] + results["detect-secrets True"]
    print(
        f"positives masked: {sum(positives)}/{len(positives)} = {sum(positives) / len(positives):.3f} (target ≥ 0.95)"
    )
    for group, values in results.items():
        print(
            f"  {group:22} {sum(values):4}/{len(values):4} = {sum(values) / max(1, len(values)):.3f}"
            f"  ({'masked' if group in ('gitleaks tp', 'detect-secrets True') else 'left byte-identical'})"
        )
    print(f"  of the positives missed, {placeholder_misses} are placeholders (xxxx…, example…) left alone by design")
    print("targets: negatives ≥ 0.99 identical, gitleaks fp ≥ 0.90 identical")
    if args.show_misses:
        for group, items in misses.items():
            for text in items[: args.show_misses]:
                print(f"MISS {group}: {text}")


if __name__ == "__main__":
    main()
