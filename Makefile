# The two commands of the README: `make run` (a short local search) and `make test`.
# Both create the virtual environment in .venv/ and install the project into it first (with the
# test tools and JupyterLab, so `make notebook` works right after either).
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: run test install notebook clean

# make notebook RUN=runs/local   (or several runs separated by commas; none: the notebook makes one)
RUN ?=

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e ".[test,notebook]"
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/bmn search configs/local.toml

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q

notebook: $(STAMP)
	BMN_RUN=$(RUN) $(VENV)/bin/jupyter lab notebooks/explore.ipynb

clean:
	rm -rf $(VENV) build *.egg-info
