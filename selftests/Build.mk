# Selftests of the kernel module: kselftest-harness programs linked
# statically, so the test VM needs nothing but busybox.  The harness
# headers come from Debian's linux-source package, extracted into
# $(BUILD)/ksrc with checkpatch.pl (see kmod/Build.mk).

SELFTEST_PROGS := test_mmap test_sched
SELFTEST_DIR := $(BUILD)/selftests
SELFTEST_BINS := $(SELFTEST_PROGS:%=$(SELFTEST_DIR)/%)
SELFTEST_SUPPORT := selftests/xrayfdr_test.c
# gnu11: kselftest_harness.h relies on GNU C extensions.
SELFTEST_CFLAGS := -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror \
	-Wno-missing-field-initializers \
	-isystem $(KSRC_DIR)/tools/testing/selftests -isystem /usr/include/libnl3 \
	-Iinclude/uapi -Iselftests
SELFTEST_LDLIBS := -static -lnl-genl-3 -lnl-3 -lpthread -lm
# libnl's objects mention getaddrinfo & co, which static glibc warns about
# at every link; nothing here calls them.
STATIC_LINK_NOISE := grep -v -e 'in statically linked applications requires' \
	-e ': in function .nl_\|: in function .__nl\|: in function .nl_addr'

$(SELFTEST_DIR)/%: selftests/%.c $(SELFTEST_SUPPORT) selftests/xrayfdr_test.h \
		include/uapi/linux/xray_fdr.h $(KSRC_STAMP)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SELFTEST_CFLAGS) -o $@ $< $(SELFTEST_SUPPORT) \
		$(SELFTEST_LDLIBS) 2>$@.log; rc=$$?; $(STATIC_LINK_NOISE) $@.log >&2; \
		rm -f $@.log; exit $$rc

selftests: $(SELFTEST_BINS)
.PHONY: selftests
