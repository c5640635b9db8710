"""The layers of slotmem/ (docs/design.md): arrows point down, at run time too, and no module
reaches into another's private members."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "slotmem"
# What each part may import from slotmem (function-level imports count too). "base" is the
# top-level modules every layer may use: records, reports, errors, validation, safety (a package
# that imports nothing else of slotmem's).
BASE = {"records", "reports", "errors", "validation", "safety"}
ALLOWED = {
    "base": BASE,
    "safety": {"safety"},
    "storage": BASE | {"storage"},
    "search": BASE | {"search"},
    "vectors": BASE | {"vectors", "storage"},
    # the store package (the facade, one module per concern) composes the layers below it;
    # ingest: the deprecated alias Store.flush
    "store": BASE | {"store", "storage", "search", "vectors", "ingest", "pg"},
    # the same memory on PostgreSQL: the Store's decisions (search, transfer, the semantic leg)
    # over its own SQL; ingest: the deprecated alias Store.flush, as the store has it
    "pg": BASE | {"pg", "storage", "search", "vectors", "ingest"},
    "ingest": BASE | {"ingest", "store"},
    # vectors: the llm model hook; ingest: the flush tool (the flusher, run for an agent)
    "agents": BASE | {"agents", "storage", "store", "vectors", "ingest"},
    "cli": BASE | {"cli", "storage", "search", "ingest", "agents", "store", "ui", "__init__"},
    "ui": BASE | {"ui", "store", "agents"},  # the browser UI: a client of the Store
    # clients of the Store for other ecosystems: asyncio, LangGraph, datasette
    "aio": BASE | {"store"},
    "integrations": BASE | {"integrations", "store", "agents"},
}


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[0] == "migrations":
            continue
        part = parts[0] if len(parts) > 1 or parts[0] == "aio" else "base"
        if parts[0] in ("__init__", "__main__"):
            continue
        yield path, parts, part


def imported(path: Path, parts: tuple[str, ...]) -> set[str]:
    """The top-level parts of slotmem this module imports (relative or absolute)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(parts[:-1])[: len(parts) - node.level]
                if node.module is None and not base:  # from . import x, y: modules of slotmem
                    found.update(
                        "__init__" if a.name.startswith("__") else a.name for a in node.names
                    )
                    continue
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.startswith("slotmem"):
                target = node.module.split(".")[1:] or ["__init__"]
            else:
                continue
            found.add(target[0] if target else "__init__")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("slotmem."):
                    found.add(alias.name.split(".")[1])
    return found


@pytest.mark.parametrize("path,parts,part", list(modules()), ids=lambda v: str(v))
def test_imports_point_down(path, parts, part):
    wrong = imported(path, parts) - ALLOWED[part]
    assert not wrong, f"slotmem/{'/'.join(parts)}.py ({part}) imports {sorted(wrong)}"


@pytest.mark.parametrize("path,parts,part", list(modules()), ids=lambda v: str(v))
def test_no_reach_into_private_members(path, parts, part):
    """``x._name`` only on ``self``/``cls`` (a class's own), never on another object; the
    Store may pass its own bound private methods as callables."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ):
            pytest.fail(f"slotmem/{'/'.join(parts)}.py:{node.lineno} reaches into .{node.attr}")
