# The two commands a new machine needs: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test check lint typecheck bench ladder install clean bytecode

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# Every bot and CLI process imports the project's own sources; where PYTHONDONTWRITEBYTECODE is
# set (as on the CI machines) none of them writes a .pyc, so each would compile them afresh.
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q arena sdk example_bots tests > /dev/null

demo: $(STAMP) bytecode
	$(BIN)/arena demo

lint: $(STAMP)
	$(BIN)/ruff check arena sdk tests example_bots
	$(BIN)/ruff format --check arena sdk tests example_bots

typecheck: $(STAMP)
	$(BIN)/mypy arena sdk

# pytest on WORKERS processes (most process and server tests wait on sockets, so more workers
# than cores pay), with mypy beside it; its report is printed when pytest is done, after the
# 30 slowest tests and fixtures (where the suite's time goes, in CI's log too).
WORKERS ?= 4

test: lint bytecode
	@$(BIN)/mypy arena sdk > $(VENV)/mypy.log 2>&1 & mypy=$$!; \
	$(BIN)/pytest -q -n $(WORKERS) --durations=30 --durations-min=5; status=$$?; \
	wait $$mypy || status=1; cat $(VENV)/mypy.log; exit $$status

# The everyday loop: lint, types and the tests not marked slow (no processes, servers or
# journeys), mypy beside pytest as in `make test`.
check: lint
	@$(BIN)/mypy arena sdk > $(VENV)/mypy.log 2>&1 & mypy=$$!; \
	$(BIN)/pytest -q -m "not slow" -n $(WORKERS); status=$$?; \
	wait $$mypy || status=1; cat $(VENV)/mypy.log; exit $$status

bench: $(STAMP)
	$(BIN)/arena bench engine
	$(BIN)/arena bench playouts

# The reference ladder: each rung's fixed-partnership event played afresh (old results removed;
# the three search rungs take 25 to 35 minutes each on two cores, the quick rung about five), then
# leaderboards/reference.{md,json} from the rung leaderboards. Not part of `make test`. After an
# interruption, `arena event run` with the same --db continues a rung instead.
LADDER := ladder-greedy-random ladder-heuristic-greedy ladder-quick-heuristic \
  ladder-search-heuristic ladder-strong-heuristic ladder-strong-search ladder-learned-greedy \
  ladder-heuristic-learned

ladder: $(STAMP)
	for rung in $(LADDER); do \
	  rm -rf runs/$$rung.sqlite runs/$$rung.sqlite-wal runs/$$rung.sqlite-shm \
	    runs/$$rung.sqlite.replays runs/$$rung.sqlite.logs && \
	  $(BIN)/arena event run example_bots/events/$$rung.toml --db runs/$$rung.sqlite \
	    || exit 1; \
	done
	$(BIN)/arena ladder $(LADDER:%=leaderboards/%.json)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
