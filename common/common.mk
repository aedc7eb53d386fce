# common/: helpers every Understudy program shares, as a static library.
COMMON_SRCS := $(wildcard common/*.c)
COMMON_LIB := $(O)/lib/libunderstudy-common.a
$(COMMON_LIB): $(COMMON_SRCS:%.c=$(OBJ)/pic/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
ALL_TARGETS += $(COMMON_LIB)
