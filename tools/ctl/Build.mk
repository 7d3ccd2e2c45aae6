# xrayfdr-ctl: control of the kernel module over generic netlink (libnl).
# Linked statically so the same binary runs on the host and in the test VM.

CTL_BIN := $(BUILD)/bin/xrayfdr-ctl
CTL_SRCS := tools/ctl/xrayfdr-ctl.c tools/ctl/ctl_nl.c
CTL_OBJS := $(CTL_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/tools/util.o
CTL_CFLAGS := -isystem /usr/include/libnl3
CTL_LDLIBS := -static -lnl-genl-3 -lnl-3 -lpthread -lm
# libnl's objects mention getaddrinfo & co, which static glibc warns about
# at every link; nothing here calls them.
STATIC_LINK_NOISE := grep -v -e 'in statically linked applications requires' \
	-e ': in function .nl_\|: in function .__nl\|: in function .nl_addr'

$(CTL_SRCS:%.c=$(BUILD)/obj/%.o): XRAYFDR_CFLAGS += $(CTL_CFLAGS)

$(CTL_BIN): $(CTL_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -o $@ $(CTL_OBJS) $(CTL_LDLIBS) 2>$@.log; rc=$$?; \
		$(STATIC_LINK_NOISE) $@.log >&2; rm -f $@.log; exit $$rc

ctl: $(CTL_BIN)
tools: $(CTL_BIN)
.PHONY: ctl
