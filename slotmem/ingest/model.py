"""The language model: resolved through llm, asked one chunk at a time, its failures made
into one-line ModelErrors."""

from __future__ import annotations

from ..errors import InvalidInput, ModelError
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


def check_options(model, options: dict | None) -> dict:
    """``options`` as the model takes them (``{"temperature": "0.1"}`` from a command line
    becomes 0.1), checked before anything is sent: an unknown option or a bad value is one
    line naming the options the model has."""
    if not options:
        return {}
    if not isinstance(options, dict):
        raise InvalidInput(f"options must be a dict of option names and values, not {options!r}")
    schema = getattr(model, "Options", None)
    if schema is None:
        return dict(options)
    from pydantic import ValidationError

    try:
        checked = schema(**options)
    except ValidationError as ex:
        error = ex.errors()[0]
        name = ".".join(str(p) for p in error["loc"]) or "options"
        known = ", ".join(sorted(getattr(schema, "model_fields", {}))) or "none"
        raise InvalidInput(
            f"Model {model.model_id!r} rejects option {name!r}: {error['msg']} "
            f"(its options: {known})"
        ) from None
    return {name: getattr(checked, name) for name in options}


def ask(model, system: str, prompt: str, options: dict | None = None) -> str:
    """Send one prompt to the model (with the Extraction schema when it supports schemas)
    and return the reply text; any failure is a ModelError."""
    use_schema = bool(getattr(model, "supports_schema", False))
    if not use_schema:
        system += "\n" + JSON_INSTRUCTIONS
    try:
        response = model.prompt(
            prompt, system=system, schema=Extraction if use_schema else None, **(options or {})
        )
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
