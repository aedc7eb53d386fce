/* be_loop.c - epoll loop with fd watches and monotonic one-shot timers.
 * Timers are a short unsorted list (a backend has a handful): O(n) per round.
 */
#define _GNU_SOURCE
#include "be_loop.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

struct be_watch {
    struct be_watch *next;
    int fd;
    bool dead;
    be_fd_cb *cb;
    void *opaque;
};

struct be_timer {
    struct be_timer *next;
    uint64_t id, due;
    bool dead;
    be_timer_cb *cb;
    void *opaque;
};

struct be_loop {
    int epfd;
    bool stop;
    uint64_t next_id;
    struct be_watch *watches;
    struct be_timer *timers;
};

uint64_t be_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct be_loop *be_loop_new(void)
{
    struct be_loop *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0) {
        free(l);
        return NULL;
    }
    return l;
}

static void reap(struct be_loop *l)
{
    for (struct be_watch **p = &l->watches; *p;) {
        struct be_watch *w = *p;
        if (w->dead) {
            *p = w->next;
            free(w);
        } else {
            p = &w->next;
        }
    }
    for (struct be_timer **p = &l->timers; *p;) {
        struct be_timer *t = *p;
        if (t->dead) {
            *p = t->next;
            free(t);
        } else {
            p = &t->next;
        }
    }
}

void be_loop_free(struct be_loop *l)
{
    if (!l)
        return;
    for (struct be_watch *w = l->watches; w; w = w->next)
        w->dead = true;
    for (struct be_timer *t = l->timers; t; t = t->next)
        t->dead = true;
    reap(l);
    close(l->epfd);
    free(l);
}

int be_loop_add_fd(struct be_loop *l, int fd, be_fd_cb *cb, void *opaque)
{
    struct be_watch *w = calloc(1, sizeof(*w));
    if (!w)
        return -1;
    w->fd = fd;
    w->cb = cb;
    w->opaque = opaque;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = w};
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

void be_loop_del_fd(struct be_loop *l, int fd)
{
    if (!l)
        return;
    for (struct be_watch *w = l->watches; w; w = w->next) {
        if (!w->dead && w->fd == fd) {
            epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
            w->dead = true;
        }
    }
}

uint64_t be_loop_add_timer(struct be_loop *l, uint64_t delay_ms, be_timer_cb *cb, void *opaque)
{
    struct be_timer *t = calloc(1, sizeof(*t));
    if (!t)
        return 0;
    t->id = ++l->next_id;
    t->due = be_now_ms() + delay_ms;
    t->cb = cb;
    t->opaque = opaque;
    t->next = l->timers;
    l->timers = t;
    return t->id;
}

void be_loop_del_timer(struct be_loop *l, uint64_t id)
{
    if (!l || !id)
        return;
    for (struct be_timer *t = l->timers; t; t = t->next)
        if (t->id == id)
            t->dead = true;
}

/* Milliseconds until the earliest live timer, or -1 for none. */
static int next_timeout(struct be_loop *l)
{
    uint64_t now = be_now_ms(), best = UINT64_MAX;
    for (struct be_timer *t = l->timers; t; t = t->next)
        if (!t->dead && t->due < best)
            best = t->due;
    if (best == UINT64_MAX)
        return -1;
    if (best <= now)
        return 0;
    return best - now > 60000 ? 60000 : (int)(best - now);
}

static void run_timers(struct be_loop *l)
{
    uint64_t now = be_now_ms();
    for (struct be_timer *t = l->timers; t && !l->stop; t = t->next) {
        if (t->dead || t->due > now)
            continue;
        t->dead = true;
        t->cb(t->opaque);
    }
}

int be_loop_run(struct be_loop *l)
{
    l->stop = false;
    while (!l->stop) {
        struct epoll_event evs[16];
        int n = epoll_wait(l->epfd, evs, 16, next_timeout(l));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        for (int i = 0; i < n && !l->stop; i++) {
            struct be_watch *w = evs[i].data.ptr;
            if (!w->dead)
                w->cb(w->opaque, w->fd, evs[i].events);
        }
        run_timers(l);
        reap(l);
    }
    return 0;
}

void be_loop_stop(struct be_loop *l)
{
    l->stop = true;
}
