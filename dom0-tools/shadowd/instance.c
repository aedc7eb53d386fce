/* instance.c - a driver-domain instance and its heartbeat (instance.h); its
 * names are in dom.c, with the domain's. */
#define _GNU_SOURCE
#include "instance.h"

#include "sd_text.h"
#include "xs_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sd_inst_init(struct sd_inst *in, struct sd_dom *d, enum sd_role role)
{
    memset(in, 0, sizeof(*in));
    in->dom = d;
    in->role = role;
}

int sd_inst_heartbeat(struct sd_inst *in, struct xs_handle *xs, uint64_t now)
{
    struct sd_heartbeat *hb = &in->hb;
    char *v = xsu_read(xs, XBT_NULL, hb->path, NULL, sizeof(hb->value) - 1);
    uint64_t n;
    if (!v || sd_parse_u64(v, UINT64_MAX, &n) < 0) {
        free(v);
        return -1;
    }
    int changed = strcmp(v, hb->value) != 0;
    if (changed) {
        snprintf(hb->value, sizeof(hb->value), "%s", v);
        hb->interval_ms = hb->seen && now > hb->change_ms ? now - hb->change_ms : 0;
        hb->change_ms = now;
        hb->seen = true;
    }
    free(v);
    return changed;
}
