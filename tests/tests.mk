# Unit tests (T0): one program per file under tests/unit/, linked with the module they test.
UNIT_TPROGS := $(patsubst tests/unit/%.c,$(TBIN)/unit/%,$(wildcard tests/unit/*.c))
ALL_TARGETS += $(UNIT_TPROGS)
