"""Reaching a Ray cluster, and checking it has room for the workers before any work starts.

Ray is imported here, on use, so ragwright without the ``[ray]`` extra says which line installs
it. An address that refuses connections is found out with one TCP connect (``ray.init`` would
retry for a minute). A cluster too small for the workers asked for is refused up front: an
actor that can never be placed waits forever, it does not fail.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType

from ragwright.errors import ClusterError, ConfigError, MissingDependencyError

INSTALL = "pip install 'ragwright[ray]'"
#: Where ``ray.init`` finds a cluster by itself (the one ``ray start`` on this machine runs).
_SELF_FOUND = ("auto", "local")
#: The object store of a cluster started here for one run: files travel through it in tasks
#: of a few MB, so a small store keeps a shared machine's memory free.
_LOCAL_OBJECT_STORE = 512 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class RaySettings:
    """How an ingest runs on Ray.

    ``address``: a running cluster (``HOST:PORT`` of its head, ``auto``, or ``ray://…`` for Ray
    Client); None: the cluster this process already joined, else a new one on this machine,
    bound to loopback and shut down after the run. ``workers``: worker processes (default: one
    per CPU of the cluster), each reserving ``cpus_per_worker`` CPUs (a fraction, so a small
    cluster places them all). ``files_per_task`` files go to a worker at a time (whole files);
    ``start_timeout`` bounds how long the workers may take to start."""

    address: str | None = None
    workers: int | None = None
    cpus_per_worker: float = 0.5
    files_per_task: int = 8
    start_timeout: float = 120.0

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"--workers must be at least 1, not {self.workers}")
        if self.cpus_per_worker <= 0:
            raise ConfigError(f"CPUs per worker must be above 0, not {self.cpus_per_worker}")
        if self.files_per_task < 1:
            raise ConfigError(f"files per task must be at least 1, not {self.files_per_task}")


def import_ray() -> ModuleType:
    try:
        import ray
    except ImportError as error:
        raise MissingDependencyError("ingest --engine ray", INSTALL) from error
    return ray


@contextmanager
def connected(settings: RaySettings) -> Iterator[ModuleType]:
    """Ray, connected to the cluster ``settings`` name (see `RaySettings.address`); a cluster
    this process started is shut down on exit, one it joined is left running. A process
    already connected to Ray (it called ``ray.init`` itself) keeps that connection."""
    ray = import_ray()
    address = settings.address
    if address is not None and address not in _SELF_FOUND and "://" not in address:
        _check_reachable(address)
    if ray.is_initialized():
        yield ray
        return
    try:
        if address is None:
            ray.init(
                num_cpus=os.cpu_count() or 1,
                include_dashboard=False,
                object_store_memory=_LOCAL_OBJECT_STORE,
                _node_ip_address="127.0.0.1",
                configure_logging=False,
                log_to_driver=False,
            )
        else:
            ray.init(address=address, configure_logging=False, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as error:
        where = address or "a new local cluster"
        raise ClusterError(f"cannot start or join the Ray cluster ({where}): {error}") from error
    try:
        yield ray
    finally:
        ray.shutdown()


def worker_count(ray: ModuleType, settings: RaySettings) -> int:
    """How many workers to start: those asked for, if the cluster has the CPUs to place them
    (`ClusterError` otherwise), else one per CPU."""
    cpus = float(ray.cluster_resources().get("CPU", 0.0))
    workers = settings.workers or max(1, int(cpus))
    needed = workers * settings.cpus_per_worker
    if needed > cpus:
        raise ClusterError(
            f"the Ray cluster has {cpus:g} CPUs; {workers} workers of {settings.cpus_per_worker:g} "
            f"CPU need {needed:g}: ask for fewer --workers or add nodes"
        )
    return workers


def _check_reachable(address: str) -> None:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"a Ray address is HOST:PORT, auto or ray://HOST:PORT, not {address!r}")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5.0).close()
    except OSError as error:
        raise ClusterError(
            f"cannot reach the Ray cluster at {address} ({error.strerror or error}): is "
            "`ray start --head` running there, and its port open to this machine?"
        ) from error
