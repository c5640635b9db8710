-- How far the flusher has read each conversation (the file's migration 0009).
CREATE TABLE memory_flush_cursors (
    source text PRIMARY KEY,
    messages integer NOT NULL CHECK (messages >= 0),
    prefix_hash text NOT NULL,
    flushed_at bigint NOT NULL
);
