# boar - build, test, demo, install.
#
#   make                 library (static + shared), CLI, and the GPU engine when
#                        nvcc is found (CUDA=0 to skip, CUDA_ARCHS to choose)
#   make demo            logistic regression on the bundled a9a data
#   make check           the whole test suite (ends with "N passed, N failed")
#   make install PREFIX=/usr/local DESTDIR=
#   make bench [QUICK=1] the benchmark suite
#
# Sources are picked up by wildcard: a new src/*.c, net/*.c, gpu/*.cu,
# src/cli/*.c or tests/unit/*.c file needs no edit here. BUILD=dir keeps
# separate build trees (e.g. one per sanitizer).

VERSION := 0.1.0
SOVERSION := 0
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
BINDIR ?= $(PREFIX)/bin
DESTDIR ?=
BUILD ?= build

CC ?= cc
# The CPU the build runs on; MARCH=x86-64-v2 (or similar) for a portable build.
MARCH ?= native
OPT ?= -O3
CFLAGS ?= $(OPT) -g
BOAR_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wno-unused-parameter \
	-march=$(MARCH) -fopenmp -fPIC -Isrc/include -Isrc -I. $(CFLAGS) $(EXTRA_CFLAGS)
LIB_CFLAGS := $(BOAR_CFLAGS) -fvisibility=hidden -DBOAR_BUILDING_LIBRARY
LIBS := -luring -lz -lsodium -lm
LDFLAGS ?=

# ---- GPU engine: built when nvcc is present unless CUDA=0.
NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA ?= $(if $(NVCC),1,0)
CUDA_ARCHS ?= 80 90
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
ifeq ($(CUDA),1)
GPU_C_SRC := $(filter-out %_stub.c,$(wildcard gpu/*.c))
GPU_CU_SRC := $(wildcard gpu/*.cu)
NVCC_FLAGS := -O3 -std=c++17 -Xcompiler -fPIC,-fvisibility=hidden -Isrc/include -Isrc -I. \
	-DBOAR_BUILDING_LIBRARY -DBOAR_HAVE_CUDA \
	$(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a))
# By full path, not -L: pkg-config would prefix an -L with a sysroot.
LIBS += $(CUDA_HOME)/lib64/libcudart.so -Wl,-rpath,$(CUDA_HOME)/lib64 -lstdc++
LIB_CFLAGS += -DBOAR_HAVE_CUDA
else
GPU_C_SRC := $(wildcard gpu/*_stub.c)
GPU_CU_SRC :=
endif

LIB_SRC := $(wildcard src/*.c) $(wildcard net/*.c) $(GPU_C_SRC)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(GPU_CU_SRC:%.cu=$(BUILD)/%.o)
CLI_SRC := $(wildcard src/cli/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
HEADERS := $(wildcard src/include/*.h src/*.h src/math/*.h atomics/*.h net/*.h gpu/*.h src/cli/*.h)

STATIC := $(BUILD)/libboar.a
SHARED := $(BUILD)/libboar.so.$(VERSION)
CLI := $(BUILD)/boar

# Quiet by default (one line per file); V=1 shows the commands.
ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-6s %s\n' $(1) $(2)
endif

.PHONY: FORCE all deps lib cli demo check test-bin bench-bin install uninstall bench clean
all: deps lib cli

deps:
	@sh .ci/deps

lib: $(STATIC) $(SHARED) $(BUILD)/boar.pc
cli: $(CLI)

$(BUILD)/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(LIB_CFLAGS) -c $< -o $@

$(BUILD)/gpu/%.o: gpu/%.cu $(HEADERS)
	@mkdir -p $(dir $@)
	$(call say,NVCC,$<)
	$(Q)$(NVCC) $(NVCC_FLAGS) -c $< -o $@

$(BUILD)/src/cli/%.o: src/cli/%.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(BOAR_CFLAGS) -c $< -o $@

$(STATIC): $(LIB_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

$(SHARED): $(LIB_OBJ) src/libboar.map
	$(call say,LD,$@)
	$(Q)$(CC) -shared -fopenmp -Wl,-soname,libboar.so.$(SOVERSION) \
		-Wl,--version-script=src/libboar.map -o $@ $(LIB_OBJ) $(LIBS) $(LDFLAGS)
	$(Q)ln -sf libboar.so.$(VERSION) $(BUILD)/libboar.so.$(SOVERSION)
	$(Q)ln -sf libboar.so.$(SOVERSION) $(BUILD)/libboar.so

# Regenerated on every run (FORCE) so that `make install PREFIX=...` never
# installs paths from an earlier build's PREFIX.
PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@LIBS@|$(LIBS)|' src/boar.pc.in
$(BUILD)/boar.pc: src/boar.pc.in FORCE
	@mkdir -p $(BUILD)
	@$(PC_SED) > $@.tmp && mv $@.tmp $@
FORCE:

# The CLI links the static library (one self-contained binary) and jemalloc,
# its allocator; the library itself works with any malloc.
$(CLI): $(CLI_OBJ) $(STATIC)
	$(call say,LD,$@)
	$(Q)$(CC) -fopenmp -o $@ $(CLI_OBJ) $(STATIC) $(LIBS) -ljemalloc $(LDFLAGS)

$(BUILD)/tests/%: tests/unit/%.c $(STATIC) $(HEADERS)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(BOAR_CFLAGS) -Itests -o $@ $< $(STATIC) $(LIBS) $(LDFLAGS)

$(BUILD)/bench/%: bench/%.c $(STATIC) $(HEADERS)
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(BOAR_CFLAGS) -o $@ $< $(STATIC) $(LIBS) $(LDFLAGS)

# The bare loop boar is measured against (../shared/tools/roofline.c; a
# copy is kept in bench/ so a clean clone can measure).
$(BUILD)/bench/roofline: bench/tools/roofline.c
	@mkdir -p $(dir $@)
	$(CC) -O3 -march=$(MARCH) -fopenmp $< -o $@ -lm

test-bin: $(UNIT_BIN)
bench-bin: $(BENCH_BIN) $(BUILD)/bench/roofline

demo: all
	@sh datasets/demo.sh $(CLI)

check: all test-bin bench-bin
	@BUILD=$(BUILD) sh tests/run-tests

install: lib cli
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(BINDIR)
	install -m 644 src/include/boar.h $(DESTDIR)$(INCLUDEDIR)/boar.h
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/libboar.a
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/libboar.so.$(VERSION)
	ln -sf libboar.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libboar.so.$(SOVERSION)
	ln -sf libboar.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libboar.so
	$(PC_SED) > $(DESTDIR)$(LIBDIR)/pkgconfig/boar.pc
	install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/boar

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/boar.h $(DESTDIR)$(LIBDIR)/libboar.* \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/boar.pc $(DESTDIR)$(BINDIR)/boar

bench: all bench-bin
	@BUILD=$(BUILD) QUICK=$(QUICK) sh bench/run

clean:
	rm -rf $(BUILD)
