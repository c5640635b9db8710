-- Tags on facts (the file's migrations/0017_tags.py): a fact's tags leave with it.
CREATE TABLE memory_fact_tags (
    fact_seq bigint NOT NULL REFERENCES memory_facts (seq) ON DELETE CASCADE,
    tag text NOT NULL,
    PRIMARY KEY (fact_seq, tag)
);
CREATE INDEX memory_fact_tags_tag ON memory_fact_tags (tag, fact_seq);
