"""The language model: resolved through llm, asked one chunk at a time, its failures made
into one-line ModelErrors."""

from __future__ import annotations

from ..errors import ModelError
from ..safety import one_line
from .prompt import JSON_INSTRUCTIONS
from .reply import Extraction


def resolve(model):
    "An llm model object from an id or alias (None: llm's default model)."
    import llm

    if model is not None and not isinstance(model, str):
        return model
    name = model or llm.get_default_model()
    try:
        return llm.get_model(name)
    except llm.UnknownModelError:
        raise ModelError(
            f"Unknown model {name!r}: run 'llm models' to list the models you can use, "
            "or install the llm plugin that provides it"
        ) from None


def ask(model, system: str, prompt: str) -> str:
    """Send one prompt to the model (with the Extraction schema when it supports schemas)
    and return the reply text; any failure is a ModelError."""
    use_schema = bool(getattr(model, "supports_schema", False))
    if not use_schema:
        system += "\n" + JSON_INSTRUCTIONS
    try:
        response = model.prompt(prompt, system=system, schema=Extraction if use_schema else None)
        return response.text()
    except Exception as ex:
        raise model_error(model, ex) from ex


def model_error(model, ex: Exception) -> ModelError:
    import llm

    model_id = getattr(model, "model_id", str(model))
    detail = one_line(str(ex) or type(ex).__name__, 300)
    if isinstance(ex, llm.NeedsKeyException):
        return ModelError(f"Model {model_id!r} needs an API key: {detail}")
    return ModelError(
        f"Model {model_id!r} failed ({type(ex).__name__}: {detail}); nothing was written. "
        "Check the network, the API key ('llm keys set ...') and your quota, then try again"
    )
