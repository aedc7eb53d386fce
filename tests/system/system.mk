# tests/system/: the full-system tier (T2): real Xen 4.17 in QEMU.
# See tests/system/README.md.
#   make systest [QUICK=1] [KEEP=1] [FAULTS=a,b] [SCENARIOS=disk+net+interop]
#                                     build the images (cached), boot, run the scenarios
#   make systest BENCH=1              the real-Xen benchmark instead (scenario-bench,
#                                     then scenario-matrix: the data path against Linux's)
#   make systest-deps                 the same as make deps (one package list)
SYSTEST_DIR ?= build/systest

$(TBIN)/system/disk-verify: $(OBJ)/tests/system/disk-verify.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@

$(TBIN)/system/net-verify: $(OBJ)/tests/system/net-verify.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@

# blk-jobs: the data-path matrix's disk jobs, run in a guest (scenario-matrix).
$(TBIN)/system/blk-jobs: $(OBJ)/tests/system/blk-jobs.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -pthread

# net-jobs: the matrix's network jobs (client in a guest, server in dom0).
$(TBIN)/system/net-jobs: $(OBJ)/tests/system/net-jobs.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -pthread

# xs-timeline: dom0's recorder of a recovery's xenstore changes (scenario-bench).
$(TBIN)/system/xs-timeline: $(OBJ)/tests/system/xs-timeline.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -lxenstore

ALL_TARGETS += $(TBIN)/system/disk-verify $(TBIN)/system/net-verify $(TBIN)/system/xs-timeline \
	$(TBIN)/system/blk-jobs $(TBIN)/system/net-jobs

# snd-record: the sound driver domain's recorder (the loopback's capture end,
# the frame-counter signal of tests/snd); built where ALSA's headers are.
$(OBJ)/tests/system/snd-record.o: CPPFLAGS += -Itests/snd
$(TBIN)/system/snd-record: $(OBJ)/tests/system/snd-record.o $(OBJ)/tests/snd/framecode.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -lasound

ALL_TARGETS += $(if $(wildcard /usr/include/alsa/asoundlib.h),$(TBIN)/system/snd-record)

.PHONY: systest systest-deps
systest: all
	@./tests/system/run-systest --build $(O) --dir $(SYSTEST_DIR) $(if $(QUICK),--quick) \
	    $(if $(KEEP),--keep) $(if $(FAULTS),--faults $(FAULTS)) \
	    $(if $(SCENARIOS),--scenarios $(SCENARIOS)) $(if $(BENCH),--scenarios bench+matrix); rc=$$?; \
	    if [ $$rc = 77 ]; then echo "systest: skipped (see SKIP above)"; exit 0; fi; exit $$rc

systest-deps: deps
