# The kernel module, built out of tree against KDIR: by default the newest
# installed Debian 6.1 headers (the guest kernel of `make vmtest`), never
# the running kernel's.  Sources are linked into $(BUILD)/kmod so Kbuild's
# objects stay out of the source tree.

KDIR ?= $(lastword $(sort $(wildcard /usr/lib/modules/6.1.*-amd64/build)))
# The release of KDIR, e.g. 6.1.0-56-amd64: the guest boots its image.
KVER = $(notdir $(patsubst %/,%,$(dir $(KDIR))))
# A command prefix Kbuild runs under, with KDIR a path there: e.g.
# scripts/vm/kbuild-chroot.sh ROOT for a kernel built with a compiler
# this system lacks (scripts/vm/Build.mk's newest guest).
KBUILD_RUN ?=

KMOD_DIR := $(BUILD)/kmod
KMOD_KO := $(KMOD_DIR)/xray_fdr.ko
KMOD_SRCS := $(wildcard kmod/*.c kmod/*.h) kmod/Kbuild

.PHONY: kmod kmod-install kmod-clean

kmod: $(KMOD_KO)

$(KMOD_KO): $(KMOD_SRCS) include/uapi/linux/xray_fdr.h
	$(call msg,KBUILD,$@)
	$(Q)if ! $(KBUILD_RUN) test -d "$(KDIR)"; then \
		echo "kmod: no kernel headers (KDIR='$(KDIR)'); run make deps or pass KDIR=" >&2; \
		exit 1; fi
	$(Q)mkdir -p $(KMOD_DIR)
	$(Q)for f in $(KMOD_SRCS); do ln -sf $(CURDIR)/$$f $(KMOD_DIR)/; done
	$(Q)$(KBUILD_RUN) $(MAKE) -s -C $(KDIR) M=$(abspath $(KMOD_DIR)) \
		CONFIG_XRAY_FDR=m XRAYFDR_UAPI=$(CURDIR)/include/uapi \
		XRAYFDR_WERROR=1 W=1 modules 2>$(KMOD_DIR)/build.log; \
		rc=$$?; grep -v '^Skipping BTF generation' $(KMOD_DIR)/build.log >&2; \
		exit $$rc

# Into /lib/modules/$(KVER)/updates, or under INSTALL_MOD_PATH.
kmod-install: $(KMOD_KO)
	$(Q)$(MAKE) -s -C $(KDIR) M=$(abspath $(KMOD_DIR)) \
		CONFIG_XRAY_FDR=m XRAYFDR_UAPI=$(CURDIR)/include/uapi \
		CONFIG_MODULE_SIG_ALL= INSTALL_MOD_DIR=updates modules_install

kmod-clean:
	$(Q)rm -rf $(KMOD_DIR)

# What the module's tests need from Debian's linux-source tarball: the
# kselftest harness headers and checkpatch.pl with its data files.
KSRC_TAR ?= $(lastword $(sort $(wildcard /usr/src/linux-source-6.1*.tar.xz)))
KSRC_DIR := $(BUILD)/ksrc
KSRC_STAMP := $(KSRC_DIR)/.extracted
KSRC_FILES := tools/testing/selftests/kselftest.h \
	tools/testing/selftests/kselftest_harness.h \
	scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch

$(KSRC_STAMP):
	$(call msg,EXTRACT,$(KSRC_DIR) from $(KSRC_TAR))
	$(Q)if [ ! -f "$(KSRC_TAR)" ]; then \
		echo "kmod: no linux-source tarball (KSRC_TAR='$(KSRC_TAR)'); run make deps" >&2; \
		exit 1; fi
	$(Q)rm -rf $(KSRC_DIR) && mkdir -p $(KSRC_DIR)
	$(Q)top=$$(basename $(KSRC_TAR) .tar.xz); \
		tar -xJf $(KSRC_TAR) -C $(KSRC_DIR) --strip-components=1 \
		$(addprefix $$top/,$(KSRC_FILES))
	$(Q)touch $@

# Host-side checks of the module's sources: checkpatch, and the netlink
# spec against the uapi header and the kernel's policies.
CHECK_DEPS += $(KSRC_STAMP)
CHECK_SUITES += kmod/checkpatch:selftests/host/checkpatch.sh
CHECK_SUITES += kmod/netlink-spec:selftests/host/check-spec.py
CHECK_SUITES += kmod/kbuild-version:selftests/host/kbuild-version.sh
