# The two commands of the README: `make run` (a short local search) and `make test`.
# Both create the virtual environment in .venv/ and install the project into it first (with the
# test tools and JupyterLab, so `make notebook` works right after either).
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: run test install notebook clean image

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

# The suite, with its wall time at the end (the target: at most 8 minutes on 2 cores, cold caches).
# Two pytest workers, each with whole test files (their module fixtures, and one Ray cluster per
# worker): much of a cluster test is waiting on processes, which the other worker fills.
TEST_WORKERS ?= 2
test: $(STAMP)
	@start=$$(date +%s); $(VENV)/bin/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile; code=$$?; \
	echo "make test: $$(( $$(date +%s) - start )) s of wall time"; exit $$code

notebook: $(STAMP)
	BMN_RUN=$(RUN) $(VENV)/bin/jupyter lab notebooks/explore.ipynb

# make image   (or make image IMAGE=REGISTRY/bmn:VERSION): the one cloud image, tagged with the
# version in pyproject.toml (configs/Dockerfile; push it, never rebuild a pushed tag)
VERSION = $(shell $(PYTHON) -c "import tomllib; print(tomllib.load(open('pyproject.toml', 'rb'))['project']['version'])")
IMAGE ?= ghcr.io/YOUR-ORG/bmn:$(VERSION)

image:
	docker build -f configs/Dockerfile --build-arg BMN_VERSION=$(VERSION) -t $(IMAGE) .

clean:
	rm -rf $(VENV) build *.egg-info
