# The xrayfdr command and its subcommands
TOOL_SRCS += tools/xrayfdr.c tools/util.c tools/cmd_cflags.c tools/cmd_dump.c tools/cmd_synth.c \
	tools/cmd_record.c tools/trace_opts.c tools/cmd_snapshot.c tools/control_client.c \
	tools/cmd_attach.c tools/inject.c tools/ctl/ctl_nl.c
# snapshot finds a CPU-mode process's session over netlink (libnl)
TOOL_NL_CFLAGS := -isystem /usr/include/libnl3
$(BUILD)/obj/tools/cmd_snapshot.o $(BUILD)/san/tools/cmd_snapshot.o \
	$(BUILD)/san/tools/ctl/ctl_nl.o: XRAYFDR_CFLAGS += $(TOOL_NL_CFLAGS)
# record's and attach's library when it is not in ../lib next to xrayfdr
# (Debian's multiarch directory): where make install puts it
$(BUILD)/obj/tools/trace_opts.o $(BUILD)/san/tools/trace_opts.o \
	$(BUILD)/obj/tools/cmd_record.o $(BUILD)/san/tools/cmd_record.o \
	$(BUILD)/obj/tools/cmd_attach.o $(BUILD)/san/tools/cmd_attach.o: \
	XRAYFDR_CFLAGS += -DXRAYFDR_LIBDIR='"$(LIBDIR)"'

# The analysis commands (extract, convert, account, stack, graph) and the
# code they share in tools/analysis/.  The readers of text formats stay
# free of libdw and C++ so the fuzz targets can build them alone.
ANALYSIS_READER_SRCS := tools/analysis/output/yaml_scalar.c tools/analysis/output/outbuf.c \
	tools/analysis/input/text_lines.c tools/analysis/input/text_reader.c \
	tools/analysis/input/yaml_reader.c \
	tools/analysis/input/tracelog_reader.c tools/analysis/input/yaml_map.c
ANALYSIS_SRCS := $(ANALYSIS_READER_SRCS) tools/analysis/input/symbols.c \
	tools/analysis/input/source.c tools/analysis/input/log_objects.c \
	tools/analysis/stats/sorter.c \
	tools/analysis/engine/llvm_compat.c tools/analysis/output/xray_yaml.c \
	tools/analysis/engine/calls.c tools/analysis/engine/replay.c tools/analysis/engine/funcfilter.c tools/analysis/engine/evfilter.c tools/analysis/engine/trie.c tools/analysis/output/flamegraph.c \
	tools/analysis/output/writers.c tools/analysis/stats/order_stats.c tools/analysis/stats/shared_stats.c \
	tools/analysis/stats/shared_read.c \
	tools/analysis/cmdline/cmdline.c tools/analysis/cmdline/report.c \
	tools/analysis/cmdline/option_values.c \
	tools/analysis/stats/table.c tools/analysis/output/perfetto.c \
	tools/analysis/engine/stacks.c
TOOL_SRCS += $(ANALYSIS_SRCS) tools/cmd_extract.c tools/cmd_convert.c \
	tools/cmd_account.c tools/cmd_stack.c tools/cmd_graph.c tools/cmd_replay.c
# C++ only where a C++ facility is needed: demangling, and std::sort's
# order of equal elements, which llvm-xray's output inherits (libstdc++).
TOOL_CXX_SRCS := tools/analysis/input/demangle.cc tools/analysis/engine/llvm_sort.cc
TOOL_CXX_OBJS := $(TOOL_CXX_SRCS:%.cc=$(BUILD)/obj/%.o)
TOOL_LDLIBS += $(TOOL_CXX_OBJS) -ldw -lelf -lstdc++ -lm -lnl-genl-3 -lnl-3

$(XRAYFDR_BIN): $(TOOL_CXX_OBJS)

$(BUILD)/obj/%.o: %.cc
	$(call msg,CXX,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -std=c++17 -Wall -Wextra -Werror -fPIC -fvisibility=hidden \
		$(CFLAGS) $(DEPFLAGS) -c -o $@ $<

# Test suites of the analysis commands (tests/tools/).
CHECK_SUITES += tools/llvm-golden:tests/tools/test_llvm_golden.py
CHECK_SUITES += tools/outputs:tests/tools/test_outputs.py
CHECK_SUITES += tools/replay:tests/tools/test_replay.py
CHECK_SUITES += tools/perfetto:tests/tools/test_perfetto.py
# Checksums of runtime-written logs: damage found, llvm-xray unaffected
CHECK_SUITES += tools/checksum:tests/tools/test_checksum.py
# Per-thread time order in dump --verify, on hand-made logs
CHECK_SUITES += tools/time-order:tests/tools/test_time_order.py
# Our outputs loaded into speedscope in headless Chromium; its npm
# packages, pinned by tests/viewer/package-lock.json, go into $(BUILD)/viewer.
VIEWER_STAMP := $(BUILD)/viewer/npm.stamp
$(VIEWER_STAMP): tests/viewer/package.json tests/viewer/package-lock.json scripts/npm-deps.sh
	$(call msg,NPM,$(BUILD)/viewer)
	$(Q)scripts/npm-deps.sh $(BUILD)
CHECK_DEPS += $(VIEWER_STAMP)
CHECK_SUITES += tools/viewer:tests/tools/test_viewer.py

# The text readers' fuzz targets build them in (tests/fuzz/fuzz_*.c).
TEXT_FUZZ_BINS := $(BUILD)/fuzz/fuzz_yaml $(BUILD)/fuzz/fuzz_tracelog \
	$(BUILD)/fuzz/fuzz_instr_map
$(TEXT_FUZZ_BINS): $(ANALYSIS_READER_SRCS) $(wildcard tools/analysis/*/*.h)
$(TEXT_FUZZ_BINS): FUZZ_EXTRA_SRCS = $(ANALYSIS_READER_SRCS)

# The pipelines' fuzz target runs the analysis commands whole, in process.
PIPELINE_FUZZ_SRCS := $(ANALYSIS_SRCS) tools/util.c tools/cmd_account.c \
	tools/cmd_stack.c tools/cmd_graph.c tools/cmd_convert.c tools/cmd_replay.c
$(BUILD)/fuzz/fuzz_pipeline: $(PIPELINE_FUZZ_SRCS) $(TOOL_CXX_OBJS) \
	$(wildcard tools/*.h tools/analysis/*/*.h)
$(BUILD)/fuzz/fuzz_pipeline: FUZZ_EXTRA_SRCS = $(PIPELINE_FUZZ_SRCS)
$(BUILD)/fuzz/fuzz_pipeline: FUZZ_EXTRA_LIBS = $(TOOL_CXX_OBJS) -ldw -lelf \
	-lstdc++ -lm -lpthread

# make bench: tool throughput against llvm-xray (bench/tools/).
BENCH_SUITES += tools:bench/tools/bench_tools.py

# The tool built with ASan and UBSan, for the sanitized suites.
SAN_XRAYFDR := $(BUILD)/san/bin/xrayfdr
$(SAN_XRAYFDR): $(TOOL_SRCS:%.c=$(BUILD)/san/%.o) \
		$(SAN_LIB_OBJS) $(TOOL_CXX_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_FLAGS) -o $@ $^ -ldw -lelf -lstdc++ -lm -lnl-genl-3 \
		-lnl-3
CHECK_DEPS += $(SAN_XRAYFDR)
CHECK_SUITES += tools/sanitized:tests/tools/test_sanitized.sh

# The library's and the tool's objects in layers, without a cycle
# (scripts/object-deps.py over the objects each is linked from, listed
# here; LIB_OBJS is known by the time the recipe runs).
TOOL_OBJ_LIST := $(BUILD)/obj/tools/objects.list
LIB_OBJ_LIST := $(BUILD)/obj/lib/objects.list
$(TOOL_OBJ_LIST): $(XRAYFDR_BIN) tools/Build.mk
	$(Q)printf '%s\n' $(TOOL_OBJS) $(TOOL_CXX_OBJS) >$@
$(LIB_OBJ_LIST): $(LIB_A) tools/Build.mk
	$(Q)printf '%s\n' $(LIB_OBJS) >$@
CHECK_DEPS += $(TOOL_OBJ_LIST) $(LIB_OBJ_LIST)
CHECK_SUITES += style/layers:tests/style/check-layers.sh
