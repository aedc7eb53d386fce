# shadow-frontends/: the shadow-aware frontends in guests. See shadow-frontends/README.md.
SF := shadow-frontends

# core/: class-blind connection driver, journal, validation, recovery state machine,
# and the journal engine.
SF_CORE_SRCS := $(wildcard $(SF)/core/*.c)
SF_CORE_LIB := $(LIB)/libunderstudy-sfcore.a
# blk/: the blkif class and its library API; the nbdkit plugin on top.
SF_BLK_SRCS := $(filter-out %-plugin.c,$(wildcard $(SF)/blk/*.c))
SF_BLK_LIB := $(LIB)/libunderstudy-sfblk.a
SF_BLK_PLUGIN := $(LIB)/nbdkit-understudy-blk-plugin.so
SF_XEN_LIBS := -lxenstore -lxengnttab -lxenevtchn -lpthread

# Everything here and its tests sees the core and blk headers.
SF_CPPFLAGS := -I$(SF)/core -I$(SF)/blk
$(OBJ)/pic/$(SF)/%.o $(OBJ)/$(SF)/%.o: CPPFLAGS += $(SF_CPPFLAGS)
$(OBJ)/tests/frontends/%.o $(OBJ)/tests/unit/test-sf-%.o: CPPFLAGS += $(SF_CPPFLAGS)

$(SF_CORE_LIB): $(SF_CORE_SRCS:%.c=$(OBJ)/pic/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(SF_BLK_LIB): $(SF_BLK_SRCS:%.c=$(OBJ)/pic/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

# nbdkit resolves nbdkit_* from its own executable when it loads the plugin.
$(SF_BLK_PLUGIN): $(OBJ)/pic/$(SF)/blk/nbdkit-understudy-blk-plugin.o $(SF_BLK_LIB) \
                  $(SF_CORE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -shared $^ -o $@ $(SF_XEN_LIBS)

# Unit tests of the core (tests/unit/test-sf-*.c): pure C, no Xen.
$(TBIN)/unit/test-sf-%: $(OBJ)/tests/unit/test-sf-%.o $(SF_CORE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(SF_XEN_LIBS)

# Test tools (tests/frontends/): the test blkif backend and the instrumented
# driver that runs the frontend library without nbdkit.
SF_TESTBACK_SRCS := $(wildcard tests/frontends/tb_*.c)
$(TBIN)/frontends/testback: $(SF_TESTBACK_SRCS:%.c=$(OBJ)/%.o) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(SF_XEN_LIBS)

$(TBIN)/frontends/blkfe-driver: $(OBJ)/tests/frontends/blkfe-driver.o $(SF_BLK_LIB) \
                                $(SF_CORE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(SF_XEN_LIBS)

# The late-write probe of the fencing test (test-blkfront-hot-standby-fencing.sh).
$(TBIN)/frontends/blkfe-fence: $(OBJ)/tests/frontends/blkfe-fence.o $(SF_BLK_LIB) \
                               $(SF_CORE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(SF_XEN_LIBS)

# Preloaded with the sanitizer runtimes into Debian's nbdkit so that ASan initializes before
# any library constructor; built without sanitizers (see tests/frontends/asan-initfirst.c).
$(TBIN)/frontends/asan-initfirst.so: tests/frontends/asan-initfirst.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror -O1 -fPIC -shared -Wl,-z,initfirst $< -o $@

ALL_TARGETS += $(SF_CORE_LIB) $(SF_BLK_LIB) $(SF_BLK_PLUGIN) $(TBIN)/frontends/asan-initfirst.so
ALL_TARGETS += $(if $(SF_TESTBACK_SRCS),$(TBIN)/frontends/testback)
ALL_TARGETS += $(if $(wildcard tests/frontends/blkfe-driver.c),$(TBIN)/frontends/blkfe-driver)
ALL_TARGETS += $(if $(wildcard tests/frontends/blkfe-fence.c),$(TBIN)/frontends/blkfe-fence)

# net/: the netif class, a daemon with a TAP interface in the guest.
SF_NET_SRCS := $(filter-out %/understudy-netfront.c,$(wildcard $(SF)/net/*.c))
SF_NET_LIB := $(LIB)/libunderstudy-sfnet.a
$(OBJ)/pic/$(SF)/net/%.o $(OBJ)/$(SF)/net/%.o: CPPFLAGS += -I$(SF)/net
$(OBJ)/tests/frontends/net%.o: CPPFLAGS += -I$(SF)/net -Itests/unit # check.h

$(SF_NET_LIB): $(SF_NET_SRCS:%.c=$(OBJ)/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(BIN)/understudy-netfront: $(OBJ)/$(SF)/net/understudy-netfront.o $(SF_NET_LIB) $(SF_CORE_LIB) \
                            $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(SF_XEN_LIBS)

# Test programs of the net class (tests/frontends/net*.c): each a program of its own,
# linked with the class library.
SF_NET_TPROGS := $(patsubst tests/frontends/%.c,$(TBIN)/frontends/%,$(wildcard tests/frontends/net*.c))
$(SF_NET_TPROGS): $(TBIN)/frontends/%: $(OBJ)/tests/frontends/%.o $(SF_NET_LIB) $(SF_CORE_LIB) \
                  $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(SF_XEN_LIBS)

ALL_TARGETS += $(SF_NET_LIB) $(BIN)/understudy-netfront $(SF_NET_TPROGS)

# snd/: the sndif class, a daemon per virtual sound card (understudy-sndfront)
# and the ALSA plugins programs play and capture through (pcm_understudy.c)
# and set its volume through (ctl_understudy.c). The plugins are loaded into
# Debian's aplay, arecord, mpg123, sox, amixer and alsamixer, so they are built
# without sanitizers (as the tests' usclock). Without ALSA's headers none is built.
SF_SND_SRCS := $(filter-out %/understudy-sndfront.c %/pcm_understudy.c %/ctl_understudy.c,\
                 $(wildcard $(SF)/snd/*.c))
SF_SND_LIB := $(LIB)/libunderstudy-sfsnd.a
SF_SND_PLUGIN := $(LIB)/libasound_module_pcm_understudy.so
SF_SND_CTL_PLUGIN := $(LIB)/libasound_module_ctl_understudy.so
$(OBJ)/pic/$(SF)/snd/%.o $(OBJ)/$(SF)/snd/%.o: CPPFLAGS += -I$(SF)/snd
$(OBJ)/tests/frontends/snd%.o: CPPFLAGS += -I$(SF)/snd

$(SF_SND_LIB): $(SF_SND_SRCS:%.c=$(OBJ)/%.o)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(BIN)/understudy-sndfront: $(OBJ)/$(SF)/snd/understudy-sndfront.o $(SF_SND_LIB) $(SF_CORE_LIB) \
                            $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(SF_XEN_LIBS)

# -DPIC: alsa/global.h then exports the versioned entry symbol a dlopen()ed plugin needs.
$(SF_SND_PLUGIN): $(SF)/snd/pcm_understudy.c common/pcm_clock.c $(SF)/snd/sn_proto.h \
                  $(SF)/snd/sn_plugconf.h common/snd_alsa.h common/pcm_clock.h
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS_BASE)) $(CPPFLAGS) -O2 -fPIC -DPIC -shared \
	    $(filter %.c,$^) -o $@ -lasound

$(SF_SND_CTL_PLUGIN): $(SF)/snd/ctl_understudy.c $(SF)/snd/sn_proto.h $(SF)/snd/sn_plugconf.h
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS_BASE)) $(CPPFLAGS) -O2 -fPIC -DPIC -shared $< -o $@ \
	    -lasound

SF_SND_ON := $(wildcard /usr/include/alsa/pcm_ioplug.h)
ALL_TARGETS += $(if $(SF_SND_ON),$(SF_SND_LIB) $(BIN)/understudy-sndfront $(SF_SND_PLUGIN) \
                                 $(SF_SND_CTL_PLUGIN))

# The hostile sndif backend the frontend's tests run as a driver domain's main
# process (tests/frontends/sndhostile.c): Debian's Xen libraries, nothing of the class.
$(TBIN)/frontends/sndhostile: $(OBJ)/tests/frontends/sndhostile.o $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(SF_XEN_LIBS)

ALL_TARGETS += $(if $(SF_SND_ON),$(TBIN)/frontends/sndhostile)

# Unit tests of the class's pieces (tests/unit/test-sn-*.c): no Xen.
$(OBJ)/tests/unit/test-sn-%.o: CPPFLAGS += $(SF_CPPFLAGS) -I$(SF)/snd
$(TBIN)/unit/test-sn-%: $(OBJ)/tests/unit/test-sn-%.o $(SF_SND_LIB) $(SF_CORE_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(SF_XEN_LIBS)
