# xrayfdr-ctl: control of the kernel module over generic netlink (libnl).
# Linked statically so the same binary runs on the host and in the test VM.

CTL_BIN := $(BUILD)/bin/xrayfdr-ctl
CTL_SRCS := tools/ctl/xrayfdr-ctl.c tools/ctl/ctl_nl.c
# (the tool's helpers: messages and option values)
CTL_OBJS := $(CTL_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/tools/util.o \
	$(BUILD)/obj/tools/analysis/cmdline/report.o \
	$(BUILD)/obj/tools/analysis/cmdline/option_values.o
CTL_CFLAGS := -isystem /usr/include/libnl3
# libxrayfdr.a: the dump command writes logs with the runtime's drain.
# CTL_STATIC= links it against the shared libraries (the Debian package).
CTL_STATIC ?= -static
CTL_LDLIBS := $(CTL_STATIC) -lnl-genl-3 -lnl-3 -lelf -lz -lpthread -lm
# libnl's objects mention getaddrinfo & co, which static glibc warns about
# at every link; nothing here calls them.
STATIC_LINK_NOISE := grep -v -e 'in statically linked applications requires' \
	-e ': in function .nl_\|: in function .__nl\|: in function .nl_addr'

$(CTL_SRCS:%.c=$(BUILD)/obj/%.o): XRAYFDR_CFLAGS += $(CTL_CFLAGS)

$(CTL_BIN): $(CTL_OBJS) $(LIB_A)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CTL_OBJS) $(LIB_A) $(CTL_LDLIBS) 2>$@.log; rc=$$?; \
		$(STATIC_LINK_NOISE) $@.log >&2; rm -f $@.log; exit $$rc

ctl: $(CTL_BIN)
tools: $(CTL_BIN)
.PHONY: ctl

# The fuzz target of the reply decoder (make fuzz, and the fuzz suite of
# make check), with seeds written by the same source built as a program.
CTL_FUZZ := $(BUILD)/fuzz/fuzz_ctl_reply
CTL_FUZZ_SEEDS := $(BUILD)/fuzz/corpus-ctl_reply/.seeded
CTL_FUZZ_CFLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -Iinclude/uapi -Itools/ctl \
	-isystem /usr/include/libnl3

$(CTL_FUZZ): tools/ctl/fuzz_ctl_reply.c tools/ctl/ctl_nl.c tools/ctl/ctl_nl.h \
		include/uapi/linux/xray_fdr.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(CTL_FUZZ_CFLAGS) -o $@ tools/ctl/fuzz_ctl_reply.c tools/ctl/ctl_nl.c \
		-lnl-genl-3 -lnl-3

$(CTL_FUZZ_SEEDS): tools/ctl/fuzz_ctl_reply.c include/uapi/linux/xray_fdr.h
	$(call msg,SEEDS,$(@D))
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -DCTL_FUZZ_SEEDS $(CTL_FUZZ_CFLAGS) -Wall -Wextra -Werror \
		-o $(BUILD)/fuzz/ctl_seeds tools/ctl/fuzz_ctl_reply.c -lnl-genl-3 -lnl-3
	$(Q)$(BUILD)/fuzz/ctl_seeds $(@D)
	$(Q)touch $@

FUZZ_BINS += $(CTL_FUZZ)
FUZZ_SEEDS += $(CTL_FUZZ_SEEDS)

# make install also installs xrayfdr-ctl.
install: install-ctl
install-ctl: $(CTL_BIN)
	$(Q)install -d $(DESTDIR)$(BINDIR)
	$(Q)install -m 755 $(CTL_BIN) $(DESTDIR)$(BINDIR)/
.PHONY: install-ctl
