"""The Ray executor: a pool of search actors, the calls of both search phases with
retries, and index builds as Ray tasks.

Ray schedules, restarts and moves data; this module only decides what each actor is asked
and what a failure means. An actor that dies during a call is restarted by Ray (up to
``fts.ray_max_restarts`` times) and the call is sent again (up to ``fts.ray_retries``
times per share and query); past either budget the query raises
:class:`~datafusion_fts.errors.DistributedError`. A reply is a share's whole answer, so
a query never returns a partial top-k.
"""

from __future__ import annotations

import os
import pickle
import queue
import threading
import time
import uuid
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..errors import DistributedError, FtsError, InvalidArgument, PlanError
from ..index.segment_set import SegmentSet
from ..index.shares import Partition, Share, partition
from ..index.term_statistics import StatsReply, StatsRequest
from ..operators.base import Metrics
from ..operators.distributed_search import ShareSearch
from ..settings import Settings
from ..storage.files.layout import is_remote
from ..storage.files.manifest import IndexMeta, Manifest, SegmentMeta
from ..storage.snapshot import TableSnapshot
from ..storage.sources.object_sources import SourceStores
from ..storage.stores.shared import SharedLocation, open_shared
from . import _compat
from .build import IDS_PER_TASK, build_task

PARTITIONS_KEPT = 16
SHARE_REFS_KEPT = 256
# How long a call waits for a restarting actor to come back before giving up.
RESTART_WAIT_S = 60.0


@dataclass(frozen=True)
class PoolConfig:
    actors: int
    max_restarts: int


class _Pool:
    """Search actors of one Ray session (shared by every database of this process)."""

    def __init__(self, config: PoolConfig) -> None:
        ray = _compat.ray()
        from .worker import SearchWorker

        actor = ray.remote(SearchWorker).options(
            num_cpus=0, max_restarts=config.max_restarts, max_task_retries=0
        )
        self.actors = [actor.remote() for _ in range(config.actors)]
        self.session = _session()

    def pids(self) -> list[int]:
        ray = _compat.ray()
        return ray.get([a.pid.remote() for a in self.actors])


_POOLS: dict[PoolConfig, _Pool] = {}
_POOLS_LOCK = threading.Lock()


def _session() -> tuple[str, str]:
    context = _compat.ray().get_runtime_context()
    return context.get_node_id(), context.get_job_id()


def _ensure_ray(ray_init: dict[str, Any]) -> None:
    ray = _compat.ray()
    if not ray.is_initialized():
        ray.init(**ray_init)


def pool(config: PoolConfig, ray_init: dict[str, Any]) -> _Pool:
    """The process's actor pool for ``config`` (Ray started with ``ray_init`` if needed),
    once a start begun in the background (:meth:`RayExecutor.start_in_background`) has
    ended."""
    _background.wait()
    return _pool_now(config, ray_init)


def _pool_now(config: PoolConfig, ray_init: dict[str, Any]) -> _Pool:
    with _POOLS_LOCK:
        _ensure_ray(ray_init)
        found = _POOLS.get(config)
        if found is None or found.session != _session():
            found = _POOLS[config] = _Pool(config)
        return found


class _BackgroundStart:
    """Ray and a pool's actors started on a thread of their own, so that the ~2-3 s of
    ``ray.init`` and the actors' start overlap what the caller does meanwhile (opening
    the database, planning its first search) instead of following it.

    One thread, made at the first start and kept for the process's life: Linux ties the
    processes ``ray.init`` spawns (GCS, raylet) to the *thread* that spawned them
    (``PR_SET_PDEATHSIG``), so a thread that ended would take the local cluster with it.
    It is a daemon: at exit Ray's own ``atexit`` shutdown stops the cluster, and a start
    still under way dies with the process, its children with it (they share its fate), so
    nothing outlives the process. A failed start is kept and raised, as a
    :class:`DistributedError`, by the next call that needs Ray (:meth:`wait`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[PoolConfig, dict[str, Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._idle = threading.Event()  # no start pending
        self._idle.set()
        self._error: Exception | None = None

    def begin(self, config: PoolConfig, ray_init: dict[str, Any]) -> None:
        """Start Ray (unless it runs) and ``config``'s actors in the background."""
        with self._lock:
            self._idle.clear()
            self._jobs.put((config, dict(ray_init)))
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name="fts-ray-start", daemon=True)
                self._thread.start()

    def _serve(self) -> None:
        while True:
            config, ray_init = self._jobs.get()
            try:
                _pool_now(config, ray_init)
            except Exception as exc:  # noqa: BLE001 (any failure is the caller's: raised by wait())
                with self._lock:
                    self._error = self._error or exc
            with self._lock:
                if self._jobs.empty():
                    self._idle.set()

    def wait(self) -> None:
        """Wait for the starts begun; raise the first failure (once) as an FtsError."""
        self._idle.wait()
        with self._lock:
            error, self._error = self._error, None
        if isinstance(error, FtsError):
            raise error
        if error is not None:
            raise DistributedError(f"Ray did not start (connect(executor='ray') started it in the background): {error!r}") from error


_background = _BackgroundStart()


def _retire(config: PoolConfig) -> None:
    """Stop a pool's actors (some may be restarting) and forget it."""
    with _POOLS_LOCK:
        old = _POOLS.pop(config, None)
    if old is not None:
        for actor in old.actors:
            _compat.ray().kill(actor, no_restart=True)


def _size(value: Any) -> int:
    return len(pickle.dumps(value, protocol=5))


class RayExecutor:
    """A database's view of the Ray cluster: where its segments are, how many actors
    search them, and the retry budget."""

    name = "ray"

    def __init__(
        self, storage: SharedLocation, actors: int, max_restarts: int, retries: int, ray_init: dict[str, Any]
    ) -> None:
        self.storage = storage
        self.workers = actors
        self.retries = retries
        self.config = PoolConfig(actors, max_restarts)
        self.ray_init = dict(ray_init)
        self.token = uuid.uuid4().hex  # this database incarnation
        self._partitions: OrderedDict[tuple, tuple[Partition, list[SegmentSet]]] = OrderedDict()
        self._refs: OrderedDict[str, Any] = OrderedDict()
        self._refs_session: tuple[str, str] | None = None  # the Ray session the refs live in
        self._lock = threading.Lock()  # the caches above, for concurrent queries

    def start_in_background(self) -> None:
        """Begin starting Ray and this executor's search actors on a thread of their own
        (``connect(executor="ray")``): the first search then finds them started, or
        waits only for the rest; a failure is raised by the first call that needs Ray."""
        _background.begin(self.config, self.ray_init)

    # -- partition ------------------------------------------------------------------
    def partition(self, snapshot: TableSnapshot, sets: dict[str, SegmentSet]) -> Partition:
        """The shares of ``sets`` for this executor's actors (cached while the sets are)."""
        key = (snapshot.name, tuple((c, id(s)) for c, s in sets.items()))
        with self._lock:
            hit = self._partitions.get(key)
            if hit is not None:
                self._partitions.move_to_end(key)
                return hit[0]
        persisted = {c: frozenset(s.id for s in snapshot.meta.indexes[c].segments) for c in sets}
        found = partition(sets, persisted, self.workers, snapshot.deleted, self.storage, self.token)
        with self._lock:
            # The sets are kept with their partition, so their ids cannot be reused meanwhile.
            self._partitions[key] = (found, list(sets.values()))
            while len(self._partitions) > PARTITIONS_KEPT:
                self._partitions.popitem(last=False)
        return found

    def _ref(self, share: Share, session: tuple[str, str]) -> Any:
        with self._lock:
            if session != self._refs_session:  # Ray was restarted: its objects are gone
                self._refs.clear()
                self._refs_session = session
            ref = self._refs.get(share.key)
            if ref is None:
                ref = self._refs[share.key] = _compat.ray().put(share)
                while len(self._refs) > SHARE_REFS_KEPT:
                    self._refs.popitem(last=False)
            else:
                self._refs.move_to_end(share.key)
            return ref

    # -- calls --------------------------------------------------------------------------
    def _run(self, method: str, shares: list[Share], args: list[Any], metrics: Metrics) -> list[Any]:
        """``method`` on the actor of each share, every reply or an error."""
        ray = _compat.ray()
        errors = _compat.ray_exceptions()
        current = pool(self.config, self.ray_init)
        actors = current.actors
        metrics.values.setdefault("actors", len(actors))

        def submit(i: int) -> Any:
            metrics.add("messages", 1)
            # The share travels inside a list, so Ray hands its reference over unresolved:
            # the actor fetches it only when it does not hold the share yet.
            box = [self._ref(shares[i], current.session)]
            return getattr(actors[i % len(actors)], method).remote(shares[i].key, box, args[i])

        pending = {i: submit(i) for i in range(len(shares))}
        attempts = dict.fromkeys(pending, 0)
        out: list[Any] = [None] * len(shares)
        while pending:
            i, ref = next(iter(pending.items()))
            try:
                out[i] = ray.get(ref)
            except errors.RayActorError as exc:
                attempts[i] += 1
                metrics.add("retries", 1)
                if attempts[i] > self.retries or not self._await_actor(actors[i % len(actors)]):
                    _retire(self.config)  # the next query starts fresh actors
                    raise DistributedError(
                        f"{method} on the worker of rows {shares[i].display()} failed after "
                        f"{attempts[i] - 1} retries (fts.ray_retries = {self.retries}, "
                        f"fts.ray_max_restarts = {self.config.max_restarts}): {type(exc).__name__}"
                    ) from None
                pending[i] = submit(i)
                continue
            except errors.RayTaskError as exc:
                cause = exc.cause
                if isinstance(cause, FtsError):
                    raise cause from None
                raise DistributedError(f"{method} on the worker of rows {shares[i].display()} failed: {cause!r}") from None
            del pending[i]
        return out

    @staticmethod
    def _await_actor(actor: Any) -> bool:
        """Wait for a restarting actor to answer again; False if it is gone for good."""
        ray = _compat.ray()
        errors = _compat.ray_exceptions()
        deadline = time.monotonic() + RESTART_WAIT_S
        while time.monotonic() < deadline:
            try:
                ray.get(actor.pid.remote(), timeout=max(0.1, deadline - time.monotonic()))
                return True
            except errors.ActorUnavailableError:
                time.sleep(0.05)
            except (errors.RayActorError, errors.GetTimeoutError):
                return False
        return False

    def statistics(self, shares: list[Share], request: StatsRequest, metrics: Metrics) -> list[StatsReply]:
        """Phase one on every share."""
        with metrics.timer("phase1_ms"):
            replies = self._run("statistics", shares, [request] * len(shares), metrics)
        metrics.add("stats_bytes", _size(request) * len(shares) + sum(_size(r) for r in replies))
        return replies

    def search(
        self, shares: list[Share], requests: list[ShareSearch], metrics: Metrics
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Phase two on the given shares: each one's top-k."""
        results = self._run("search", shares, requests, metrics)
        metrics.add("query_bytes", sum(_size(r) for r in requests))
        metrics.add("result_bytes", sum(rows.nbytes + scores.nbytes for rows, scores in results))
        return results

    def build(
        self, manifest: Manifest, snapshot: TableSnapshot, index: IndexMeta, ranges: list[tuple[int, int]]
    ) -> tuple[Manifest, list[SegmentMeta]]:
        """Segments over each of ``ranges`` (committed rows), built and written by parallel
        Ray tasks; the manifest reserving their file ids and their metadata, in range
        order. A failed task fails the build once every task has ended: nothing is
        committed, and the caller collects what the others wrote."""
        ray = _compat.ray()
        errors = _compat.ray_exceptions()
        _background.wait()
        _ensure_ray(self.ray_init)
        task = ray.remote(build_task).options(num_cpus=1, max_retries=0)
        blocks = []
        for _ in ranges:
            ids = []
            for _ in range(IDS_PER_TASK):
                seg_id, manifest = manifest.file_id("seg")
                ids.append(seg_id)
            blocks.append(ids)
        meta = snapshot.meta
        refs = [task.remote(self.storage, meta, index, lo, hi, ids) for (lo, hi), ids in zip(ranges, blocks)]
        ray.wait(refs, num_returns=len(refs))  # every task has ended, failed or not
        out: list[SegmentMeta] = []
        try:
            for (lo, hi), ref in zip(ranges, refs):
                try:
                    out.extend(ray.get(ref))
                except errors.RayTaskError as exc:
                    if isinstance(exc.cause, FtsError):
                        raise exc.cause from None
                    raise DistributedError(f"index build task for rows {lo}..{hi} failed: {exc.cause!r}") from None
                except errors.RayError as exc:
                    raise DistributedError(f"index build task for rows {lo}..{hi} failed: {type(exc).__name__}") from None
        except FtsError:  # (what the other tasks wrote goes too)
            open_shared(self.storage, for_writes=True).delete_segments(i for ids in blocks for i in ids)
            raise
        return manifest, out

    def actor_pids(self) -> list[int]:
        """The process id of each search actor (for operations and fault tests)."""
        return pool(self.config, self.ray_init).pids()


class RayHost(Protocol):
    """What a database shows the Ray executor: where it is, its settings, how to start Ray."""

    path: str | os.PathLike[str] | None  # (a directory every node can read, or an object store's URL)
    settings: Settings
    ray_init: dict[str, Any]
    sources: SourceStores  # (the storage options that reach an object store)


_EXECUTORS: weakref.WeakKeyDictionary[RayHost, tuple[tuple, RayExecutor]] = weakref.WeakKeyDictionary()


def executor_for(db: RayHost) -> RayExecutor:
    """The Ray executor of ``db`` under its current settings (one per configuration;
    Ray itself starts, with ``db.ray_init``, at the first call that needs it)."""
    if not _compat.ray_available():
        raise InvalidArgument(_compat.INSTALL_HINT)
    if db.path is None:
        raise PlanError(
            "fts.executor = 'ray' needs a database directory that every Ray node can read; "
            "an in-memory database (fts.connect() without a path) has none"
        )
    settings = db.settings
    storage = SharedLocation(settings.get("fts.ray_storage") or os.fspath(db.path),
                             tuple(sorted(db.sources.options.items())))
    if is_remote(storage.url) and storage.url.rstrip("/") != os.fspath(db.path).rstrip("/"):
        raise PlanError(f"fts.ray_storage is {storage.url}, an object store, but the database is {db.path}: its "
                        "commits would not be there; open the database at that URL instead "
                        f"(fts.connect({storage.url!r}, storage_options=...))")
    config = (
        storage, settings.get("fts.ray_actors"), settings.get("fts.ray_max_restarts"),
        settings.get("fts.ray_retries"),
    )
    found = _EXECUTORS.get(db)
    if found is None or found[0] != config:
        found = (config, RayExecutor(*config, ray_init=db.ray_init))
        _EXECUTORS[db] = found
    return found[1]

