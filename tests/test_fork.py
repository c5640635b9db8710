"""Fork safety: a child forked at each point where slotmem holds a lock, a thread or a queue
searches, writes, prunes, closes and exits within the bound. Each scenario runs in a process of
its own (tests/forking.py), which forks; pytest's process is never forked.

``SLOTMEM_FORK_RUNS`` sets how many children each scenario forks (3 by default, to keep the
suite fast; the issue's check is ``SLOTMEM_FORK_RUNS=20 SLOTMEM_FORK_BOUND=10``),
``SLOTMEM_FORK_BOUND`` the seconds each child has before it counts as hung: 60 in the suite, a
liveness bound for a loaded machine (10 failed once with other suites sharing two cores); a
hung child never finishes, so the bound only has to be finite."""

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from slotmem import Store

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")

RUNS = int(os.environ.get("SLOTMEM_FORK_RUNS", "3"))
BOUND = float(os.environ.get("SLOTMEM_FORK_BOUND", "60"))
SCRIPT = Path(__file__).with_name("forking.py")


@pytest.mark.parametrize(
    "scenario",
    [
        "search",
        "queued",
        "transaction",
        "semantic",
        "asked",
        "spilled",
        "asyncio",
        "writing",
        "inside",
        "thread",
        "pool",
    ],
)
def test_a_child_forked_while_slotmem_holds_a_lock_finishes(scenario, tmp_path):
    database = tmp_path / "memory.db"
    try:
        done = subprocess.run(
            [sys.executable, str(SCRIPT), scenario, str(RUNS), str(database), str(BOUND)],
            check=False,
            capture_output=True,
            text=True,
            timeout=RUNS * (BOUND + 5) + 120,
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{scenario}: the forking parent itself hung\n{e.stderr}")
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome == {"ok": RUNS, "hung": [], "failed": []}, (
        f"{scenario}: children hung (killed after {BOUND} s) or failed: {outcome}\n"
        f"where they were:\n{done.stderr}"
    )
    with Store(database) as store:  # each child's write is in the file
        written = [f for f in store.list_facts("agent", limit=None) if f.key.startswith("child.")]
        assert len(written) == (
            0 if scenario in ("spilled", "writing", "inside") else RUNS
        )  # refused


def test_a_fork_warning_goes_to_logging_when_the_process_has_it(caplog):
    from slotmem.storage import forks

    with caplog.at_level(logging.WARNING, logger="slotmem"):
        forks.warn("slotmem: forking while another thread is inside slotmem")
        try:
            raise ValueError("boom")
        except ValueError:
            forks.warn("slotmem: resetting it after fork failed", failed=True)
    first, second = caplog.records
    assert first.getMessage() == "slotmem: forking while another thread is inside slotmem"
    assert second.exc_info[1].args == ("boom",)


def test_a_fork_warning_without_logging_goes_to_standard_error():
    """The fork handlers import nothing: a process that never imported logging gets the line on
    standard error, as logging's last resort handler would have written it."""
    code = (
        "import sys\nfrom slotmem.storage import forks\n"
        "assert 'logging' not in sys.modules\n"
        "forks.warn('slotmem: forking while another thread is inside slotmem')\n"
        "try:\n    raise ValueError('boom')\n"
        "except ValueError:\n    forks.warn('slotmem: resetting it after fork failed', failed=True)\n"
        "assert 'logging' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr.splitlines() == [
        "slotmem: forking while another thread is inside slotmem",
        "slotmem: resetting it after fork failed (ValueError('boom'))",
    ]
