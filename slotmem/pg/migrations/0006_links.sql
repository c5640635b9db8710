-- Links between facts (the file's migration 0018): one row per typed, directed link between two
-- live facts. A link belongs to its two facts: when either leaves memory_facts the trigger
-- writes the link to memory_link_history (reason 'deleted', at the wall clock) and drops it.
-- It runs BEFORE each row's deletion, so a statement that removes both ends of a link still
-- names both (a later row's trigger sees the rows deleted before it gone, as SQLite's does).
CREATE TABLE memory_fact_links (
    from_seq bigint NOT NULL,
    rel text NOT NULL,
    to_seq bigint NOT NULL,
    created_at bigint NOT NULL,
    source text,
    PRIMARY KEY (from_seq, rel, to_seq)
);
CREATE INDEX memory_fact_links_to ON memory_fact_links (to_seq, rel);
CREATE TABLE memory_link_history (
    hid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    from_slot text NOT NULL,
    from_key text NOT NULL,
    rel text NOT NULL,
    to_slot text NOT NULL,
    to_key text NOT NULL,
    created_at bigint NOT NULL,
    source text,
    removed_at bigint NOT NULL,
    reason text NOT NULL,
    removed_by text
);
CREATE INDEX memory_link_history_from ON memory_link_history (from_slot, from_key);
CREATE INDEX memory_link_history_to ON memory_link_history (to_slot, to_key);
CREATE FUNCTION memory_facts_links_bd() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO memory_link_history
        (from_slot, from_key, rel, to_slot, to_key, created_at, source, removed_at, reason)
    SELECT coalesce(f.slot, OLD.slot), coalesce(f.key, OLD.key), l.rel,
           coalesce(t.slot, OLD.slot), coalesce(t.key, OLD.key), l.created_at, l.source,
           (extract(epoch FROM clock_timestamp()) * 1000)::bigint, 'deleted'
    FROM memory_fact_links l
    LEFT JOIN memory_facts f ON f.seq = l.from_seq
    LEFT JOIN memory_facts t ON t.seq = l.to_seq
    WHERE l.from_seq = OLD.seq OR l.to_seq = OLD.seq
    ORDER BY l.created_at, l.from_seq, l.rel, l.to_seq;
    DELETE FROM memory_fact_links WHERE from_seq = OLD.seq OR to_seq = OLD.seq;
    RETURN OLD;
END $$;
CREATE TRIGGER memory_facts_links_bd BEFORE DELETE ON memory_facts
    FOR EACH ROW EXECUTE FUNCTION memory_facts_links_bd();
