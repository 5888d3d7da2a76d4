"""What a client shows and a model reads about a tool, resource or prompt: the function's docstring as one
paragraph (the source's line breaks and indentation would reach every client and cost the model tokens)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def paragraph(doc: str | None) -> str:
    return " ".join((doc or "").split())


def described(register: Callable[..., Callable[[F], F]], *args: Any, **options: Any) -> Callable[[F], F]:
    """``register(*args, **options)`` (``server.tool``, ``server.resource``, ``server.prompt``) with the decorated
    function's docstring as its description, in one paragraph."""

    def wrap(fn: F) -> F:
        return register(*args, description=paragraph(fn.__doc__), **options)(fn)

    return wrap
