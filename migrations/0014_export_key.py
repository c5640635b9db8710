"""A secret of this file that signs its exports, so that import can tell this memory's own export
(written by ``slotmem export`` of this file, unchanged since) from any other file.

``memory_settings.export_key``: 32 random bytes, hex. An export's end marker carries an HMAC of
its checksum under it; an import whose marker verifies is the owner's own data and is taken as
the owner wrote it, any other file passes the write scan (slotmem.storage.transfer). Whoever can
read the database file can read the key, as they can read every fact.
"""

STATEMENTS = [
    "INSERT OR IGNORE INTO memory_settings VALUES ('export_key', lower(hex(randomblob(32))))",
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
