"""upsert_many's new rows written as multi-row statements (``storage.rows.upsert_rows``): the same
rows, FTS and CJK index entries and conflicts as one ``executemany`` row at a time, in few
statements (each statement FTS5 flushes once: docs/benchmarks.md, issue 24's bulk load)."""

import pytest
from conftest import fts_integrity_error

from slotmem import Store, validation
from slotmem.storage import rows


def upserts(conn, action):
    """How many UPSERT statements ``action()`` runs on ``conn``: the traced statements, each
    with its parameters written in (an ``executemany`` runs its statement once per row; the
    statement's triggers trace it again, with the same text)."""
    seen = []
    conn.set_trace_callback(seen.append)
    try:
        action()
    finally:
        conn.set_trace_callback(None)
    return len({sql for sql in seen if sql.lstrip().startswith("INSERT INTO memory_facts\n")})


def items(count, start=0, slot="user"):
    return [
        {"slot": slot, "key": f"k{i}", "value": f"value number {i} about coffee"}
        for i in range(start, start + count)
    ]


def test_a_bulk_load_of_new_keys_runs_few_statements(store):
    done = upserts(store.conn, lambda: store.upsert_many(items(5000)))
    assert done <= 12  # 5,000 rows: a few statements of 2,048, 256, 32 ... rows (was 5,000)
    assert store.conn.execute("SELECT count(*) FROM memory_facts").fetchone()[0] == 5000
    assert len(store.query_facts("number 4321", track_access=False)) > 0
    assert fts_integrity_error(store) is None


def test_a_load_beside_existing_keys_runs_few_statements(store):
    store.upsert_many(items(10))
    batch = items(3000, start=5)  # five keys exist: they take the one-at-a-time path
    batch[100]["key"] = "K7"  # another spelling of an existing key
    done = upserts(store.conn, lambda: store.upsert_many(batch))
    assert done <= 6 + 20  # the existing keys' statements, the new keys' few multi-row ones
    assert store.conn.execute("SELECT count(*) FROM memory_facts").fetchone()[0] == 3005 - 1
    assert store.get("user", "k7").value == batch[100]["value"]
    assert fts_integrity_error(store) is None


def written(path, rows_, write):
    with Store(path, create=True) as mem:
        with mem.transaction():
            write(mem.conn, rows_)
        table = [tuple(r) for r in mem.conn.execute("SELECT * FROM memory_facts ORDER BY seq")]
        found = {
            text: [hit.fact.key for hit in mem.query_facts(text, track_access=False, limit=50)]
            for text in ("coffee", "number 7", "咖啡", "コーヒー")
        }
        assert fts_integrity_error(mem) is None
        mem.conn.execute(
            "INSERT INTO memory_facts_cjk (memory_facts_cjk, rank) VALUES ('integrity-check', 1)"
        )
        return table, found


def row(i, key=None, value=None):
    key = key or f"k{i}"
    value = value or ("我喜欢喝咖啡 コーヒー" if i % 5 == 0 else f"value number {i} about coffee")
    return (f"{i:016x}", "user", key, value, 0.5, "s", 10 + i, 10 + i, 10 + i, None, None,
            validation.key_form(key))  # fmt: skip


@pytest.mark.parametrize("count", [0, 1, 2, 7, 8, 9, 33, 300])
@pytest.mark.parametrize("most", [None, 3, 10])
def test_upsert_rows_writes_what_executemany_writes(tmp_path, count, most):
    batch = [row(i) for i in range(count)]
    if count > 4:  # a key twice in one batch: the second row updates the first, as before
        batch[4] = row(4, key="k1", value="changed 咖啡")
    one_by_one = written(
        tmp_path / "a.db", batch, lambda conn, r: conn.executemany(rows.UPSERT_SQL, r)
    )
    many = written(tmp_path / "b.db", batch, lambda conn, r: rows.upsert_rows(conn, r, most))
    assert many == one_by_one


class Conn:
    def __init__(self, limit=None):
        if limit is not None:
            self.getlimit = lambda _which: limit


def test_rows_per_statement_follow_sqlites_parameter_limit(monkeypatch):
    driver = rows.db.driver
    if hasattr(driver, "SQLITE_LIMIT_VARIABLE_NUMBER"):
        assert rows._most_rows(Conn(limit=999)) == 999 // 12
        assert rows._most_rows(Conn(limit=250000)) == rows.MOST_ROWS
        assert rows._most_rows(Conn(limit=5)) == 1  # below one row: one row at a time
    monkeypatch.setattr(driver, "sqlite_version_info", (3, 31, 1), raising=False)
    assert rows._most_rows(Conn()) == 999 // 12  # no getlimit: the library's default
    monkeypatch.setattr(driver, "sqlite_version_info", (3, 50, 4), raising=False)
    assert rows._most_rows(Conn()) == rows.MOST_ROWS


class Limited:
    """A connection whose SQLite refuses statements of more than 999 parameters (a build with
    a lower limit than its version's default)."""

    def __init__(self, conn):
        self.conn, self.refused = conn, 0

    def execute(self, sql, params=()):
        if len(params) > 999:
            self.refused += 1
            raise rows.db.OperationalError("too many SQL variables")
        return self.conn.execute(sql, params)

    def executemany(self, sql, params):
        return self.conn.executemany(sql, params)


def test_a_lower_parameter_limit_than_expected_writes_every_row(tmp_path):
    batch = [row(i) for i in range(700)]
    expected = written(tmp_path / "a.db", batch, lambda c, r: c.executemany(rows.UPSERT_SQL, r))
    limited = []

    def write(conn, rows_):
        limited.append(Limited(conn))
        rows.upsert_rows(limited[0], rows_[:5])  # a few rows: statements of 4 and 1 rows
        rows.upsert_rows(limited[0], rows_[5:], most=256)  # refused once, then 83 at a time

    assert written(tmp_path / "b.db", batch, write) == expected
    assert limited[0].refused == 1
