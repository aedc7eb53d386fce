/* xspool.c - see xspool.h. The threads live for one sd_xspool_run: a
 * recovery starts a handful, which costs microseconds, and nothing stays
 * behind between recoveries. The work is handed out one index at a time
 * from a shared counter, so a slow item (a transaction that conflicts and
 * is retried) holds up only its own connection. */
#include "xspool.h"

#include "dom.h"
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

void sd_xspool_open(struct sd *sd)
{
    sd->nxsp = 0;
    for (unsigned i = 0; i < SD_XSPOOL_MAX; i++) {
        struct xs_handle *h = xs_open(0);
        if (!h) {
            sd_log("xs_open: an extra connection to xenstored: %s; rewiring with %u",
                   strerror(errno), sd->nxsp + 1);
            break;
        }
        sd->xsp[sd->nxsp++] = h;
    }
}

void sd_xspool_close(struct sd *sd)
{
    for (unsigned i = 0; i < sd->nxsp; i++)
        xs_close(sd->xsp[i]);
    sd->nxsp = 0;
}

struct job {
    atomic_uint next;
    unsigned n;
    sd_xspool_fn *fn;
    void *arg;
};

struct worker {
    struct job *job;
    struct xs_handle *xs;
    pthread_t tid;
};

static void work(struct job *j, struct xs_handle *xs)
{
    for (unsigned i; (i = atomic_fetch_add(&j->next, 1)) < j->n;)
        j->fn(xs, i, j->arg);
}

static void *worker_main(void *p)
{
    struct worker *w = p;
    work(w->job, w->xs);
    return NULL;
}

void sd_xspool_run(struct sd *sd, unsigned n, sd_xspool_fn *fn, void *arg)
{
    struct job j = {.n = n, .fn = fn, .arg = arg};
    atomic_init(&j.next, 0);
    struct worker w[SD_XSPOOL_MAX];
    unsigned started = 0;
    /* As many helpers as there is work for beside the main connection's. */
    for (unsigned k = 0; k < sd->nxsp && k + 1 < n; k++) {
        w[started] = (struct worker){.job = &j, .xs = sd->xsp[k]};
        if (pthread_create(&w[started].tid, NULL, worker_main, &w[started]) != 0)
            break; /* the others, and the main connection, take its share */
        started++;
    }
    work(&j, sd->xs);
    for (unsigned k = 0; k < started; k++)
        pthread_join(w[k].tid, NULL);
}
