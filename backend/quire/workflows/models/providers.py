"""Choosing a model provider by name (QUIRE_MODEL_PROVIDER)."""

from __future__ import annotations

from quire.settings import get_settings
from quire.workflows.models import ModelProvider
from quire.workflows.models.fake import FakeProvider
from quire.workflows.models.local import LocalProvider
from quire.workflows.models.openai import OpenAIProvider


def get_provider(name: str, timeout_s: float = 60.0) -> ModelProvider:
    """The provider named by QUIRE_MODEL_PROVIDER; network calls stay within `timeout_s`."""
    if name == "openai":
        return OpenAIProvider(get_settings(), timeout_s)
    if name == "local":
        return LocalProvider()
    if name == "fake":
        return FakeProvider()
    raise ValueError(f"model provider {name!r} is not available")
