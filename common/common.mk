# common/: helpers every Understudy program shares, as a static library.
COMMON_SRCS := $(wildcard common/*.c)
COMMON_LIB := $(O)/lib/libunderstudy-common.a
$(COMMON_LIB): $(COMMON_SRCS:%.c=$(OBJ)/pic/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
ALL_TARGETS += $(COMMON_LIB)

# ---- protocol facts (pv-keys.h in xenstore-schema/, xen_barriers.h, xs_txn,
# net_l4, inet_csum): their T0 unit tests, tests/unit/test-common-*.c. The
# transaction test brings its own stand-in for libxenstore's calls.
$(TBIN)/unit/test-common-%: $(OBJ)/tests/unit/test-common-%.o $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -lpthread
