"""Choosing a model provider by name (QUIRE_MODEL_PROVIDER)."""

from __future__ import annotations

from quire.settings import Settings
from quire.workflows.models import ModelProvider
from quire.workflows.models.fake import FakeProvider
from quire.workflows.models.local import LocalProvider
from quire.workflows.models.openai import OpenAIProvider


def get_provider(settings: Settings, timeout_s: float = 60.0) -> ModelProvider:
    """The provider `QUIRE_MODEL_PROVIDER` names; network calls stay within `timeout_s`."""
    name = settings.model_provider
    if name == "openai":
        return OpenAIProvider(settings, timeout_s)
    if name == "local":
        return LocalProvider()
    if name == "fake":
        return FakeProvider(settings.data_dir)
    raise ValueError(f"model provider {name!r} is not available")
