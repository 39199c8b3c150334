# Both targets bootstrap their own .venv, so a fresh machine needs only python3 and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test demo lint bench clean screenshots

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# An old pip writes console-script wrappers that import `re`, a third of start-up here.
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,semantic,postgres]'
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy --strict src

test: lint
	$(BIN)/pytest -q

# The pictures in docs/ui/ are the browser tests' screenshots of a seeded store.
screenshots: $(STAMP)
	LOCALMEM_UI_SCREENSHOTS=$(CURDIR)/docs/ui $(BIN)/pytest -q tests/ui/test_ui_browser.py \
		tests/ui/test_ui_layout.py tests/ui/test_ui_flows.py

demo: $(STAMP)
	$(BIN)/python examples/demo.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
