/* nf_probe.c - the liveness probe's schedule and address (nf_probe.h). */
#include "nf_probe.h"

#include <string.h>

void nf_probe_start(struct nf_probe *p, uint64_t now)
{
    p->quiet_since = now;
}

bool nf_probe_due(struct nf_probe *p, bool busy, uint64_t now)
{
    if (busy) {
        p->quiet_since = now;
        return false;
    }
    return p->idle_ms && now >= p->quiet_since && now - p->quiet_since >= p->idle_ms;
}

void nf_probe_sent(struct nf_probe *p, uint64_t now)
{
    p->sent++;
    p->quiet_since = now;
}

uint64_t nf_probe_wait(const struct nf_probe *p, uint64_t now)
{
    if (!p->idle_ms)
        return UINT64_MAX;
    uint64_t due = p->quiet_since + p->idle_ms;
    return due > now ? due - now : 0;
}

void nf_probe_addr(const struct nf_shadow *a, const struct nf_shadow *b, uint8_t out[6])
{
    /* 03:... : the group bit and the locally administered bit (IEEE 802),
     * an address no protocol assigns; the last two octets count. */
    static const uint8_t base[6] = {0x03, 0x75, 0x6e, 0x64, 0x00, 0x00};
    memcpy(out, base, 6);
    for (unsigned k = 0; k <= 2 * NF_MCAST_MAX; k++) {
        out[4] = (uint8_t)(k >> 8);
        out[5] = (uint8_t)k;
        if (!nf_shadow_has(a, out) && !nf_shadow_has(b, out))
            return;
    }
    /* Not reached: the two lists hold at most 2 * NF_MCAST_MAX addresses. */
}
