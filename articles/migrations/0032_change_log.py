"""The change log of docIds (articles/changes/log.py): its rows, the one-row cursor every
logging transaction takes its cursors from (created here, so that no two transactions
race to create it), the key flag for reading other keys' changes, the log's retention."""

import django.db.models.deletion
from django.db import migrations, models


def create_cursor(apps, schema_editor):
    apps.get_model("articles", "ChangeCursor").objects.get_or_create(pk=1, defaults={"last": 0})


class Migration(migrations.Migration):

    dependencies = [
        ('articles', '0031_settings_version_names'),
    ]

    operations = [
        migrations.CreateModel(
            name='ChangeCursor',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('last', models.PositiveBigIntegerField(default=0)),
            ],
        ),
        migrations.AddField(
            model_name='apikey',
            name='may_read_others',
            field=models.BooleanField(default=False, help_text='May read the changes of articles first posted with another key (GET /api/v1/changes; otherwise a key reads the changes of its own articles).'),
        ),
        migrations.AddField(
            model_name='enginesettings',
            name='change_log_days',
            field=models.PositiveIntegerField(default=30, help_text='Changes of docIds (GET /api/v1/changes, webhooks) older than this are dropped from the log; 0 keeps every change. A reader further behind than this misses what was dropped.', verbose_name='keep the change log (days)'),
        ),
        migrations.CreateModel(
            name='Change',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('cursor', models.PositiveBigIntegerField(unique=True)),
                ('kind', models.CharField(choices=[('membership', 'membership'), ('representative', 'representative'), ('status', 'status')], max_length=16)),
                ('nid', models.CharField(blank=True, default='', max_length=64)),
                ('doc_id', models.CharField(max_length=33)),
                ('previous_doc_id', models.CharField(blank=True, default='', max_length=33)),
                ('representative_nid', models.CharField(blank=True, default='', max_length=64)),
                ('status', models.CharField(blank=True, default='', max_length=16)),
                ('reason', models.CharField(max_length=32)),
                ('actor', models.CharField(blank=True, default='', max_length=160)),
                ('at', models.DateTimeField()),
                ('api_key', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='articles.apikey')),
            ],
            options={
                'verbose_name': 'change',
                'verbose_name_plural': 'changes',
                'indexes': [models.Index(fields=['at'], name='articles_change_at')],
            },
        ),
        migrations.RunPython(create_cursor, migrations.RunPython.noop),
    ]
