/* xs_values - the strict parsers of values a peer writes into xenstore (and
 * the text shadowd keeps of them), each given the input as its value:
 *   shadowd, shadowctl (dom0-tools/lib/sd_text.c): numbers, durations, the
 *     percent-encoding of state files, FE/shadow/report,
 *     FE/shadow/last-recovery, the inject key, key patterns, names;
 *   every program (common/xs_util.c): xsu_read_u64 and xsu_read_state, the
 *     checked number reads the frontends, backends and understudy-agent (its
 *     domid) make, over fuzz/fake_xs.c;
 *   the shadow netfront: nf_parse_mac (its "mac"), nf_shadow_parse_mcast
 *     (the guest's multicast list as /proc/net/dev_mcast gives it);
 *   netback: nb_spoof_parse_ips ("ip"), nb_credit_parse ("rate");
 *   the backends' core: be_fault_parse (the inject key);
 *   the sound card (common/snd_card.c): sndc_format_parse.
 * Input: a selector byte, then the value. */
#define _GNU_SOURCE
#include "be_inject.h"
#include "fake_xs.h"
#include "fuzz.h"
#include "nb_credit.h"
#include "nb_spoof.h"
#include "nf_shadow.h"
#include "nf_xenbus.h"
#include "sd_text.h"
#include "snd_card.h"
#include "xs_util.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0];
    size_t n = size - 1;
    char *v = malloc(n + 1); /* exactly the value: ASan sees any read past it */
    memcpy(v, data + 1, n);
    v[n] = '\0';
    const char *why = "";
    uint64_t u;

    switch (sel % 16) {
    case 0:
        if (sd_parse_u64(v, UINT64_MAX >> (sel >> 4), &u) == 0)
            FZ_CHECK(u <= UINT64_MAX >> (sel >> 4));
        break;
    case 1:
        if (sd_parse_duration(v, &u) == 0) {
            char buf[64];
            uint64_t back;
            sd_format_duration(buf, sizeof(buf), u);
            FZ_CHECK(sd_parse_duration(buf, &back) == 0 && back == u);
        }
        break;
    case 2: {
        char enc[1024];
        if (n < 300 && sd_pct_encode(enc, sizeof(enc), v) == 0) {
            FZ_CHECK(!strpbrk(enc, " \t\n"));
            FZ_CHECK(sd_pct_decode(enc) == 0 && !strcmp(enc, v));
        }
        (void)sd_pct_decode(v);
        break;
    }
    case 3: {
        struct sd_report r;
        if (sd_parse_report(v, &r, &why) == 0) {
            FZ_CHECK(strlen(r.detail) <= SD_REPORT_MAX);
            (void)sd_report_kind_name(r.kind);
            (void)sd_report_is_evidence(r.kind);
        }
        break;
    }
    case 4: {
        uint64_t out[4];
        (void)sd_parse_fe_last_recovery(v, out, &why);
        break;
    }
    case 5: {
        char fault[32];
        uint64_t seq, count;
        bool has;
        if (sd_parse_inject(v, &seq, fault, sizeof(fault), &count, &has, &why) == 0)
            FZ_CHECK(strlen(fault) < sizeof(fault) && sd_inject_fault_known(fault));
        break;
    }
    case 6: {
        char *key = strchr(v, '\n');
        if (key)
            *key++ = '\0';
        (void)sd_key_match(v, key ? key : v);
        (void)sd_valid_name(v);
        break;
    }
    case 7:
    case 8: {
        fxs_reset();
        fxs_set("/d/k", data + 1, n);
        if (sel % 16 == 7) {
            if (xsu_read_u64(fxs_handle(), XBT_NULL, "/d", "k", sel >> 4 ? 0x7fef : UINT64_MAX,
                             &u) == 0)
                FZ_CHECK(!(sel >> 4) || u <= 0x7fef);
            (void)xsu_read_u64_default(fxs_handle(), XBT_NULL, "/d", "k", 1, 1, &u);
        } else {
            fxs_set("/d/state", data + 1, n);
            int st = xsu_read_state(fxs_handle(), "/d");
            FZ_CHECK(st >= -1 && st <= 7);
            (void)xsu_state_name(st);
        }
        char *r = xsu_read(fxs_handle(), XBT_NULL, "/d", "k", 64);
        FZ_CHECK(!r || strlen(r) <= 64);
        free(r);
        fxs_reset();
        break;
    }
    case 9: {
        uint8_t mac[6];
        (void)nf_parse_mac(v, mac);
        break;
    }
    case 10: {
        struct nf_shadow s;
        memset(&s, 0, sizeof(s));
        if (nf_shadow_parse_mcast(v, "eth0", &s) == 0)
            FZ_CHECK(s.nmc <= NF_MCAST_MAX);
        break;
    }
    case 11: {
        struct nb_spoof s;
        memset(&s, 0, sizeof(s));
        if (nb_spoof_parse_ips(v, &s, &why) == 0)
            FZ_CHECK(s.nip <= NB_SPOOF_MAX_IPS);
        break;
    }
    case 12: {
        uint64_t bytes, usec;
        (void)nb_credit_parse(v, &bytes, &usec);
        break;
    }
    case 13: {
        struct be_fault f;
        if (be_fault_parse(v, &f) == 0)
            (void)be_fault_name(f.kind);
        break;
    }
    case 14: {
        int fmt = sndc_format_parse(v);
        if (fmt >= 0)
            FZ_CHECK((unsigned)fmt < SNDC_NR_FORMATS && sndc_format_name((unsigned)fmt));
        break;
    }
    default: {
        struct sd_report r;
        (void)sd_parse_report(v, &r, &why);
        (void)sd_parse_u64(v, 1000, &u);
        break;
    }
    }
    free(v);
    return 0;
}
