# The runtime's tests: cmocka unit suites (ASan+UBSan, like tests/unit) and
# the matrix of real programs traced end to end (test_matrix.py).
RUNTIME_UNIT_TESTS :=
RUNTIME_UNIT_BINS := $(RUNTIME_UNIT_TESTS:%=$(BUILD)/tests/runtime/test_%)

$(BUILD)/tests/runtime/test_%: $(BUILD)/san/tests/runtime/test_%.o \
		$(UNIT_SUPPORT:%.c=$(BUILD)/san/%.o) $(SAN_LIB_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_FLAGS) -o $@ $^ -lcmocka -lpthread -lelf

CHECK_DEPS += $(RUNTIME_UNIT_BINS) $(LIB_SO) $(XRAYFDR_BIN) $(ORACLE_HELPERS)
CHECK_SUITES += $(foreach t,$(RUNTIME_UNIT_TESTS),runtime/$(t):$(BUILD)/tests/runtime/test_$(t))
CHECK_SUITES += runtime/matrix:tests/runtime/test_matrix.py
