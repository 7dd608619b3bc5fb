"""The object interface on an object store (S3, GCS, Azure, S3-compatible servers), through
``obstore``: the Python binding of Rust's ``object_store`` crate, the one DataFusion
itself reads object stores with (ranged and coalesced GETs, listing, conditional puts).

A put is one atomic PUT (multipart above 5 MiB, completed whole or not at all). The
conditional writes are the store's own preconditions: ``If-None-Match: *`` for a create,
``If-Match: <ETag>`` for a replace; the loser's write is refused by the server, so two
processes committing at once can never both win. Credentials and endpoint come from the
``options`` given, else from the store's standard environment variables
(``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``, ``AWS_ENDPOINT_URL``,
``AWS_ALLOW_HTTP``, ``GOOGLE_SERVICE_ACCOUNT``, ``AZURE_STORAGE_ACCOUNT_NAME``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import obstore
from obstore import exceptions as obstore_errors
from obstore.store import from_url

from ...errors import ConflictError, StorageError
from .interface import ObjectChanged, ObjectMeta, ObjectMissing, check_key, check_ranges

# Options of the HTTP client (the rest configure the store: credentials, endpoint, region).
_CLIENT_OPTIONS = frozenset({
    "allow_http", "allow_invalid_certificates", "connect_timeout", "timeout", "pool_idle_timeout",
    "proxy_url", "user_agent", "http1_only", "http2_only",
})
# Options of the retries of a failed request (object_store's RetryConfig): how many, and
# for how long in all (seconds); by default 10 retries within 3 minutes.
_RETRY_OPTIONS = frozenset({"max_retries", "retry_timeout"})
# Ranges nearer than this are read by one GET (a Parquet page index's neighbours, a
# segment's blocks): one round trip instead of several, for a few KiB more.
COALESCE_BYTES = 64 * 1024
# GETs of one object's ranges side by side.
_REQUESTS = 8


class RemoteObjects:
    """The objects under the URL ``url`` (``s3://bucket/prefix``, ``gs://...``, ``az://...``)."""

    def __init__(self, url: str, options: Mapping[str, str]) -> None:
        self.url = url.rstrip("/")
        client = {k: str(v) for k, v in options.items() if k.lower() in _CLIENT_OPTIONS}
        config = {k: str(v) for k, v in options.items() if k.lower() not in _CLIENT_OPTIONS | _RETRY_OPTIONS}
        try:
            self._store = from_url(self.url, config=config or None, client_options=client or None,
                                   retry_config=_retry(options))
        except (obstore_errors.BaseError, ValueError, TypeError) as exc:
            raise StorageError(f"cannot open object store {self.url}: {exc}; give its options as "
                               "storage_options (endpoint, region, credentials) or set the store's "
                               "environment variables (AWS_ENDPOINT_URL, AWS_REGION, ...)") from exc

    def _error(self, doing: str, key: str, exc: Exception) -> StorageError:
        if isinstance(exc, FileNotFoundError) and doing == "reading":  # (writing: a missing bucket or directory)
            return ObjectMissing(f"{self.url}/{key}: no such object")
        why = str(exc).split("\n\nDebug source:")[0]  # (obstore's Rust debug dump after it: dozens of lines)
        return StorageError(f"{doing} {self.url}/{key} failed: {why} (to reach the store, give its options as "
                            "storage_options: endpoint, region, credentials; or set its environment variables: "
                            "AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID, ...)")

    def get(self, key: str) -> bytes:
        try:
            return obstore.get(self._store, check_key(key)).bytes().to_bytes()
        except (obstore_errors.BaseError, OSError) as exc:
            raise self._error("reading", key, exc) from exc

    def get_ranges(self, key: str, starts: Sequence[int], ends: Sequence[int], version: str | None = None
                   ) -> list[memoryview]:
        check_key(key)
        wanted = [i for i, (start, end) in enumerate(zip(starts, ends)) if end > start]  # (the store refuses empty ones)
        if not wanted:
            return [memoryview(b"")] * len(starts)
        try:
            if version is None:
                got = obstore.get_ranges(self._store, key, starts=[starts[i] for i in wanted],
                                         ends=[ends[i] for i in wanted], coalesce=COALESCE_BYTES)
            else:
                got = self._get_version(key, [starts[i] for i in wanted], [ends[i] for i in wanted], version)
        except obstore_errors.PreconditionError:
            raise ObjectChanged(f"{self.url}/{key} was rewritten since it was listed") from None
        except (obstore_errors.BaseError, OSError, ValueError) as exc:
            if isinstance(exc, FileNotFoundError):
                if version is not None:
                    raise ObjectChanged(f"{self.url}/{key} was deleted since it was listed") from None
                raise self._error("reading", key, exc) from exc
            meta = self.head(key)  # (a range outside the object: say so as the local store does)
            if meta is not None:
                check_ranges(self.url, key, meta.size, starts, ends)
            raise self._error("reading", key, exc) from exc
        out = [memoryview(b"")] * len(starts)
        for i, buffer in zip(wanted, got):
            out[i] = memoryview(buffer)
        if any(len(b) != end - start for b, start, end in zip(out, starts, ends)):
            meta = self.head(key)
            check_ranges(self.url, key, meta.size if meta else 0, starts, ends)
            raise StorageError(f"{self.url}/{key} changed while it was read")
        return out

    def _get_version(self, key: str, starts: list[int], ends: list[int], version: str) -> list[memoryview]:
        """The ranges of one version of the object: near ranges coalesced into one GET
        ``If-Match`` the version (the batch reads of ``obstore.get_ranges`` take no
        precondition), the GETs side by side."""
        order = sorted(range(len(starts)), key=lambda i: starts[i])
        groups: list[list[int]] = []
        for i in order:
            if groups and starts[i] <= max(ends[j] for j in groups[-1]) + COALESCE_BYTES:
                groups[-1].append(i)
            else:
                groups.append([i])

        def fetch(group: list[int]) -> tuple[int, memoryview]:
            lo, hi = starts[group[0]], max(ends[j] for j in group)
            got = obstore.get(self._store, key, options={"range": (lo, hi), "if_match": version})
            return lo, memoryview(got.bytes())

        if len(groups) == 1:
            fetched = [fetch(groups[0])]
        else:
            with ThreadPoolExecutor(min(len(groups), _REQUESTS)) as pool:
                fetched = list(pool.map(fetch, groups))
        out: list[memoryview] = [memoryview(b"")] * len(starts)
        for group, (lo, buffer) in zip(groups, fetched):
            for j in group:
                out[j] = buffer[starts[j] - lo : ends[j] - lo]
        return out

    def head(self, key: str) -> ObjectMeta | None:
        try:
            meta = obstore.head(self._store, check_key(key))
        except FileNotFoundError:
            return None
        except (obstore_errors.BaseError, OSError) as exc:
            raise self._error("reading", key, exc) from exc
        return _meta(meta, key)

    def list(self, prefix: str = "") -> list[ObjectMeta]:
        try:
            found = obstore.list(self._store, check_key(prefix) if prefix else None).collect()
        except (obstore_errors.BaseError, OSError) as exc:
            raise self._error("listing", prefix, exc) from exc
        return sorted((_meta(m, m["path"]) for m in found), key=lambda m: m.key)

    def put(self, key: str, data: bytes | memoryview) -> str:
        return self._put(key, data, "overwrite")

    def put_if_absent(self, key: str, data: bytes | memoryview) -> str:
        return self._put(key, data, "create")

    def put_if_version(self, key: str, data: bytes | memoryview, version: str) -> str:
        return self._put(key, data, {"e_tag": version})

    def _put(self, key: str, data: bytes | memoryview, mode: str | dict[str, str]) -> str:
        try:
            body = data if isinstance(data, bytes) else bytes(data)  # (obstore takes no memoryview)
            result = obstore.put(self._store, check_key(key), body, mode=mode)
        except obstore_errors.AlreadyExistsError:
            raise ConflictError(f"{self.url}/{key} exists already: another writer created it first") from None
        except obstore_errors.PreconditionError:
            raise ConflictError(f"{self.url}/{key} changed since it was read: another writer committed first") from None
        except (obstore_errors.BaseError, OSError) as exc:
            if isinstance(exc, FileNotFoundError) and isinstance(mode, dict):  # (a replace of a deleted object)
                raise ConflictError(f"{self.url}/{key} was deleted since it was read: another writer committed "
                                    "first") from None
            raise self._error("writing", key, exc) from exc
        return result["e_tag"] or ""

    def delete(self, key: str) -> None:
        try:
            obstore.delete(self._store, check_key(key))
        except FileNotFoundError:
            return
        except (obstore_errors.BaseError, OSError) as exc:
            raise self._error("deleting", key, exc) from exc


def _retry(options: Mapping[str, str]) -> dict | None:
    """object_store's retry configuration of the options ``max_retries`` and
    ``retry_timeout`` (seconds), or None for its defaults."""
    given = {k.lower(): v for k, v in options.items() if k.lower() in _RETRY_OPTIONS}
    if not given:
        return None
    try:
        config: dict = {}
        if "max_retries" in given:
            config["max_retries"] = int(given["max_retries"])
        if "retry_timeout" in given:
            config["retry_timeout"] = timedelta(seconds=float(given["retry_timeout"]))
    except ValueError as exc:
        raise StorageError(f"storage option max_retries is a count and retry_timeout seconds: {exc}") from None
    return config


def _meta(meta: Mapping, key: str) -> ObjectMeta:
    modified = meta.get("last_modified")
    return ObjectMeta(key, int(meta["size"]), meta.get("e_tag") or meta.get("version") or "",
                      modified.timestamp() if modified is not None else 0.0)
