# The two commands of the README: `make run` (a short local search) and `make test`.
# Both create the virtual environment in .venv/ and install the project into it first.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: run test install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/bmn search configs/local.toml

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q

clean:
	rm -rf $(VENV) build *.egg-info
