/* evloop.c - epoll loop with fd watches and one-shot monotonic timers.
 *
 * Watches and timers are lists. Deleting during a round only marks an entry
 * dead (epoll may still hand us its pointer, the timer walk may stand on it);
 * the round's end frees the dead. Outside a round, deletion frees at once.
 * Timers are kept sorted by due time: insertion and deletion are O(n), which
 * is fine for the handful a daemon holds; the next deadline is the head.
 */
#define _GNU_SOURCE
#include "evloop.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct ev_watch {
    struct ev_watch *next;
    int fd;
    bool dead;
    evloop_fd_cb *cb;
    void *opaque;
};

struct ev_timer {
    struct ev_timer *next; /* sorted by due_ms, ties by id */
    uint64_t id, due_ms;
    bool dead;
    evloop_timer_cb *cb;
    void *opaque;
};

struct evloop {
    int epfd;
    bool stop;
    bool in_round; /* dispatching: deletions only mark */
    uint64_t last_timer_id;
    struct ev_watch *watches;
    struct ev_timer *timers;
};

uint64_t evloop_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct evloop *evloop_create(void)
{
    struct evloop *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0) {
        int e = errno;
        free(l);
        errno = e;
        return NULL;
    }
    return l;
}

/* Free every dead watch and timer. */
static void reap(struct evloop *l)
{
    for (struct ev_watch **p = &l->watches; *p;) {
        struct ev_watch *w = *p;
        if (w->dead) {
            *p = w->next;
            free(w);
        } else {
            p = &w->next;
        }
    }
    for (struct ev_timer **p = &l->timers; *p;) {
        struct ev_timer *t = *p;
        if (t->dead) {
            *p = t->next;
            free(t);
        } else {
            p = &t->next;
        }
    }
}

void evloop_delete(struct evloop *l)
{
    if (!l)
        return;
    for (struct ev_watch *w = l->watches; w; w = w->next)
        w->dead = true;
    for (struct ev_timer *t = l->timers; t; t = t->next)
        t->dead = true;
    reap(l);
    close(l->epfd);
    free(l);
}

static struct ev_watch *find_watch(struct evloop *l, int fd)
{
    for (struct ev_watch *w = l->watches; w; w = w->next)
        if (!w->dead && w->fd == fd)
            return w;
    return NULL;
}

int evloop_fd_create(struct evloop *l, int fd, uint32_t events, evloop_fd_cb *cb, void *opaque)
{
    struct ev_watch *w = calloc(1, sizeof(*w));
    if (!w)
        return -1;
    w->fd = fd;
    w->cb = cb;
    w->opaque = opaque;
    struct epoll_event ev = {.events = events, .data.ptr = w};
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        int e = errno;
        free(w);
        errno = e;
        return -1;
    }
    w->next = l->watches;
    l->watches = w;
    return 0;
}

int evloop_fd_modify(struct evloop *l, int fd, uint32_t events)
{
    struct ev_watch *w = find_watch(l, fd);
    if (!w) {
        errno = ENOENT;
        return -1;
    }
    struct epoll_event ev = {.events = events, .data.ptr = w};
    return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev);
}

void evloop_fd_delete(struct evloop *l, int fd)
{
    if (!l)
        return;
    struct ev_watch *w = find_watch(l, fd);
    if (!w)
        return;
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
    w->dead = true;
    if (!l->in_round)
        reap(l);
}

uint64_t evloop_timer_create(struct evloop *l, uint64_t delay_ms, evloop_timer_cb *cb, void *opaque)
{
    struct ev_timer *t = calloc(1, sizeof(*t));
    if (!t)
        return 0;
    t->id = ++l->last_timer_id;
    uint64_t now = evloop_now_ms();
    t->due_ms = delay_ms > UINT64_MAX - now ? UINT64_MAX : now + delay_ms;
    t->cb = cb;
    t->opaque = opaque;
    /* After every timer due no later: ties keep creation order. */
    struct ev_timer **p = &l->timers;
    while (*p && (*p)->due_ms <= t->due_ms)
        p = &(*p)->next;
    t->next = *p;
    *p = t;
    return t->id;
}

void evloop_timer_delete(struct evloop *l, uint64_t id)
{
    if (!l || !id)
        return;
    for (struct ev_timer *t = l->timers; t; t = t->next) {
        if (t->id == id) {
            t->dead = true;
            break;
        }
    }
    if (!l->in_round)
        reap(l);
}

void evloop_stop(struct evloop *l)
{
    l->stop = true;
}

/* Milliseconds until the earliest live timer, for epoll_wait: -1 for none. */
static int next_timeout(struct evloop *l)
{
    const struct ev_timer *t = l->timers;
    while (t && t->dead)
        t = t->next;
    if (!t)
        return -1;
    uint64_t now = evloop_now_ms();
    if (t->due_ms <= now)
        return 0;
    return t->due_ms - now > INT_MAX ? INT_MAX : (int)(t->due_ms - now);
}

/* The timers due now that existed when the phase began; ones their callbacks
 * create wait for the next round. Callbacks only mark deletions, so the walk
 * may stand on any entry; new entries land after every timer due no later. */
static void run_timers(struct evloop *l)
{
    uint64_t now = evloop_now_ms(), last = l->last_timer_id;
    for (struct ev_timer *t = l->timers; t && t->due_ms <= now && !l->stop; t = t->next) {
        if (t->dead || t->id > last)
            continue;
        t->dead = true;
        t->cb(t->opaque);
    }
}

int evloop_run(struct evloop *l)
{
    struct epoll_event evs[64];
    l->stop = false;
    while (!l->stop) {
        int n = epoll_wait(l->epfd, evs, 64, next_timeout(l));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        l->in_round = true;
        for (int i = 0; i < n && !l->stop; i++) {
            struct ev_watch *w = evs[i].data.ptr;
            if (!w->dead)
                w->cb(w->opaque, w->fd, evs[i].events);
        }
        run_timers(l);
        l->in_round = false;
        reap(l);
    }
    return 0;
}
