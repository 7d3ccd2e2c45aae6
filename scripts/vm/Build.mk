# The debug guest of `make vmtest` (and `make check`): a kernel built from
# Debian's linux-source with KASAN, lockdep, UBSAN and the VM, list,
# atomic-sleep and preemption checks (scripts/vm/debug-kernel.config over
# tinyconfig), xray_fdr.ko built against that kernel's tree, and the
# initramfs of selftests/Build.mk with that module in it.  The kernel is
# cached in $(BUILD)/debug-kernel: debug-kernel.sh rebuilds it (6 to 15
# minutes on 2 cores) only when the hash of what it is built from changes.

DK_DIR := $(BUILD)/debug-kernel
DK_STAMP := $(DK_DIR)/stamp
DK_KDIR := $(DK_DIR)/build
DK_CONFIG := scripts/vm/debug-kernel.config
VMD_DIR := $(BUILD)/vm-debug
VMD_KO := $(VMD_DIR)/kmod/xray_fdr.ko
VMD_KERNEL := $(VMD_DIR)/vmlinuz
VMD_INITRD := $(VMD_DIR)/initramfs.cpio.gz

$(DK_STAMP): $(DK_CONFIG) scripts/vm/debug-kernel.sh $(KSRC_TAR)
	$(call msg,KERNEL,$(DK_DIR) (debug: KASAN, lockdep, UBSAN))
	$(Q)KSRC_TAR=$(KSRC_TAR) scripts/vm/debug-kernel.sh $(DK_DIR) $(DK_CONFIG)

# The module by kmod/Build.mk's own rule (W=1, -Werror), in a make whose
# BUILD is $(VMD_DIR) and KDIR the debug tree.  Removed first: a rebuilt
# kernel leaves the module's sources as old as they were.
$(VMD_KO): $(KMOD_SRCS) include/uapi/linux/xray_fdr.h $(DK_STAMP)
	$(Q)rm -f $@
	$(Q)$(MAKE) --no-print-directory BUILD=$(VMD_DIR) \
		KDIR=$(abspath $(DK_KDIR)) $@

# System.map too: vmtest.sh names a hung CPU's instruction pointer with it.
$(VMD_KERNEL): $(DK_STAMP)
	$(Q)mkdir -p $(@D)
	$(Q)ln -sf $(abspath $(DK_KDIR))/System.map $(VMD_DIR)/System.map
	$(Q)ln -sf $(abspath $(DK_KDIR))/arch/x86/boot/bzImage $@

$(VMD_INITRD): $(VMD_KO) $(VM_INITRD_DEPS)
	$(call vm_initrd,$(VMD_KO))

debug-kernel: $(DK_STAMP)

# (bin/xrayfdr: vmtest.sh verifies the logs the guest exported with it)
vmtest-debug: $(VMD_INITRD) $(VMD_KERNEL) $(XRAYFDR_BIN)
	$(Q)BUILD=$(BUILD) tests/run-tests.sh vm/debug-selftests:scripts/vm/vmtest-debug.sh

# make vmtest boots both kernels: the debug one first (a prerequisite),
# then Debian's (selftests/Build.mk's recipe).
vmtest: vmtest-debug

.PHONY: debug-kernel vmtest-debug
CHECK_DEPS += $(VMD_INITRD) $(VMD_KERNEL)
CHECK_SUITES += vm/debug-selftests:scripts/vm/vmtest-debug.sh
