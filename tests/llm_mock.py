"""Queue-driven mock models for the llm library: no network, replies come from a list.

    def test_it(mock_models):
        mock_models.plain.enqueue({"facts": [...]})   # dicts are sent as JSON
        mock_models.schema.enqueue('{"facts": []}')   # strings are sent verbatim
        mock_models.plain.enqueue(TimeoutError("boom"))  # exceptions are raised
        llm.get_model("mock")  # -> mock_models.plain

Each model records the ``llm.Prompt`` objects it received in ``.prompts``.
"""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import llm
import pytest


class MockModel(llm.Model):
    model_id = "mock"
    supports_schema = False

    class Options(llm.Options):  # what the flusher's options= must reach (prompt.options)
        temperature: float | None = None
        max_tokens: int | None = None

    def __init__(self):
        self.replies: list = []
        self.prompts: list = []

    def enqueue(self, *replies) -> MockModel:
        self.replies.extend(replies)
        return self

    def execute(self, prompt, stream, response, conversation):
        self.prompts.append(prompt)
        if not self.replies:
            raise AssertionError(f"{self.model_id}: no reply queued")
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        yield reply if isinstance(reply, str) else json.dumps(reply)


class MockSchemaModel(MockModel):
    "A model with structured output: the flusher passes it a schema."

    model_id = "mock-schema"
    supports_schema = True


class FailingModel(MockModel):
    "Raises ``error`` on every call, like a model whose API is unreachable."

    model_id = "mock-fail"

    def __init__(self, error: BaseException | None = None):
        super().__init__()
        self.error = error or ConnectionError("Connection refused: api.example.invalid")

    def execute(self, prompt, stream, response, conversation):
        self.prompts.append(prompt)
        raise self.error
        yield  # pragma: no cover - makes this a generator, like a real model


class MockKeyModel(llm.KeyModel):
    "Needs an API key that the tests never configure."

    model_id = "mock-key"
    needs_key = "slotmem-mock"
    key_env_var = "SLOTMEM_MOCK_API_KEY"

    def execute(self, prompt, stream, response, conversation, key):
        yield '{"facts": []}'


class MockPlugin:
    __name__ = "slotmem-tests-mock-models"

    def __init__(self, *models):
        self.models = models

    @llm.hookimpl
    def register_models(self, register):
        for model in self.models:
            register(model)


PLUGIN_NAME = "slotmem-tests-mock-models"


@pytest.fixture
def llm_user_dir(tmp_path, monkeypatch):
    """An empty llm user directory (no keys, no default model, no logs) for this test.

    Also stops llm from loading installed plugins (llm's own test switch), so only the
    mock models and llm's built-in ones exist: nothing can reach the network."""
    monkeypatch.setattr(sys, "_called_from_test", True, raising=False)
    path = tmp_path / "llm-user"
    path.mkdir()
    monkeypatch.setenv("LLM_USER_PATH", str(path))
    monkeypatch.delenv("SLOTMEM_MOCK_API_KEY", raising=False)
    return path


@pytest.fixture
def mock_models(llm_user_dir):
    "Register the mock models with llm for the duration of one test."
    models = SimpleNamespace(
        plain=MockModel(), schema=MockSchemaModel(), failing=FailingModel(), keyed=MockKeyModel()
    )
    plugin = MockPlugin(models.plain, models.schema, models.failing, models.keyed)
    pm = llm.pm  # llm's pluggy PluginManager
    pm.register(plugin, name=PLUGIN_NAME)
    try:
        yield models
    finally:
        pm.unregister(name=PLUGIN_NAME)


@pytest.fixture(scope="session")
def migrated_logs_db(tmp_path_factory):
    "An empty llm logs database with all of llm's migrations applied (they take seconds)."
    import sqlite_utils
    from llm.migrations import migrate

    path = tmp_path_factory.mktemp("llm-template") / "logs.db"
    with sqlite_utils.Database(path) as db:
        migrate(db)
    return path


@pytest.fixture
def log_chat(llm_user_dir, migrated_logs_db):
    """``log_chat([(prompt, reply), ...], path=None) -> conversation id``: log a conversation
    the way the llm tool does (llm 0.36: threads, messages and parts) to ``path``, by
    default the llm logs database in ``llm_user_dir``."""
    import shutil

    import sqlite_utils

    def log(turns, path=None):
        path = path or llm_user_dir / "logs.db"
        if not path.exists():
            shutil.copy(migrated_logs_db, path)
        model = MockModel().enqueue(*[reply for _, reply in turns])
        conversation = model.conversation()
        with sqlite_utils.Database(path) as db:
            for prompt, _ in turns:
                response = conversation.prompt(prompt, system="Be brief.")
                response.text()
                response.log_to_db(db)
        return conversation.id

    return log
