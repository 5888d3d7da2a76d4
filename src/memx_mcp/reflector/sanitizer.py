"""PrivacySanitizer (SPEC §4.5): mask secrets and personal data with typed placeholders before text is
stored or sent anywhere. Git SHAs, UUIDs, versions and ordinary identifiers are left alone."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Pattern:
    name: str
    regex: re.Pattern[str]
    group: int = 0  # which group holds the secret (0: the whole match)


def _p(name: str, pattern: str, group: int = 0, flags: int = 0) -> Pattern:
    return Pattern(name, re.compile(pattern, flags), group)


_PLACEHOLDER_VALUE = re.compile(r"^(?:\$\{?\w+\}?|<[^>]*>|\*+|x+|\.\.\.|\[REDACTED:\w+\]|%\(?\w+\)?s?)$", re.I)

BUILTIN_PATTERNS: tuple[Pattern, ...] = (
    _p(
        "private_key",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    _p("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    _p("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    _p("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    _p("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
    _p(
        "aws_secret_key",
        r"(?i)aws.{0,20}?(?:secret|private).{0,20}?[=:]\s*[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        1,
    ),
    _p("github_token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b"),
    _p("github_token", r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b"),
    _p("gitlab_token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    _p("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    _p("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9_/]+"),
    _p("stripe_key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    _p("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    _p("azure_key", r"(?i)AccountKey=([A-Za-z0-9+/=]{40,})", 1),
    _p("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    _p("bearer_token", r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)", 1),
    _p("url_password", r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:([^\s@/]+)@", 1, re.I),
    _p(
        "secret_assignment",
        r"(?i)\b[\w.\-]*(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key|"
        r"client[_-]?secret|private[_-]?key)[\w.\-]*[\"']?\s*(?:=|:|:=|=>)\s*[\"']?([^\s\"',;}{)]{6,})",
        1,
    ),
    _p("email", r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b"),
    _p("card_number", r"\b(?:\d[ -]?){12,18}\d\b"),
    _p("phone", r"(?<![\w.])\+\d{1,3}[ \-]?\(?\d{1,4}\)?(?:[ \-]?\d{2,4}){2,4}(?![\w.])"),
    _p("phone", r"(?<![\w.\-])\(?\d{3}\)?[ .\-]\d{3}[ .\-]\d{4}(?![\w.\-])"),
    _p("home_user", r"(?:/home/|/Users/|[A-Za-z]:\\+Users\\+)([^/\\\s\"':]+)", 1),
)

_NOT_USERS = frozenset({"shared", "public", "default", "all users", "runner", "[redacted:home_user]"})
_NOT_EMAIL_LOCALS = frozenset({"git", "noreply"})


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _is_secret(pattern: Pattern, value: str) -> bool:
    if pattern.name == "secret_assignment":
        return not _PLACEHOLDER_VALUE.match(value) and not value.startswith("[REDACTED")
    if pattern.name == "card_number":
        digits = re.sub(r"\D", "", value)
        return 13 <= len(digits) <= 19 and _luhn_ok(digits)
    if pattern.name == "home_user":
        return value.lower() not in _NOT_USERS
    if pattern.name == "email":
        return value.split("@", 1)[0].lower() not in _NOT_EMAIL_LOCALS
    return True


class PrivacySanitizer:
    """Masks every match of the built-in patterns and the user's own (``name``, regex) patterns."""

    def __init__(self, extra: Iterable[tuple[str, str]] = ()) -> None:
        user = tuple(_p(name, rx) for name, rx in extra)
        self.patterns: tuple[Pattern, ...] = user + BUILTIN_PATTERNS

    def sanitize(self, text: str) -> tuple[str, dict[str, int]]:
        """The masked text and how many of each kind were masked."""
        counts: dict[str, int] = {}
        for pattern in self.patterns:
            text = pattern.regex.sub(lambda m, p=pattern: self._mask(m, p, counts), text)  # type: ignore[misc]
        return text, counts

    def mask(self, text: str) -> str:
        return self.sanitize(text)[0]

    @staticmethod
    def _mask(match: re.Match[str], pattern: Pattern, counts: dict[str, int]) -> str:
        value = match.group(pattern.group)
        if value is None or not _is_secret(pattern, value):
            return match.group(0)
        counts[pattern.name] = counts.get(pattern.name, 0) + 1
        placeholder = f"[REDACTED:{pattern.name}]"
        if pattern.group == 0:
            return placeholder
        start, end = match.span(pattern.group)
        whole_start = match.start(0)
        full = match.group(0)
        return full[: start - whole_start] + placeholder + full[end - whole_start :]
