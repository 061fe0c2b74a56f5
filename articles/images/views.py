"""The thumbnails of article pictures, served by the project to the editors' pages.

A thumbnail is a JPEG this project made (articles/images/thumbs.py), yet it stems from a
crawled file: it is served as an image only (no sniffing, a policy that lets it run
nothing) and kept in the editor's browser alone. Who may see it is decided where it is
routed (articles/urls.py: the cluster pages' ``viewer_required``), since this room sits
below the editor's and does not import it.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

from articles.models import ArticleImage

#: A row's thumbnail never changes (a changed picture list makes new rows).
CACHE_SECONDS = 24 * 3600


@require_safe
def thumbnail(request: HttpRequest, image_id: int) -> HttpResponse:
    data = (ArticleImage.objects.filter(pk=image_id).values_list("thumbnail", flat=True)
            .first())
    if not data:
        raise Http404("no thumbnail")
    response = HttpResponse(bytes(data), content_type="image/jpeg")
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'"
    response["Cross-Origin-Resource-Policy"] = "same-origin"
    response["Cache-Control"] = f"private, max-age={CACHE_SECONDS}"
    return response
