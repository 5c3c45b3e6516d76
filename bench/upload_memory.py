"""What an upload costs the web process: its resident memory while ten 20 MB uploads arrive at once,
then while one batch of many small documents arrives (`POST /batches`).

    python bench/upload_memory.py [--uploads 10] [--mb 20] [--storage local,s3] [--batch-files 500] [--batch-kb 40]

Starts its own `quire web` (SQLite, a private Redis, and for `s3` an S3-compatible server on
127.0.0.1, moto's) in a temporary directory, warms it with one small upload, then sends the
uploads concurrently, each body streamed by the client, and samples the web process's VmRSS every
10 ms. Prints a markdown table and writes bench/results/upload_memory.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend.tests.integration.stack import memory_kb  # noqa: E402
from quire.migrations import upgrade  # noqa: E402
from quire.queue.embedded_redis import EmbeddedRedis, free_port  # noqa: E402

BOUNDARY = "bench-boundary"
LINE = b"A line of a long quarterly report about shipping volumes, carriers and late orders.\n"


def body(size: int) -> Iterator[bytes]:
    yield (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="report.txt"\r\n'
        "Content-Type: text/plain\r\n\r\n"
    ).encode()
    piece = LINE * (64 * 1024 // len(LINE))
    sent = 0
    while sent < size:
        chunk = piece[: size - sent]
        sent += len(chunk)
        yield chunk
    yield f"\r\n--{BOUNDARY}--\r\n".encode()


def batch_body(files: int, size: int) -> Iterator[bytes]:
    yield f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="workflow"\r\n\r\ndocument_summary\r\n'.encode()
    for n in range(files):
        yield (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="report-{n}.txt"\r\n'
            "Content-Type: text/plain\r\n\r\n"
        ).encode()
        yield f"Report {n}.\n".encode() + (LINE * (size // len(LINE) + 1))[:size]
        yield b"\r\n"
    yield f"--{BOUNDARY}--\r\n".encode()


def peak_growth_kb(pid: int, work: Callable[[], object]) -> tuple[int, int, float]:
    """Resident memory before `work`, its peak while `work` runs (sampled every 10 ms), and the seconds it took."""
    before = memory_kb(pid)
    peak = before
    sampling = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not sampling.is_set():
            peak = max(peak, memory_kb(pid))
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.monotonic()
    try:
        work()
    finally:
        sampling.set()
        sampler.join()
    return before, peak, time.monotonic() - started


def quire(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "quire", *args], env=env, input=stdin, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def measure(
    storage: str, uploads: int, size: int, redis_url: str, s3_endpoint: str | None, batch_files: int, batch_size: int
) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="quire-upload-bench-") as tmp:
        data = Path(tmp)
        env = {
            **os.environ,
            "QUIRE_ENV": "test",
            "QUIRE_DATA_DIR": str(data),
            "QUIRE_DATABASE_URL": f"sqlite:///{data / 'quire.db'}",
            "QUIRE_REDIS_URL": redis_url,
            "QUIRE_UPLOADS_PER_MINUTE": "100000",
            "QUIRE_UPLOAD_MB_PER_MINUTE": "100000",
            "QUIRE_STORAGE_QUOTA_MB": "100000",
        }
        if storage == "s3":
            import boto3

            bucket = f"bench-{os.getpid()}-{int(time.time())}"
            boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
            env.update({"QUIRE_STORAGE_URL": f"s3://{bucket}/quire", "QUIRE_S3_ENDPOINT_URL": s3_endpoint or ""})
        upgrade(env["QUIRE_DATABASE_URL"])
        quire(env, "users", "create", "bench@example.com", "--password-stdin", stdin="bench password 1234\n")
        token = quire(env, "tokens", "create", "bench@example.com")
        port = free_port()
        log = (data / "web.log").open("wb")
        web = subprocess.Popen(
            [sys.executable, "-m", "quire", "web", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            base = f"http://127.0.0.1:{port}"
            headers = {"Authorization": f"Bearer {token}", "Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError("quire web did not start")
                time.sleep(0.2)
            # Warm up: the first upload loads what an upload needs (boto3's models, the parser).
            for _ in range(2):
                warm = httpx.post(f"{base}/uploads", content=body(256 * 1024), headers=headers, timeout=60)
                assert warm.status_code == 201, warm.text
            time.sleep(0.5)
            codes: list[int] = []

            def one(_: int) -> int:
                with httpx.Client(timeout=300) as client:
                    return client.post(f"{base}/uploads", content=body(size), headers=headers).status_code

            def concurrently() -> None:
                with ThreadPoolExecutor(uploads) as pool:
                    codes.extend(pool.map(one, range(uploads)))

            before, peak, seconds = peak_growth_kb(web.pid, concurrently)
            after = memory_kb(web.pid)
            assert codes == [201] * uploads, codes
            batch: dict[str, float] = {}
            if batch_files:

                def one_batch() -> None:
                    answer = httpx.post(
                        f"{base}/batches", content=batch_body(batch_files, batch_size), headers=headers, timeout=600
                    )
                    assert answer.status_code == 202, answer.text
                    assert len(answer.json()["jobs"]) == batch_files

                time.sleep(0.5)
                batch_before, batch_peak, batch_seconds = peak_growth_kb(web.pid, one_batch)
                batch = {
                    "batch_rss_before_mb": round(batch_before / 1024, 1),
                    "batch_rss_growth_mb": round((batch_peak - batch_before) / 1024, 1),
                    "batch_seconds": round(batch_seconds, 2),
                }
        finally:
            web.terminate()
            web.wait(30)
            log.close()
    return {
        "rss_before_mb": round(before / 1024, 1),
        "rss_peak_mb": round(peak / 1024, 1),
        "rss_growth_mb": round((peak - before) / 1024, 1),
        "rss_after_mb": round(after / 1024, 1),
        "seconds": round(seconds, 2),
        "mb_per_s": round(uploads * size / 1024 / 1024 / seconds, 1),
        **batch,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--uploads", type=int, default=10)
    parser.add_argument("--mb", type=float, default=20)
    parser.add_argument("--storage", default="local,s3")
    parser.add_argument("--batch-files", type=int, default=500, help="documents in the batch (0: no batch)")
    parser.add_argument("--batch-kb", type=float, default=40, help="size of each of the batch's documents")
    args = parser.parse_args()
    size = int(args.mb * 1024 * 1024)
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="quire-upload-bench-redis-") as redis_dir:
        redis = EmbeddedRedis(Path(redis_dir), persistent=False).start()
        s3 = None
        try:
            endpoint = None
            if "s3" in args.storage:
                from moto.server import ThreadedMotoServer

                s3_port = free_port()
                s3 = ThreadedMotoServer(ip_address="127.0.0.1", port=s3_port, verbose=False)
                s3.start()
                endpoint = f"http://127.0.0.1:{s3_port}"
            for storage in args.storage.split(","):
                results[storage] = measure(
                    storage, args.uploads, size, redis.url, endpoint, args.batch_files, int(args.batch_kb * 1024)
                )
        finally:
            if s3 is not None:
                s3.stop()
            redis.stop()
    print(
        f"{args.uploads} concurrent uploads of {args.mb:g} MB each, then one batch of {args.batch_files} documents"
        f" of {args.batch_kb:g} KB: web process resident memory\n"
    )
    columns = list(next(iter(results.values())))
    print("| storage | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for storage, figures in results.items():
        print(f"| {storage} | " + " | ".join(str(figures[c]) for c in columns) + " |")
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "upload_memory.json").write_text(json.dumps({"uploads": args.uploads, "mb": args.mb, **results}, indent=2))


if __name__ == "__main__":
    main()
