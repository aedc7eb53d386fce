# dom0-tools/: shadowd (the dom0 watchdog service) and shadowctl (its CLI).
# See dom0-tools/README.md.
#   dom0-tools/lib/       text helpers and a string buffer, shared by both
#   dom0-tools/shadowd/   the daemon, in two programs: shadowd (xenstore, the sockets; no
#                         toolstack library) and shadowd-priv (the domain drivers drv_xensim.c,
#                         drv_libxl.c, drv_libvirt.c and what they use; privd.c is its main)
#   dom0-tools/shadowctl/ the CLI and the xenstore schema checker
D0 := dom0-tools
D0_CPPFLAGS := -I$(D0)/lib -I$(D0)/shadowd -I$(D0)/shadowctl $(XSIM_CLIENT_CPPFLAGS)
D0_LIB_SRCS := $(wildcard $(D0)/lib/*.c)
# shadowd-priv's own files; conf.c, log.c and privmsg.c are in both programs.
SHADOWD_PRIV_ONLY := $(addprefix $(D0)/shadowd/,drv_xensim.c drv_libxl.c xlcfg.c drv_libvirt.c \
                       lvevent.c lvxml.c privd.c privcheck.c lxcreate.c)
SHADOWD_SRCS := $(filter-out $(SHADOWD_PRIV_ONLY),$(wildcard $(D0)/shadowd/*.c)) $(D0_LIB_SRCS)
SHADOWD_PRIV_SRCS := $(SHADOWD_PRIV_ONLY) $(addprefix $(D0)/shadowd/,conf.c log.c privmsg.c) \
                     $(D0_LIB_SRCS)
SHADOWCTL_SRCS := $(wildcard $(D0)/shadowctl/*.c) $(D0_LIB_SRCS)

# The libvirt driver: libvirt, and libxml2 to read the operator's domain XML.
D0_LIBVIRT_CFLAGS := $(shell pkg-config --cflags libvirt libxml-2.0)
D0_LIBVIRT_LIBS := $(shell pkg-config --libs libvirt libxml-2.0)

$(OBJ)/$(D0)/%.o: CPPFLAGS += $(D0_CPPFLAGS)
$(OBJ)/$(D0)/shadowd/drv_libvirt.o $(OBJ)/$(D0)/shadowd/lvevent.o $(OBJ)/$(D0)/shadowd/lvxml.o: \
    CPPFLAGS += $(D0_LIBVIRT_CFLAGS)
$(OBJ)/tests/dom0/%.o: CPPFLAGS += $(D0_CPPFLAGS)

# shadowd links no toolstack library: only libxenstore (tests/dom0/test-shadowd-privsep.sh
# checks its maps).
$(BIN)/shadowd: $(SHADOWD_SRCS:%.c=$(OBJ)/%.o) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(filter %.o,$^) -o $@ $(COMMON_LIB) -lxenstore

# The xensim driver speaks the simulator's control socket through libxensim-client.
$(BIN)/shadowd-priv: $(SHADOWD_PRIV_SRCS:%.c=$(OBJ)/%.o) $(XSIM_CLIENT_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(filter %.o,$^) -o $@ $(XSIM_CLIENT_LIB) $(COMMON_LIB) -lxenlight -lxlutil \
	    -lxentoollog $(D0_LIBVIRT_LIBS)

$(BIN)/shadowctl: $(SHADOWCTL_SRCS:%.c=$(OBJ)/%.o) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(filter %.o,$^) -o $@ $(COMMON_LIB) -lxenstore

# ---- tests/dom0: a tiny frontend/backend pair, privpoke (bad requests to shadowd-priv),
# notifyrecv (a stand-in for systemd's notify socket), unit tests ----
$(TBIN)/dom0/%: $(OBJ)/tests/dom0/%.o $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(filter %.o,$^) -o $@ $(COMMON_LIB) -lxenstore

# Unit tests (T0): run-tests runs every program in $(TBIN)/unit.
D0_UNIT_DEPS := $(D0_LIB_SRCS:%.c=$(OBJ)/%.o) $(OBJ)/$(D0)/shadowd/conf.o
D0_UNITS := $(patsubst tests/dom0/unit/%.c,%,$(wildcard tests/dom0/unit/*.c))
$(TBIN)/unit/dom0-%: $(OBJ)/tests/dom0/unit/%.o $(D0_UNIT_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@

# shadowd-priv's rules and the message checks.
$(TBIN)/unit/dom0-privcheck_test: $(OBJ)/$(D0)/shadowd/privcheck.o $(OBJ)/$(D0)/shadowd/privmsg.o

# The domain-XML unit test links the XML reader and libxml2.
$(TBIN)/unit/dom0-lvxml_test: $(OBJ)/tests/dom0/unit/lvxml_test.o $(OBJ)/$(D0)/shadowd/lvxml.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(D0_LIBVIRT_LIBS)

ALL_TARGETS += $(BIN)/shadowd $(BIN)/shadowd-priv $(BIN)/shadowctl $(TBIN)/dom0/tfe $(TBIN)/dom0/tbe $(TBIN)/dom0/xsdev $(TBIN)/dom0/xsflood \
               $(TBIN)/dom0/privpoke $(TBIN)/dom0/notifyrecv \
               $(patsubst %,$(TBIN)/unit/dom0-%,$(D0_UNITS))
