-- Episodes and their provenance (the file's migration 0011, its episode half): an episode is a
-- row of memory_facts (its text the fact's value) plus this row, keyed by the fact's id, which
-- a fact keeps across updates, restores and imports. Rows of facts that are gone are kept, as
-- history is: a restored episode or fact comes back with its metadata and links.
CREATE TABLE memory_episodes (
    fact_id text PRIMARY KEY,
    happened_at bigint NOT NULL,
    session text,
    run text,
    title text,
    task text,
    outcome text,
    score double precision,
    data text
);
CREATE INDEX memory_episodes_happened ON memory_episodes (happened_at);
CREATE INDEX memory_episodes_session ON memory_episodes (session, happened_at)
    WHERE session IS NOT NULL;
CREATE INDEX memory_episodes_run ON memory_episodes (run) WHERE run IS NOT NULL;
CREATE TABLE memory_provenance (
    fact_id text NOT NULL,
    episode_id text NOT NULL,
    linked_at bigint NOT NULL,
    PRIMARY KEY (fact_id, episode_id)
);
CREATE INDEX memory_provenance_episode ON memory_provenance (episode_id, fact_id);
