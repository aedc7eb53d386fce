# Understudy top-level build. See README.md.
#   make deps      install every Debian package the build and tests need
#   make           build into build/ (programs in build/bin, xensim libs in build/sim/lib)
#   make test      ASan+UBSan build into build/test, run every test tier, then make systest QUICK=1
#   make systest   the full-system tier: real Xen 4.17 in QEMU (tests/system)
#   make bench     benchmarks; results in build/bench/results.jsonl
#   make campaign  the application table on xensim (tests/campaign); LONG=1 for hours
#   make fuzz      libFuzzer targets, FUZZ_SECONDS each (default 60); see fuzz/README.md
#   make demo      the simulator demo
#   make install   install the programs, units and configs (DESTDIR=, PREFIX=/usr; install.mk)
#   make deb       the Debian packages (debian/) into build/deb, checked with lintian
#   make format    clang-format every C file in place; make format-check fails on a diff

O ?= build
SAN ?= 0

CC ?= gcc
CFLAGS_BASE := -std=c11 -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral \
               -g -fno-common -D_FORTIFY_SOURCE=2 -MMD -MP
ifeq ($(SAN),1)
CFLAGS_OPT := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS_SAN := -fsanitize=address,undefined
else
CFLAGS_OPT := -O2
LDFLAGS_SAN :=
endif
CFLAGS += $(CFLAGS_BASE) $(CFLAGS_OPT)
CPPFLAGS += -Ixenstore-schema -Icommon
LDFLAGS += $(LDFLAGS_SAN)

BIN := $(O)/bin
LIB := $(O)/lib
SIMLIB := $(O)/sim/lib
OBJ := $(O)/obj
TBIN := $(O)/tests

.PHONY: all deps test bench demo format format-check clean systest campaign deb
all:

# common/ first: every other fragment may link $(COMMON_LIB).
include common/common.mk
include xensim/xensim.mk
include tests/tests.mk
include bench/bench.mk
# libFuzzer targets for every decoder of a peer's bytes: make fuzz (fuzz/README.md).
include fuzz/fuzz.mk
# Each part builds from its own fragment.
-include backends/backends.mk shadow-frontends/shadow-frontends.mk driverdom/driverdom.mk \
         dom0-tools/dom0-tools.mk
# The full-system tier (real Xen in QEMU) defines `systest`.
-include tests/system/system.mk
# make install (after the fragments: it installs what they build).
include install.mk

all: $(ALL_TARGETS)

# One list of Debian packages, in one place.
deps:
	./scripts/install-deps

# Every tier this machine can run: T0/T1 under ASan+UBSan, then the real-Xen
# tier's quick mode (one boot, one fault per class; it skips with a reason
# where QEMU, root or memory is missing). SYSTEST=0 leaves it out.
SYSTEST ?= 1
test:
	$(MAKE) O=$(O)/test SAN=1 all
	./tests/run-tests --build $(O)/test
ifneq ($(SYSTEST),0)
	$(MAKE) O=$(O) systest QUICK=1
endif

bench: all
	./bench/run-bench --build $(O)

# The application table on xensim (tests/campaign/README.md); LONG=1: hours.
campaign: all
	./tests/campaign/run-campaign --build $(O) $(if $(LONG),--long)

demo: all
	./scripts/demo --build $(O)

# Debian packages from debian/, built from a copy of the tree under $(O)/deb-build;
# the .debs land in $(O)/deb and lintian checks them (scripts/make-deb).
deb:
	./scripts/make-deb --out $(O)/deb --scratch $(O)/deb-build

ifeq ($(wildcard tests/system/system.mk),)
systest:
	@echo "systest: not built yet (see the open issues)"; exit 1
endif

format:
	clang-format -i $(shell git ls-files '*.c' '*.h')
format-check:
	@clang-format --dry-run --Werror $(shell git ls-files '*.c' '*.h')

clean:
	rm -rf $(O)

$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -c $< -o $@

# Position-independent objects for shared libraries.
$(OBJ)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

# Keep objects between builds (pattern-rule intermediates would be deleted).
.SECONDARY:

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)
