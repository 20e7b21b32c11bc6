# boar - build, test, demo, install.
#
#   make                 library (static + shared), CLI, and the GPU engine when
#                        nvcc is found (CUDA=0 to skip, CUDA_ARCHS to choose)
#   make demo            logistic regression on the bundled a9a data
#   make check           the whole test suite (ends with "N passed, N failed")
#   make install PREFIX=/usr/local DESTDIR=
#   make bench [QUICK=1] the benchmark suite
#
# Sources are picked up by wildcard: a new src/{base,data,engine,model}/*.c, net/*.c, gpu/*.cu,
# src/cli/*.c or tests/unit/*.c file needs no edit here. BUILD=dir keeps
# separate build trees (e.g. one per sanitizer).

VERSION := 0.2.0
SOVERSION := 0
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
DESTDIR ?=
BUILD ?= build

CC ?= cc
# The CPU the build runs on; MARCH=x86-64-v2 (or similar) for a portable
# build. `make install` builds portable code (INSTALL_MARCH) in its own tree
# unless MARCH is given.
MARCH ?= native
INSTALL_MARCH ?= x86-64-v2
OPT ?= -O3
CFLAGS ?= $(OPT) -g
# -MMD -MP: each object's exact header dependencies, in BUILD/**/*.d.
BOAR_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter \
	-march=$(MARCH) -fopenmp -fPIC -MMD -MP -Isrc/include -Isrc -I. $(CFLAGS) $(EXTRA_CFLAGS)
LIB_CFLAGS := $(BOAR_CFLAGS) -fvisibility=hidden -DBOAR_BUILDING_LIBRARY
# What each library needs: the core only zlib and libm (and dlopen for the
# GPU plugin); the cluster transport io_uring, libsodium and libcrypto (frame
# tags, net/auth.c); the plugin cudart.
CORE_LIBS := -lz -lm -ldl
NET_LIBS := -luring -lsodium -lcrypto
LIBS := $(NET_LIBS) $(CORE_LIBS)
LDFLAGS ?=

# ---- GPU engine: a plugin, libboar-gpu.so, built when nvcc is present
# unless CUDA=0; libboar opens it at device GPU (src/engine/engine_gpu.c).
NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA ?= $(if $(NVCC),1,0)
CUDA_ARCHS ?= 80 90
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_LIBS :=
ifeq ($(CUDA),1)
GPU_C_SRC := $(filter-out %_stub.c,$(wildcard gpu/*.c))
GPU_CU_SRC := $(wildcard gpu/*.cu)
NVCC_FLAGS := -O3 -std=c++17 -MMD -MP -Xcompiler -fPIC,-fvisibility=hidden \
	-Isrc/include -Isrc -I. -DBOAR_BUILDING_LIBRARY -DBOAR_HAVE_CUDA \
	$(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a))
# By full path, not -L: pkg-config would prefix an -L with a sysroot.
CUDA_LIBS := $(CUDA_HOME)/lib64/libcudart.so -Wl,-rpath,$(CUDA_HOME)/lib64 -lstdc++
else
# Without CUDA the unit tests of the GPU engine link its stub (every call
# BOAR_ENOGPU); libboar itself answers BOAR_ENOGPU when no plugin opens.
GPU_C_SRC := $(wildcard gpu/*_stub.c)
GPU_CU_SRC :=
endif

CORE_SRC := $(wildcard src/base/*.c src/data/*.c src/engine/*.c src/model/*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
NET_SRC := $(wildcard net/*.c)
NET_OBJ := $(NET_SRC:%.c=$(BUILD)/%.o)
GPU_OBJ := $(GPU_C_SRC:%.c=$(BUILD)/%.o) $(GPU_CU_SRC:%.cu=$(BUILD)/%.o)
CLI_SRC := $(wildcard src/cli/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)

STATIC := $(BUILD)/libboar.a
SHARED := $(BUILD)/libboar.so.$(VERSION)
# Every core object with its internal symbols visible: for the CLI, the
# tests and the benchmarks, which reach inside. Not installed.
INTERNAL := $(BUILD)/libboar-internal.a
NET := $(BUILD)/libboar-net.a
GPU_TEST := $(BUILD)/libboar-gpu-test.a
PLUGIN := $(if $(filter 1,$(CUDA)),$(BUILD)/libboar-gpu.so.$(SOVERSION))
CLI := $(BUILD)/boar

# Quiet by default (one line per file); V=1 shows the commands.
ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-6s %s\n' $(1) $(2)
endif

.PHONY: FORCE all deps lib cli demo check test-bin bench-bin install \
	install-files uninstall bench clean
all: lib cli

# Package installation happens here (and in `make demo`, .ci/run), never in
# a plain `make`.
deps:
	@sh .ci/deps

lib: $(STATIC) $(SHARED) $(PLUGIN) $(BUILD)/boar.pc
cli: $(CLI)

# ---- flags stamps: an object is rebuilt when the command that made it
# would change (OPT, MARCH, CFLAGS, CC ...), not only when a file did. Each
# stamp is rewritten while the Makefile is read, and only when its text
# differs, so make sees an honest date; a dry run (make -n) writes nothing
# and shows the rebuild a changed stamp would cause.
dry_run := $(findstring n,$(firstword -$(MAKEFLAGS)))
define stamp
ifneq ($$(shell echo '$(2)' | cmp -s - $(1) 2>/dev/null || echo differs),)
ifeq ($(dry_run),)
$$(shell mkdir -p $$(dir $(1)) && echo '$(2)' > $(1))
else
$(1): FORCE
	@:
endif
endif
endef
$(eval $(call stamp,$(BUILD)/.flags-lib,$(CC) $(LIB_CFLAGS)))
$(eval $(call stamp,$(BUILD)/.flags-cli,$(CC) $(BOAR_CFLAGS)))
$(eval $(call stamp,$(BUILD)/.flags-nvcc,$(NVCC) $(NVCC_FLAGS)))
$(eval $(call stamp,$(BUILD)/.flags-ld,$(CC) $(LDFLAGS) $(LIBS) $(CUDA_LIBS)))

$(BUILD)/%.o: %.c $(BUILD)/.flags-lib
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/gpu/%.o: gpu/%.cu $(BUILD)/.flags-nvcc
	@mkdir -p $(dir $@)
	$(call say,NVCC,$<)
	$(Q)$(NVCC) $(NVCC_FLAGS) -c $< -o $@

$(BUILD)/src/cli/%.o: src/cli/%.c $(BUILD)/.flags-cli
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(BOAR_CFLAGS) -c $< -o $@

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# The installed static library: the core objects linked into one object
# whose hidden (internal) symbols are then made local, so that a program
# linking libboar.a sees only the public boar_* API, as with libboar.so.
$(STATIC): $(CORE_OBJ)
	@rm -f $@ $(BUILD)/libboar-all.o
	$(call say,AR,$@)
	$(Q)ld -r -o $(BUILD)/libboar-all.o $(CORE_OBJ)
	$(Q)objcopy --localize-hidden $(BUILD)/libboar-all.o
	$(Q)ar rcs $@ $(BUILD)/libboar-all.o

$(INTERNAL): $(CORE_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

$(NET): $(NET_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

$(GPU_TEST): $(GPU_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

$(SHARED): $(CORE_OBJ) src/libboar.map $(BUILD)/.flags-ld
	$(call say,LD,$@)
	$(Q)$(CC) -shared -fopenmp -Wl,-soname,libboar.so.$(SOVERSION) \
		-Wl,--version-script=src/libboar.map -Wl,--as-needed -o $@ \
		$(CORE_OBJ) $(CORE_LIBS) $(LDFLAGS)
	$(Q)ln -sf libboar.so.$(VERSION) $(BUILD)/libboar.so.$(SOVERSION)
	$(Q)ln -sf libboar.so.$(SOVERSION) $(BUILD)/libboar.so

# The CUDA engine plugin: the gpu/ objects, the core's error helper and
# the rating grid of --gpus N (hidden copies); it exports
# boar_gpu_plugin_ops alone.
PLUGIN_CORE := $(BUILD)/src/base/error.o $(BUILD)/src/data/rating_grid.o
$(BUILD)/libboar-gpu.so.$(SOVERSION): $(GPU_OBJ) $(PLUGIN_CORE) gpu/plugin.map $(BUILD)/.flags-ld
	$(call say,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,libboar-gpu.so.$(SOVERSION) \
		-Wl,--version-script=gpu/plugin.map -o $@ $(GPU_OBJ) \
		$(PLUGIN_CORE) $(CUDA_LIBS) -lm $(LDFLAGS)

# Regenerated on every run (FORCE) so that `make install PREFIX=...` never
# installs paths from an earlier build's PREFIX.
PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@LIBS@|$(CORE_LIBS)|' src/boar.pc.in
$(BUILD)/boar.pc: src/boar.pc.in FORCE
	@mkdir -p $(BUILD)
	@$(PC_SED) > $@.tmp && mv $@.tmp $@
FORCE:

# The CLI's allocator (empty in the sanitizer builds, whose own malloc must
# not meet another).
CLI_MALLOC ?= -ljemalloc

# The CLI links the core and the cluster transport statically (one
# self-contained binary) and jemalloc, its allocator; the library itself
# works with any malloc. It does not link cudart: --device gpu opens the
# plugin beside it.
$(CLI): $(CLI_OBJ) $(INTERNAL) $(NET) $(BUILD)/.flags-ld $(PLUGIN)
	$(call say,LD,$@)
	$(Q)$(CC) -fopenmp -o $@ $(CLI_OBJ) $(NET) $(INTERNAL) $(LIBS) $(CLI_MALLOC) $(LDFLAGS)

TEST_LIBS = $(GPU_TEST) $(NET) $(INTERNAL) $(LIBS) $(CUDA_LIBS)
$(BUILD)/tests/%: tests/unit/%.c $(INTERNAL) $(NET) $(GPU_TEST) $(BUILD)/.flags-cli
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(BOAR_CFLAGS) -Itests -o $@ $< $(TEST_LIBS) $(LDFLAGS)

$(BUILD)/bench/%: bench/%.c $(INTERNAL) $(NET) $(GPU_TEST) $(BUILD)/.flags-cli
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(BOAR_CFLAGS) -o $@ $< $(TEST_LIBS) $(LDFLAGS)

# The bare loop boar is measured against (../shared/tools/roofline.c; a
# copy is kept in bench/ so a clean clone can measure, its loop in
# bare_loop.h, which bench/scale_probe.c times too).
$(BUILD)/bench/roofline: bench/tools/roofline.c bench/tools/bare_loop.h
	@mkdir -p $(dir $@)
	$(CC) -O3 -march=$(MARCH) -fopenmp $< -o $@ -lm

# The delay line of bench/net/delay_link.sh (netfilter only, no boar code).
$(BUILD)/bench/nfq_delay: bench/net/nfq_delay.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall $< -o $@

test-bin: $(UNIT_BIN)
bench-bin: $(BENCH_BIN) $(BUILD)/bench/roofline $(BUILD)/bench/nfq_delay

demo: deps all
	@sh datasets/demo.sh $(CLI)

# `make check -jN` runs N tests at a time (JOBS=N says the same).
# (a bare -j: one per core).
MAKE_JOBS = $(if $(filter -j,$(MAKEFLAGS)),$(shell nproc),$(patsubst -j%,%,$(filter -j%,$(MAKEFLAGS))))
check: all test-bin bench-bin
	@BUILD=$(BUILD) JOBS=$(or $(JOBS),$(MAKE_JOBS),1) sh tests/run-tests

# Portable code unless MARCH is given: built in a tree of its own
# (BUILD/portable), so that installing does not rebuild the native tree.
ifeq ($(origin MARCH),file)
INSTALL_BUILD := $(BUILD)/portable
install:
	@$(MAKE) --no-print-directory BUILD=$(INSTALL_BUILD) MARCH=$(INSTALL_MARCH) install-files
else
INSTALL_BUILD := $(BUILD)
install: install-files
endif

install-files: lib cli
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(BINDIR)
	install -m 644 src/include/boar.h $(DESTDIR)$(INCLUDEDIR)/boar.h
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/libboar.a
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/libboar.so.$(VERSION)
	ln -sf libboar.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libboar.so.$(SOVERSION)
	ln -sf libboar.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libboar.so
	$(if $(PLUGIN),install -m 755 $(PLUGIN) $(DESTDIR)$(LIBDIR)/libboar-gpu.so.$(SOVERSION))
	$(PC_SED) > $(DESTDIR)$(LIBDIR)/pkgconfig/boar.pc
	install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/boar

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/boar.h $(DESTDIR)$(LIBDIR)/libboar.* \
	      $(DESTDIR)$(LIBDIR)/libboar-gpu.so.* \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/boar.pc $(DESTDIR)$(BINDIR)/boar

bench: all bench-bin
	@BUILD=$(BUILD) QUICK=$(QUICK) sh bench/run

clean:
	rm -rf $(BUILD)

# ---- Fuzzing and sanitizer builds (tests/fuzz/fuzz.h tells the scheme).
#
#   make check           also replays every fuzz corpus: $(BUILD)/tests/fuzz_NAME
#                        feeds tests/fuzz/corpus/NAME/ to tests/fuzz/fuzz_NAME.c
#   make fuzz [SECONDS=60] [FUZZ='csv model']
#                        libFuzzer (clang, ASan, UBSan) on each harness for
#                        SECONDS; new crashers in $(BUILD)-fuzz/crashes/NAME/
#   make check-asan      the whole suite built with ASan+UBSan in $(BUILD)-asan
#   make check-tsan      the unit and CLI tests built with TSan in $(BUILD)-tsan
FUZZ_SRC := $(filter-out tests/fuzz/fuzz_util.c,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_NAMES := $(FUZZ_SRC:tests/fuzz/fuzz_%.c=%)
FUZZ_DEPS := tests/fuzz/fuzz.h tests/fuzz/fuzz_util.c
FUZZ ?= $(FUZZ_NAMES)
# SECONDS from the command line only: bash keeps its own SECONDS.
ifneq ($(origin SECONDS),command line)
SECONDS := 60
endif
FUZZ_CC ?= clang-14
FUZZ_BUILD := $(BUILD)-fuzz
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
	-fno-omit-frame-pointer
TSAN_FLAGS := -fsanitize=thread
# The sanitizers' verdicts: any report fails the test that caused it.
SAN_ENV := ASAN_OPTIONS=detect_leaks=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/fuzz/lsan.supp \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	TSAN_OPTIONS=halt_on_error=1:exitcode=66:ignore_noninstrumented_modules=1

.PHONY: fuzz fuzz-bin check-asan check-tsan
test-bin: $(FUZZ_NAMES:%=$(BUILD)/tests/fuzz_%)

$(BUILD)/tests/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c $(FUZZ_DEPS) \
		$(INTERNAL) $(NET) $(GPU_TEST) $(BUILD)/.flags-cli
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(BOAR_CFLAGS) -DFUZZ_NAME='"$*"' -o $@ $< tests/fuzz/replay.c \
		tests/fuzz/fuzz_util.c $(TEST_LIBS) $(LDFLAGS)

# The library once more (its internal archive, which the harnesses reach
# into, and the network layer), instrumented for libFuzzer's coverage, then
# one fuzzer per harness.
FUZZ_LIBS := $(FUZZ_BUILD)/libboar-net.a $(FUZZ_BUILD)/libboar-internal.a
$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_DEPS) $(FUZZ_LIBS)
	$(call say,CC,$<)
	$(Q)$(FUZZ_CC) $(BOAR_CFLAGS) -fsanitize=fuzzer $(SAN_FLAGS) -o $@ $< \
		tests/fuzz/fuzz_util.c $(FUZZ_LIBS) $(LIBS)
$(FUZZ_LIBS) &: FORCE
	@sh .ci/deps .ci/packages-fuzz
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) CUDA=0 \
		OPT=-O1 EXTRA_CFLAGS='-fsanitize=fuzzer-no-link $(SAN_FLAGS) -Wno-pass-failed' \
		$(FUZZ_LIBS)
fuzz-bin: $(FUZZ:%=$(FUZZ_BUILD)/fuzz_%)
fuzz: fuzz-bin
	@BUILD=$(FUZZ_BUILD) sh tests/fuzz/run.sh $(SECONDS) $(FUZZ)

# The tests run with the flags in the environment too, so that a test that
# builds (make install, the TSan program) builds the same way.
check-asan:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)-asan CUDA=0 OPT=-O1 CLI_MALLOC= \
		EXTRA_CFLAGS='$(SAN_FLAGS)' LDFLAGS='$(SAN_FLAGS)' all test-bin bench-bin
	@$(SAN_ENV) CUDA=0 OPT=-O1 CLI_MALLOC= EXTRA_CFLAGS='$(SAN_FLAGS)' LDFLAGS='$(SAN_FLAGS)' \
		BUILD=$(BUILD)-asan sh tests/run-tests
# TSan with clang and its OpenMP runtime, whose Archer tool tells TSan what
# OpenMP's barriers order (gcc's libgomp would show every parallel loop as
# a race).
TSAN_CC ?= clang-14
ARCHER ?= $(firstword $(wildcard /usr/lib/llvm-14/lib/libarcher.so))
check-tsan:
	@sh .ci/deps .ci/packages-fuzz
	@$(MAKE) --no-print-directory BUILD=$(BUILD)-tsan CC=$(TSAN_CC) CUDA=0 OPT=-O1 CLI_MALLOC= \
		EXTRA_CFLAGS='$(TSAN_FLAGS) -Wno-pass-failed' LDFLAGS='$(TSAN_FLAGS)' \
		all test-bin bench-bin
	@$(SAN_ENV) OMP_TOOL_LIBRARIES=$(ARCHER) CC=$(TSAN_CC) CUDA=0 OPT=-O1 CLI_MALLOC= \
		EXTRA_CFLAGS='$(TSAN_FLAGS) -Wno-pass-failed' LDFLAGS='$(TSAN_FLAGS)' \
		BUILD=$(BUILD)-tsan sh tests/run-tests
