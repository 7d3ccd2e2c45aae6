# The tracing runtime (thread mode) and its x86_64 patcher and trampolines
LIB_SRCS += lib/runtime/options.c lib/runtime/tsc.c lib/runtime/bufq.c \
	lib/runtime/fdr.c lib/runtime/flush.c lib/runtime/objects.c \
	lib/runtime/xray_api.c lib/runtime/init.c \
	lib/arch/x86_64/patch.c lib/arch/x86_64/trampolines.S
LIB_LDLIBS += -lpthread
