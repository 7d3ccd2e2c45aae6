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

# A guest's module, $@ = GUEST_DIR/kmod/xray_fdr.ko, by kmod/Build.mk's own
# rule (W=1, -Werror) in a make whose BUILD is GUEST_DIR and KDIR $(1)
# (with $(2), more of that make's variables).  Removed first: a new kernel
# leaves the module's sources as old as they were.
define vm_module
	$(Q)rm -f $@
	+$(Q)$(MAKE) --no-print-directory BUILD=$(@D:%/kmod=%) KDIR=$(1) $(2) $@
endef

$(VMD_KO): $(KMOD_SRCS) include/uapi/linux/xray_fdr.h $(DK_STAMP)
	$(call vm_module,$(abspath $(DK_KDIR)))

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

# make vmtest boots every kernel: the debug one and Debian's 6.12
# (prerequisites), then Debian's 6.1 (selftests/Build.mk's recipe).
vmtest: vmtest-debug vmtest-6.12

.PHONY: debug-kernel vmtest-debug
CHECK_DEPS += $(VMD_INITRD) $(VMD_KERNEL)
CHECK_SUITES += vm/debug-selftests:scripts/vm/vmtest-debug.sh

# Debian's packaged kernels other than the host's 6.1, each a guest of its
# own: scripts/vm/debian-kernel.sh fetches the image and headers of the
# newest kernel of suites $(2) into $(BUILD)/kernels/$(1) (once: delete
# that directory for a newer kernel), the module is built against those
# headers ($(3) = chroot: in a chroot of the kernel's Debian release, see
# below) and scripts/vm/vmtest-$(1).sh boots the image with the selftests
# as suite vm/selftests-$(1) (of make check unless $(4) = nocheck).
define debian_guest
$(BUILD)/kernels/$(1)/stamp: scripts/vm/debian-kernel.sh
	$$(call msg,FETCH,$$(@D) (Debian $(2)))
	$(Q)scripts/vm/debian-kernel.sh $$(@D) $(2)

$(BUILD)/vm-$(1)/kmod/xray_fdr.ko: $(KMOD_SRCS) include/uapi/linux/xray_fdr.h \
		$(BUILD)/kernels/$(1)/stamp $(if $(3),$(BUILD)/chroot/kbuild-$(1).stamp)
	$$(call vm_module,$(if $(3),$(call chroot_kdir,$(1)),$(abspath $(BUILD)/kernels/$(1)/build)),$(if $(3),$(call chroot_run,$(1))))

$(BUILD)/vm-$(1)/vmlinuz: $(BUILD)/kernels/$(1)/stamp
	$(Q)mkdir -p $$(@D)
	$(Q)ln -sf $(abspath $(BUILD)/kernels/$(1)/vmlinuz) $$@

$(BUILD)/vm-$(1)/initramfs.cpio.gz: $(BUILD)/vm-$(1)/kmod/xray_fdr.ko $(VM_INITRD_DEPS)
	$$(call vm_initrd,$(BUILD)/vm-$(1)/kmod/xray_fdr.ko)

kmod-$(1): $(BUILD)/vm-$(1)/kmod/xray_fdr.ko
vmtest-$(1): $(BUILD)/vm-$(1)/initramfs.cpio.gz $(BUILD)/vm-$(1)/vmlinuz $(XRAYFDR_BIN)
	$(Q)BUILD=$(BUILD) tests/run-tests.sh vm/selftests-$(1):scripts/vm/vmtest-$(1).sh

.PHONY: kmod-$(1) vmtest-$(1)
VM_ALL_DEPS += $(BUILD)/vm-$(1)/initramfs.cpio.gz $(BUILD)/vm-$(1)/vmlinuz
VM_ALL_SUITES += vm/selftests-$(1):scripts/vm/vmtest-$(1).sh
ifneq ($(4),nocheck)
CHECK_DEPS += $(BUILD)/vm-$(1)/initramfs.cpio.gz $(BUILD)/vm-$(1)/vmlinuz
CHECK_SUITES += vm/selftests-$(1):scripts/vm/vmtest-$(1).sh
endif
endef

# A kernel built with a compiler Debian 12 lacks (gcc-14 from trixie on)
# gets its module built in a chroot of its own release (trixie for
# trixie-backports) made by scripts/pkg/mkchroot.sh in
# $(BUILD)/chroot/kbuild-NAME with the fetched headers and kbuild
# installed, which bring the compiler they name (gcc-14-for-host), make
# and binutils (the compiler runs "as"; a missing assembler would make
# Kbuild's compiler probes drop flags); Kbuild runs there under
# scripts/vm/kbuild-chroot.sh with KDIR the headers' path inside.  Made
# once per fetched kernel.
chroot_root = $(BUILD)/chroot/kbuild-$(1)
chroot_kdir = /usr/src/linux-headers-$$$$(cat $(BUILD)/kernels/$(1)/release)
chroot_run = KBUILD_RUN='scripts/vm/kbuild-chroot.sh $(call chroot_root,$(1))'
# mkchroot.sh's suites for the kernel fetched into directory $(1): its
# suite, after its release for a backports suite (in a recipe).
chroot_suites = $$(sed 's/^\(.*\)-backports$$/\1,&/' $(1)/suite)

$(BUILD)/chroot/kbuild-%.stamp: $(BUILD)/kernels/%/stamp scripts/pkg/mkchroot.sh
	$(call msg,CHROOT,$(@:.stamp=) (kbuild for $(<D)))
	$(Q)rm -f $@
	$(Q)scripts/pkg/mkchroot.sh $(@:.stamp=) $(call chroot_suites,$(<D)) make binutils \
		$(abspath $(<D))/apt/debs/linux-headers-*.deb \
		$(abspath $(<D))/apt/debs/linux-kbuild-*.deb
	$(Q)touch $@

$(eval $(call debian_guest,6.12,bookworm-backports))
# Debian's newest kernel: trixie-backports' or testing's, whichever is
# newer when fetched; built in a chroot, booted by make vmtest-all only.
$(eval $(call debian_guest,newest,trixie-backports forky,chroot,nocheck))

# Every kernel's selftests in one run: the debug one, Debian's 6.1, 6.12
# and newest.
vmtest-all: $(VMD_INITRD) $(VMD_KERNEL) $(VM_INITRD) $(VM_KERNEL) $(VM_ALL_DEPS) \
		$(XRAYFDR_BIN)
	$(Q)BUILD=$(BUILD) tests/run-tests.sh vm/debug-selftests:scripts/vm/vmtest-debug.sh \
		vm/selftests:scripts/vm/vmtest.sh $(VM_ALL_SUITES)
.PHONY: vmtest-all
