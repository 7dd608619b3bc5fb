"""Tables DataFusion makes from a table's own definition (``CREATE TABLE name (...)`` as
the user wrote it, kept in ``TableMeta.definition``), holding rows of ours: a table held
in memory (table_views.py) and a search's result carrying every column of such a table
(execute.py). DataFusion then plans over them with the constraints the user declared: a
``GROUP BY`` of the primary key may select the table's other columns, as it may on the
user's own in-memory table."""

from __future__ import annotations

import re

import datafusion
import pyarrow as pa

from .catalog import quote
from .declared_types import empty_batch

# A definition declaring a key (what lets DataFusion see columns depend on others).
_KEYS = re.compile(r"\b(?:PRIMARY\s+KEY|UNIQUE)\b", re.IGNORECASE)


def definition_session(config: datafusion.SessionConfig) -> datafusion.SessionContext:
    """A private session of the user's settings (``config``: ``ctx.copied_config()``, its
    SQL dialect among them) to make such a table in, of one partition as ``CREATE TABLE``
    makes it. With the default catalog and schema made: a ``SET datafusion.runtime.*`` has
    DataFusion rebuild the user's session over the catalog it holds and turn that setting
    off, so a session made of its settings alone would have no catalog to create in."""
    return datafusion.SessionContext(
        config.with_target_partitions(1).set("datafusion.catalog.create_default_catalog_and_schema", "true"))


def defined(session: datafusion.SessionContext, name: str, definition: str | None, batches: list[pa.RecordBatch],
             schema: pa.Schema) -> bool:
    """Whether ``name`` could be made in ``session`` by DataFusion from the table's column
    definitions (``CREATE TABLE name (...)`` as the user wrote it: its constraints and
    DEFAULT values are then DataFusion's own), holding ``batches`` as they are. False if
    the table has no definition, or the definition no longer reads as it did (a setting
    changed since: another dialect, other types); nothing is left registered then."""
    if definition is None:
        return False
    try:
        session.sql(f"CREATE TABLE {quote(name)} {definition}").collect()
    except Exception:  # (DataFusion's errors have no class of their own in Python)
        return False
    if not session.table(quote(name)).schema().equals(schema):
        session.deregister_table(name)
        return False
    source = f"{name}_source"
    session.create_dataframe([batches], source, schema)
    session.sql(f"INSERT INTO {quote(name)} SELECT * FROM {quote(source)}").collect()
    session.deregister_table(source)
    return True


def result_definition(definition: str | None) -> str | None:
    """The definition of a search result carrying every column of a table defined by
    ``definition`` (``_rowid``, NOT NULL, first and ``_score`` last around the table's own
    columns and constraints), or None where the definition declares no key."""
    if definition is None or not _KEYS.search(definition):
        return None
    return f"(_rowid BIGINT NOT NULL, {definition.strip()[1:-1]}, _score DOUBLE)"


def register_rows(ctx: datafusion.SessionContext, name: str, rows: pa.Table, definition: str | None = None) -> None:
    """Show ``rows`` to DataFusion as table ``name`` (a search's result, a table's candidate
    rows); with a ``definition`` as the table DataFusion makes of it, holding the keys it
    declares, when it reads as the rows are."""
    batches = rows.to_batches() or [empty_batch(rows.schema)]
    if definition is not None:
        session = definition_session(ctx.copied_config())
        if defined(session, "result", definition, batches, rows.schema):
            ctx.register_table(name, session.catalog().schema().table("result"))
            return
    ctx.register_record_batches(name, [batches])
