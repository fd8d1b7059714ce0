# `make demo` and `make test` each set up .venv (created or refreshed when
# pyproject.toml is newer than the last install), then run their job.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: demo demo-cnn demo-char demo-lstm demo-gpt demo-function test test-all bench clean

$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e '.[dev,examples]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/python examples/train_digits.py

demo-cnn: $(STAMP)
	$(VENV)/bin/python examples/train_digits_cnn.py

# a GPT-style character model on the stdlib's docstrings: writes out/char_transformer/
demo-char: $(STAMP)
	$(VENV)/bin/python examples/train_char_transformer.py

# word_language_model-style LSTM and nanoGPT-style GPT on the same text (README, "Examples")
demo-lstm: $(STAMP)
	$(VENV)/bin/python examples/train_char_lstm.py

demo-gpt: $(STAMP)
	$(VENV)/bin/python examples/train_nanogpt.py

demo-function: $(STAMP)
	$(VENV)/bin/python examples/custom_function.py

# tests marked slow (what they are: tests/README.md) run in `make test-all` only: `make test`
# stays inside 10 minutes on CI's 2 cores.
# Two pytest-xdist workers (the machines have 2 cores); PYTEST_WORKERS=0 runs in one process
PYTEST_WORKERS ?= 2
test: $(STAMP)
	$(VENV)/bin/python -m pytest tests -m "not slow" -n $(PYTEST_WORKERS)

test-all: $(STAMP)
	$(VENV)/bin/python -m pytest tests -n $(PYTEST_WORKERS)

bench: $(STAMP)
	$(VENV)/bin/python -m benchmarks

clean:
	rm -rf $(VENV) build *.egg-info
