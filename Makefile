# dedupsite — the README's two commands first: `make demo`, `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
export DJANGO_SETTINGS_MODULE := dedupsite.settings

.PHONY: demo install-prod test test-passes test-engine-alone test-batch-alone test-browser-alone test-mysql-rest test-mysql-rest-a test-mysql-rest-b test-mysql-rest-c test-sqlite-alone install spark system-deps lint test-engine test-mysql test-sqlite drills web worker migrate bench-accuracy bench-engine clean

demo: install
	$(PY) scripts/demo.py

# The throwaway servers keep their files in RAM when the machine has /dev/shm.
test: install spark system-deps
	TESTENV_DIR=$${TESTENV_DIR:-$$(test -w /dev/shm && echo /dev/shm)} $(PY) scripts/testenv.py run -- $(MAKE) --no-print-directory test-passes

# make test's passes, all side by side: lint, the engine's tests (on a Redis of their
# own), the batch engines' tests (Spark's JVMs) and the browser tests (chromium), each of
# the last two on a MariaDB and a Redis of their own; the rest of the MariaDB pass in
# three parts, the first two on a MariaDB and a Redis of their own, the third on make
# test's (they mostly wait on servers, workers and drills; one of them restarts or
# flushes its Redis); and the SQLite pass on a Redis of its own.
test-passes:
	$(MAKE) --no-print-directory -j8 --output-sync=target lint test-engine-alone test-batch-alone test-browser-alone test-mysql-rest-a test-mysql-rest-b test-mysql-rest-c test-sqlite-alone

test-engine-alone:
	env -u REDIS_URL $(MAKE) --no-print-directory test-engine

test-batch-alone:
	env -u DATABASE_URL -u REDIS_URL $(PY) scripts/testenv.py run -- $(VENV)/bin/pytest -q --durations=$(DURATIONS) tests/batch

test-browser-alone:
	env -u DATABASE_URL -u REDIS_URL $(PY) scripts/testenv.py run -- $(VENV)/bin/pytest -q --durations=$(DURATIONS) tests/browser

# The rest on MariaDB (every test but the engine's, the batch engines' and the browser's):
# one pytest (test-mysql-rest), or in make test three parts side by side, about even in
# CPU and time: the folders of REST_A, those of REST_B, and every other (test-mysql-rest-c,
# so that a new folder is never left out).
REST_IGNORE := --ignore=tests/fingerprints --ignore=tests/batch --ignore=tests/browser
REST_A := tests/drills tests/index tests/ingest tests/test_testenv.py
REST_B := tests/security tests/images tests/api tests/commands

test-mysql-rest:
	$(VENV)/bin/pytest -q --durations=$(DURATIONS) $(REST_IGNORE)

test-mysql-rest-a:
	env -u DATABASE_URL -u REDIS_URL $(PY) scripts/testenv.py run -- $(VENV)/bin/pytest -q --durations=$(DURATIONS) $(REST_A)

test-mysql-rest-b:
	env -u DATABASE_URL -u REDIS_URL $(PY) scripts/testenv.py run -- $(VENV)/bin/pytest -q --durations=$(DURATIONS) $(REST_B)

test-mysql-rest-c:
	$(VENV)/bin/pytest -q --durations=$(DURATIONS) $(REST_IGNORE) $(addprefix --ignore=,$(REST_A) $(REST_B))

# The SQLite pass beside the MariaDB ones needs a Redis of its own (its tests empty
# theirs); the placeholder DATABASE_URL only tells scripts/testenv.py to start no MariaDB
# (test-sqlite sets its own).
test-sqlite-alone:
	env -u REDIS_URL DATABASE_URL=sqlite:// $(PY) scripts/testenv.py run -- $(MAKE) --no-print-directory test-sqlite

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml setup.py constraints.txt fingerprints/rule/_kernel.c fingerprints/rule/_segment.c fingerprints/rule/_bound.h fingerprints/rule/_huge.h fingerprints/rule/_scratch.h fingerprints/rule/_stamped.h fingerprints/rule/_samples.h fingerprints/rule/_cut.h fingerprints/rule/_fingerprint_cut.h fingerprints/rule/_args.h fingerprints/rule/_jsonl.h fingerprints/rule/_pack.h
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@# mysqlclient compiles against libmysqlclient: install the headers first when missing.
	@pkg-config --exists mysqlclient 2>/dev/null || pkg-config --exists libmariadb 2>/dev/null || bash scripts/install-system-deps.sh
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

# A production machine (docs/operations.md): the venv on Debian's own Python (readable
# by the service user, unlike a root-only pyenv or /root install), the project and its
# runtime dependencies at the versions of constraints.txt, no dev or test extras.
# Editable, so that the C extensions are built in place beside the code the units run
# from /srv/dedupsite. Run again after `git pull`: pip changes only what changed.
PROD_PYTHON ?= /usr/bin/python3
install-prod:
	@test -x $(PROD_PYTHON) || { echo "$(PROD_PYTHON) missing: apt-get install python3 python3-venv" >&2; exit 1; }
	@if test -e $(PY) && test "$$(readlink -f $(PY))" != "$$(readlink -f $(PROD_PYTHON))"; then \
	    echo "$(VENV) runs $$(readlink -f $(PY)), not $(PROD_PYTHON): remove it first" >&2; exit 1; fi
	test -x $(PY) || $(PROD_PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -c constraints.txt -e .

# PySpark for `spark_dedup --engine spark` and its tests (an extra: the demo does without).
spark: $(VENV)/.spark

$(VENV)/.spark: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[dev,spark]'
	touch $@

system-deps:
	bash scripts/install-system-deps.sh

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# Every pass prints its slowest tests (DURATIONS of them).
DURATIONS ?= 15

# The engine (rule, candidate stores, kernel) without Django: no settings, no database
# (tests/fingerprints/pytest.ini); its stores' tests on REDIS_URL's database 2, or a
# throwaway Redis when REDIS_URL is unset.
test-engine:
	env -u DJANGO_SETTINGS_MODULE $(VENV)/bin/pytest -q --durations=$(DURATIONS) tests/fingerprints

# The rest on MariaDB/MySQL (DATABASE_URL from scripts/testenv.py or your own).
test-mysql:
	$(VENV)/bin/pytest -q --durations=$(DURATIONS) --ignore=tests/fingerprints

# Again on SQLite: the tests whose behaviour depends on the database dialect (marked
# `dialect`: raw SQL, unsigned 64-bit columns, row locks, date functions).
test-sqlite:
	DATABASE_URL=sqlite:///$$(mktemp -d)/test.sqlite3 $(VENV)/bin/pytest -q --durations=$(DURATIONS) -m "dialect and not mysql and not browser and not drill and not redis_cluster" --ignore=tests/fingerprints tests

# Reliability drills, the slow ones included (tests marked `drill`; see docs/reliability.md).
drills: install spark system-deps
	$(PY) scripts/testenv.py run -- $(VENV)/bin/pytest -q -m drill --run-slow-drills tests

migrate: install
	$(PY) manage.py migrate --noinput

# Static files are collected first (WhiteNoise serves var/static/); with DEBUG=false
# nothing else serves them.
web: migrate
	$(PY) manage.py collectstatic --noinput -v0
	PORT=$(PORT) exec $(VENV)/bin/gunicorn dedupsite.wsgi -c dedupsite/gunicorn.conf.py

worker: migrate
	exec $(PY) manage.py dedup_worker

bench-accuracy: install
	$(PY) bench/accuracy.py

bench-engine: install
	$(PY) bench/engine.py

clean:
	rm -rf var/*.sqlite3* var/static
