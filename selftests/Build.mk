# Selftests of the kernel module, run inside a QEMU guest by `make vmtest`
# (and `make check`).  kselftest-harness programs are linked statically so
# the guest needs nothing but busybox; the harness headers come from
# Debian's linux-source package, extracted into $(BUILD)/ksrc (kmod/Build.mk).

# Run in this order; test_perms and test_unload last (they reload the
# module).
SELFTEST_PROGS := test_mmap test_ioctl test_sched test_tsc test_netlink test_retain \
	test_users test_hostile test_takeover test_stress
SELFTEST_SCRIPTS := test_ctl.sh
# runtime_guest: the runtime itself (tests/guest), in CPU mode on the
# module's rings.
SELFTEST_ORDER := $(SELFTEST_PROGS) $(SELFTEST_SCRIPTS) runtime_guest \
	matrix_guest.sh attach_guest.sh test_perms test_unload
SELFTEST_DIR := $(BUILD)/selftests
SELFTEST_BINS := $(SELFTEST_ORDER:%=$(SELFTEST_DIR)/%)
SELFTEST_SUPPORT := selftests/xrayfdr_test.c tools/ctl/ctl_nl.c
# gnu11: kselftest_harness.h relies on GNU C extensions.
SELFTEST_CFLAGS := -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror \
	-Wno-missing-field-initializers \
	-isystem $(KSRC_DIR)/tools/testing/selftests -isystem /usr/include/libnl3 \
	-Iinclude/uapi -Iselftests -Itools/ctl
SELFTEST_LDLIBS := -static -lnl-genl-3 -lnl-3 -lpthread -lm

$(SELFTEST_DIR)/%: selftests/%.c $(SELFTEST_SUPPORT) selftests/xrayfdr_test.h \
		tools/ctl/ctl_nl.h include/uapi/linux/xray_fdr.h $(KSRC_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SELFTEST_CFLAGS) -o $@ $< $(SELFTEST_SUPPORT) \
		$(SELFTEST_LDLIBS) 2>$@.log; rc=$$?; $(STATIC_LINK_NOISE) $@.log >&2; \
		rm -f $@.log; exit $$rc

# An instrumented program linked statically with libxrayfdr.a, as
# runtime.rst says (-u __xray_init pulls in the start-up).
$(SELFTEST_DIR)/runtime_guest: tests/guest/runtime_guest.c $(LIB_A)
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -O2 -g -std=gnu11 -Wall -Wextra -Werror -Ilib/include \
		-fxray-instrument -fxray-instruction-threshold=1 -fnoxray-link-deps \
		-o $@ $< -static -Wl,-u,__xray_init $(LIB_A) -lelf -lz -lpthread \
		2>$@.log; rc=$$?; $(STATIC_LINK_NOISE) $@.log >&2; \
		rm -f $@.log; exit $$rc

# matrix_guest.sh runs the runtime matrix's programs (tests/runtime/progs),
# linked statically the same way, in CPU mode; the host checks their logs.
GUEST_MATRIX_C := recursion tailcalls threads thread_exit longjmp signals \
	fork args events migrate mixed
GUEST_MATRIX_CXX := exceptions cxx
GUEST_MATRIX_BINS := $(GUEST_MATRIX_C:%=$(SELFTEST_DIR)/m_%) \
	$(GUEST_MATRIX_CXX:%=$(SELFTEST_DIR)/m_%)
GUEST_XRAY := -O2 -g -pthread -Itests/runtime/progs -Ilib/include \
	-fxray-instrument -fxray-instruction-threshold=1 -fnoxray-link-deps
GUEST_LINK := -static -Wl,-u,__xray_init $(LIB_A) -lelf -lz -lpthread

$(SELFTEST_DIR)/m_%: tests/runtime/progs/%.c $(LIB_A)
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(GUEST_XRAY) -o $@ $< $(GUEST_LINK) 2>$@.log; rc=$$?; \
		$(STATIC_LINK_NOISE) $@.log >&2; rm -f $@.log; exit $$rc

$(SELFTEST_DIR)/m_%: tests/runtime/progs/%.cc $(LIB_A)
	$(call msg,CLANG++,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG)++ $(GUEST_XRAY) -o $@ $< $(GUEST_LINK) 2>$@.log; rc=$$?; \
		$(STATIC_LINK_NOISE) $@.log >&2; rm -f $@.log; exit $$rc

$(SELFTEST_DIR)/matrix_guest.sh: tests/guest/matrix_guest.sh
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@

# attach_guest.sh attaches xrayfdr to a dynamically linked program built
# without any runtime; the tool, the library and their shared libraries
# go into the initramfs (DYNAMIC of mkinitramfs.sh).
GUEST_ATTACH_TARGET := $(SELFTEST_DIR)/attach_target
$(GUEST_ATTACH_TARGET): bench/runtime/attach_target.c
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -O2 -g -pthread -fxray-instrument -fnoxray-link-deps -o $@ $<
$(SELFTEST_DIR)/attach_guest.sh: tests/guest/attach_guest.sh
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@
GUEST_DYNAMIC := $(XRAYFDR_BIN):/opt/xrayfdr/bin/xrayfdr \
	$(LIB_SO_REAL):/opt/xrayfdr/lib/libxrayfdr.so.0 \
	$(GUEST_ATTACH_TARGET):/selftests/attach_target

$(SELFTEST_DIR)/%.sh: selftests/%.sh
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@

selftests: $(SELFTEST_BINS)

# The guest: Debian's packaged kernel of the same release as KDIR, and an
# initramfs with busybox, the module, the selftests and xrayfdr-ctl.
VM_DIR := $(BUILD)/vm
VM_INITRD := $(VM_DIR)/initramfs.cpio.gz
VM_KERNEL := $(VM_DIR)/vmlinuz
VM_LIST := $(VM_DIR)/selftests.list

$(VM_KERNEL): $(KMOD_KO)
	$(Q)mkdir -p $(@D)
	$(Q)if [ ! -r /boot/vmlinuz-$(KVER) ]; then \
		echo "vmtest: no /boot/vmlinuz-$(KVER) for KDIR=$(KDIR); run make deps" >&2; \
		exit 1; fi
	$(Q)ln -sf /boot/vmlinuz-$(KVER) $@

# The guest's half of make vmdemo, run only when asked for.
VM_DEMO := $(SELFTEST_DIR)/demo.sh
$(VM_DEMO): scripts/vm/guest-demo.sh
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@

# A guest's initramfs and selftest list, with the module $(1): Debian's
# kernel's here, the debug kernel's in scripts/vm/Build.mk.
VM_INITRD_DEPS := $(CTL_BIN) $(SELFTEST_BINS) $(VM_DEMO) $(GUEST_MATRIX_BINS) \
	$(XRAYFDR_BIN) $(LIB_SO_REAL) $(GUEST_ATTACH_TARGET) \
	scripts/vm/guest-init scripts/vm/mkinitramfs.sh
define vm_initrd
	$(call msg,CPIO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)EXTRA="$(VM_DEMO) $(GUEST_MATRIX_BINS)" DYNAMIC="$(GUEST_DYNAMIC)" \
		scripts/vm/mkinitramfs.sh $@ \
		$(1) $(CTL_BIN) $(SELFTEST_BINS)
	$(Q)printf '%s\n' $(SELFTEST_ORDER) >$(@D)/selftests.list
endef

$(VM_INITRD): $(KMOD_KO) $(VM_INITRD_DEPS)
	$(call vm_initrd,$(KMOD_KO))

vmtest: $(VM_INITRD) $(VM_KERNEL)
	$(Q)BUILD=$(BUILD) tests/run-tests.sh vm/selftests:scripts/vm/vmtest.sh

# The module's four uses in one guest run (README.md).
vmdemo: all $(VM_INITRD) $(VM_KERNEL)
	$(Q)BUILD=$(BUILD) scripts/vm/vmdemo.sh

.PHONY: selftests vmtest vmdemo
CHECK_DEPS += $(VM_INITRD) $(VM_KERNEL)
CHECK_SUITES += vm/selftests:scripts/vm/vmtest.sh
