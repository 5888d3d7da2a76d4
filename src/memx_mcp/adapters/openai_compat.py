"""OpenAIRefiner: the Reflector's model at any OpenAI-compatible ``/chat/completions`` endpoint (a local
Ollama, llama.cpp or LM Studio server, or a hosted one), through httpx: ``timeout`` bounds each call whole,
not each read (``http_deadline.py``)."""

from __future__ import annotations

from typing import Any

import httpx

from ..domain.errors import RateLimited
from ..engine.reflector.readings.prompting import PromptRefiner
from .http_deadline import deadline_client


class OpenAIRefiner(PromptRefiner):
    backend = "openai"

    def __init__(self, base_url: str, model: str, api_key: str = "", timeout: float = 60.0) -> None:
        super().__init__()
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client: httpx.Client = deadline_client(timeout, timeout=timeout, headers=headers, trust_env=False)

    def complete(self, system: str, prompt: str, max_tokens: int) -> str:
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}],
            "max_tokens": max_tokens,
            "temperature": 0,
        }
        response = self._client.post(self.url, json=body)
        if response.status_code == 429:
            raise RateLimited(f"{self.url} answered 429", response.headers.get("retry-after", ""))
        response.raise_for_status()
        data: Any = response.json()
        text = str(data["choices"][0]["message"].get("content") or "")
        usage = data.get("usage") or {}
        self._count(
            len(system) + len(prompt),
            len(text),
            int(usage.get("prompt_tokens") or 0),
            int(usage.get("completion_tokens") or 0),
        )
        return text
