# make install: every program, plugin, unit and config where Debian puts it
# (debian/ packages this tree; README.md, "Packages").
#   make install DESTDIR=/tmp/root PREFIX=/usr
# PREFIX (default /usr/local) holds the programs and plugins; /etc and the
# systemd unit dir stay where the system reads them. Only the normal build
# (SAN=0) is installed. Nothing installed refers to the build tree: programs
# link our libraries statically and carry no RUNPATH.
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
LIBEXECDIR ?= $(PREFIX)/libexec/understudy
DATADIR ?= $(PREFIX)/share
MULTIARCH ?= $(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || $(CC) -print-multiarch)
ARCHLIBDIR ?= $(PREFIX)/lib/$(MULTIARCH)
# Where Debian's nbdkit and alsa-lib look for plugins (nbdkit --dump-config:
# plugindir; alsa-lib: /usr/lib/<multiarch>/alsa-lib).
NBDKIT_PLUGINDIR ?= $(ARCHLIBDIR)/nbdkit/plugins
ALSA_PLUGINDIR ?= $(ARCHLIBDIR)/alsa-lib
SYSCONFDIR ?= /etc
SYSTEMDUNITDIR ?= $(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system)

INSTALL ?= install

# dom0: shadowd and its privileged half side by side (shadowd starts the
# shadowd-priv beside itself), shadowctl (the CLI and the schema checker).
INST_DOM0 := $(BIN)/shadowd $(BIN)/shadowd-priv $(BIN)/shadowctl
# Driver domain: the agent starts the backends from its own directory (the
# one /proc/self/exe names), so they share one, with a command in sbin.
INST_DRV := $(BIN)/understudy-agent $(BIN)/blkback $(BIN)/netback $(if $(SF_SND_ON),$(BIN)/sndback)
# Guest: the daemons, the nbdkit plugin, the ALSA plugins.
INST_GUEST := $(BIN)/understudy-netfront $(if $(SF_SND_ON),$(BIN)/understudy-sndfront)
INST_ALSA := $(if $(SF_SND_ON),$(SF_SND_PLUGIN) $(SF_SND_CTL_PLUGIN))
INSTALL_FILES := $(INST_DOM0) $(INST_DRV) $(INST_GUEST) $(SF_BLK_PLUGIN) $(INST_ALSA)

# The man pages (man/): a program's page is installed with the program.
MANDIR ?= $(DATADIR)/man
MAN_PAGES := $(filter-out $(if $(SF_SND_ON),,man/understudy-sndfront.8),$(wildcard man/*.[158]))

UNITS := configs/systemd/shadowd.service configs/systemd/understudy-agent.service \
         configs/systemd/understudy-blkfront@.service configs/systemd/understudy-netfront@.service \
         $(if $(SF_SND_ON),configs/systemd/understudy-sndfront@.service)
ALSA_CONF := 50-understudy.conf

.PHONY: install programs
# What make install installs, and nothing else (debian/rules builds this).
programs: $(INSTALL_FILES)

ifeq ($(SAN),1)
install:
	@echo "install: SAN=1 is the test build; install the normal one (make install)"; exit 1
else
install: programs
	$(INSTALL) -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(NBDKIT_PLUGINDIR) \
	    $(DESTDIR)$(SYSCONFDIR)/understudy $(DESTDIR)$(SYSCONFDIR)/init.d \
	    $(DESTDIR)$(SYSTEMDUNITDIR)
	$(INSTALL) -m 755 $(INST_DOM0) $(INST_GUEST) $(DESTDIR)$(SBINDIR)/
	$(INSTALL) -m 755 $(INST_DRV) configs/sysvinit/understudy-agent-supervise \
	    $(DESTDIR)$(LIBEXECDIR)/
	ln -sfr $(DESTDIR)$(LIBEXECDIR)/understudy-agent $(DESTDIR)$(SBINDIR)/understudy-agent
	$(INSTALL) -m 644 $(SF_BLK_PLUGIN) $(DESTDIR)$(NBDKIT_PLUGINDIR)/
	$(INSTALL) -m 644 configs/shadowd/shadowd.conf $(DESTDIR)$(SYSCONFDIR)/understudy/
# The man pages, in the section their suffix names, with the same paths written in.
	for m in $(MAN_PAGES); do \
	    d=$(DESTDIR)$(MANDIR)/man$${m##*.}; $(INSTALL) -d "$$d" && \
	    sed -e 's|/usr/sbin/|$(SBINDIR)/|g' -e 's|/usr/libexec/understudy/|$(LIBEXECDIR)/|g' "$$m" \
	        >"$$d/$${m##*/}" && chmod 644 "$$d/$${m##*/}" || exit 1; \
	done
# The units name /usr/sbin; another SBINDIR or LIBEXECDIR is written in.
	for u in $(UNITS); do \
	    sed -e 's|/usr/sbin/|$(SBINDIR)/|g' -e 's|/usr/libexec/understudy/|$(LIBEXECDIR)/|g' "$$u" \
	        >$(DESTDIR)$(SYSTEMDUNITDIR)/$${u##*/} && chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/$${u##*/} || exit 1; \
	done
	sed -e 's|/usr/sbin/|$(SBINDIR)/|g' -e 's|/usr/libexec/understudy/|$(LIBEXECDIR)/|g' \
	    configs/sysvinit/understudy-agent >$(DESTDIR)$(SYSCONFDIR)/init.d/understudy-agent
	chmod 755 $(DESTDIR)$(SYSCONFDIR)/init.d/understudy-agent
ifneq ($(SF_SND_ON),)
# alsa-lib finds the plugins in its own directory by their names; the
# snippet is read through /etc/alsa/conf.d, as Debian's other ALSA plugins.
	$(INSTALL) -d $(DESTDIR)$(ALSA_PLUGINDIR) $(DESTDIR)$(DATADIR)/alsa/alsa.conf.d \
	    $(DESTDIR)$(SYSCONFDIR)/alsa/conf.d
	$(INSTALL) -m 644 $(INST_ALSA) $(DESTDIR)$(ALSA_PLUGINDIR)/
	$(INSTALL) -m 644 shadow-frontends/snd/asound-understudy.conf \
	    $(DESTDIR)$(DATADIR)/alsa/alsa.conf.d/$(ALSA_CONF)
	ln -sf $(DATADIR)/alsa/alsa.conf.d/$(ALSA_CONF) $(DESTDIR)$(SYSCONFDIR)/alsa/conf.d/$(ALSA_CONF)
endif
endif
