from django.db import migrations, models
from django.db.models.functions import Length


def backfill(apps, schema_editor):
    Article = apps.get_model("articles", "Article")
    Article.objects.update(content_length=Length("content"))


class Migration(migrations.Migration):

    dependencies = [
        ("articles", "0015_nid_binary_collation"),
    ]

    operations = [
        migrations.AddField(
            model_name="article",
            name="content_length",
            field=models.PositiveIntegerField(
                db_default=0, default=0,
                help_text="Characters of the body as received: a member much shorter than "
                          "its cluster's longest is not elected representative by hotness."),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
