"""Stored tables: entries, generations and delta records, transactions (see :mod:`.entries`)."""

from .entries import (
           MAIN,
           ROWS_FILE,
           Column,
           ForeignKey,
           TableEntry,
           ViewEntry,
           split_name,
           valid_table_name,
)
from .log import Record, TableLog, TableView
from .store import TABLES_DB, TableNotFound, Tables, TableSnapshot
from .transaction import TableExists, TableWrites, new_generation, rebased

__all__ = ["Column", "ForeignKey", "MAIN", "ROWS_FILE", "Record", "TABLES_DB", "TableEntry",
           "TableExists", "TableLog", "TableNotFound", "TableSnapshot", "TableView",
           "TableWrites", "Tables", "ViewEntry", "new_generation", "rebased", "split_name",
           "valid_table_name"]
