# xensim: the userspace Xen that tests run on. See tests/xensim/README.md.
XS := tests/xensim

# The daemon: hypervisor (domains, grants, event channels) and xenstored in one process.
XENSIMD_SRCS := $(XS)/xensimd.c $(XS)/loop.c $(XS)/msg.c $(XS)/domain.c $(XS)/ctl_server.c \
                $(wildcard $(XS)/xs_*.c) $(wildcard $(XS)/hyp_*.c)
# The CLI and the control-socket client it shares with dom0 tools.
XENSIM_SRCS := $(XS)/xensim.c $(XS)/ctl_client.c $(XS)/msg.c
# Drop-in libraries with Debian's sonames and symbol versions.
GNTTAB_SRCS := $(wildcard $(XS)/lib/gnttab*.c) $(wildcard $(XS)/lib/client*.c) $(XS)/msg.c
EVTCHN_SRCS := $(wildcard $(XS)/lib/evtchn*.c) $(wildcard $(XS)/lib/client*.c) $(XS)/msg.c
# Test programs: one file each, linked against Debian's Xen libraries.
XSIM_TPROGS := $(patsubst $(XS)/t/%.c,$(TBIN)/xensim/%,$(wildcard $(XS)/t/*.c))

$(BIN)/xensimd: $(XENSIMD_SRCS:%.c=$(OBJ)/%.o)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@

$(BIN)/xensim: $(XENSIM_SRCS:%.c=$(OBJ)/%.o)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@

$(SIMLIB)/libxengnttab.so.1: $(GNTTAB_SRCS:%.c=$(OBJ)/pic/%.o) $(XS)/lib/libxengnttab.map
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libxengnttab.so.1 \
	    -Wl,--version-script=$(XS)/lib/libxengnttab.map $(filter %.o,$^) -o $@

$(SIMLIB)/libxenevtchn.so.1: $(EVTCHN_SRCS:%.c=$(OBJ)/pic/%.o) $(XS)/lib/libxenevtchn.map
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libxenevtchn.so.1 \
	    -Wl,--version-script=$(XS)/lib/libxenevtchn.map $(filter %.o,$^) -o $@

$(TBIN)/xensim/%: $(OBJ)/$(XS)/t/%.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -Wl,--as-needed -lxenvchan -lxenstore -lxengnttab -lxenevtchn \
	    -lxentoollog -lpthread

ALL_TARGETS += $(BIN)/xensimd $(BIN)/xensim $(SIMLIB)/libxengnttab.so.1 \
               $(SIMLIB)/libxenevtchn.so.1 $(XSIM_TPROGS)
