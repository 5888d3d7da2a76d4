"""JSON and HMAC-SHA256 for the hook process, from the C modules the ``json`` and ``hmac`` modules use
themselves, without importing those modules: ``json`` compiles half a dozen regular expressions at import (it
loads ``re``, ``enum``, ``functools`` …) and ``hashlib`` loads OpenSSL, together about as much CPU as starting
the interpreter, on every tool call. The results are the same bytes (``tests/hooks/test_quick.py`` compares
them with ``json`` and ``hmac`` on many inputs); where a C module is missing, the standard modules serve."""

from __future__ import annotations

from _operator import _compare_digest as same  # what hmac.compare_digest is where OpenSSL is not loaded

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on every hook call
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["dumps", "hmac_sha256", "loads", "same"]
_WHITESPACE = " \t\n\r"


class _Decoding:
    """What ``json.JSONDecoder`` hands the C scanner: the defaults of ``json.loads``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}.__getitem__


def _no_default(o: object) -> object:
    raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


def _encoder() -> Callable[[Any, int], Any]:
    """``json.dumps(o, ensure_ascii=False)``'s C encoder with its other defaults, as ``json.encoder`` builds it:
    a fresh one per value (it keeps the containers it is inside of, to refuse a cycle)."""
    return make_encoder({}, _no_default, encode_basestring, None, ": ", ", ", False, False, True)


try:
    from _json import encode_basestring, make_encoder, make_scanner

    _scan: Callable[[str, int], tuple[Any, int]] | None = make_scanner(_Decoding())  # type: ignore[arg-type]
    _encoder()  # the signature relied on
except (ImportError, TypeError):  # pragma: no cover - another interpreter: the json module itself
    _scan = None


def loads(text: str | bytes) -> Any:
    """``json.loads``; a ValueError for anything that is not one JSON value."""
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(text)
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration:
        raise ValueError("Expecting value") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError("Extra data")
    return value


def dumps(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)``."""
    if _scan is None:  # pragma: no cover
        import json

        return json.dumps(value, ensure_ascii=False)
    return "".join(_encoder()(value, 0))


def _sha256() -> Callable[..., Any]:
    """The interpreter's own SHA-256 (no OpenSSL to load); hashlib's where it is missing."""
    for module in ("_sha2", "_sha256"):  # 3.12+, 3.11
        try:
            return __import__(module).sha256  # type: ignore[no-any-return]
        except (ImportError, AttributeError):
            continue
    import hashlib  # pragma: no cover

    return hashlib.sha256  # pragma: no cover


_SHA256 = _sha256()
_INNER = bytes(x ^ 0x36 for x in range(256))
_OUTER = bytes(x ^ 0x5C for x in range(256))


def hmac_sha256(key: bytes, message: bytes) -> str:
    """``hmac.new(key, message, hashlib.sha256).hexdigest()`` (RFC 2104, as ``hmac.py`` computes it without
    OpenSSL)."""
    if len(key) > 64:
        key = _SHA256(key).digest()
    key = key.ljust(64, b"\0")
    inner = _SHA256(key.translate(_INNER) + message).digest()
    return str(_SHA256(key.translate(_OUTER) + inner).hexdigest())
