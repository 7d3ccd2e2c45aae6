# The runtime's overhead benchmark against LLVM XRay and uftrace
BENCH_SUITES += runtime/calls:bench/runtime/bench_calls.py
BENCH_DEPS += $(LIB_A) $(LIB_SO) $(XRAYFDR_BIN)
