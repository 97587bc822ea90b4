# Top-level entry points. Every target runs the idempotent set-up first, so a fresh Debian 12
# machine needs nothing else: `make run` (the main job on the embedded default), `make test`.
BUILD     ?= build
BUILD_SAN ?= build-asan
JOBS      ?= $(shell nproc)
# Unity build of src/ (CMakeLists.txt, OVERHEAD_UNITY): a clean build of `overhead` takes about half
# the CPU (docs/benchmarks/build.md), which is what a fresh machine's `make run` waits for. An edit
# then recompiles its batch of 8 files: `make UNITY=OFF` for per-file builds while developing.
UNITY     ?= ON
# ccache, when present (set-up installs it), makes rebuilds after a checkout or in a second clone
# cheap. Recursive (=) so it is looked up when the recipe runs, after set-up.
LAUNCHER   = $(if $(shell command -v ccache 2>/dev/null),-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# ccache keys on the compiler's command line, which holds this checkout's absolute paths: rewriting
# them relative to the checkout (and not hashing the build directory into debug info) lets a clone
# in another directory reuse what an earlier clone compiled.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

.PHONY: all setup setup-build configure configure-run check-run-build build build-overhead run test test-faults test-asan bench fuzz goldens clean lambda-zip

all: build

# Everything: the build's packages and the tests', fuzzers' and benchmarks'.
setup:
	@bash scripts/setup.sh

# Only what building `overhead` needs (a fresh machine's `make run` installs no test packages).
setup-build:
	@bash scripts/setup.sh build

# Tests, benchmarks and the Python module are configured when their packages are installed (after
# `make setup`). The run-only configure turns them off outright: a machine image may ship GoogleTest
# and Google Benchmark but not the rest of the tests' packages, and `make run` must not depend on
# what the image happens to have (scripts/check_run_build.sh proves it in CI). Both configure the
# same folder with the same compile flags, so switching between them rebuilds nothing in src/.
CONFIGURE = cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DOVERHEAD_WERROR=ON -DOVERHEAD_UNITY=$(UNITY) $(LAUNCHER)
RUN_ONLY  = -DOVERHEAD_TESTS=OFF -DOVERHEAD_BENCH=OFF -DOVERHEAD_PYTHON=OFF

configure:
	@$(CONFIGURE) -DOVERHEAD_TESTS=ON -DOVERHEAD_BENCH=ON -DOVERHEAD_PYTHON=ON >/dev/null

configure-run:
	@$(CONFIGURE) $(RUN_ONLY) >/dev/null

build: setup
	@$(MAKE) --no-print-directory configure
	@cmake --build $(BUILD) -j $(JOBS)

build-overhead: setup-build
	@$(MAKE) --no-print-directory configure-run
	@cmake --build $(BUILD) -j $(JOBS) --target overhead

run: build-overhead
	$(BUILD)/overhead run

# Label `faults` (the long kill runs) is left to `make test-faults`. No tests found is an error
# (a build configured without GoogleTest).
test: build
	@cd $(BUILD) && ctest --output-on-failure --no-tests=error -j $(JOBS) -LE faults $(CTEST_ARGS)

# The long fault runs (label `faults`: the full kill test on Redis + PostgreSQL), one at a time;
# CTest starts and stops the servers they need. Results go to docs/reliability.md.
test-faults: build
	@cd $(BUILD) && ctest --output-on-failure -L faults $(CTEST_ARGS)

# ASan+UBSan build of every test (CI runs it after `make test`). The label `faults` is left to
# `make test-faults` here too: its batch kill runs took minutes under the sanitizers, in CI's time.
# At -O1 with line tables only, as the sanitizers' docs advise: stack traces keep file and line,
# and the build takes much less time than -O2 -g. The micro-benchmarks are not built: nothing runs
# them under the sanitizers.
SAN_FLAGS = -O1 -g1 -DNDEBUG
test-asan: setup
	@cmake -S . -B $(BUILD_SAN) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(SAN_FLAGS)" \
	  -DOVERHEAD_WERROR=ON -DOVERHEAD_SANITIZE=ON -DOVERHEAD_BENCH=OFF $(LAUNCHER) >/dev/null
	@cmake --build $(BUILD_SAN) -j $(JOBS)
	@cd $(BUILD_SAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -LE "slow|faults" $(CTEST_ARGS)

bench: build
	@bash scripts/install_ref.sh
	@bash bench/tokenize_vs_hf.sh

fuzz: setup
	@bash fuzz/run.sh

goldens: build
	@bash scripts/make_goldens.sh

# The deployable AWS Lambda zip of `overhead lambda` (bootstrap + binary + its shared libraries;
# docs/aws.md, "The consumer as a Lambda").
lambda-zip: build
	@bash scripts/make_lambda_zip.sh $(BUILD) $(BUILD)/overhead-lambda.zip

clean:
	rm -rf $(BUILD) $(BUILD_SAN)
