# Thin wrapper: the real build is CMake (CMakePresets.json).
#   make demo   the main job (installs what is missing, builds, runs)
#   make test   every test tier this machine can run
#   make deps | build | unit | integration | lab | clean
#   make format formats the C++ lines this branch changes (make test checks them)
.PHONY: all deps build demo test unit integration lab gpu fuzz sanitize format clean

BUILD := build
# ccache (wired in CMakeLists.txt) hits across clones at different paths.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
JOBS ?= $(shell nproc)
CTEST := ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
# On failure, each failed test's last lines again at the end (a log read from its tail).
AFTER_CTEST := || { rc=$$?; tests/print-failures $(BUILD); exit $$rc; }

all: build

deps:
	@deploy/install-deps

build: deps
	@[ -f $(BUILD)/build.ninja ] || cmake --preset default
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@deploy/demo

test: build
	@$(CTEST) $(AFTER_CTEST)

unit: build
	@$(CTEST) -L unit $(AFTER_CTEST)

integration: build
	@$(CTEST) -L integration $(AFTER_CTEST)

lab: build
	@$(CTEST) -L lab $(AFTER_CTEST)

# The fuzzers, 300 s each (make test runs them 20 s each): tests/fuzz/run.sh.
fuzz: deps
	@tests/fuzz/run.sh $(BUILD)/fuzz $${FUZZ_SECONDS:-300}

# The unit and integration tiers built and run under ASan and UBSan (a
# second full build in build-sanitize; not part of make test: see docs/development.md).
# Not the packages test: the .debs of a sanitized build depend on libasan8
# and libubsan1, which a production root (and the offline one) lacks.
sanitize: deps
	@[ -f build-sanitize/build.ninja ] || cmake --preset sanitize
	@cmake --build build-sanitize -j $(JOBS)
	@ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir build-sanitize --output-on-failure -j $(JOBS) -L 'unit|integration' \
	    -E packages_clean_root_and_image

# On a GPU machine without gRPC: the hardware libraries and the gpu tier.
gpu:
	@cmake --preset gpu && cmake --build build-gpu -j $(JOBS) && ctest --preset gpu

# clang-format-14 on the C++ lines changed since the merge base with main (or
# HEAD~1), committed or not; unit.format_changed_lines checks the committed ones.
format:
	@cmake/check-format --fix

clean:
	@rm -rf $(BUILD) build-gpu build-sanitize
