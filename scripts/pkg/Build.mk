# Debian packages.  make deb: xrayfdr, libxrayfdr0, libxrayfdr-dev and
# xray-fdr-dkms in $(BUILD)/pkg, from one source package built by
# dpkg-buildpackage in a copy of the tree's tracked files
# ($(BUILD)/pkg/xrayfdr-VERSION, with scripts/pkg/debian as its debian/,
# the *.in files filled in: VERSION from this Makefile).  debian/rules
# builds with this Makefile and installs with make install and
# make install-dkms.  make dkms-deb is the same build.  Suites:
# pkg/dkms (tests/pkg/test_dkms.sh) checks the DKMS package and builds it
# against the 6.1 and 6.12 headers; pkg/deb (tests/pkg/test_deb.sh) the
# packages' contents and lintian's verdict.

PKG_DIR := $(BUILD)/pkg
DEB_MAINTAINER ?= xrayfdr maintainers <maintainers@xrayfdr.invalid>
DEB_JOBS ?= 2
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB_SRC := $(PKG_DIR)/xrayfdr-$(VERSION)
DKMS_DEB := $(PKG_DIR)/xray-fdr-dkms_$(VERSION)_all.deb
DEBS := $(foreach p,xrayfdr libxrayfdr0 libxrayfdr-dev,$(PKG_DIR)/$(p)_$(VERSION)_$(DEB_ARCH).deb) \
	$(DKMS_DEB)
# What goes into the source copy; a file deleted but not yet committed is
# left out.
DEB_TREE := $(wildcard $(shell git ls-files 2>/dev/null))
# The changelog's date: the last commit's, so a rebuild of the same tree
# makes the same packages.
DEB_DATE = $$(git log -1 --format=%aD 2>/dev/null || date -R)
pkg_subst = sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@MAINTAINER@|$(DEB_MAINTAINER)|g'

# The sub-make of debian/rules must not see this make's variables: a
# BUILD given here, exported, would point it (and its make clean) at this
# tree's build directory; paths are debian/rules' to choose.
$(DEBS) &: $(DEB_TREE)
	$(call msg,DPKG-BP,$(PKG_DIR)/*_$(VERSION)_*.deb)
	$(Q)if ! git rev-parse --show-toplevel >/dev/null 2>&1; then \
		echo "make deb: needs a git checkout (it packages the tracked files)" >&2; \
		exit 1; fi
	$(Q)rm -rf $(DEB_SRC) $(PKG_DIR)/*_$(VERSION)_* && mkdir -p $(DEB_SRC)
	$(Q)git ls-files -z | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | \
		tar -xf - -C $(DEB_SRC)
	$(Q)rm -rf $(DEB_SRC)/debian && cp -r scripts/pkg/debian $(DEB_SRC)/debian
	$(Q)cd $(DEB_SRC)/debian && for f in *.in; do \
		$(pkg_subst) -e "s|@DATE@|$(DEB_DATE)|" $$f >$${f%.in} && \
		rm $$f || exit 1; done
	$(Q)cd $(DEB_SRC) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD -u DESTDIR \
		-u PREFIX -u BINDIR -u LIBDIR -u INCLUDEDIR -u MANDIR \
		dpkg-buildpackage -b -us -uc -J$(DEB_JOBS) >../build.log 2>&1 || \
		{ tail -n 40 ../build.log >&2; echo "make deb: see $(PKG_DIR)/build.log" >&2; exit 1; }
	$(Q)touch $(DEBS)

deb: $(DEBS)
dkms-deb: $(DKMS_DEB)
.PHONY: deb dkms-deb

# The module's sources for DKMS under /usr/src, and the udev rule: what
# xray-fdr-dkms ships (debian/rules runs it with DESTDIR).
DKMS_USRSRC := $(DESTDIR)/usr/src/xray-fdr-$(VERSION)
install-dkms:
	$(Q)install -d $(DKMS_USRSRC)/kmod $(DKMS_USRSRC)/include/uapi/linux \
		$(DESTDIR)/usr/lib/udev/rules.d
	$(Q)install -m 644 $(KMOD_SRCS) $(DKMS_USRSRC)/kmod/
	$(Q)install -m 644 include/uapi/linux/xray_fdr.h $(DKMS_USRSRC)/include/uapi/linux/
	$(Q)$(pkg_subst) scripts/pkg/debian/dkms.conf.in >$(DKMS_USRSRC)/dkms.conf
	$(Q)install -m 644 kmod/60-xrayfdr.rules $(DESTDIR)/usr/lib/udev/rules.d/
.PHONY: install-dkms

CHECK_DEPS += $(DEBS)
CHECK_SUITES += pkg/deb:tests/pkg/test_deb.sh pkg/dkms:tests/pkg/test_dkms.sh

# A clean Debian 12 for the install test (scripts/pkg/mkchroot.sh, made
# once from Debian's archive: delete the tarball to refresh it), and the
# suite that installs the packages there, has DKMS build the module,
# records a program built against libxrayfdr-dev and purges them
# (tests/pkg/test_dkms_chroot.sh).
PKG_CHROOT := $(BUILD)/chroot/bookworm.tar

$(PKG_CHROOT): scripts/pkg/mkchroot.sh
	$(call msg,CHROOT,$@ (Debian bookworm))
	$(Q)scripts/pkg/mkchroot.sh $@

chroot: $(PKG_CHROOT)
.PHONY: chroot

CHECK_DEPS += $(PKG_CHROOT)
CHECK_SUITES += pkg/dkms-chroot:tests/pkg/test_dkms_chroot.sh

# DKMS on Debian's newest kernel (scripts/vm/Build.mk's guest "newest",
# whose headers name gcc-14): a system of the kernel's own release
# (trixie with trixie-backports for a backported kernel) with dkms and
# what the fetched headers and kbuild depend on, but not those (mkchroot.sh
# deps:), made once per fetched kernel into a tarball; the suite
# pkg/dkms-newest (tests/pkg/test_dkms_newest.sh) installs xray-fdr-dkms
# there, then the kernel's headers with dpkg, whose hook has DKMS build
# the module, and purges the package.  Root and the archive are needed,
# so it is not part of make check: make pkgtest-newest runs it, and
# make vmtest-all too.
DKMS_NEWEST_CHROOT := $(BUILD)/chroot/dkms-newest.tar
NEWEST_DIR := $(BUILD)/kernels/newest

$(DKMS_NEWEST_CHROOT): $(NEWEST_DIR)/stamp scripts/pkg/mkchroot.sh
	$(call msg,CHROOT,$@ (DKMS for $(<D)))
	$(Q)scripts/pkg/mkchroot.sh $@ $(call chroot_suites,$(<D)) dkms passwd kmod \
		$$(for d in $(abspath $(<D))/apt/debs/linux-headers-*.deb \
			$(abspath $(<D))/apt/debs/linux-kbuild-*.deb; do echo "deps:$$d"; done)

pkgtest-newest: $(DKMS_DEB) $(DKMS_NEWEST_CHROOT)
	$(Q)BUILD=$(BUILD) tests/run-tests.sh pkg/dkms-newest:tests/pkg/test_dkms_newest.sh
vmtest-all: $(DKMS_DEB) $(DKMS_NEWEST_CHROOT)
VM_ALL_SUITES += pkg/dkms-newest:tests/pkg/test_dkms_newest.sh
.PHONY: pkgtest-newest
