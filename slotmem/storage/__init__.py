"""The storage layer: the file, its driver and connections, its schema, and retention.

Nothing here knows about search, vectors or agents; the layers above are handed connections.
"""
