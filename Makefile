# The two commands a newcomer needs: `make demo` and `make test`. Both install what is missing.
BUILD ?= build
MAKEFLAGS += --no-print-directory
JOBS ?= $(shell nproc)
MPI_AS_ROOT := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN := $(MPI_AS_ROOT) mpirun --oversubscribe

.PHONY: all deps configure build demo docs package test test-long test-sanitize test-asan test-tsan soak fuzz fuzz-build fuzz-record fuzz-seeds bench-kv bench-hosts bench-traces bench-reduce bench-sas bench-stret bench-sms bench-strn bench-auto bench-falcon bench-synthetic format clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# The story in three steps: the reference (BSP with worker 0 slowed 3x, 60 iterations), the same
# job under --policy=auto (every mitigation, each for its kind of straggler) for 300, and the
# picture comparing them (build/demo-report.png). Worker 0 evaluates every 10 iterations in both,
# on 1000 test images, for the time to accuracy.
DEMO_JOB := OMP_NUM_THREADS=1 $(MPIRUN) -np 6 $(BUILD)/bin/pacer-resnet --servers 1 --scenario=S1 \
  --eval_every=10 --eval_images=1000
demo: build
	@echo "demo: 1/3: the reference, BSP with worker 0 slowed 3x (--scenario=S1), 60 iterations"
	$(DEMO_JOB) --policy=bsp --max_iters=60 --metrics=$(BUILD)/demo-bsp-metrics.jsonl
	@echo "demo: 2/3: the same job under --policy=auto: STRN picks the sync mode, STRET tunes the slow worker's batch, 300 iterations"
	$(DEMO_JOB) --policy=auto --max_iters=300 --metrics=$(BUILD)/demo-metrics.jsonl \
	  --json=$(BUILD)/demo.json
	@echo "demo: 3/3: what --policy=auto saved against BSP"
	$(BUILD)/bin/pacer-report $(BUILD)/demo-metrics.jsonl --against=$(BUILD)/demo-bsp-metrics.jsonl \
	  -o $(BUILD)/demo-report.png

# The API reference from the public headers: build/docs/html/index.html. It fails on an undocumented
# public member.
docs: deps
	@mkdir -p $(BUILD)/docs
	PACER_DOCS_OUT=$(BUILD)/docs doxygen docs/Doxyfile

# libpacer-dev's .deb (headers, library, CMake and pkg-config files) in $(BUILD).
package: build
	cd $(BUILD) && cpack -G DEB

# Two tiers by CTest label. `make test`: every correctness test (exact values, protocol outcomes,
# error paths); two unit tests at a time, each multi-process test alone (RUN_SERIAL). `make
# test-long`: the checks that train a model to an accuracy or judge a timing against t0.
CTEST := ctest --output-on-failure --timeout 600
test: build
	cd $(BUILD) && $(CTEST) -j 2 -LE '^long$$'

test-long: build
	cd $(BUILD) && $(CTEST) -L '^long$$'

# ASan+UBSan over the unit and MPI tests; TSan over the in-process jobs on LocalTransport, where
# every rank is a thread (UCX's own lock-free code is not instrumented, and would be reported).
ASAN_ENV := ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
TSAN_ENV := TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/sanitizers/tsan.supp \
  UCX_MEM_EVENTS=no
TSAN_TESTS := local|Checkpoint|Migration|ServerReport|TaskTransfer|Liveness|ConfigurationAgreement|SyncEngine|RequestTracker|GradientSkip
test-sanitize: test-asan test-tsan
test-asan: deps
	@cmake -S . -B build-asan -DPACER_SANITIZE=address,undefined >/dev/null
	@cmake --build build-asan -j $(JOBS) --target pacer-unit-tests pacer-mpi-tests
	cd build-asan && $(ASAN_ENV) $(CTEST) -j 2 -L unit
	cd build-asan && $(ASAN_ENV) $(CTEST) -R '^mpi_kv_'
test-tsan: deps
	@cmake -S . -B build-tsan -DPACER_SANITIZE=thread >/dev/null
	@cmake --build build-tsan -j $(JOBS) --target pacer-unit-tests
	cd build-tsan && $(TSAN_ENV) $(CTEST) -j 2 -L unit -R '$(TSAN_TESTS)'

# The load job of the test suite for half an hour (about 1.6 s per iteration here), not in CI.
soak: build
	$(MPI_AS_ROOT) python3 tests/e2e/check_load.py mpirun $(BUILD)/bin/pacer-load-job \
	  --iterations=1100 --migrations=1000 --migrate_gap_s=1.5

# libFuzzer over every decoder, FUZZ_SECONDS each (CI runs a short box).
FUZZ_SECONDS ?= 60
fuzz-build: deps
	@CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -DPACER_FUZZ=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS)
fuzz: fuzz-build
	python3 scripts/run_fuzzers.py build-fuzz/bin fuzz/corpus $(FUZZ_SECONDS) \
	  --json=build-fuzz/fuzz-results.json
# Rewrites the committed seeds from the encoders.
# The record of docs/RELIABILITY.md: 10^7 executions of every target (not in CI: about half an hour).
fuzz-record: fuzz-build
	python3 scripts/run_fuzzers.py build-fuzz/bin fuzz/corpus 0 --runs=10000000 \
	  --json=build-fuzz/fuzz-record.json
fuzz-seeds: fuzz-build
	build-fuzz/bin/pacer-fuzz-seeds fuzz/corpus

bench-kv: build
	python3 scripts/bench_kv.py

# Pacer across two hosts (network namespaces; needs root): push/pull against ucx_perftest between
# the same hosts, S3 by the token bucket and by tc, the synthetic ResNet-50 on one and two hosts.
bench-hosts: build
	BUILD=$(BUILD) python3 scripts/bench_hosts.py

# Every policy on PAI's replayed jobs and 10 recorded spreads, against S6's t0 and the traces'
# floors (TURNS, SPREAD_JOBS, POLICIES, ITERS: scripts/bench_traces.py).
bench-traces: build
	BUILD=$(BUILD) python3 scripts/bench_traces.py

bench-strn: build
	BUILD=$(BUILD) python3 scripts/bench_strn.py

bench-auto: build
	BUILD=$(BUILD) python3 scripts/bench_auto.py

bench-sas: build
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 python3 tests/e2e/check_sas.py \
	  $$(command -v mpirun) $(BUILD)/bin/pacer-scenario --bench

bench-stret: build
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 python3 tests/e2e/check_stret.py \
	  $$(command -v mpirun) $(BUILD)/bin/pacer-scenario --bench --json=$(BUILD)/stret-bench.json

bench-synthetic: build
	python3 scripts/bench_synthetic.py $(BUILD)/bin --json=$(BUILD)/synthetic-bench.json

bench-sms: build
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 python3 tests/e2e/check_sms.py \
	  $$(command -v mpirun) $(BUILD)/bin/pacer-scenario --bench --json=$(BUILD)/sms-bench.json \
	  $$(test -x $(BUILD)/bin/pacer-resnet && echo --resnet=$(BUILD)/bin/pacer-resnet)

bench-falcon: build
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 python3 tests/e2e/check_falcon.py \
	  $$(command -v mpirun) $(BUILD)/bin/pacer-scenario --bench --json=$(BUILD)/falcon-bench.json

# --llc_bytes: a VM's sysconf may report the host's whole L3; bandwidth falls off past 32 MiB.
bench-reduce: build
	$(BUILD)/bin/pacer-reduce-bench --sizes=1MB,16MB,64MB,256MB --targets --llc_bytes=33554432 \
	  --json=$(BUILD)/reduce-bench.json

format:
	@git ls-files '*.h' '*.cc' '*.cu' '*.cuh' | xargs clang-format -i

clean:
	rm -rf $(BUILD)
