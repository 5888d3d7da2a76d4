"""AnthropicRefiner: the Reflector's LLM through the ``anthropic`` SDK (an adapter: imported lazily)."""

from __future__ import annotations

from typing import Any

from ..domain.errors import RateLimited
from ..engine.reflector.readings.prompting import PromptRefiner


class AnthropicRefiner(PromptRefiner):
    """Messages API calls through the ``anthropic`` SDK (model, base URL, timeout set by the caller; no
    retries: a failure falls back to rules at once, a rate limit leaves the session for later). ``timeout``
    bounds each call whole, not each read (``http_deadline.py``)."""

    backend = "anthropic"

    def __init__(self, api_key: str, model: str, base_url: str = "", timeout: float = 20.0) -> None:
        import anthropic
        import httpx2

        from .http_deadline import deadline_client

        super().__init__()
        self._client = anthropic.Anthropic(
            api_key=api_key,
            base_url=base_url or None,
            timeout=timeout,
            max_retries=0,
            http_client=deadline_client(timeout, http=httpx2, timeout=timeout),
        )
        self._rate_limit_error = anthropic.RateLimitError
        self.model = model

    def complete(self, system: str, prompt: str, max_tokens: int) -> str:
        try:
            response: Any = self._client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                system=system,
                messages=[{"role": "user", "content": prompt}],
            )
        except self._rate_limit_error as exc:
            after = exc.response.headers.get("retry-after", "") if exc.response is not None else ""
            raise RateLimited("the Anthropic API is rate limited", after) from exc
        usage = getattr(response, "usage", None)
        text = "".join(getattr(b, "text", "") for b in response.content)
        self._count(
            len(prompt) + len(system),
            len(text),
            int(getattr(usage, "input_tokens", 0) or 0),
            int(getattr(usage, "output_tokens", 0) or 0),
        )
        return text


def make_refiner(
    model: str, base_url: str, timeout: float, purpose: str = "reflect"
) -> tuple[PromptRefiner | None, str]:
    """An Anthropic refiner when ``ANTHROPIC_API_KEY`` is set; otherwise None and the reason."""
    import os

    key = os.environ.get("ANTHROPIC_API_KEY", "").strip()
    if not key:
        return None, "no ANTHROPIC_API_KEY: the Reflector ran in rules mode"
    try:
        return AnthropicRefiner(key, model, base_url, timeout), ""
    except Exception as exc:  # the SDK missing or misconfigured: rules still work
        return None, f"LLM unavailable ({type(exc).__name__}): the Reflector ran in rules mode"
