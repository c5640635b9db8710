-- Each slot's policy (the file's migrations 0002 and 0006): the retention prune applies and the
-- floor of what reaches a prompt; the default policy lives in memory_settings as the file's
-- (name 'default_policy', JSON). A memory starts with the file's built-in policies.
CREATE TABLE memory_slots (
    slot text PRIMARY KEY,
    cap integer NOT NULL CHECK (cap >= 0),
    min_age_days double precision NOT NULL CHECK (min_age_days >= 0),
    min_access_count integer NOT NULL CHECK (min_access_count >= 0),
    description text,
    min_relevance double precision
);
INSERT INTO memory_slots (slot, cap, min_age_days, min_access_count, description) VALUES
    ('user', 500, 30, 3, 'Preferences and personal facts about the user'),
    ('project', 1000, 30, 3, 'Decisions, stack, constraints and deadlines of the project'),
    ('agent', 300, 30, 3, 'Lessons the agent learned about doing its work');
