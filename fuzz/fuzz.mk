# fuzz/: libFuzzer targets, one per decoder of a peer's bytes (fuzz/README.md).
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="blkif_req ..."]
#                    build them, run each for FUZZ_SECONDS over its seed corpus,
#                    print executions and coverage per target
#   make fuzz-build  build them into $(O)/fuzz/ (make test builds them in build/test
#                    and tests/fuzz/test-fuzz-smoke.sh runs them briefly and replays
#                    fuzz/regress/)
# Each target is fuzz/<name>.c linked with the project's own sources, compiled
# here with clang, libFuzzer, ASan and UBSan (objects in $(O)/fuzz/obj).
FUZZ_CC ?= clang
FUZZ_DIR := $(O)/fuzz
FUZZ_OBJ := $(FUZZ_DIR)/obj
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -std=c11 -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral -g -O1 \
               -fno-omit-frame-pointer -fno-common -MMD -MP $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_CPPFLAGS := -Ifuzz -Ixenstore-schema -Icommon -Ibackends/core -Ibackends/blk -Ibackends/net \
                 -Ibackends/snd -Ishadow-frontends/core -Ishadow-frontends/blk \
                 -Ishadow-frontends/net -Ishadow-frontends/snd -Ixensim/proto -Ixensim/daemon \
                 -Idom0-tools/lib -Idom0-tools/shadowd -Idom0-tools/shadowctl \
                 $(shell pkg-config --cflags libxml-2.0 2>/dev/null)
FUZZ_LDFLAGS := $(FUZZ_SAN) -fsanitize=fuzzer

# name -> the project sources it runs, and its libraries.
FUZZ_NAMES := blkif_req blkif_rsp netif_tx_req netif_rx_req netif_rsp sndif_req sndif_rsp xs_wire \
              xs_values xs_store shadowd_conf xl_config libvirt_xml shadowd_record \
              shadowctl_check hyp_wire
# sndback needs ALSA's headers (libasound2-dev), as in backends/backends.mk.
FUZZ_NAMES := $(if $(wildcard /usr/include/alsa/asoundlib.h),$(FUZZ_NAMES),$(filter-out sndif_req,$(FUZZ_NAMES)))
FUZZ_SRCS_blkif_req := backends/blk/bb_check.c
# The frontends' targets: their rings over fuzz/xenstub.c, their store over fuzz/fake_xs.c.
FUZZ_FE_SRCS := $(wildcard shadow-frontends/core/*.c) common/xs_util.c common/xs_txn.c common/hex.c \
                fuzz/fake_xs.c fuzz/xenstub.c
FUZZ_FE_LIBS := -lxenstore -lxengnttab -lxenevtchn -lpthread
# blkif_rsp.c includes blk_class.c (its static functions).
FUZZ_SRCS_blkif_rsp := $(FUZZ_FE_SRCS) shadow-frontends/blk/blk_ring.c \
                       shadow-frontends/blk/blk_pool.c shadow-frontends/blk/blk_xenbus.c \
                       shadow-frontends/blk/blk_transport.c
FUZZ_LIBS_blkif_rsp := $(FUZZ_FE_LIBS)
FUZZ_SRCS_netif_tx_req := backends/net/nb_txcheck.c backends/net/nb_vnet.c backends/net/nb_spoof.c \
                          backends/net/nb_mcast.c common/net_l4.c common/net_vnet.c \
                          common/inet_csum.c
FUZZ_SRCS_netif_rx_req := $(FUZZ_SRCS_netif_tx_req)
FUZZ_SRCS_netif_rsp := $(FUZZ_FE_SRCS) shadow-frontends/net/nf_conn.c \
                       shadow-frontends/net/nf_offload.c shadow-frontends/net/nf_shadow.c \
                       common/net_l4.c common/net_vnet.c common/inet_csum.c
FUZZ_LIBS_netif_rsp := $(FUZZ_FE_LIBS)
FUZZ_SRCS_sndif_req := backends/snd/sb_dispatch.c backends/snd/sb_open.c backends/snd/sb_query.c \
                       backends/snd/sb_pcm.c backends/snd/sb_fifo.c backends/snd/sb_volume.c \
                       backends/snd/sb_ring.c backends/snd/sb_evt.c common/snd_card.c \
                       common/evloop.c common/xs_util.c
FUZZ_LIBS_sndif_req := -lasound -lm -lxenstore
FUZZ_SRCS_xs_wire := $(wildcard xensim/daemon/xs_*.c) xensim/proto/msg.c \
                     common/evloop.c
FUZZ_SRCS_xs_values := $(FUZZ_FE_SRCS) dom0-tools/lib/sd_text.c \
                       shadow-frontends/net/nf_xenbus.c shadow-frontends/net/nf_shadow.c \
                       backends/net/nb_spoof.c \
                       backends/net/nb_credit.c backends/core/be_inject.c common/snd_card.c
FUZZ_LIBS_xs_values := $(FUZZ_FE_LIBS)
FUZZ_SRCS_xs_store := $(FUZZ_FE_SRCS) shadow-frontends/blk/blk_xenbus.c \
                      shadow-frontends/net/nf_xenbus.c shadow-frontends/snd/sn_xenbus.c \
                      common/snd_card.c
FUZZ_LIBS_xs_store := $(FUZZ_FE_LIBS)
FUZZ_SRCS_shadowd_conf := dom0-tools/shadowd/conf.c dom0-tools/lib/sd_text.c
FUZZ_SRCS_xl_config := dom0-tools/shadowd/xlcfg.c
FUZZ_LIBS_xl_config := -lxenlight -lxlutil -lxentoollog
FUZZ_SRCS_libvirt_xml := dom0-tools/shadowd/lvxml.c
FUZZ_LIBS_libvirt_xml := -lxml2
# shadowd_record.c stands in for log.c (formats, does not print).
FUZZ_SRCS_shadowd_record := dom0-tools/shadowd/record.c dom0-tools/shadowd/store.c \
                            dom0-tools/lib/sd_text.c common/xs_util.c fuzz/fake_xs.c
FUZZ_LIBS_shadowd_record := -lxenstore
FUZZ_SRCS_shadowctl_check := dom0-tools/shadowctl/check.c dom0-tools/lib/sd_text.c common/xs_util.c \
                             fuzz/fake_xs.c
FUZZ_LIBS_shadowctl_check := -lxenstore
FUZZ_SRCS_hyp_wire := xensim/daemon/hyp_server.c xensim/daemon/hyp_gnt.c xensim/daemon/hyp_evtchn.c \
                      xensim/proto/msg.c common/evloop.c
FUZZ_SRCS_sndif_rsp := $(FUZZ_FE_SRCS) shadow-frontends/snd/sn_ring.c
FUZZ_LIBS_sndif_rsp := $(FUZZ_FE_LIBS)

FUZZ_BINS = $(FUZZ_NAMES:%=$(FUZZ_DIR)/%)

$(FUZZ_OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_CPPFLAGS) -c $< -o $@

define fuzz_rule
$(FUZZ_DIR)/$(1): $(FUZZ_OBJ)/fuzz/$(1).o $(patsubst %.c,$(FUZZ_OBJ)/%.o,$(FUZZ_SRCS_$(1)))
	@mkdir -p $$(dir $$@)
	$$(FUZZ_CC) $$(FUZZ_LDFLAGS) $$^ -o $$@ $$(FUZZ_LIBS_$(1))
endef
$(foreach t,$(FUZZ_NAMES),$(eval $(call fuzz_rule,$(t))))

# Does clang's libFuzzer runtime link here (libclang-rt-14-dev)? Asked only where needed.
FUZZ_RT_OK = $(shell printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)\n{\n(void)d;\n(void)n;\nreturn 0;\n}\n' | \
    $(FUZZ_CC) -x c - $(FUZZ_SAN) -fsanitize=fuzzer -o /dev/null >/dev/null 2>&1 && echo yes)

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS)

FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= $(FUZZ_NAMES)
fuzz: $(FUZZ_BINS)
	./fuzz/run-fuzz --build $(FUZZ_DIR) --seconds $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The test tree (make test: SAN=1) builds them for tests/fuzz/test-fuzz-smoke.sh, which skips
# with the reason where clang's fuzzer runtime is missing.
ifeq ($(SAN),1)
ifeq ($(FUZZ_RT_OK),yes)
ALL_TARGETS += $(FUZZ_BINS)
endif
endif

-include $(shell find $(FUZZ_OBJ) -name '*.d' 2>/dev/null)
