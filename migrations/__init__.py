"""Numbered schema migrations for slotmem.

Each ``NNNN_name.py`` file defines ``migrate(db)``, where ``db`` is a ``sqlite_utils.Database``.
Files are frozen once released: a schema change is a new file. ``slotmem.db`` discovers them by
path, registers them into one ``sqlite_utils.Migrations("slotmem")`` set and applies each pending
one in its own ``BEGIN IMMEDIATE`` transaction.
"""
