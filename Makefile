# SPDX-License-Identifier: GPL-2.0-only
#
# xrayfdr top-level Makefile.  `make help` lists the targets.
#
# Each area adds its sources and tests in its own Build.mk (lib/, lib/fdr/,
# tools/, tests/, ...), so the areas can grow without touching this file.
# Quiet by default; V=1 shows the commands.

VERSION := 0.1.0
SOVERSION := 0

BUILD ?= build
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man

CLANG ?= clang
PYTHON ?= python3
AR ?= ar
FUZZ_SECONDS ?= 60

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' '$(1)' '$(2)';
endif

CFLAGS ?= -O2 -g
LDFLAGS ?=
# -fvisibility=hidden: the library exports only what lib/libxrayfdr.map lists.
XRAYFDR_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes -Wno-missing-field-initializers \
	-fPIC -fvisibility=hidden -fno-strict-aliasing \
	-Ilib/include -Iinclude/uapi -DXRAYFDR_VERSION='"$(VERSION)"'
DEPFLAGS = -MMD -MP

# Products, named before the Build.mk files use them in rules.
LIB_A := $(BUILD)/lib/libxrayfdr.a
LIB_SO_REAL := $(BUILD)/lib/libxrayfdr.so.$(VERSION)
LIB_SO := $(BUILD)/lib/libxrayfdr.so
XRAYFDR_BIN := $(BUILD)/bin/xrayfdr

# Filled by the Build.mk files.
LIB_SRCS :=
LIB_SO_SRCS := # in the shared library only
LIB_LDLIBS :=
TOOL_SRCS :=
TOOL_LDLIBS :=
CHECK_SUITES :=
CHECK_DEPS :=
FUZZ_BINS :=
FUZZ_SEEDS :=
BENCH_SUITES :=
BENCH_DEPS :=
CLEAN_EXTRA :=

# The library's objects in the tree of one build flavour ($(1)): LIB_SRCS
# holds C and assembly sources.
lib_objs = $(patsubst %,$(1)/%.o,$(basename $(LIB_SRCS)))
SAN_LIB_OBJS = $(call lib_objs,$(BUILD)/san)

include lib/Build.mk
include lib/fdr/Build.mk
include lib/runtime/Build.mk
include tools/Build.mk
include tests/Build.mk
include kmod/Build.mk
include tools/ctl/Build.mk
include selftests/Build.mk
include scripts/vm/Build.mk
include tests/runtime/Build.mk
include bench/runtime/Build.mk
include Documentation/man/Build.mk
include scripts/pkg/Build.mk

LIB_OBJS := $(call lib_objs,$(BUILD)/obj)
LIB_SO_OBJS := $(LIB_SO_SRCS:%.c=$(BUILD)/obj/%.o)
TOOL_OBJS := $(TOOL_SRCS:%.c=$(BUILD)/obj/%.o)


.PHONY: all lib tools man check bench demo deps fuzz install clean help
.DEFAULT_GOAL := all
# Keep intermediate objects of chained rules (the sanitizer tree).
.SECONDARY:

all: lib tools

lib: $(LIB_A) $(LIB_SO)

tools: $(XRAYFDR_BIN)

$(BUILD)/obj/%.o: %.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(XRAYFDR_CFLAGS) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(BUILD)/obj/%.o: %.S
	$(call msg,AS,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(XRAYFDR_CFLAGS) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

$(LIB_A): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)mkdir -p $(@D)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

# The export list is checked on every link: what the .so exports, what the
# version script lists and what the public headers mark XRAYFDR_API agree.
$(LIB_SO_REAL): $(LIB_OBJS) $(LIB_SO_OBJS) lib/libxrayfdr.map scripts/check-abi.py
	$(call msg,LD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libxrayfdr.so.$(SOVERSION) \
		-Wl,--version-script=lib/libxrayfdr.map -Wl,--no-undefined \
		-o $@.tmp $(LIB_OBJS) $(LIB_SO_OBJS) $(LIB_LDLIBS)
	$(Q)$(PYTHON) scripts/check-abi.py $@.tmp lib/libxrayfdr.map lib/include
	$(Q)mv $@.tmp $@

$(LIB_SO): $(LIB_SO_REAL)
	$(Q)ln -sf libxrayfdr.so.$(VERSION) $(BUILD)/lib/libxrayfdr.so.$(SOVERSION)
	$(Q)ln -sf libxrayfdr.so.$(VERSION) $@

$(XRAYFDR_BIN): $(TOOL_OBJS) $(LIB_A)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(TOOL_OBJS) $(LIB_A) $(TOOL_LDLIBS)

check: all $(CHECK_DEPS) $(FUZZ_BINS) $(FUZZ_SEEDS)
	$(Q)BUILD=$(BUILD) PYTHON=$(PYTHON) FUZZ_SECONDS=$(FUZZ_SECONDS) \
		tests/run-tests.sh $(CHECK_SUITES)

fuzz: $(FUZZ_BINS) $(FUZZ_SEEDS)
	$(Q)BUILD=$(BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run-fuzz.sh \
		$(notdir $(FUZZ_BINS))

bench: all $(BENCH_DEPS)
	$(Q)BUILD=$(BUILD) scripts/run-bench.sh $(BENCH_SUITES)

demo: all
	$(Q)BUILD=$(BUILD) scripts/demo.sh

deps:
	$(Q)scripts/deps.sh
	$(Q)scripts/npm-deps.sh --system

install: all
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCLUDEDIR)/xrayfdr
	$(Q)install -m 755 $(XRAYFDR_BIN) $(DESTDIR)$(BINDIR)/
	$(Q)install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	$(Q)install -m 755 $(LIB_SO_REAL) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf libxrayfdr.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libxrayfdr.so.$(SOVERSION)
	$(Q)ln -sf libxrayfdr.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libxrayfdr.so
	$(Q)install -m 644 lib/include/xrayfdr/*.h $(DESTDIR)$(INCLUDEDIR)/xrayfdr/
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		lib/libxrayfdr.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libxrayfdr.pc

clean:
	$(call msg,CLEAN,$(BUILD))
	$(Q)rm -rf $(BUILD) $(CLEAN_EXTRA)

help:
	@echo 'xrayfdr $(VERSION): targets'
	@echo '  all (default)  library and tools into $(BUILD)/: bin/xrayfdr, lib/libxrayfdr.{a,so}'
	@echo '  man            the manual pages into $(BUILD)/man (part of all): xrayfdr(1), xrayfdr-ctl(8), libxrayfdr(3)'
	@echo '  check          every test; ends with "N passed, N failed, N skipped"'
	@echo '  bench          benchmarks against the peers, side by side (figures, ratios)'
	@echo '  demo           write a sample trace and show it (see README.md)'
	@echo '  vmtest         the kernel module'"'"'s selftests in QEMU (Debian'"'"'s 6.1 and 6.12 kernels, the debug one)'
	@echo '  vmtest-all     vmtest and Debian'"'"'s newest kernel (vmtest-newest: module built in a chroot; root)'
	@echo '  debug-kernel   build the guest kernel with KASAN, lockdep and UBSAN (once, cached)'
	@echo '  vmdemo         the kernel module in QEMU: CPU mode, stats, a SIGKILL and its dump'
	@echo '  deps           install the Debian packages the project needs (root)'
	@echo '  fuzz           run the fuzz targets, FUZZ_SECONDS each (default 60)'
	@echo '  install        install into DESTDIR/PREFIX (default /usr/local), manual pages into MANDIR'
	@echo '  deb            Debian packages into $(BUILD)/pkg/: xrayfdr, libxrayfdr0, libxrayfdr-dev, xray-fdr-dkms'
	@echo '  dkms-deb       the same build (xray-fdr-dkms: the module for DKMS, the udev rule)'
	@echo '  clean          remove $(BUILD)/'
	@echo 'Variables: V=1 (show commands), CC, CLANG, CFLAGS, BUILD, PREFIX, DESTDIR'

-include $(shell find $(BUILD)/obj $(BUILD)/san -name '*.d' 2>/dev/null)
