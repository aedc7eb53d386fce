/* publish.c - the status keys shadowd writes for each driver domain under
 * USK_SD_DIR/<name> (xenstore-schema/schema.md): state, domid, recoveries,
 * error, last recovery, the standby's state and domid. */
#define _GNU_SOURCE
#include "publish.h"

#include "dom.h"
#include "log.h"

#include "understudy-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <xenstore.h>

/* The status keys, each written only when its value changed since shadowd
 * last wrote it (NULL: absent): a recovery's first status write is one
 * xenstore round trip, not seven, on the way from detection to restart. */
static void put(struct sd_dom *d, enum sd_pubkey k, const char *dir, const char *key,
                const char *val)
{
    struct sd_pub *c = &d->pub[k];
    if (val ? c->present && !strcmp(c->value, val) : c->known && !c->present)
        return;
    char p[256];
    if (!xsu_path(p, sizeof(p), dir, key))
        return;
    bool ok = val ? xsu_printf(d->sd->xs, XBT_NULL, dir, key, "%s", val) == 0
                  : xs_rm(d->sd->xs, XBT_NULL, p) || errno == ENOENT;
    if (!ok) {
        sd_dlog(d, "xenstore %s %s: %s", val ? "write" : "rm", p, strerror(errno));
        c->known = false; /* try again next time */
        return;
    }
    c->known = true;
    c->present = val != NULL;
    snprintf(c->value, sizeof(c->value), "%s", val ? val : "");
}

void sd_publish(struct sd_dom *d)
{
    if (!d->sd->xs)
        return;
    char dir[160], v[32], sb[32];
    snprintf(dir, sizeof(dir), "%s/%s", USK_SD_DIR, d->conf->name);
    put(d, PUB_STATE, dir, USK_SD_STATE, sd_state_name(d));
    snprintf(v, sizeof(v), "%u", d->srv.domid);
    put(d, PUB_DOMID, dir, USK_SD_DOMID, d->srv.domid ? v : NULL);
    snprintf(v, sizeof(v), "%llu", (unsigned long long)d->n_recoveries);
    put(d, PUB_RECOVERIES, dir, USK_SD_RECOVERIES, v);
    put(d, PUB_ERROR, dir, USK_SD_ERROR, d->state == DS_FAILED ? d->srv.error : NULL);
    if (d->last_recovery[0])
        put(d, PUB_LAST, dir, USK_SD_LAST_RECOVERY, d->last_recovery);
    bool sb_on = d->sb.state != SB_OFF; /* absent without a standby configured */
    snprintf(sb, sizeof(sb), "%u", d->sb.inst.domid);
    put(d, PUB_STANDBY, dir, USK_SD_STANDBY, sb_on ? sd_standby_state_name(d) : NULL);
    put(d, PUB_STANDBY_DOMID, dir, USK_SD_STANDBY_DOMID, sb_on && d->sb.inst.domid ? sb : NULL);
}
