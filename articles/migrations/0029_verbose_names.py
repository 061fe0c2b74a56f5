from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('articles', '0028_level_bounds_in_the_model'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='apikey',
            options={'verbose_name': 'API key', 'verbose_name_plural': 'API keys'},
        ),
        migrations.AlterModelOptions(
            name='article',
            options={'verbose_name': 'article', 'verbose_name_plural': 'articles'},
        ),
        migrations.AlterModelOptions(
            name='doc',
            options={'verbose_name': 'docId', 'verbose_name_plural': 'docIds'},
        ),
        migrations.AlterModelOptions(
            name='mediaweight',
            options={'verbose_name': 'media weight', 'verbose_name_plural': 'media weights'},
        ),
        migrations.AlterField(
            model_name='matchmodelversion',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created'),
        ),
        migrations.AlterField(
            model_name='mediaweight',
            name='media',
            field=models.CharField(max_length=200, unique=True, verbose_name='media'),
        ),
        migrations.AlterField(
            model_name='mediaweight',
            name='weight',
            field=models.FloatField(default=1.0, verbose_name='weight'),
        ),
    ]
