"""Load on `POST /v1/search`: N concurrent clients for a bounded time, without and with a
concurrent ingest (uploads through the API in a loop), against a direct `Index.search` baseline
run in this process with the same number of threads.

    .venv/bin/python benchmarks/load.py [--clients 8] [--seconds 10] [--embedder minilm]
                                        [--corpus docs] [--mode hybrid] [--top-k 10]

The server is a real `ragwright serve` subprocess on a free loopback port (so client and server
do not share a GIL); every phase stops by itself after ``--seconds``. It prints requests/s,
p50/p95/p99 latency and the error count per phase, and the HTTP/direct ratios. The machine is
small and shared: read the ratios, not the absolute figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np

from ragwright import Index

ROOT = Path(__file__).resolve().parent.parent
WARM_UP_SECONDS = 2.0


@dataclass
class Phase:
    name: str
    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    uploads: int = 0
    upload_errors: list[str] = field(default_factory=list)

    def row(self) -> str:
        count = len(self.latencies_ms)
        p50, p95, p99 = (
            np.percentile(self.latencies_ms, [50, 95, 99]) if count else (float("nan"),) * 3
        )
        rate = count / self.seconds if self.seconds else 0.0
        errors = len(self.errors) + len(self.upload_errors)
        uploads = str(self.uploads) if self.uploads else "-"
        return (
            f"{self.name:<34} {count:>8} {rate:>8.1f} {p50:>8.1f} {p95:>8.1f} {p99:>8.1f} "
            f"{errors:>6} {uploads:>7}"
        )

    @property
    def rate(self) -> float:
        return len(self.latencies_ms) / self.seconds if self.seconds else 0.0

    @property
    def p50(self) -> float:
        return float(np.percentile(self.latencies_ms, 50))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0, help="Length of each phase.")
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--corpus", type=Path, default=ROOT / "docs")
    parser.add_argument("--mode", default="hybrid", choices=["hybrid", "bm25", "vector"])
    parser.add_argument("--top-k", type=int, default=10)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="ragwright-load-") as tmp:
        directory = Path(tmp) / "index"
        started = time.perf_counter()
        with Index(directory, embedder=args.embedder) as index:
            report = index.ingest([args.corpus])
            queries = sample_queries(index)
            stats = index.documents.stats()
        print(
            f"corpus {args.corpus}: {stats.documents} documents, {stats.chunks} chunks "
            f"(indexed in {time.perf_counter() - started:.1f} s, {len(report.failed)} failed); "
            f"embedder {args.embedder}; {len(queries)} queries; mode {args.mode}, "
            f"top_k {args.top_k}; {args.clients} clients; {args.seconds:.0f} s per phase"
        )
        body = {"mode": args.mode, "top_k": args.top_k}

        with Index(directory) as index:
            direct = run_direct(index, queries, body, args.clients, args.seconds)
        with ServerProcess(directory) as url:
            warm = Phase("warm-up")
            asyncio.run(drive(url, queries, body, args.clients, WARM_UP_SECONDS, warm))
            alone = Phase("HTTP /v1/search")
            asyncio.run(drive(url, queries, body, args.clients, args.seconds, alone))
            loaded = Phase("HTTP /v1/search + ingest via API")
            stop = threading.Event()
            uploader = threading.Thread(target=upload_loop, args=(url, stop, loaded))
            uploader.start()
            try:
                asyncio.run(drive(url, queries, body, args.clients, args.seconds, loaded))
            finally:
                stop.set()
                uploader.join()
            documents = httpx.get(f"{url}/v1/stats", timeout=30).json()["documents"]

    print()
    header = f"{'phase':<34} {'requests':>8} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} "
    print(header + f"{'p99 ms':>8} {'errors':>6} {'uploads':>7}")
    for phase in (direct, alone, loaded):
        print(phase.row())
    print()
    print(f"HTTP/direct: req/s x{alone.rate / direct.rate:.2f}, p50 x{alone.p50 / direct.p50:.2f}")
    print(
        f"with ingest/without: req/s x{loaded.rate / alone.rate:.2f}, "
        f"p50 x{loaded.p50 / alone.p50:.2f}; {loaded.uploads} uploads, "
        f"{documents} documents at the end"
    )
    for phase in (direct, alone, loaded):
        for error in (phase.errors + phase.upload_errors)[:5]:
            print(f"error in {phase.name}: {error}")


def sample_queries(index: Index, count: int = 200) -> list[str]:
    """Queries made of the first words of chunks spread over the corpus (deterministic)."""
    texts = [c.text for d in index.documents.list() for c in index.documents.chunks_of(d.id)]
    step = max(1, len(texts) // count)
    queries = [" ".join(text.split()[:8]) for text in texts[::step]]
    return [q for q in queries if q][:count]


def run_direct(
    index: Index, queries: list[str], body: dict[str, object], clients: int, seconds: float
) -> Phase:
    """The baseline: ``clients`` threads calling `Index.search` directly, no HTTP."""
    phase = Phase(f"direct Index.search ({clients} threads)")
    mode, top_k = str(body["mode"]), int(str(body["top_k"]))
    index.search(queries[0], mode=mode, top_k=top_k)  # load the model outside the timing
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def worker(offset: int) -> None:
        n = offset
        while time.perf_counter() < deadline:
            began = time.perf_counter()
            try:
                index.search(queries[n % len(queries)], mode=mode, top_k=top_k)
                elapsed = (time.perf_counter() - began) * 1000
                with lock:
                    phase.latencies_ms.append(elapsed)
            except Exception as error:
                with lock:
                    phase.errors.append(repr(error))
            n += clients

    timed(phase, lambda: run_threads(worker, clients))
    return phase


def run_threads(worker: Callable[[int], None], count: int) -> None:
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def timed(phase: Phase, run: Callable[[], None]) -> None:
    began = time.perf_counter()
    run()
    phase.seconds = time.perf_counter() - began


async def drive(
    url: str,
    queries: list[str],
    body: dict[str, object],
    clients: int,
    seconds: float,
    phase: Phase,
) -> None:
    """``clients`` concurrent request loops until the deadline."""
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
        deadline = time.perf_counter() + seconds

        async def loop(offset: int) -> None:
            n = offset
            while time.perf_counter() < deadline:
                began = time.perf_counter()
                try:
                    response = await client.post(
                        "/v1/search", json={"query": queries[n % len(queries)], **body}
                    )
                    if response.status_code == 200:
                        phase.latencies_ms.append((time.perf_counter() - began) * 1000)
                    else:
                        phase.errors.append(f"{response.status_code} {response.text[:200]}")
                except httpx.HTTPError as error:
                    phase.errors.append(repr(error))
                n += clients

        began = time.perf_counter()
        await asyncio.gather(*(loop(i) for i in range(clients)))
        phase.seconds = time.perf_counter() - began


def upload_loop(url: str, stop: threading.Event, phase: Phase) -> None:
    """Upload changing files until stopped: every upload adds or replaces a document."""
    with httpx.Client(base_url=url, timeout=120) as client:
        n = 0
        while not stop.is_set():
            text = "\n\n".join(
                f"Load test paragraph {i} of upload {n}: ingest runs while clients search."
                for i in range(40)
            )
            files = [("files", (f"load-{n % 20}.md", f"# Upload {n}\n\n{text}\n", "text/markdown"))]
            try:
                response = client.post("/v1/documents", files=files)
                if response.status_code == 200 and not response.json()["failed"]:
                    phase.uploads += 1
                else:
                    phase.upload_errors.append(f"{response.status_code} {response.text[:200]}")
            except httpx.HTTPError as error:
                phase.upload_errors.append(repr(error))
            n += 1


class ServerProcess:
    """`ragwright serve` in a subprocess on a free loopback port, stopped on exit."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def __enter__(self) -> str:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if k != "RAGWRIGHT_CONFIG"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ragwright", "serve", "--index", str(self.directory),
             "--port", str(port), "--log-level", "warning"],
            cwd=self.directory.parent, env=env, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    return url
            except httpx.HTTPError:
                time.sleep(0.1)
        self.process.kill()
        raise SystemExit("the server did not start within 60 s")

    def __exit__(self, *exc_info: object) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()


if __name__ == "__main__":
    main()
