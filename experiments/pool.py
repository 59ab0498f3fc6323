"""A process pool that survives its trials: the ``process`` executor.

Each worker is a process of our own (``forkserver`` context) with one pipe to this process,
which knows the trial every worker holds. A worker that dies (a signal, an out-of-memory
kill, ``os._exit``) or passes the run's ``trial_timeout`` / ``trial_memory`` costs its trial
only: the trial becomes a failed result (``on_failure``), the worker is replaced and the
other trials go on. Workers are reused across trials and runs, so they keep their per-process
dataset caches. The fault matrix is in docs/design.md (Experiments: "Faults").
"""

from __future__ import annotations

import atexit
import math
import multiprocessing
import os
import signal
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.connection import wait

__all__ = ["run_isolated", "shutdown", "death_cause", "can_fork_workers"]

#: How often the memory of busy workers is sampled when ``trial_memory`` is set (seconds).
MEMORY_SAMPLE_SECONDS = 0.2
#: With ``trial_timeout``, a new worker gets this long to import the run's modules.
STARTUP_SECONDS = 120.0
#: A worker whose last trial took less than this gets its next trial before it asks (the
#: round trip of short trials is hidden; a long trial never waits behind another).
PREFETCH_SECONDS = 0.5
#: How long a dead worker's exit code may take to arrive (it names the cause in the row).
DEATH_REPORT_SECONDS = 30.0

_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20 if hasattr(os, "sysconf") else 4096 / 2**20


def _context():
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["privpub.experiments.pool"])  # only the standard library
        return ctx
    return multiprocessing.get_context("spawn")


def can_fork_workers() -> bool:
    """False inside another pool's worker (a daemonic process, or a loky worker, whose
    start method our workers cannot use): there the trials run in the process itself."""
    if multiprocessing.current_process().daemon:
        return False
    return multiprocessing.get_start_method(allow_none=True) in (None, "fork", "spawn",
                                                                  "forkserver")


# ----------------------------------------------------------------------------- worker side
def _die_with_parent() -> None:
    """Linux: this worker gets SIGKILL when the process that forked it ends."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _import_quietly(modules) -> None:
    """Import the run's modules before its first trial (a failure shows in the trial)."""
    import importlib

    for module in modules:
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - the trial that needs it reports it
            pass


def _worker(conn) -> None:
    """Run the trials the parent sends until it sends None or goes away."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _die_with_parent()
    func, common = None, {}
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        if message[0] == "run":  # a new run: its function, arguments and environment
            _, func, common, path, environ, modules = message
            sys.path[:] = path
            os.environ.update(environ)
            _import_quietly(modules)
            conn.send(("ready", None, None))  # imports done: the first trial's clock starts
            continue
        _, index, trial = message
        try:
            reply = ("done", index, func(*trial, **common))
        except BaseException as exc:  # noqa: BLE001 - reported, the worker goes on
            reply = ("raised", index, "".join(traceback.format_exception_only(exc)).strip())
        try:
            conn.send(reply)
        except (OSError, EOFError):  # the parent is gone
            return
        except Exception as exc:  # noqa: BLE001 - e.g. a result that cannot be pickled
            conn.send(("raised", index, f"the trial's result could not be sent back: {exc}"))


# ----------------------------------------------------------------------------- parent side
class _Worker:
    def __init__(self, ctx):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child,), daemon=True,
                                name="privpub-worker")
        self.proc.start()
        child.close()
        self.run_id = None
        self.code: dict[str, str] = {}  # module -> hash of the code it ran
        self.queue: deque = deque()  # (index, trial) sent, in order; the first is running
        self.started = 0.0  # when the first of the queue started
        self.ready = False  # has imported the run's modules (the time limit applies)
        self.last_seconds = math.inf  # how long its last trial took

    def send(self, item: tuple, setup: tuple, run_id: int, code: dict) -> bool:
        """Send ``item`` (after the run's setup, if this worker has not had it); False when
        the worker has died and closed its pipe (its death may not be reported yet)."""
        try:
            if self.run_id != run_id:
                self.conn.send(setup)
            self.conn.send(("trial", *item))
        except (BrokenPipeError, ConnectionResetError):
            return False
        if self.run_id != run_id:
            self.run_id, self.ready = run_id, False
            self.code.update(code)
        if not self.queue:
            self.started = time.monotonic()
        self.queue.append(item)
        return True

    def kill(self) -> None:
        try:
            self.proc.kill()
            self.proc.join(2)
        except (OSError, ValueError, AssertionError):
            pass
        self.conn.close()

    def rss_mb(self) -> float:
        try:
            with open(f"/proc/{self.proc.pid}/statm") as fh:
                return int(fh.read().split()[1]) * _PAGE_MB
        except (OSError, ValueError, IndexError):
            return 0.0


_POOL: list[_Worker] = []
_RUNS = iter(range(1, sys.maxsize))


def shutdown() -> None:
    """Stop every worker of the pool (they are started again on demand)."""
    while _POOL:
        worker = _POOL.pop()
        try:
            worker.conn.send(None)
        except (OSError, ValueError):
            pass
        worker.proc.join(1)
        if worker.proc.is_alive():
            worker.kill()
        else:
            worker.conn.close()


atexit.register(shutdown)


def _oom_kills() -> int | None:
    """The kernel's out-of-memory kill count of this cgroup (None where it cannot be read)."""
    for path in ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"):
        try:
            with open(path) as fh:
                for line in fh:
                    if line.startswith("oom_kill "):
                        return int(line.split()[1])
        except (OSError, ValueError):
            continue
    return None


def death_cause(exitcode: int | None, oom_before: int | None = None) -> str:
    """Why a worker ended, in the words of a failed row."""
    if exitcode is None:
        return "worker died"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        if name == "SIGKILL":
            after = _oom_kills()
            if oom_before is not None and after is not None and after > oom_before:
                return "killed: out of memory"
            return "worker killed by SIGKILL (the out-of-memory killer or another process)"
        return f"worker killed by {name}"
    return f"worker exited with code {exitcode} in the middle of the trial"


def run_isolated(
    func: Callable,
    trials: Iterable[tuple],
    common: dict,
    *,
    n_jobs: int,
    on_failure: Callable[[tuple, str], object],
    trial_timeout: float | None = None,
    trial_memory: float | None = None,
    code: dict[str, str] | None = None,
) -> Iterator:
    """Yield ``func(*trial, **common)`` for every trial, in completion order, computed by
    ``n_jobs`` worker processes; a trial whose worker dies, raises, or exceeds
    ``trial_timeout`` seconds or ``trial_memory`` MB yields ``on_failure(trial, reason)``.

    ``code`` (module -> hash of the code the trials run): each worker imports these modules
    before its first trial of the run (a trial's time does not count the worker's start-up),
    and a worker that ran an earlier run with another version of one of them is replaced,
    not reused."""
    ctx = _context()
    run_id = next(_RUNS)
    code = code or {}
    setup = ("run", func, common, list(sys.path), dict(os.environ), sorted(code))
    for worker in [w for w in _POOL if any(w.code.get(m, h) != h for m, h in code.items())]:
        _POOL.remove(worker)  # it imported code that has changed since
        worker.kill()
    pending = iter(enumerate(trials))
    retry: deque = deque()  # queued behind a trial whose worker died: not started, sent again

    def next_trial():
        return retry.popleft() if retry else next(pending, None)

    busy: dict[int, _Worker] = {}  # sentinel -> worker with trials sent
    oom = [_oom_kills()]  # the kernel's OOM kills so far (read again after each death)
    try:
        while True:
            while len(busy) < n_jobs and (item := next_trial()) is not None:
                worker = _idle_worker(ctx, busy, n_jobs)
                if not worker.send(item, setup, run_id, code):  # died while idle
                    if worker.run_id is None:
                        raise RuntimeError("a new worker process ended before its first trial")
                    retry.appendleft(item)
                    _POOL.remove(worker)
                    worker.kill()
                    continue
                busy[worker.proc.sentinel] = worker
            for worker in busy.values():  # a short trial's successor waits in the pipe
                if len(worker.queue) == 1 and worker.last_seconds < PREFETCH_SECONDS:
                    if (item := next_trial()) is None:
                        break
                    if not worker.send(item, setup, run_id, code):  # its trial just killed it
                        retry.appendleft(item)  # not started: the death is handled below
            if not busy:
                break
            timeout = _next_check(busy.values(), trial_timeout, trial_memory)
            ready = wait([w.conn for w in busy.values()] + list(busy), timeout)
            for worker in list(busy.values()):
                yield from _results(worker, ready, oom, trial_timeout, trial_memory, on_failure,
                                    retry)
                if not worker.queue:
                    del busy[worker.proc.sentinel]
    except BaseException:  # Ctrl-C, the consumer stopped or an error: no worker keeps a trial
        for worker in busy.values():
            worker.kill()
            if worker in _POOL:
                _POOL.remove(worker)
        raise


def _idle_worker(ctx, busy: dict, n_jobs: int) -> _Worker:
    holding = {id(w) for w in busy.values()}
    for worker in _POOL:
        if id(worker) not in holding and worker.proc.is_alive():
            return worker
    for worker in [w for w in _POOL if not w.proc.is_alive()]:
        _POOL.remove(worker)
    while len(_POOL) > n_jobs:  # a run with fewer jobs than the last: stop the extras
        extra = next(w for w in _POOL if id(w) not in holding)
        _POOL.remove(extra)
        extra.kill()
    worker = _Worker(ctx)
    _POOL.append(worker)
    return worker


def _limit(worker: _Worker, trial_timeout: float) -> float:
    """The seconds the worker's first trial may run: ``trial_timeout`` once it is ready."""
    return trial_timeout if worker.ready else max(trial_timeout, STARTUP_SECONDS)


def _next_check(workers, trial_timeout, trial_memory) -> float | None:
    """Seconds until a limit must be checked again (None: wait for a result)."""
    waits = []
    if trial_timeout:
        now = time.monotonic()
        waits += [max(0.0, w.started + _limit(w, trial_timeout) - now) for w in workers]
    if trial_memory:
        waits.append(MEMORY_SAMPLE_SECONDS)
    return min(waits) if waits else None


def _results(worker: _Worker, ready, oom: list, trial_timeout, trial_memory, on_failure,
             retry: deque) -> Iterator:
    """The results ``worker`` has now: its answers, or the failure of its running trial
    when it died or passed a limit (then it is killed, and the trials queued behind go to
    ``retry``)."""
    closed = False  # the worker closed its end of the pipe: it is dying
    if worker.conn in ready:
        try:
            while worker.queue and worker.conn.poll():
                kind, _, value = worker.conn.recv()
                if kind == "ready":  # a trial's time does not count the worker's start-up
                    worker.started, worker.ready = time.monotonic(), True
                    continue
                (_, trial), now = worker.queue.popleft(), time.monotonic()
                worker.last_seconds, worker.started = now - worker.started, now
                yield value if kind == "done" else on_failure(trial, value)
        except (EOFError, OSError):
            closed = True  # died while answering: handled as a death below
    if not worker.queue:
        return
    reason = None
    if closed or worker.proc.sentinel in ready or not worker.proc.is_alive():
        worker.proc.join(DEATH_REPORT_SECONDS)  # its exit code comes through the forkserver
        reason = death_cause(worker.proc.exitcode, oom[0])
        oom[0] = _oom_kills()
    elif trial_timeout and time.monotonic() - worker.started > _limit(worker, trial_timeout):
        reason = (f"exceeded trial_timeout={trial_timeout:g} s" if worker.ready else
                  f"the worker did not start within {STARTUP_SECONDS:g} s")
    elif trial_memory:
        rss = worker.rss_mb()
        if rss > trial_memory:
            reason = f"exceeded trial_memory={trial_memory:g} MB (resident {rss:.0f} MB)"
    if reason is None:
        return
    worker.kill()
    if worker in _POOL:
        _POOL.remove(worker)
    (_, trial), *behind = worker.queue
    worker.queue.clear()
    retry.extendleft(reversed(behind))
    yield on_failure(trial, reason)
