import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('articles', '0029_verbose_names'),
    ]

    operations = [
        migrations.AddField(
            model_name='enginesettings',
            name='anchorless_threshold',
            field=models.FloatField(default=0.99, help_text="A candidate whose docId's founding article could not be read (the docId is joined through it) joins only when its own match probability is at least this too, for every language (from 0 to 1). Raising it never adds a match, lowering it never removes one.", validators=[django.core.validators.MinValueValidator(0.0), django.core.validators.MaxValueValidator(1.0)], verbose_name='match threshold without the founding article'),
        ),
        migrations.AddField(
            model_name='enginesettings',
            name='candidate_radius',
            field=models.PositiveSmallIntegerField(default=8, help_text='Fingerprints farther than the content or title distance that share a block of the index with the article are verified too when within this many bits (0–64): a larger radius verifies more pairs and finds more partial copies; at or below the distance, only those within it.', validators=[django.core.validators.MinValueValidator(0), django.core.validators.MaxValueValidator(64)], verbose_name='candidate radius'),
        ),
        migrations.AddField(
            model_name='enginesettings',
            name='probe_bits',
            field=models.PositiveSmallIntegerField(default=3, help_text="Content lookups also try the article's fingerprint with this many of its least certain bits in each block flipped, in every combination (0–4; 3 adds 28 lookups; 0 turns probing off): copies whose fingerprints differ in those bits are found.", validators=[django.core.validators.MinValueValidator(0), django.core.validators.MaxValueValidator(4)], verbose_name='probe bits'),
        ),
        migrations.AddField(
            model_name='enginesettings',
            name='title_min_tokens',
            field=models.PositiveSmallIntegerField(default=2, help_text='A title with fewer words that weigh in its fingerprint than this (stopwords and punctuation weigh nothing) gets no title fingerprint, so the title rule never joins it (0–20).', validators=[django.core.validators.MinValueValidator(0), django.core.validators.MaxValueValidator(20)], verbose_name='title: words at least'),
        ),
    ]
