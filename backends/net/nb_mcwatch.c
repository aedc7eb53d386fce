/* nb_mcwatch.c - re-sampling request-multicast-control (see nb_mcwatch.h). */
#define _GNU_SOURCE
#include "nb_mcwatch.h"

#include "pv-keys.h"
#include "xs_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NB_MCWATCH_TOKEN "nb-mcast"

static void sample(struct nb_mcwatch *w)
{
    uint64_t v;
    if (xsu_read_u64_default(w->xs, XBT_NULL, w->path, NULL, 1, 0, &v) < 0) {
        /* A bad value changes nothing: the filter stays as it was. */
        BE_LOG_RL(w->be, "%s: not 0 or 1 (%s); multicast filter stays %s", w->path, strerror(errno),
                  *w->filter ? "on" : "off");
        return;
    }
    if ((bool)v != *w->filter)
        BE_LOG(w->be, "frontend turned the multicast filter %s", v ? "on" : "off");
    *w->filter = v;
}

static void on_event(void *opaque, int fd, uint32_t events)
{
    (void)fd;
    (void)events;
    struct nb_mcwatch *w = opaque;
    char **ev;
    bool changed = false;
    /* Bounded: the connection is non-blocking after the first read. */
    for (unsigned n = 0; n < 64 && (ev = xs_check_watch(w->xs)); n++) {
        changed = true;
        free(ev);
    }
    if (changed)
        sample(w);
}

int nb_mcwatch_start(struct nb_mcwatch *w, struct be_dev *be, bool *filter)
{
    memset(w, 0, sizeof(*w));
    w->be = be;
    w->filter = filter;
    if (!xsu_path(w->path, sizeof(w->path), be_fe_path(be), PVK_NET_REQUEST_MCAST_CONTROL)) {
        be_error(be, ENAMETOOLONG, "frontend path %s too long", be_fe_path(be));
        return -1;
    }
    w->xs = xs_open(0);
    if (!w->xs) {
        be_error(be, errno, "xs_open for the multicast control watch: %s", strerror(errno));
        return -1;
    }
    if (!xs_watch(w->xs, w->path, NB_MCWATCH_TOKEN) ||
        be_loop_add_fd(be_loop_of(be), xs_fileno(w->xs), on_event, w) < 0) {
        be_error(be, errno, "watching %s: %s", w->path, strerror(errno));
        xs_close(w->xs);
        w->xs = NULL;
        return -1;
    }
    return 0;
}

void nb_mcwatch_stop(struct nb_mcwatch *w)
{
    if (!w->xs)
        return;
    be_loop_del_fd(be_loop_of(w->be), xs_fileno(w->xs));
    xs_close(w->xs);
    w->xs = NULL;
}
