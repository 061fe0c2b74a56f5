import contextlib
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dedupsite.settings")
application = get_wsgi_application()

# A web server is a long-running Redis client: start the embedded Redis (REDIS_URL
# unset) now rather than in the first request.
from dedupsite import redis_store  # noqa: E402

redis_store.ensure_server()

if os.environ.get("DEDUPSITE_WARMUP", "1") != "0":
    # Load the segmenter dictionary and the IDF table now, not in the first request.
    from articles.tuning.state import active_config
    from fingerprints.rule import extract

    # The database may not be reachable yet: then the first request warms up.
    with contextlib.suppress(Exception):
        extract("预热", "加载分词词典和逆文档频率表。warm up", active_config())
