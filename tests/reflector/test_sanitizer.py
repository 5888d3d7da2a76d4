from __future__ import annotations

import pytest

from memx_mcp.reflector.sanitizer import PrivacySanitizer

S = PrivacySanitizer()


@pytest.mark.parametrize(
    ("text", "kind", "secret"),
    [
        ("key AKIAIOSFODNN7EXAMPLE here", "aws_access_key", "AKIAIOSFODNN7EXAMPLE"),
        ("token ghp_" + "a1B2" * 9, "github_token", "ghp_" + "a1B2" * 9),
        ("ANTHROPIC_API_KEY=sk-ant-api03-" + "x" * 30, "anthropic_key", "sk-ant-api03-"),
        ("curl -H 'Authorization: Bearer abcdef0123456789abcdef'", "bearer_token", "abcdef0123456789abcdef"),
        ("postgres://admin:hunter2pass@db.local:5432/app", "url_password", "hunter2pass"),
        ('password = "correct-horse-battery"', "secret_assignment", "correct-horse-battery"),
        ("mail jane.doe@example.org now", "email", "jane.doe@example.org"),
        ("card 4111 1111 1111 1111", "card_number", "4111 1111 1111 1111"),
        ("see /home/alice/projects/x", "home_user", "alice"),
        ("slack xoxb-123456789012-abcdefghij", "slack_token", "xoxb-123456789012-abcdefghij"),
        (
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "jwt",
            "eyJhbGciOiJIUzI1NiJ9",
        ),
    ],
)
def test_secrets_are_replaced_by_typed_placeholders(text: str, kind: str, secret: str) -> None:
    masked, counts = S.sanitize(text)
    assert secret not in masked
    assert f"[REDACTED:{kind}]" in masked
    assert counts.get(kind, 0) >= 1


def test_a_private_key_block_is_masked_whole() -> None:
    text = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----\nafter"
    assert S.mask(text) == "[REDACTED:private_key]\nafter"


@pytest.mark.parametrize(
    "text",
    [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
        "request id 123e4567-e89b-12d3-a456-426614174000",
        "upgrade to numpy 2.4.6 and python 3.11.7",
        "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= in package-lock.json",
        "set MAX_POOL_SIZE from 10 to 50",
        "git clone git@github.com:team/repo.git",
        "password = ${DB_PASSWORD}",
        "token: <your token here>",
        "use os.path.join(a, b) in src/memx_mcp/cli.py",
    ],
)
def test_what_is_not_secret_is_left_byte_identical(text: str) -> None:
    assert S.mask(text) == text


def test_user_patterns_are_applied_too() -> None:
    s = PrivacySanitizer(extra=[("ticket", r"ACME-\d{4}")])
    assert s.mask("see ACME-1234") == "see [REDACTED:ticket]"
