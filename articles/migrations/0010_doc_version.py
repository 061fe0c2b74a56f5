from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('articles', '0009_index_window'),
    ]

    operations = [
        migrations.AddField(
            model_name='doc',
            name='version',
            field=models.PositiveIntegerField(default=0, db_default=0, help_text='Bumped by every editor decision on this docId: a page carries the version it showed, and an action on an older one is refused.'),
        ),
    ]
