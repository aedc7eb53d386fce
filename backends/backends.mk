# backends/: userspace PV backends for driver domains. See backends/README.md.
#   backends/core/   the xenbus backend state machine, rings and the publication of
#                    responses, the fault layer, event loop (any class)
#   backends/blk/    blkback, the blkif class (prefix bb_)
#   backends/net/    netback, the netif class (prefix nb_)
#   backends/snd/    sndback, the sndif class (prefix sb_; needs libasound2-dev)
BE_CORE_SRCS := $(wildcard backends/core/*.c)
BLKBACK_SRCS := $(wildcard backends/blk/*.c)
BE_CPPFLAGS := -Ibackends/core -Ibackends/blk
BE_XEN_LIBS := -lxenstore -lxengnttab -lxenevtchn

$(OBJ)/backends/%.o: CPPFLAGS += $(BE_CPPFLAGS)

$(BIN)/blkback: $(BLKBACK_SRCS:%.c=$(OBJ)/%.o) $(BE_CORE_SRCS:%.c=$(OBJ)/%.o) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(filter %.o,$^) -o $@ $(BE_XEN_LIBS) -luring $(COMMON_LIB)

ALL_TARGETS += $(BIN)/blkback

# ---- tests/backends: the test frontend, the hostile frontend, unit tests ----
TBE := tests/backends
TFRONT_OBJS := $(OBJ)/$(TBE)/tfront.o $(OBJ)/$(TBE)/tbad.o
$(OBJ)/$(TBE)/%.o: CPPFLAGS += $(BE_CPPFLAGS)

$(TBIN)/backends/blkfront: $(OBJ)/$(TBE)/blkfront.o $(TFRONT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(BE_XEN_LIBS)

$(TBIN)/backends/blkhostile: $(OBJ)/$(TBE)/blkhostile.o $(TFRONT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(BE_XEN_LIBS)

# Unit tests (T0): run-tests runs every program in $(TBIN)/unit.
BE_UNIT_DEPS_bb_check_test := backends/blk/bb_check
BE_UNIT_DEPS_bb_vcache_test := backends/blk/bb_vcache
BE_UNIT_DEPS_bb_pgrant_test := backends/blk/bb_pgrant
BE_UNIT_DEPS_be_inject_test := backends/core/be_inject
BE_UNIT_DEPS_nb_txcheck_test := backends/net/nb_txcheck
BE_UNIT_DEPS_nb_credit_test := backends/net/nb_credit
BE_UNIT_DEPS_nb_mcast_test := backends/net/nb_mcast
BE_UNIT_DEPS_nb_spoof_test := backends/net/nb_spoof
BE_UNIT_DEPS_nb_vnet_test := backends/net/nb_vnet common/net_l4 common/net_vnet common/inet_csum
$(OBJ)/$(TBE)/unit/nb_%.o: CPPFLAGS += -Ibackends/net
$(OBJ)/$(TBE)/unit/%.o: CPPFLAGS += -Itests/unit # check.h
BE_UNITS := $(patsubst $(TBE)/unit/%.c,%,$(wildcard $(TBE)/unit/*_test.c))

define be_unit_rule
$(TBIN)/unit/backends-$(1): $(OBJ)/$(TBE)/unit/$(1).o $(patsubst %,$(OBJ)/%.o,$(BE_UNIT_DEPS_$(1)))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS) $$^ -o $$@
endef
$(foreach u,$(BE_UNITS),$(eval $(call be_unit_rule,$(u))))

ALL_TARGETS += $(TBIN)/backends/blkfront $(TBIN)/backends/blkhostile \
               $(patsubst %,$(TBIN)/unit/backends-%,$(BE_UNITS))

# bench/blkbench.c (built by bench/bench.mk) drives blkback through the test frontend.
$(OBJ)/bench/blkbench.o: CPPFLAGS += $(BE_CPPFLAGS) -I$(TBE)
$(O)/bench/blkbench: $(TFRONT_OBJS)

# ---- netback: the netif class (backends/net) ----
NETBACK_SRCS := $(wildcard backends/net/*.c)
$(OBJ)/backends/net/%.o: CPPFLAGS += -Ibackends/net

$(BIN)/netback: $(NETBACK_SRCS:%.c=$(OBJ)/%.o) $(BE_CORE_SRCS:%.c=$(OBJ)/%.o) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(filter %.o,$^) -o $@ $(BE_XEN_LIBS) $(COMMON_LIB)

ALL_TARGETS += $(BIN)/netback

# ---- tests/backends: the netif test frontend, the hostile frontend, the peer ----
# nfront.c (the frontend library), nframe.c (frames built by hand), nbad.c
# (malformed tx requests); npeer runs on the driver domain's network side.
NFRONT_OBJS := $(OBJ)/$(TBE)/nfront.o $(OBJ)/$(TBE)/nframe.o $(OBJ)/$(TBE)/nbad.o

$(TBIN)/backends/netfront: $(OBJ)/$(TBE)/netfront.o $(NFRONT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(BE_XEN_LIBS)

$(TBIN)/backends/nhostile: $(OBJ)/$(TBE)/nhostile.o $(NFRONT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(BE_XEN_LIBS)

$(TBIN)/backends/npeer: $(OBJ)/$(TBE)/npeer.o $(OBJ)/$(TBE)/nframe.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@

ALL_TARGETS += $(TBIN)/backends/netfront $(TBIN)/backends/nhostile $(TBIN)/backends/npeer

# ---- sndback: the sndif class (backends/snd), over ALSA ----
SNDBACK_SRCS := $(wildcard backends/snd/*.c)
$(OBJ)/backends/snd/%.o: CPPFLAGS += -Ibackends/snd

$(BIN)/sndback: $(SNDBACK_SRCS:%.c=$(OBJ)/%.o) $(BE_CORE_SRCS:%.c=$(OBJ)/%.o) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(filter %.o,$^) -o $@ $(BE_XEN_LIBS) -lasound -lm $(COMMON_LIB)

ALL_TARGETS += $(if $(wildcard /usr/include/alsa/asoundlib.h),$(BIN)/sndback)

# ---- tests/backends: the sndif test frontend (sound tests) ----
$(TBIN)/backends/sfront: $(OBJ)/$(TBE)/sfront.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(BE_XEN_LIBS)

ALL_TARGETS += $(TBIN)/backends/sfront
