# `make demo` and `make test` each set up .venv (created or refreshed when
# pyproject.toml is newer than the last install), then run their job.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev,examples]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/python examples/train_digits.py

test: $(STAMP)
	$(VENV)/bin/python -m pytest tests

clean:
	rm -rf $(VENV) build *.egg-info
