# The kernel module, built out of tree against KDIR: by default the newest
# installed Debian 6.1 headers (the guest kernel of `make vmtest`), never
# the running kernel's.  Sources are linked into $(BUILD)/kmod so Kbuild's
# objects stay out of the source tree.

KDIR ?= $(lastword $(sort $(wildcard /usr/lib/modules/6.1.*-amd64/build)))
# The release of KDIR, e.g. 6.1.0-56-amd64: the guest boots its image.
KVER = $(notdir $(patsubst %/,%,$(dir $(KDIR))))

KMOD_DIR := $(BUILD)/kmod
KMOD_KO := $(KMOD_DIR)/xray_fdr.ko
KMOD_SRCS := $(wildcard kmod/*.c kmod/*.h) kmod/Kbuild

.PHONY: kmod kmod-clean

kmod: $(KMOD_KO)

$(KMOD_KO): $(KMOD_SRCS) include/uapi/linux/xray_fdr.h
	$(call msg,KBUILD,$@)
	$(Q)if [ ! -d "$(KDIR)" ]; then \
		echo "kmod: no kernel headers (KDIR='$(KDIR)'); run make deps or pass KDIR=" >&2; \
		exit 1; fi
	$(Q)mkdir -p $(KMOD_DIR)
	$(Q)for f in $(KMOD_SRCS); do ln -sf $(CURDIR)/$$f $(KMOD_DIR)/; done
	$(Q)$(MAKE) -s -C $(KDIR) M=$(CURDIR)/$(KMOD_DIR) \
		CONFIG_XRAY_FDR=m XRAYFDR_UAPI=$(CURDIR)/include/uapi \
		XRAYFDR_WERROR=1 W=1 modules

kmod-clean:
	$(Q)rm -rf $(KMOD_DIR)
