"""graphdb: an embeddable graph query engine with SQL traversal queries, on GPU and CPU.

Examples
--------
>>> import graphdb
>>> con = graphdb.connect()          # a temporary database; pass a path to keep it
>>> con.execute("SHOW GRAPHS").columns
['name', 'directed', 'weighted', 'vertices', 'edges']
>>> con.close()
"""

from . import _layout  # noqa: F401  (first: makes graphdb.storage & co. importable from a checkout)
from ._version import __version__
from .connection import Connection, connect
from .errors import (
                     BinderError,
                     CatalogError,
                     CorruptDatabaseError,
                     DatabaseError,
                     DataError,
                     Error,
                     IngestError,
                     IntegrityError,
                     InterfaceError,
                     InternalError,
                     InvalidInputError,
                     NotSupportedError,
                     OperationalError,
                     ParseError,
                     ProgrammingError,
                     Warning,
)
from .graph import GraphHandle
from .result import Cursor, Result
from .types import (
    BINARY,
    DATETIME,
    NUMBER,
    ROWID,
    STRING,
    Binary,
    Date,
    DateFromTicks,
    Time,
    TimeFromTicks,
    Timestamp,
    TimestampFromTicks,
)

apilevel = "2.0"
threadsafety = 1
paramstyle = "qmark"

__all__ = [
    "connect", "Connection", "Result", "Cursor", "GraphHandle", "Error", "Warning",
    "InterfaceError", "DatabaseError", "DataError", "OperationalError", "IntegrityError",
    "InternalError", "ProgrammingError",
    "NotSupportedError", "ParseError", "BinderError", "CatalogError", "IngestError",
    "InvalidInputError", "CorruptDatabaseError", "__version__", "STRING", "BINARY", "NUMBER",
    "DATETIME", "ROWID",
    "Date", "Time", "Timestamp", "DateFromTicks", "TimeFromTicks", "TimestampFromTicks",
    "Binary",
]
