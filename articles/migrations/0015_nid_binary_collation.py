"""Nids compare byte for byte on MySQL/MariaDB, as they do in Python and on SQLite.

With the server's case- and accent-insensitive collation (``utf8mb4_general_ci``,
``utf8mb4_unicode_ci``), ``OWN-1`` or ``ówn-1`` equalled another crawler's ``own-1`` in
the unique index but not in Python: the INSERT failed on the duplicate key, was
retried and the whole batch answered 503, forever. The nid columns become
``utf8mb4_bin``: a nid is exactly its characters everywhere. SQLite already compares
with BINARY. No state change (Django's model of the fields is unchanged)."""

from django.db import migrations

COLUMNS = (
    ("articles_article", "nid", "NOT NULL"),
    ("articles_editorlink", "nid_a", "NOT NULL"),
    ("articles_editorlink", "nid_b", "NOT NULL"),
    ("articles_auditentry", "nid", "NOT NULL"),
)


def to_binary(apps, schema_editor):
    if schema_editor.connection.vendor != "mysql":
        return
    for table, column, null in COLUMNS:
        schema_editor.execute(
            f"ALTER TABLE `{table}` MODIFY `{column}` varchar(64) "
            f"CHARACTER SET utf8mb4 COLLATE utf8mb4_bin {null}")


def to_default(apps, schema_editor):
    if schema_editor.connection.vendor != "mysql":
        return
    for table, column, null in COLUMNS:
        schema_editor.execute(
            f"ALTER TABLE `{table}` MODIFY `{column}` varchar(64) CHARACTER SET utf8mb4 {null}")


class Migration(migrations.Migration):
    dependencies = [("articles", "0014_bulk_heartbeat")]
    operations = [migrations.RunPython(to_binary, to_default, atomic=False)]
