# Packages.  make dkms-deb: build/pkg/xray-fdr-dkms_VERSION_all.deb, the
# module's sources for DKMS (scripts/pkg/dkms: dkms.conf and the
# maintainer scripts) with the udev rule, made with dpkg-deb from the
# Makefile's VERSION.  Suite pkg/dkms (tests/pkg/test_dkms.sh) checks the
# package and builds it with dkms against the 6.1 and 6.12 headers.

PKG_DIR := $(BUILD)/pkg
DKMS_DEB := $(PKG_DIR)/xray-fdr-dkms_$(VERSION)_all.deb
DKMS_ROOT := $(PKG_DIR)/xray-fdr-dkms
DKMS_USRSRC := usr/src/xray-fdr-$(VERSION)
DEB_MAINTAINER ?= xrayfdr maintainers <maintainers@xrayfdr.invalid>
DKMS_PKG_FILES := $(wildcard scripts/pkg/dkms/*)
pkg_subst = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@MAINTAINER@|$(DEB_MAINTAINER)|g'

$(DKMS_DEB): $(KMOD_SRCS) include/uapi/linux/xray_fdr.h kmod/60-xrayfdr.rules \
		$(DKMS_PKG_FILES) scripts/pkg/Build.mk Makefile
	$(call msg,DPKG-DEB,$@)
	$(Q)rm -rf $(DKMS_ROOT) && mkdir -p $(DKMS_ROOT)/DEBIAN
	$(Q)install -d $(DKMS_ROOT)/$(DKMS_USRSRC)/kmod \
		$(DKMS_ROOT)/$(DKMS_USRSRC)/include/uapi/linux \
		$(DKMS_ROOT)/usr/lib/udev/rules.d $(DKMS_ROOT)/usr/share/doc/xray-fdr-dkms
	$(Q)install -m 644 $(KMOD_SRCS) $(DKMS_ROOT)/$(DKMS_USRSRC)/kmod/
	$(Q)install -m 644 include/uapi/linux/xray_fdr.h \
		$(DKMS_ROOT)/$(DKMS_USRSRC)/include/uapi/linux/
	$(Q)$(pkg_subst) scripts/pkg/dkms/dkms.conf.in >$(DKMS_ROOT)/$(DKMS_USRSRC)/dkms.conf
	$(Q)install -m 644 kmod/60-xrayfdr.rules $(DKMS_ROOT)/usr/lib/udev/rules.d/
	$(Q)install -m 644 scripts/pkg/dkms/copyright \
		$(DKMS_ROOT)/usr/share/doc/xray-fdr-dkms/
	$(Q)for s in postinst prerm; do \
		$(pkg_subst) scripts/pkg/dkms/$$s.in >$(DKMS_ROOT)/DEBIAN/$$s && \
		chmod 755 $(DKMS_ROOT)/DEBIAN/$$s || exit 1; done
	$(Q)$(pkg_subst) -e "s|@SIZE@|$$(du -sk --exclude=DEBIAN $(DKMS_ROOT) | cut -f1)|" \
		scripts/pkg/dkms/control.in >$(DKMS_ROOT)/DEBIAN/control
	$(Q)dpkg-deb --root-owner-group -Zxz --build $(DKMS_ROOT) $@ >/dev/null

dkms-deb: $(DKMS_DEB)
.PHONY: dkms-deb

CHECK_DEPS += $(DKMS_DEB)
CHECK_SUITES += pkg/dkms:tests/pkg/test_dkms.sh

# A clean Debian 12 for the install test (scripts/pkg/mkchroot.sh, made
# once from Debian's archive: delete the tarball to refresh it), and the
# suite that installs the package there, has DKMS build the module and
# purges it (tests/pkg/test_dkms_chroot.sh).
PKG_CHROOT := $(BUILD)/chroot/bookworm.tar

$(PKG_CHROOT): scripts/pkg/mkchroot.sh
	$(call msg,CHROOT,$@ (Debian bookworm))
	$(Q)scripts/pkg/mkchroot.sh $@

chroot: $(PKG_CHROOT)
.PHONY: chroot

CHECK_DEPS += $(PKG_CHROOT)
CHECK_SUITES += pkg/dkms-chroot:tests/pkg/test_dkms_chroot.sh
