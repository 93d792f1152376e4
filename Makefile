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

# The whole C++ suite (no Python module, no video) under ASan + UBSan, clang -O1, assertions on,
# plus the canary tests that show both sanitizers are live (docs/reliability.md; .ci/run runs it).
# The "asan" test preset sets ASAN_OPTIONS / UBSAN_OPTIONS (no leak checks; a finding exits 86).
test-asan: deps
	cmake --preset asan >/dev/null
	cmake --build build/asan -j $(JOBS)
	ctest --preset asan -j $(JOBS)

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
