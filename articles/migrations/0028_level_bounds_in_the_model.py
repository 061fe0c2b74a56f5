"""The level bounds move from the engine settings into the match model.

An installation whose admin had moved one of the five bounds the settings held keeps
it: the active model (or the shipped one) is saved as a new version with those bounds
and made the settings' model, so the engine decides as before. The settings version is
left alone: the running state (``IndexState.config``) keeps the same bounds beside its
model, which ``articles.tuning.state.config_from_json`` reads as the model's, until the
admin next saves. Going back copies the active version's five bounds into the columns
again. The data this needs is frozen here (no import of the engine's code).
"""

import json
from importlib import resources

import django.db.models.deletion
from django.db import migrations, models

MOVED = ("jaccard", "containment", "short_shingles", "short_jaccard",
         "picture_title_similarity")
# the engine-v2 rule's bounds, as fingerprints/rule/bounds.py had them at this migration
DEFAULTS = {
    "jaccard": 0.6, "copy_containment": 0.8, "containment": 0.9,
    "containment_min_shingles": 60, "cjk_containment": 0.7, "cjk_strict_containment": 0.6,
    "cjk_strict_jaccard": 0.1, "word_jaccard": 0.6, "word_containment": 0.7,
    "title_jaccard": 0.3, "short_shingles": 30, "short_jaccard": 0.9, "short_edit": 0.8,
    "title_only_similarity": 0.9, "title_only_min_chars": 6, "off_title_similarity": 0.5,
    "off_title_max_shingles": 300, "guard_conflicts": 0.2, "guard_part_jaccard": 0.3,
    "guard_part_min_conflicts": 2, "name_guard_conflicts": 0.3,
    "name_guard_min_conflicts": 2, "title_frame_similarity": 0.8,
    "picture_title_similarity": 0.6,
}


def keep_moved_bounds(apps, schema_editor):
    settings_model = apps.get_model("articles", "EngineSettings")
    version_model = apps.get_model("articles", "MatchModelVersion")
    settings = settings_model.objects.filter(pk=1).first()
    if settings is None:
        return
    moved = {name: getattr(settings, name) for name in MOVED
             if getattr(settings, name) != DEFAULTS[name]}
    if not moved:
        return
    active = settings.match_model
    if active is not None:
        data = dict(active.weights)
    else:
        shipped = resources.files("fingerprints.rule").joinpath("data", "match_model.json")
        data = json.loads(shipped.read_text(encoding="utf-8"))
    base = str(data["version"])
    data["bounds"] = {**DEFAULTS, **data.get("bounds", {}), **moved}
    name, n = f"{base}-settings", 1
    while version_model.objects.filter(version=name).exists():
        n += 1
        name = f"{base}-settings-{n}"
    data["version"] = name
    data["description"] = f"{base} with the level bounds the engine settings held: {moved}"
    settings.match_model = version_model.objects.create(version=name, base=base,
                                                        weights=data)
    settings.save()


def restore_bounds(apps, schema_editor):
    """Back: the settings' columns (re-added, at their defaults) take the active
    version's bounds, which the older code does not read."""
    settings = apps.get_model("articles", "EngineSettings").objects.filter(pk=1).first()
    if settings is None or settings.match_model is None:
        return
    bounds = settings.match_model.weights.get("bounds", {})
    for name in MOVED:
        setattr(settings, name, bounds.get(name, DEFAULTS[name]))
    settings.save()


class Migration(migrations.Migration):

    dependencies = [
        ('articles', '0027_match_model_versions'),
    ]

    operations = [
        migrations.RunPython(keep_moved_bounds, restore_bounds),
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
