# The two commands a newcomer needs: `make demo` and `make test`. Both install what is missing.
BUILD ?= build
MAKEFLAGS += --no-print-directory
JOBS ?= $(shell nproc)
MPIRUN := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe

.PHONY: all deps configure build demo test bench-kv bench-reduce bench-sas bench-falcon bench-synthetic format clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	OMP_NUM_THREADS=1 $(MPIRUN) -np 6 $(BUILD)/bin/pacer-resnet --servers 1 --scenario=S1 \
	  --policy=epsp:0 --tasks=4 --epochs=1 --progress=bar \
	  --metrics=$(BUILD)/demo-metrics.jsonl --json=$(BUILD)/demo.json
	$(BUILD)/bin/pacer-report $(BUILD)/demo-metrics.jsonl -o $(BUILD)/demo-report.png

test: build
	cd $(BUILD) && ctest --output-on-failure --timeout 600

bench-kv: build
	python3 scripts/bench_kv.py

bench-sas: build
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 python3 tests/e2e/check_sas.py \
	  $$(command -v mpirun) $(BUILD)/bin/pacer-scenario --bench

bench-synthetic: build
	python3 scripts/bench_synthetic.py $(BUILD)/bin --json=$(BUILD)/synthetic-bench.json

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
