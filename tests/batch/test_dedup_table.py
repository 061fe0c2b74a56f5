"""dedup_table on a real MariaDB table (own scratch database) and on SQLite."""

from __future__ import annotations

import csv
import hashlib
import sqlite3
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from fingerprints.table.match import TableConfig, dedup_rows, parse_fields
from support.table_records import f1, labelled_table

FIELDS = "name:2,addr:2,city:1,phone:1,type:1"
COLUMNS = ["name", "addr", "city", "phone", "type"]


def groups_from_csv(path: Path) -> set[tuple[str, str]]:
    members: dict[str, list[str]] = {}
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            members.setdefault(row["group"], []).append(row["key"])
    return {tuple(sorted((a, b)))  # type: ignore[misc]
            for keys in members.values() for x, a in enumerate(keys) for b in keys[x + 1 :]}


@pytest.fixture
def mariadb_table():
    """A table in a scratch database of its own (not Django's test database)."""
    import MySQLdb

    url = urlsplit(settings.DATABASES["default"].get("TEST_URL", "") or _mysql_url())
    name = f"{url.path.lstrip('/') or 'dedupsite'}_tables"[:60]
    connect = {"host": url.hostname or "localhost", "port": url.port or 3306,
               "user": url.username or "root", "passwd": url.password or "",
               "charset": "utf8mb4"}
    admin = MySQLdb.connect(**connect)
    admin.query(f"DROP DATABASE IF EXISTS `{name}`")
    admin.query(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    admin.select_db(name)
    cursor = admin.cursor()
    cursor.execute("CREATE TABLE restaurants (id VARCHAR(16) PRIMARY KEY, name VARCHAR(200), "
                   "addr VARCHAR(200), city VARCHAR(100), phone VARCHAR(40), type VARCHAR(60))")
    table, truth = labelled_table(seed=11)
    cursor.executemany(
        "INSERT INTO restaurants VALUES (%s, %s, %s, %s, %s, %s)",
        [(r["id"], *[r[c] for c in COLUMNS]) for r in table])
    admin.commit()
    user = f"{connect['user']}:{connect['passwd']}@" if connect["passwd"] else f"{connect['user']}@"
    yield f"mysql://{user}{connect['host']}:{connect['port']}/{name}", truth, admin
    admin.query(f"DROP DATABASE IF EXISTS `{name}`")
    admin.close()


def _mysql_url() -> str:
    import os

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("mysql"):
        pytest.fail("dedup_table's MariaDB test needs DATABASE_URL=mysql://... (make test sets it)")
    return url


@pytest.mark.mysql
def test_it_groups_duplicate_rows_of_a_mariadb_table(mariadb_table, tmp_path) -> None:
    url, truth, admin = mariadb_table
    cursor = admin.cursor()
    cursor.execute("CHECKSUM TABLE restaurants")
    before = cursor.fetchone()
    out = tmp_path / "groups.csv"
    call_command("dedup_table", "--database-url", url, "--table", "restaurants", "--key", "id",
                 "--fields", FIELDS, "--chunk", "100", "--output", str(out))
    precision, recall, score = f1(groups_from_csv(out), truth)
    assert score >= 0.9, (precision, recall)
    cursor.execute("CHECKSUM TABLE restaurants")
    assert cursor.fetchone() == before  # never writes to the source
    with out.open(encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    assert header == ["group", "size", "key", "matched_key", "score",
                      *[f"score_{c}" for c in COLUMNS],
                      "match_weight", *[f"weight_{c}" for c in COLUMNS]]


def test_it_groups_duplicate_rows_of_a_sqlite_table(tmp_path) -> None:
    path = tmp_path / "guide.sqlite3"
    table, truth = labelled_table(seed=7)
    with sqlite3.connect(path) as connection:
        connection.execute('CREATE TABLE "places" (id TEXT PRIMARY KEY, name TEXT, addr TEXT, '
                           "city TEXT, phone TEXT, type TEXT)")
        connection.executemany("INSERT INTO places VALUES (?, ?, ?, ?, ?, ?)",
                               [(r["id"], *[r[c] for c in COLUMNS]) for r in table])
    connection.close()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    out = tmp_path / "groups.csv"
    call_command("dedup_table", "--database-url", f"sqlite:///{path}", "--table", "places",
                 "--key", "id", "--fields", FIELDS, "--output", str(out))
    precision, recall, score = f1(groups_from_csv(out), truth)
    assert score >= 0.9, (precision, recall)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def test_the_seeds_row_simhash_alone_finds_few_duplicates() -> None:
    from fingerprints.table.match import candidate_pairs, prepare_row

    table, truth = labelled_table(seed=7)
    fields = parse_fields(FIELDS)
    rows = [prepare_row(r["id"], [r[c] for c in COLUMNS], fields) for r in table]
    pairs = candidate_pairs(rows, fields, TableConfig())
    simhash_only = {tuple(sorted((rows[i].key, rows[j].key)))
                    for (i, j), how in pairs.items() if "row-simhash" in how}
    assert f1(simhash_only, truth)[1] < 0.2  # recall: why blocking is followed by comparison


def test_long_text_fields_are_segmented_and_missing_values_skipped() -> None:
    complaint = ("小区门口的道路施工已经持续三个月，晚上十点以后仍有噪音，"
                 "多次向街道反映没有得到答复，希望尽快处理并公开施工时间。")
    rows = [
        ("1", ["张伟", complaint, "13800001111"]),
        ("2", ["张 伟", "再次反映：" + complaint, None]),
        ("3", ["李娜", "学校附近的早餐摊占用人行道，学生上学只能走机动车道，存在安全隐患。",
               "13900002222"]),
    ]
    result = dedup_rows(rows, parse_fields("name:2,body:text,phone:1"))
    assert [[result.keys[p] for p in g] for g in result.groups] == [["1", "2"]]
    (row,) = [r for r in result.group_rows() if r["key"] == "2"]
    assert row["score_phone"] == "" and row["score_body"] > 0.8


def test_bad_arguments_are_command_errors(tmp_path) -> None:
    with pytest.raises(CommandError, match="plain"):
        call_command("dedup_table", "--database-url", "sqlite:///x.db", "--table", "t; drop",
                     "--key", "id", "--fields", "name", "--output", str(tmp_path / "g.csv"))
    with pytest.raises(CommandError, match="weight"):
        call_command("dedup_table", "--database-url", "sqlite:///x.db", "--table", "t",
                     "--key", "id", "--fields", "name:x", "--output", str(tmp_path / "g.csv"))


def test_sqlite_urls_are_read_with_three_or_four_slashes(tmp_path, monkeypatch) -> None:
    from fingerprints.table.match import read_rows

    path = tmp_path / "t.sqlite3"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (id TEXT, name TEXT)")
        connection.executemany("INSERT INTO t VALUES (?, ?)", [("1", "a"), ("2", "b")])
    connection.close()

    def names(url: str) -> list[str]:
        total, rows = read_rows(url, "t", "id", ["name"])
        return [values[0] for _key, values in rows]

    absolute = str(path)  # /tmp/...: "sqlite:///tmp/..." is the common spelling of it
    assert names(f"sqlite:///{absolute}") == names(f"sqlite://{absolute}") == ["a", "b"]
    monkeypatch.chdir(tmp_path)
    assert names("sqlite:///t.sqlite3") == ["a", "b"]  # relative to the working directory
    with pytest.raises(CommandError, match=r"no SQLite database at missing\.db or /missing\.db"):
        call_command("dedup_table", "--database-url", "sqlite:///missing.db", "--table", "t",
                     "--key", "id", "--fields", "name", "--output", str(tmp_path / "g.csv"))
