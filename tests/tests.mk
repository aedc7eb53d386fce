# Unit tests (T0): one program per file under tests/unit/, linked with the module they test.
UNIT_TPROGS := $(patsubst tests/unit/%.c,$(TBIN)/unit/%,$(wildcard tests/unit/*.c))
ALL_TARGETS += $(UNIT_TPROGS)

# The simulator's tier (tests/xensim): test programs, one file each under t/, linked against
# Debian's Xen libraries (the tests run them on the sim's drop-ins).
XSIM_TPROGS := $(patsubst tests/xensim/t/%.c,$(TBIN)/xensim/%,$(wildcard tests/xensim/t/*.c))
$(OBJ)/tests/xensim/t/%.o: CPPFLAGS += -Ixensim/proto

$(TBIN)/xensim/%: $(OBJ)/tests/xensim/t/%.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -Wl,--as-needed -lxenvchan -lxenstore -lxengnttab -lxenevtchn \
	    -lxentoollog -lpthread
ALL_TARGETS += $(XSIM_TPROGS)

# The sound class's test instruments (tests/snd, see its README): the clocked test PCM,
# an ALSA ioplug plugin, and the frame-counter tools sndgen and sndcheck. The plugin is
# loaded into Debian's aplay, arecord, mpg123 and sox, so it is built without sanitizers
# (their runtime would have to be preloaded into each of them); the tools are ordinary
# test programs. Without ALSA's headers (libasound2-dev) the plugin is not built and
# the sound tests skip.
SND := tests/snd
SND_PLUGIN := $(TBIN)/snd/libasound_module_pcm_usclock.so
SND_PLUGIN_SRCS := $(SND)/usclock.c $(SND)/usclock_conf.c $(SND)/usclock_rec.c $(SND)/framecode.c \
                   common/pcm_clock.c
# -DPIC: alsa/global.h then exports the versioned entry symbol a dlopen()ed plugin needs.
$(SND_PLUGIN): $(SND_PLUGIN_SRCS) $(wildcard $(SND)/*.h) common/pcm_clock.h
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -MMD -MP,$(CFLAGS_BASE)) -Icommon -O2 -fPIC -DPIC -shared $(SND_PLUGIN_SRCS) \
	    -o $@ -lasound

$(TBIN)/snd/sndgen: $(OBJ)/$(SND)/sndgen.o $(OBJ)/$(SND)/framecode.o $(OBJ)/$(SND)/wav.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@

SNDCHECK_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(SND)/sndcheck.c $(SND)/sndcount.c $(SND)/sndin.c \
                   $(SND)/sndref.c $(SND)/sndreport.c $(SND)/framecode.c $(SND)/wav.c)
$(TBIN)/snd/sndcheck: $(SNDCHECK_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -lm

# sndlevel: the audio level over time of a recording (the campaign's sound plot).
$(TBIN)/snd/sndlevel: $(patsubst %.c,$(OBJ)/%.o,$(SND)/sndlevel.c $(SND)/sndin.c $(SND)/framecode.c $(SND)/wav.c)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -lm

ALL_TARGETS += $(TBIN)/snd/sndgen $(TBIN)/snd/sndcheck $(TBIN)/snd/sndlevel
# sndplay: an ALSA client making the calls the players do not (pause, writen, poll).
$(TBIN)/snd/sndplay: $(OBJ)/$(SND)/sndplay.o $(OBJ)/$(SND)/framecode.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -lasound

ALL_TARGETS += $(if $(wildcard /usr/include/alsa/pcm_ioplug.h),$(SND_PLUGIN) $(TBIN)/snd/sndplay)
