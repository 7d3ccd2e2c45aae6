# The runtime's overhead benchmark against LLVM XRay and uftrace
BENCH_SUITES += runtime/calls:bench/runtime/bench_calls.py
BENCH_DEPS += $(LIB_A) $(LIB_SO) $(XRAYFDR_BIN)

# Traced programs linked statically with the library.
$(BUILD)/bench/%: bench/runtime/%.c $(LIB_A)
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -O2 -g -std=gnu11 -Wall -Wextra -Werror -pthread \
		-Ilib/include -fxray-instrument -fnoxray-link-deps -o $@ $< \
		-static -Wl,-u,__xray_init \
		$(LIB_A) -lelf -lz -lpthread

# What a snapshot costs the threads it does not stop (snapshot_stall.c).
SNAPSHOT_STALL := $(BUILD)/bench/snapshot_stall
BENCH_SUITES += runtime/snapshot-stall:$(SNAPSHOT_STALL)
BENCH_DEPS += $(SNAPSHOT_STALL)

# What the buffers' checksums cost the flush and the stream's writer
# (checksum_cost.c); it calls the library's crc32c() directly.
CHECKSUM_COST := $(BUILD)/bench/checksum_cost
BENCH_SUITES += runtime/checksum-cost:$(CHECKSUM_COST)
BENCH_DEPS += $(CHECKSUM_COST)

# What attaching costs a running program: latency, the stopped thread,
# the workers' gaps, the traced cost against a launched trace
# (bench_attach.py builds attach_target.c without any runtime).
BENCH_SUITES += runtime/attach:bench/runtime/bench_attach.py

# A server-like workload: workers calling a function that logs its
# argument, a main thread waking every 2 ms (bench_server.py, server.c).
BENCH_SUITES += runtime/server:bench/runtime/bench_server.py

# make check runs the benchmarks once, briefly: that they run, never a time.
CHECK_SUITES += bench/smoke:tests/runtime/test_bench.py
