"""DataFusion's own object stores for the buckets of tables indexed in place on S3, GCS or
Azure (issue 32).

A table's view (session/table_views.py) is scanned by DataFusion in the user's session, so
that session must reach the table's bucket. A bucket it reaches already (the user
registered a store for it: their credentials, their endpoint) is left as it is; one it
does not gets a store of DataFusion's made from the database's storage options, the
same options our own reads take (storage/objects/remote.py), the rest from the store's
environment variables, as DataFusion's stores read them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

import datafusion
from datafusion import object_store

from ..errors import StorageError

# The options of Rust's object_store (as obstore and connect(storage_options=) take them,
# with or without their store's prefix) each store class of DataFusion's takes, by argument.
_S3 = {"access_key_id": "access_key_id", "secret_access_key": "secret_access_key", "session_token": "session_token",
       "token": "session_token", "region": "region", "default_region": "region", "endpoint": "endpoint",
       "endpoint_url": "endpoint", "allow_http": "allow_http"}
_GCS = {"service_account": "service_account_path", "service_account_path": "service_account_path",
        "application_credentials": "service_account_path"}
_AZURE = {"storage_account_name": "account", "account_name": "account", "account": "account",
          "storage_account_key": "access_key", "access_key": "access_key", "account_key": "access_key",
          "bearer_token": "bearer_token", "client_id": "client_id", "client_secret": "client_secret",
          "tenant_id": "tenant_id", "use_emulator": "use_emulator", "allow_http": "allow_http"}
_FLAGS = {"allow_http", "use_emulator"}
_NOT_REACHED = "No suitable object store"


def reach_bucket(ctx: datafusion.SessionContext, file_url: str, options: Mapping[str, str], probe: bool = True
                 ) -> None:
    """Make ``ctx`` reach the bucket of ``file_url`` (a Parquet file of a table indexed in
    place, or a database's data directory), unless it does: with ``probe`` (a session of
    the user's, which may have a store for it), a read of its schema says which (finding
    no store fails first, before any other failure of the read; a request or two); a
    session the database made reaches no bucket it was not given here."""
    try:
        if probe:
            ctx.read_parquet(file_url).schema()
            return
    except Exception as exc:  # (DataFusion's errors have no class of their own in Python)
        if _NOT_REACHED not in str(exc):
            return  # (it reaches the store; what else failed, the scan will say)
    url = urlparse(file_url)
    ctx.register_object_store(f"{url.scheme}://", _store(url.scheme, url.netloc, options), url.netloc)


def _store(scheme: str, bucket: str, options: Mapping[str, str]) -> Any:
    if scheme in ("s3", "s3a"):
        return object_store.AmazonS3(bucket_name=bucket, **_arguments(options, _S3, "aws_"))
    if scheme in ("gs", "gcs"):
        return object_store.GoogleCloud(bucket_name=bucket, **_arguments(options, _GCS, "google_"))
    if scheme in ("az", "azure", "abfs", "abfss"):
        return object_store.MicrosoftAzure(container_name=bucket, **_arguments(options, _AZURE, "azure_"))
    raise StorageError(f"{scheme}://{bucket}: DataFusion's session has no store for it and this database makes "
                       "stores for s3://, gs:// and az:// only; register one on the session (ctx.register_object_store)")


def _arguments(options: Mapping[str, str], names: Mapping[str, str], prefix: str) -> dict[str, Any]:
    """DataFusion's arguments of ``options``; its flags not among them from the environment
    (``AWS_ALLOW_HTTP``: DataFusion's store reads the other variables itself, but its
    flags' defaults would override theirs)."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        name = names.get(key.lower().removeprefix(prefix))
        if name is not None:
            out[name] = _flag(value) if name in _FLAGS else str(value)
    for flag in _FLAGS & set(names.values()):
        if flag not in out and (value := os.environ.get(f"{prefix}{flag}".upper())) is not None:
            out[flag] = _flag(value)
    return out


def _flag(value: object) -> bool:
    return str(value).lower() in ("true", "1", "yes")
