"""The MCP flush tool's model: the client's own, through MCP sampling, when the client offers
it; else the llm model the server was started with (``slotmem mcp --flush-model``).

The flusher is synchronous and asks its model once per chunk of the conversation. On a
connection of MCP 2025-11-25 or earlier the flusher runs in a worker thread and each question
is a ``sampling/createMessage`` request sent mid-call. From 2026-07-28 a server may not send
requests mid-call: the tool answers ``input_required`` with the next question, the client
samples and calls again with the answer, and the flusher is run again from the start, the
answers so far (kept in ``request_state``, which the client echoes) replayed in order, until
it needs none: one round per chunk (the SDK's client allows 10 by default). Nothing is
written before the last round.
"""

from __future__ import annotations

import json

from ..errors import ModelError

MODEL_ID = "mcp-sampling"
MAX_TOKENS = 4096  # a reply of facts; the flusher asks for at most its facts budget
_FIRST_ROUND_VERSION = "2026-07-28"  # input_required instead of requests mid-call


class _Response:
    def __init__(self, text: str):
        self._text = text

    def text(self) -> str:
        return self._text


class _Ask(BaseException):
    """The flusher asked a question no earlier round answered (BaseException: the flusher turns
    every Exception of its model into a ModelError)."""

    def __init__(self, system: str, prompt: str):
        self.system, self.prompt = system, prompt


class ReplayModel:
    """Answers the flusher's questions with the client's answers so far, in order; the first
    question beyond them stops the flush (``_Ask``)."""

    model_id = MODEL_ID
    supports_schema = False

    def __init__(self, answers: list[str]):
        self.answers = list(answers)
        self.asked = 0

    def prompt(self, prompt: str, system: str = "", schema=None, **options) -> _Response:
        if self.asked >= len(self.answers):
            raise _Ask(system, prompt)
        self.asked += 1
        return _Response(self.answers[self.asked - 1])


class MidCallModel:
    """Asks the client mid-call (MCP up to 2025-11-25), from the flusher's worker thread."""

    model_id = MODEL_ID
    supports_schema = False

    def __init__(self, session):
        self.session = session

    def prompt(self, prompt: str, system: str = "", schema=None, **options) -> _Response:
        import anyio.from_thread
        from mcp import types

        async def sample():
            return await self.session.create_message(
                [_message(prompt, types)], max_tokens=MAX_TOKENS, system_prompt=system
            )

        return _Response(_text(anyio.from_thread.run(sample)))


def can_sample(ctx) -> bool:
    capabilities = ctx.client_capabilities
    return capabilities is not None and capabilities.sampling is not None


async def flush(memory, ctx, conversation, conversation_id, fallback_model):
    """Run ``memory.flush`` with the client's model (sampling) or ``fallback_model``; returns
    its report, or the ``input_required`` result that asks the client the next question."""
    import anyio.to_thread

    def run(model):
        return memory.flush(conversation, model, conversation_id)

    if not can_sample(ctx):
        if fallback_model is None:
            raise ModelError(
                "this MCP client offers no sampling, and the server has no model of its own: "
                "start it with 'slotmem mcp --flush-model MODEL' (an llm model id)"
            )
        return await anyio.to_thread.run_sync(run, fallback_model)
    version = ctx.protocol_version or ""
    if version < _FIRST_ROUND_VERSION:
        return await anyio.to_thread.run_sync(run, MidCallModel(ctx.session))
    answers = _answers(ctx)
    try:
        return await anyio.to_thread.run_sync(run, ReplayModel(answers))
    except _Ask as ask:
        return _input_required(ask, answers)


def _answers(ctx) -> list[str]:
    """The answers of the earlier rounds (``request_state``) and this round's."""
    try:
        answers = json.loads(ctx.request_state or "[]")
    except json.JSONDecodeError:
        answers = None
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise ModelError("the client sent back a request_state this server did not write")
    response = (ctx.input_responses or {}).get("sample")
    if response is not None:
        answers.append(_text(response))
    return answers


def _input_required(ask: _Ask, answers: list[str]):
    from mcp import types
    from mcp_types import CreateMessageRequest, CreateMessageRequestParams, InputRequiredResult

    params = CreateMessageRequestParams(
        messages=[_message(ask.prompt, types)], max_tokens=MAX_TOKENS, system_prompt=ask.system
    )
    return InputRequiredResult(
        input_requests={"sample": CreateMessageRequest(params=params)},
        request_state=json.dumps(answers),
    )


def _message(prompt: str, types):
    return types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))


def _text(result) -> str:
    content = getattr(result, "content", None)
    parts = content if isinstance(content, list) else [content]
    text = "".join(getattr(part, "text", "") or "" for part in parts)
    if not text:
        raise ModelError("the client's model answered the sampling request with no text")
    return text
