# The two commands of the README: `make run` (a short local search) and `make test`.
# Both create the virtual environment in .venv/ and install the project into it first (with the
# test tools and JupyterLab, so `make notebook` works right after either).
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: run test test-bounds lint install notebook clean image image-gpu lock

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
# First the kernels every strategy runs are compiled into Numba's disk cache, once (configs/warm_kernels.py):
# otherwise the two pytest workers and the Ray actors their tests start would each compile the same
# kernels, at the same time, in the first minutes. Two processes compile the two kernel families that
# share nothing (the sweep; backward play) at once, then climb, which uses both, is warmed from them:
# about 30 s where the cache is cold, 5 s where it is not. Then two pytest workers, each with whole
# test files (their module fixtures, and one Ray cluster per worker). Before all that, the project's
# modules are byte-compiled once (compileall writes the .pyc files even where PYTHONDONTWRITEBYTECODE
# is set, as on some CI machines, which only stops imports from writing them): otherwise each of the
# few hundred processes of a run (Ray actors, bmn commands) compiles them again, ~0.1 s each.
TEST_WORKERS ?= 2
WARM := $(VENV)/bin/python configs/warm_kernels.py --group
test: $(STAMP)
	@start=$$(date +%s); $(VENV)/bin/python -m compileall -q kernels cluster configs tests benchmarks > /dev/null; \
	{ $(WARM) sweep > /dev/null & $(WARM) backward > /dev/null && wait $$!; } && $(WARM) both > /dev/null && \
	$(VENV)/bin/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder; code=$$?; \
	echo "make test: $$(( $$(date +%s) - start )) s of wall time"; exit $$code

# The gene search and the construction's tests again with Numba's bounds checks on (.ci/run runs it after the
# suite): an index past a buffer's end then raises instead of overwriting memory unseen (the kernels are compiled
# without checks for speed: kernels/_jit.py). Bounds-checked code is compiled apart, into a cache of its own.
BOUNDS_CACHE ?= $(HOME)/.cache/bmn/numba-boundscheck
test-bounds: $(STAMP)
	@start=$$(date +%s); NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR=$(BOUNDS_CACHE) $(VENV)/bin/python -m pytest -q \
	    -p no:cacheprovider tests/test_genes.py tests/test_construct.py tests/test_genelib.py; code=$$?; \
	echo "make test-bounds: $$(( $$(date +%s) - start )) s of wall time"; exit $$code

# The linter, configured in pyproject.toml ([tool.ruff]): .ci/run runs it before the tests.
lint: $(STAMP)
	$(VENV)/bin/ruff check .

notebook: $(STAMP)
	BMN_RUN=$(RUN) $(VENV)/bin/jupyter lab notebooks/explore.ipynb

# make image   (or make image IMAGE=REGISTRY/bmn:VERSION): the one cloud image, tagged with the
# version in pyproject.toml (configs/Dockerfile; push it, never rebuild a pushed tag)
VERSION = $(shell $(PYTHON) -c "import tomllib; print(tomllib.load(open('pyproject.toml', 'rb'))['project']['version'])")
IMAGE ?= ghcr.io/YOUR-ORG/bmn:$(VERSION)

# The base image is pinned by digest (configs/base-image.digest). The first `make image` pulls the
# tag the Dockerfile names and records its digest there: commit that file, and every later build
# (anyone's) starts from the same bytes. To move to a newer base, delete the file and build again.
RAY_BASE_OF = $(subst $${RAY_FLAVOUR},$(1),$(shell sed -n 's/^FROM \([^@]*\)@.*/\1/p' configs/Dockerfile))
RAY_BASE = $(call RAY_BASE_OF,cpu)
BASE_DIGEST = configs/base-image.digest
# The GPU workers' image: the same Dockerfile on Ray's CUDA base of the same version, its own digest.
GPU_FLAVOUR = cu128
RAY_BASE_GPU = $(call RAY_BASE_OF,$(GPU_FLAVOUR))
GPU_BASE_DIGEST = configs/base-image-gpu.digest
GPU_IMAGE ?= ghcr.io/YOUR-ORG/bmn:$(VERSION)-gpu

$(BASE_DIGEST):
	docker pull $(RAY_BASE)
	docker inspect --format '{{index .RepoDigests 0}}' $(RAY_BASE) | sed 's/.*@//' > $@
	@echo "recorded the digest of $(RAY_BASE) in $@: commit it"

image: $(BASE_DIGEST)
	docker build -f configs/Dockerfile --build-arg BMN_VERSION=$(VERSION) \
	    --build-arg RAY_BASE_DIGEST=$$(cat $(BASE_DIGEST)) -t $(IMAGE) .

$(GPU_BASE_DIGEST):
	docker pull $(RAY_BASE_GPU)
	docker inspect --format '{{index .RepoDigests 0}}' $(RAY_BASE_GPU) | sed 's/.*@//' > $@
	@echo "recorded the digest of $(RAY_BASE_GPU) in $@: commit it"

image-gpu: $(GPU_BASE_DIGEST)
	docker build -f configs/Dockerfile --build-arg BMN_VERSION=$(VERSION) --build-arg RAY_FLAVOUR=$(GPU_FLAVOUR) \
	    --build-arg LOCK=image-requirements-gpu.lock --build-arg RAY_BASE_DIGEST=$$(cat $(GPU_BASE_DIGEST)) \
	    -t $(GPU_IMAGE) .

# configs/image-requirements.lock: every Python package of the image, pinned and hashed, made from
# pyproject.toml's dependencies for the image's Python (3.11, x86-64 Linux); -gpu.lock: the same with
# the gpu extra (numba-cuda and the CUDA toolkit's wheels), for the GPU image.
lock: $(STAMP)
	$(VENV)/bin/python -m pip install --quiet uv
	$(VENV)/bin/uv pip compile pyproject.toml --quiet --python-version 3.11 \
	    --python-platform x86_64-manylinux_2_28 --generate-hashes --custom-compile-command "make lock" \
	    -o configs/image-requirements.lock
	$(VENV)/bin/uv pip compile pyproject.toml --quiet --python-version 3.11 --extra gpu \
	    --python-platform x86_64-manylinux_2_28 --generate-hashes --custom-compile-command "make lock" \
	    -o configs/image-requirements-gpu.lock

clean:
	rm -rf $(VENV) build *.egg-info
