# Tests.  Unit tests and the library under them are built with ASan and
# UBSan in a tree of their own ($(BUILD)/san); the fuzz targets with clang's
# libFuzzer in $(BUILD)/fuzz.

SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
UNIT_TESTS := u64map outfile losses crc32c codec writer reader instr_map order_stats calls trie \
	rings_view
UNIT_SUPPORT := tests/unit/testutil.c

UNIT_BINS := $(UNIT_TESTS:%=$(BUILD)/tests/unit/test_%)

$(BUILD)/san/%.o: %.c
	$(call msg,CC-SAN,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(XRAYFDR_CFLAGS) $(CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) -c -o $@ $<

$(BUILD)/san/%.o: %.S
	$(call msg,AS-SAN,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(XRAYFDR_CFLAGS) $(CFLAGS) $(SAN_FLAGS) $(DEPFLAGS) -c -o $@ $<

$(BUILD)/tests/unit/test_%: $(BUILD)/san/tests/unit/test_%.o \
		$(UNIT_SUPPORT:%.c=$(BUILD)/san/%.o) $(SAN_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_FLAGS) -o $@ $^ -lcmocka -lpthread -lelf

# Unit tests of the analysis tools' parts link those parts too.
$(BUILD)/tests/unit/test_order_stats: \
	$(BUILD)/san/tools/analysis/stats/order_stats.o $(BUILD)/san/tools/analysis/stats/sorter.o
$(BUILD)/tests/unit/test_calls: \
	$(BUILD)/san/tools/analysis/engine/calls.o $(BUILD)/san/tools/analysis/stats/table.o
$(BUILD)/tests/unit/test_trie: $(BUILD)/san/tools/analysis/engine/trie.o

# Fuzz targets: one per parser, seeded with logs from `xrayfdr synth`.
FUZZ_TARGETS := fuzz_reader fuzz_instr_map fuzz_gcc_map fuzz_yaml fuzz_tracelog fuzz_pipeline
FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-DREADER_WINDOW_SIZE=48 \
	-g -O1 -std=c11 -D_GNU_SOURCE -Ilib/include -Iinclude/uapi -DXRAYFDR_VERSION='"fuzz"'
FUZZ_BINS += $(FUZZ_TARGETS:%=$(BUILD)/fuzz/%)
FUZZ_SEEDS += $(BUILD)/fuzz/corpus.stamp

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(LIB_SRCS) $(wildcard lib/*.h lib/*/*.h lib/include/xrayfdr/*.h)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_EXTRA_SRCS) $(LIB_SRCS) $(LIB_LDLIBS) \
		$(FUZZ_EXTRA_LIBS)

$(BUILD)/fuzz/corpus.stamp: $(XRAYFDR_BIN) tests/fuzz/make-corpus.sh
	$(call msg,CORPUS,$(BUILD)/fuzz/corpus-*)
	$(Q)BUILD=$(BUILD) tests/fuzz/make-corpus.sh
	$(Q)touch $@

CHECK_DEPS += $(UNIT_BINS)
CHECK_SUITES += $(foreach t,$(UNIT_TESTS),unit/$(t):$(BUILD)/tests/unit/test_$(t))
CHECK_SUITES += oracle/llvm-xray:tests/oracle/test_llvm_xray.py
CHECK_SUITES += fuzz:tests/fuzz/run-fuzz.sh
CHECK_SUITES += style/clang-format:tests/style/check-format.sh
CHECK_SUITES += install:tests/install/test_install.sh
CHECK_SUITES += tools/cli:tests/tools/test_cli.sh
CHECK_SUITES += tools/readme:tests/tools/test_readme.py
