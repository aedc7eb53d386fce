# xensim: the userspace Xen that tests run on. See xensim/README.md.
#   xensim/daemon/  xensimd: hypervisor (domains, grants, event channels) and xenstored
#   xensim/cli/     the xensim CLI
#   xensim/client/  the control-socket client the CLI and dom0 tools use
#   xensim/lib/     drop-in libxengnttab.so.1 and libxenevtchn.so.1
#   xensim/proto/   framing and wire formats of the sim's own sockets, shared by all of them
# Outputs stay where tests and scripts look: $(BIN)/xensimd, $(BIN)/xensim, $(SIMLIB)/.
XS := xensim

$(OBJ)/$(XS)/%.o $(OBJ)/pic/$(XS)/%.o: CPPFLAGS += -I$(XS)/proto

# libxensim-client: the control socket's client (its spec is client/xsim_ctl.h), for the CLI
# and dom0 tools. Users compile with XSIM_CLIENT_CPPFLAGS and link XSIM_CLIENT_LIB.
XSIM_CLIENT_LIB := $(LIB)/libxensim-client.a
XSIM_CLIENT_CPPFLAGS := -I$(XS)/client -I$(XS)/proto
$(XSIM_CLIENT_LIB): $(OBJ)/$(XS)/client/xsim_ctl.o $(OBJ)/$(XS)/proto/msg.o
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^

$(OBJ)/$(XS)/cli/%.o: CPPFLAGS += $(XSIM_CLIENT_CPPFLAGS)

XENSIMD_SRCS := $(wildcard $(XS)/daemon/*.c) $(XS)/proto/msg.c
# Drop-in libraries with Debian's sonames and symbol versions.
GNTTAB_SRCS := $(wildcard $(XS)/lib/gnttab*.c) $(wildcard $(XS)/lib/client*.c) $(XS)/proto/msg.c
EVTCHN_SRCS := $(wildcard $(XS)/lib/evtchn*.c) $(wildcard $(XS)/lib/client*.c) $(XS)/proto/msg.c

# The daemon runs on the common event loop (common/evloop.h).
$(BIN)/xensimd: $(XENSIMD_SRCS:%.c=$(OBJ)/%.o) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(filter %.o,$^) -o $@ $(COMMON_LIB)

$(BIN)/xensim: $(OBJ)/$(XS)/cli/xensim.o $(XSIM_CLIENT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $< -o $@ $(XSIM_CLIENT_LIB)

$(SIMLIB)/libxengnttab.so.1: $(GNTTAB_SRCS:%.c=$(OBJ)/pic/%.o) $(XS)/lib/libxengnttab.map
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libxengnttab.so.1 \
	    -Wl,--version-script=$(XS)/lib/libxengnttab.map $(filter %.o,$^) -o $@

$(SIMLIB)/libxenevtchn.so.1: $(EVTCHN_SRCS:%.c=$(OBJ)/pic/%.o) $(XS)/lib/libxenevtchn.map
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libxenevtchn.so.1 \
	    -Wl,--version-script=$(XS)/lib/libxenevtchn.map $(filter %.o,$^) -o $@

ALL_TARGETS += $(XSIM_CLIENT_LIB) $(BIN)/xensimd $(BIN)/xensim $(SIMLIB)/libxengnttab.so.1 $(SIMLIB)/libxenevtchn.so.1
