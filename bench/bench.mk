# Benchmark programs: one file each, bench/<name>.c -> $(O)/bench/<name>.
BENCH_PROGS := $(patsubst bench/%.c,$(O)/bench/%,$(wildcard bench/*.c))

$(O)/bench/%: $(OBJ)/bench/%.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -Wl,--as-needed -lxenvchan -lxenstore -lxengnttab -lxenevtchn \
	    -lxentoollog

ALL_TARGETS += $(BENCH_PROGS)
