# The tracing runtime (thread mode) and its x86_64 patcher and trampolines
LIB_SRCS += lib/runtime/options.c lib/runtime/tsc.c lib/runtime/state.c \
	lib/runtime/bufq.c lib/runtime/logbuf.c \
	lib/runtime/sink_thread.c lib/runtime/sink_thread_write.c \
	lib/runtime/sink_cpu.c lib/runtime/sink_cpu_rings.c lib/runtime/sink_cpu_write.c \
	lib/runtime/sink_cpu_drain.c lib/runtime/sink_cpu_stream.c \
	lib/runtime/fdr.c lib/runtime/fdr_setup.c lib/runtime/handlers.c \
	lib/runtime/logfile.c lib/runtime/stream.c lib/runtime/trace.c \
	lib/runtime/control.c lib/runtime/trigger.c lib/runtime/trigger_fire.c \
	lib/runtime/trigger_select.c \
	lib/runtime/modes.c lib/runtime/mode_fdr.c lib/runtime/basic.c \
	lib/runtime/objects.c lib/runtime/init.c lib/runtime/xray_api.c \
	lib/runtime/api.c lib/runtime/dump.c \
	lib/arch/x86_64/patch.c lib/arch/x86_64/fastcopy.c \
	lib/arch/x86_64/trampolines.S
LIB_LDLIBS += -lpthread
# dlopen and dlclose as the loader binds programs to them: not for static
# programs, which would have no libc ones behind them
LIB_SO_SRCS += lib/runtime/dl.c

# The recording path runs between the trampolines' general-register save
# and the instrumented code: it must not touch vector registers, nor call
# what might (see lib/runtime/fdr.c; tests/runtime checks the objects).
RT_LIGHT_FLAGS := -mgeneral-regs-only -fno-tree-loop-distribute-patterns \
	-fno-stack-protector
$(BUILD)/obj/lib/runtime/fdr.o $(BUILD)/obj/lib/runtime/bufq.o \
	$(BUILD)/obj/lib/runtime/logbuf.o \
	$(BUILD)/obj/lib/runtime/sink_thread_write.o \
	$(BUILD)/obj/lib/runtime/sink_cpu_write.o \
	$(BUILD)/obj/lib/runtime/trigger_fire.o: \
	CFLAGS += $(RT_LIGHT_FLAGS)
