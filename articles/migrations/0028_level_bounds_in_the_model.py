"""The level bounds move from the engine settings into the match model.

An installation whose admin had moved one of the five bounds the settings held keeps
it: the active model (or the shipped one) is saved as a new version with those bounds
and made active, so the engine decides as before.
"""

import django.db.models.deletion
from django.db import migrations, models

MOVED = ("jaccard", "containment", "short_shingles", "short_jaccard",
         "picture_title_similarity")


def keep_moved_bounds(apps, schema_editor):
    from fingerprints.rule.bounds import Bounds
    from fingerprints.rule.match_model import MatchModel, starting_model

    settings_model = apps.get_model("articles", "EngineSettings")
    version_model = apps.get_model("articles", "MatchModelVersion")
    settings = settings_model.objects.filter(pk=1).first()
    if settings is None:
        return
    defaults = Bounds()
    moved = {name: getattr(settings, name) for name in MOVED
             if getattr(settings, name) != getattr(defaults, name)}
    if not moved:
        return
    active = settings.match_model
    model = MatchModel.from_dict(active.weights) if active is not None else starting_model()
    data = model.as_dict()
    data["bounds"] = {**data["bounds"], **moved}
    data["version"] = f"{model.version}-settings"
    data["description"] = (f"{model.version} with the level bounds the engine settings "
                           f"held: {moved}")
    MatchModel.from_dict(data)  # valid bounds, or the migration stops here
    version = version_model.objects.create(version=data["version"], base=model.version,
                                           weights=data)
    settings.match_model = version
    settings.version += 1
    settings.save()


class Migration(migrations.Migration):

    dependencies = [
        ('articles', '0027_match_model_versions'),
    ]

    operations = [
        migrations.RunPython(keep_moved_bounds, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name='enginesettings',
            name='containment',
        ),
        migrations.RemoveField(
            model_name='enginesettings',
            name='jaccard',
        ),
        migrations.RemoveField(
            model_name='enginesettings',
            name='picture_title_similarity',
        ),
        migrations.RemoveField(
            model_name='enginesettings',
            name='short_jaccard',
        ),
        migrations.RemoveField(
            model_name='enginesettings',
            name='short_shingles',
        ),
        migrations.AlterField(
            model_name='enginesettings',
            name='match_model',
            field=models.ForeignKey(blank=True, help_text="The weights the match threshold is applied to and the bounds where their levels begin (a share of shingles, a title similarity): a version fitted to the editors' decisions (match model versions; compare it there first), or empty for the model shipped with the project. Saving applies it to the next article, without a reindex.", null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='articles.matchmodelversion', verbose_name='match model'),
        ),
        migrations.AlterField(
            model_name='enginesettings',
            name='review_cluster_size',
            field=models.PositiveIntegerField(default=20, help_text='A docId with this many members or more goes to the review queue.', verbose_name='review: cluster size at least'),
        ),
        migrations.AlterField(
            model_name='enginesettings',
            name='title_k',
            field=models.PositiveSmallIntegerField(default=3, help_text='Hamming distance (0–8) within which title fingerprints are candidates.', verbose_name='title distance'),
        ),
    ]
