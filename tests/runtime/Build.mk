# The runtime's tests: cmocka unit suites (ASan+UBSan, like tests/unit) and
# the matrix of real programs traced end to end (test_matrix.py).
RUNTIME_UNIT_TESTS := options tsc patch sink
RUNTIME_UNIT_BINS := $(RUNTIME_UNIT_TESTS:%=$(BUILD)/tests/runtime/test_%)

RUNTIME_SUPPORT := tests/runtime/rtutil.c $(UNIT_SUPPORT)

$(BUILD)/tests/runtime/test_%: $(BUILD)/san/tests/runtime/test_%.o \
		$(RUNTIME_SUPPORT:%.c=$(BUILD)/san/%.o) $(SAN_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_FLAGS) -o $@ $^ -lcmocka -lpthread -lelf

# The controller's suite runs fdr.c on a clock of its own.
RUNTIME_FDR_TEST := $(BUILD)/tests/runtime/test_fdr
$(BUILD)/san/tests/runtime/fdr_test_clock.o: lib/runtime/fdr.c
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(XRAYFDR_CFLAGS) $(CFLAGS) $(SAN_FLAGS) -DRT_TEST_CLOCK \
		$(DEPFLAGS) -c -o $@ $<
$(RUNTIME_FDR_TEST): $(BUILD)/san/tests/runtime/test_fdr.o \
		$(BUILD)/san/tests/runtime/fdr_test_clock.o \
		$(RUNTIME_SUPPORT:%.c=$(BUILD)/san/%.o) \
		$(filter-out $(BUILD)/san/lib/runtime/fdr.o,$(SAN_LIB_OBJS))
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_FLAGS) -o $@ $^ -lcmocka -lpthread -lelf

# The trampolines' suite checks what the shipped objects do with every
# register, so it links them, not the sanitizer build.
RUNTIME_TRAMP_TEST := $(BUILD)/tests/runtime/test_tramp
$(RUNTIME_TRAMP_TEST): $(BUILD)/obj/tests/runtime/test_tramp.o \
		$(RUNTIME_SUPPORT:%.c=$(BUILD)/obj/%.o) $(LIB_A)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -o $@ $^ -lcmocka -lpthread -lelf

# The options parser's fuzz target (tests/fuzz/fuzz_options.c).
FUZZ_BINS += $(BUILD)/fuzz/fuzz_options
FUZZ_SEEDS += $(BUILD)/fuzz/corpus-options.stamp
$(BUILD)/fuzz/corpus-options.stamp: tests/runtime/Build.mk
	$(Q)mkdir -p $(BUILD)/fuzz/corpus-options
	$(Q)printf '\0patch_premain=true xray_mode=xray-fdr xray_logfile_base=/tmp/x-' >$(BUILD)/fuzz/corpus-options/xray
	$(Q)printf '\1buffer_size=64K buffer_max=8 func_duration_threshold_us=5' >$(BUILD)/fuzz/corpus-options/fdr
	$(Q)printf '\2output="/tmp/a b" version=1 fork=off tsc_sources=perf+cpuid' >$(BUILD)/fuzz/corpus-options/ours
	$(Q)printf '2000000\n' >$(BUILD)/fuzz/corpus-options/sysfs
	$(Q)touch $@

# The dump's fuzz target (tests/fuzz/fuzz_dump.c), seeded with the rings
# of test_sink's CPU scenarios, each also as 64 CPUs and in discard mode.
FUZZ_BINS += $(BUILD)/fuzz/fuzz_dump
FUZZ_SEEDS += $(BUILD)/fuzz/corpus-dump.stamp
$(BUILD)/fuzz/fuzz_dump: tests/fuzz/fuzz_dump.h $(wildcard lib/runtime/*.h)
$(BUILD)/fuzz/corpus-dump.stamp: $(BUILD)/tests/runtime/test_sink
	$(call msg,CORPUS,$(BUILD)/fuzz/corpus-dump)
	$(Q)rm -rf $(BUILD)/fuzz/corpus-dump
	$(Q)mkdir -p $(BUILD)/fuzz/corpus-dump
	$(Q)XRAYFDR_DUMP_SEEDS=$(BUILD)/fuzz/corpus-dump $< \
		>$(BUILD)/fuzz/corpus-dump.log 2>&1 || \
		{ cat $(BUILD)/fuzz/corpus-dump.log; exit 1; }
	$(Q)for f in $(BUILD)/fuzz/corpus-dump/*; do \
		cp $$f $$f.cpus64 && printf '\077' | \
			dd of=$$f.cpus64 bs=1 count=1 conv=notrunc 2>/dev/null; \
		cp $$f $$f.discard && printf '\001' | \
			dd of=$$f.discard bs=1 seek=3 count=1 conv=notrunc 2>/dev/null; \
	done
	$(Q)touch $@

# ... and again for CPU mode's trampolines.
RUNTIME_TRAMP_CPU_TEST := $(BUILD)/tests/runtime/test_tramp_cpu
$(BUILD)/obj/tests/runtime/test_tramp_cpu.o: tests/runtime/test_tramp.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(XRAYFDR_CFLAGS) $(CFLAGS) -DTRAMP_CPU $(DEPFLAGS) -c -o $@ $<
$(RUNTIME_TRAMP_CPU_TEST): $(BUILD)/obj/tests/runtime/test_tramp_cpu.o \
		$(RUNTIME_SUPPORT:%.c=$(BUILD)/obj/%.o) $(LIB_A)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -o $@ $^ -lcmocka -lpthread -lelf

CHECK_DEPS += $(RUNTIME_UNIT_BINS) $(RUNTIME_FDR_TEST) $(RUNTIME_TRAMP_TEST) \
	$(RUNTIME_TRAMP_CPU_TEST)
CHECK_SUITES += $(foreach t,$(RUNTIME_UNIT_TESTS),runtime/$(t):$(BUILD)/tests/runtime/test_$(t))
CHECK_SUITES += runtime/fdr:$(RUNTIME_FDR_TEST)
CHECK_SUITES += runtime/tramp:$(RUNTIME_TRAMP_TEST)
CHECK_SUITES += runtime/tramp-cpu:$(RUNTIME_TRAMP_CPU_TEST)
CHECK_SUITES += runtime/gcc:tests/runtime/test_gcc.py
CHECK_SUITES += runtime/matrix:tests/runtime/test_matrix.py
CHECK_SUITES += runtime/attach:tests/runtime/test_attach.py
