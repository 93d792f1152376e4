# koma — the two set-up commands are `make demo` and `make test`.
BUILD   ?= build/release
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps configure build demo test test-asan bench fuzz clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DKOMA_BUILD_TESTS=ON -DKOMA_BUILD_VIDEO=ON -DKOMA_BUILD_PYTHON=ON $(CMAKE_FLAGS)

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/apps/koma/koma demo --output-dir out/demo

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The whole C++ suite (no Python module, no video) under ASan + UBSan, clang -O1, assertions on
# (docs/reliability.md: 704 s to build and 537 s to run on 2 cores; not part of CI).
test-asan: deps
	cmake --preset asan >/dev/null
	cmake --build build/asan -j $(JOBS)
	cd build/asan && ASAN_OPTIONS=detect_leaks=0 ctest --output-on-failure -j $(JOBS) --timeout 900

bench: deps
	cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DKOMA_BUILD_BENCH=ON -DKOMA_BUILD_TESTS=OFF
	cmake --build build/bench -j $(JOBS)
	bash bench/run.sh build/bench

# libFuzzer harnesses under ASan + UBSan (clang): FUZZ_SECONDS per reader (docs/reliability.md).
FUZZ_SECONDS ?= 60
fuzz: deps
	bash scripts/fuzz.sh $(FUZZ_SECONDS)

clean:
	rm -rf build out
