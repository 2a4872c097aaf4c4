"""Builds behind the answer: after `auto` answered a space with the reference (nothing compiled
yet), the space's C module is generated and compiled in a detached background process, so that
the next call of the same space (same file, settings and options) finds it built and runs warm.

Without this, a user who always runs the default backend would never get the compiled path for
a space the reference can answer: every call would pay the reference again.

- The current command is never delayed or changed by it: the job (the plan, pickled) is written
  to the cache directory and one detached process (`python -m solverspace.registry.background`, its own
  session, lower priority, no terminal) is started when none is running; any failure to do so
  is ignored. The answer given now is the reference's, as before.
- One background builder at a time per cache directory (a lock file, `background.lock`): it
  takes the waiting jobs (`pending_*.job`) one by one, builds each exactly as `--backend c`
  would (the plan cache entry and the module, `translators/c/plan_cache.py`), and exits when
  none is left. A job that fails is dropped and its error logged.
- `background.log` in the cache directory: one JSON line per job (what, how long, the
  builder's CPU seconds so far, any error).
- Off with `SOLVERSPACE_BACKGROUND_BUILD=0` (or `AutoBackend(build_behind=False)`); only spaces
  whose reference walk went past `AUTO_BUILD_WORK` candidate values are built (smaller ones are
  answered by the reference about as fast as a warm compiled call), and only where it pays
  (`pays`: two later calls must save what the build costs; measured on the small T1 files, the
  build cost more CPU than Kernel Tuner's whole process, and the -O0 module of a quick answer
  counts them as fast as the -O2 one). `SOLVERSPACE_BACKGROUND_BUILD=always`: paying or not.
  Spaces with orders and
  plans that cannot be pickled (a closure iterator's Python function) are never built behind.

The jobs are pickles in the cache directory, which holds the compiled modules this tool loads
and runs anyway: it must be as private as they are (the default is under the user's home).
"""
from __future__ import annotations

import hashlib
import json
import os
import pickle
import sys
import time
from pathlib import Path

ENV = "SOLVERSPACE_BACKGROUND_BUILD"
BUILD_COST = 0.6        # CPU-s of an optimized (-O2) build behind an answer (the T1 modules: 0.5-0.9)
PAYBACK_CALLS = 2       # a build is left behind an answer only when this many later calls save what it costs
O0_SAVING = 7.5e-9      # s per candidate value an -O2 walk saves over the -O0 one (18 M candidate values,
                        # one thread: 0.60 against 0.74 CPU-s)
LOCK = "background.lock"
LOG = "background.log"
LOG_LIMIT = 1 << 20      # the log starts again past 1 MiB
_SPAWNED: list = []      # the builder processes this process started (kept, so that none is collected early)


def enabled() -> bool:
    """Whether builds behind the answer are on (`SOLVERSPACE_BACKGROUND_BUILD` not 0/no/off/false)."""
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "no", "off", "false")


def always() -> bool:
    """`SOLVERSPACE_BACKGROUND_BUILD=always`: a build behind every answer past `AUTO_BUILD_WORK`
    candidate values and behind every quick answer, paying or not (for spaces counted again and
    again)."""
    return os.environ.get(ENV, "").strip().lower() == "always"


def pays(saving: float) -> bool:
    """Whether a build behind an answer is worth its CPU: when `PAYBACK_CALLS` later calls, each
    `saving` CPU seconds faster with the optimized module, save its `BUILD_COST`. Behind a
    reference answer the saving is the reference's walk (measured), behind a quick (-O0) answer
    the walk times `O0_SAVING` (40 million candidate values and more: past `AUTO_QUICK_WORK`, so
    none at the defaults). So a one-off count of a small T1 file spends no CPU behind its answer
    (with the build it was 0.85 CPU-s on gemm_milo, against Kernel Tuner's 0.61)."""
    return saving * PAYBACK_CALLS >= BUILD_COST


def try_lock(folder: Path):
    """The builder lock, held (a file descriptor), or None when another process holds it."""
    import fcntl
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError:
        os.close(fd)
        return None


def release_lock(fd) -> None:
    """Release the builder lock `try_lock` returned."""
    import fcntl
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def schedule(plan, c_options: dict, with_derived=()) -> bool:
    """Leave a job to build `plan`'s C module, and start a builder when none runs. True when a
    job was left; never raises (the current command must not notice)."""
    try:
        from solverspace.translators.c.build import cache_dir, write_atomically   # imported by auto already
        options = {k: v for k, v in c_options.items() if k != "threads"}   # threads do not change the module
        data = pickle.dumps({"plan": plan, "options": options, "with_derived": tuple(with_derived)},
                            protocol=pickle.HIGHEST_PROTOCOL)
        folder = cache_dir()
        job = folder / f"pending_{hashlib.sha256(data).hexdigest()[:32]}.job"
        if not job.exists():
            write_atomically(job, data)
        fd = try_lock(folder)
        if fd is None:        # a builder is running: it takes this job before it exits (see `main`)
            return True
        release_lock(fd)
        spawn_builder(folder)
        return True
    except Exception:   # noqa: BLE001 - unpicklable plans, an unwritable cache, no fork: only slower later
        return False


def spawn_builder(folder: Path) -> None:
    """Start a builder process for the jobs in `folder`, detached (tests replace it to run `run` themselves)."""
    import subprocess
    root = str(Path(__file__).resolve().parents[1])    # this very package, wherever it was imported from
    path = os.environ.get("PYTHONPATH")
    env = dict(os.environ, SOLVERSPACE_CACHE=str(folder),
               PYTHONPATH=root + (os.pathsep + path if path else ""))
    _SPAWNED.append(subprocess.Popen([sys.executable, "-m", "solverspace.registry.background", str(folder)], env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
                                     cwd=str(folder)))


def pending(folder: Path) -> list[Path]:
    """The jobs waiting in a cache directory, oldest first."""
    jobs = []
    for p in folder.glob("pending_*.job"):
        try:
            jobs.append((p.stat().st_mtime, p))
        except OSError:
            pass
    return [p for _, p in sorted(jobs)]


def build_job(job: Path) -> dict:
    """Build one job as `--backend c` would; the record logged for it."""
    start = time.perf_counter()
    record = {"job": job.name}
    try:
        content = pickle.loads(job.read_bytes())
        plan = content["plan"]
        record.update(space=str(plan.model.source),
                      settings={s.name: str(s.value) for s in plan.model.settings if s.value != s.default})
        from solverspace.translators.c.backend import CBackend
        CBackend.configured(**content["options"]).enumerator(plan, content["with_derived"])   # generates and compiles
        record["ok"] = True
    except Exception as exc:   # noqa: BLE001 - logged; the foreground compiles it when needed, and says why
        record.update(ok=False, error=f"{type(exc).__name__}: {exc}"[:2000])
    finally:
        job.unlink(missing_ok=True)
    record["seconds"] = round(time.perf_counter() - start, 3)
    return record


def _cpu() -> float:
    import resource
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _log(folder: Path, record: dict) -> None:
    try:
        log = folder / LOG
        mode = "w" if log.exists() and log.stat().st_size > LOG_LIMIT else "a"
        with open(log, mode, encoding="utf-8") as handle:
            handle.write(json.dumps(dict(record, time=time.strftime("%Y-%m-%dT%H:%M:%S"),
                                         builder_cpu=round(_cpu(), 3), pid=os.getpid())) + "\n")
    except OSError:
        pass


def run(folder: Path) -> int:
    """The builder: every waiting job, one at a time, while holding the lock; the number built.
    After releasing the lock it looks once more, so a job left while it was finishing (whose
    scheduler saw the lock held and started no builder) is not forgotten."""
    built = 0
    while True:
        fd = try_lock(folder)
        if fd is None:
            return built      # another builder holds it, and will see the jobs
        try:
            while jobs := pending(folder):
                record = build_job(jobs[0])
                built += bool(record.get("ok"))
                _log(folder, record)
        finally:
            release_lock(fd)
        if not pending(folder):
            return built


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    folder = Path(argv[0]) if argv else None
    if folder is None:
        from solverspace.translators.c.build import cache_dir
        folder = cache_dir()
    try:
        os.nice(10)   # behind whatever the user runs next
    except OSError:
        pass
    run(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
