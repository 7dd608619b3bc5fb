"""A real S3-protocol server on loopback for the tests (moto's server, started here as a
process of its own, stopped at the end): object stores are tested against it, never
against a mock of their client."""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

KEY, SECRET, REGION = "test", "test", "us-east-1"


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    pid: int = 0  # (the server's process: faults stop it)

    def pause(self) -> None:
        """Stop the server where it is (SIGSTOP): connections are accepted, never answered."""
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """Let a paused server go on, once it answers again (it first serves what queued)."""
        os.kill(self.pid, signal.SIGCONT)
        _wait_until_up(self.endpoint, None)

    def kill(self) -> None:
        """End the server at once (its objects are gone: moto keeps them in memory)."""
        os.kill(self.pid, signal.SIGKILL)

    def client(self):  # noqa: ANN201  (boto3's client: only the tests create buckets and files)
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=KEY,
                            aws_secret_access_key=SECRET, region_name=REGION)

    def put_parquet(self, bucket: str, key: str, table: pa.Table, **options: object) -> None:
        """Write ``table`` as a Parquet object (``options``: pyarrow's ``write_table``'s)."""
        buffer = io.BytesIO()
        pq.write_table(table, buffer, **options)
        self.client().put_object(Bucket=bucket, Key=key, Body=buffer.getvalue())

    def upload_directory(self, directory: Path, bucket: str, prefix: str) -> str:
        """Every file under ``directory`` to ``s3://<bucket>/<prefix>/``, as a user copies a
        database directory (``manifest.json`` last, as a copy should); its URL."""
        client = self.client()
        files = sorted((p for p in directory.rglob("*") if p.is_file()), key=lambda p: p.name == "manifest.json")
        for path in files:
            client.upload_file(str(path), bucket, f"{prefix}/{path.relative_to(directory).as_posix()}")
        return f"s3://{bucket}/{prefix}"

    def options(self) -> dict[str, str]:
        """The storage options that reach this server (``connect(..., storage_options=)``)."""
        return {"endpoint": self.endpoint, "access_key_id": KEY, "secret_access_key": SECRET,
                "region": REGION, "allow_http": "true"}

    def environment(self) -> dict[str, str]:
        """The standard AWS environment variables that reach this server (no options needed)."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET,
                "AWS_REGION": REGION, "AWS_ALLOW_HTTP": "true"}

    def store(self, bucket: str):  # noqa: ANN201
        """DataFusion's object store for ``bucket`` on this server."""
        from datafusion.object_store import AmazonS3

        return AmazonS3(bucket_name=bucket, region=REGION, access_key_id=KEY, secret_access_key=SECRET,
                        endpoint=self.endpoint, allow_http=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_up(endpoint: str, process: subprocess.Popen | None) -> None:
    for _ in range(600):  # (until it answers: a few seconds at most)
        try:
            urllib.request.urlopen(endpoint, timeout=1).close()
            return
        except OSError:
            if process is not None and process.poll() is not None:
                raise RuntimeError("moto's S3 server did not start") from None
            time.sleep(0.05)
    raise RuntimeError(f"moto's S3 server at {endpoint} does not answer")


@contextmanager
def s3_server(log: str | None = None) -> Iterator[S3Server]:
    """Start moto's S3 server on a free loopback port; stop it on exit. With ``log``, its
    access log (a line per request) goes to that file, and the bytes of each response's
    body, a line each, to ``log + ".bytes"`` (benchmarks count requests and bytes)."""
    port = _free_port()
    env = {**os.environ, "AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET}
    sink = open(log, "w") if log is not None else subprocess.DEVNULL  # noqa: SIM115  (closed below)
    serve = ["-m", "moto.server"] if log is None else [__file__, "--bytes", log + ".bytes"]
    process = subprocess.Popen([sys.executable, *serve, "-H", "127.0.0.1", "-p", str(port)],
                               stdout=subprocess.DEVNULL, stderr=sink, env=env)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(endpoint, process)
        yield S3Server(endpoint, process.pid)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGCONT)  # (a paused server would not end)
            process.terminate()
        process.wait(timeout=30)
        if log is not None:
            sink.close()


def _serve_counting(argv: list[str]) -> None:
    """moto's server as ``python -m moto.server`` runs it, each response's body bytes
    appended to a file as they are sent (moto's access log says only "-" for them)."""
    import argparse
    import threading

    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import run_simple

    parser = argparse.ArgumentParser()
    parser.add_argument("--bytes", required=True)
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, required=True)
    args = parser.parse_args(argv)
    os.environ.setdefault("MOTO_PORT", str(args.port))
    app = DomainDispatcherApplication(create_backend_app)
    out = open(args.bytes, "a", buffering=1)  # noqa: SIM115  (the process's whole life)
    lock = threading.Lock()

    def counted(environ: dict, start_response):  # noqa: ANN202
        body = app(environ, start_response)
        sent = 0
        try:
            for chunk in body:
                sent += len(chunk)
                yield chunk
        finally:
            if hasattr(body, "close"):
                body.close()
            with lock:
                out.write(f"{sent}\n")

    run_simple(args.host, args.port, counted, threaded=True, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    _serve_counting(sys.argv[1:])
