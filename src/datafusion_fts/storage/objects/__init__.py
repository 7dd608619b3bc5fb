"""Where a database's bytes live: one interface (:class:`.interface.ObjectStore`) for a
local directory and for object stores (S3, GCS, Azure and S3-compatible servers), so the
catalog's files, the segments and the data files are read, listed, written and
committed the same way on both (docs/design.md: "Object storage"; issue 32).

:func:`open_objects` picks the backend from a location: a path or ``file://`` URI is a
:class:`.local.LocalObjects`; ``s3://``, ``gs://``, ``az://`` (and the other schemes
of Rust's ``object_store`` crate, which DataFusion itself uses) are a
:class:`.remote.RemoteObjects`. Both pass the same conformance tests
(tests/storage/objects/), the remote one against a real S3-protocol server.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..files.layout import is_remote, local_path
from .interface import ObjectChanged, ObjectMeta, ObjectMissing, ObjectStore, check_key
from .local import LocalObjects

__all__ = ["ObjectChanged", "ObjectMeta", "ObjectMissing", "ObjectStore", "check_key", "is_remote", "open_objects"]


def open_objects(location: str, options: Mapping[str, str] | None = None) -> ObjectStore:
    """The objects under ``location``: a local directory (a path or ``file://`` URI) or a
    prefix of an object store. ``options`` configure a remote store (credentials,
    ``endpoint``, ``region``, ``allow_http``, ...); without them the store's standard
    environment variables apply (``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL``, ...)."""
    if not is_remote(location):
        return LocalObjects(local_path(str(location), "location"))
    from .remote import RemoteObjects

    return RemoteObjects(str(location), options or {})
