from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('articles', '0030_more_engine_settings'),
    ]

    operations = [
        migrations.AlterField(
            model_name='enginesettings',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, verbose_name='updated at'),
        ),
        migrations.AlterField(
            model_name='enginesettings',
            name='version',
            field=models.PositiveIntegerField(default=1, editable=False, verbose_name='version'),
        ),
    ]
