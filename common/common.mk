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
# The test peers of tests/backends (nfront, tfront: the transaction helper;
# nframe: the checksums) link it; their link rules link every prerequisite.
$(TBIN)/backends/blkfront $(TBIN)/backends/blkhostile $(TBIN)/backends/netfront \
    $(TBIN)/backends/nhostile $(TBIN)/backends/npeer: $(COMMON_LIB)
# blkbench's rule is a pattern rule: name tfront's objects first, so that the
# library comes after them on its link line.
$(O)/bench/blkbench: $(OBJ)/tests/backends/tfront.o $(OBJ)/tests/backends/tbad.o $(COMMON_LIB)
