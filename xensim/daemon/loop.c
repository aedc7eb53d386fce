/* loop.c - epoll event loop with one-shot monotonic timers. */
#define _GNU_SOURCE
#include "loop.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct reg {
    int fd;
    bool dead;
    loop_fd_cb *cb;
    void *opaque;
    struct reg *next; /* all registrations, live and dead */
};

struct timer {
    uint64_t id;
    uint64_t due_ms;
    loop_timer_cb *cb;
    void *opaque;
    struct timer *next; /* sorted by due_ms */
};

struct loop {
    int epfd;
    bool stop;
    struct reg *regs;
    struct timer *timers;
    uint64_t next_timer_id;
};

uint64_t loop_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

struct loop *loop_new(void)
{
    struct loop *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0) {
        free(l);
        return NULL;
    }
    return l;
}

void loop_free(struct loop *l)
{
    if (!l)
        return;
    while (l->regs) {
        struct reg *r = l->regs;
        l->regs = r->next;
        free(r);
    }
    while (l->timers) {
        struct timer *t = l->timers;
        l->timers = t->next;
        free(t);
    }
    close(l->epfd);
    free(l);
}

static struct reg *find_reg(struct loop *l, int fd)
{
    for (struct reg *r = l->regs; r; r = r->next)
        if (!r->dead && r->fd == fd)
            return r;
    return NULL;
}

int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_cb *cb, void *opaque)
{
    struct reg *r = calloc(1, sizeof(*r));
    if (!r)
        return -1;
    r->fd = fd;
    r->cb = cb;
    r->opaque = opaque;
    struct epoll_event ev = {.events = events, .data.ptr = r};
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        int e = errno;
        free(r);
        errno = e;
        return -1;
    }
    r->next = l->regs;
    l->regs = r;
    return 0;
}

int loop_mod_fd(struct loop *l, int fd, uint32_t events)
{
    struct reg *r = find_reg(l, fd);
    if (!r) {
        errno = ENOENT;
        return -1;
    }
    struct epoll_event ev = {.events = events, .data.ptr = r};
    return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev);
}

void loop_del_fd(struct loop *l, int fd)
{
    struct reg *r = find_reg(l, fd);
    if (!r)
        return;
    epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
    r->dead = true; /* freed after the dispatch round that may still hold it */
}

uint64_t loop_add_timer(struct loop *l, unsigned delay_ms, loop_timer_cb *cb, void *opaque)
{
    struct timer *t = calloc(1, sizeof(*t));
    if (!t)
        return 0;
    t->id = ++l->next_timer_id;
    t->due_ms = loop_now_ms() + delay_ms;
    t->cb = cb;
    t->opaque = opaque;
    struct timer **pp = &l->timers;
    while (*pp && (*pp)->due_ms <= t->due_ms)
        pp = &(*pp)->next;
    t->next = *pp;
    *pp = t;
    return t->id;
}

void loop_del_timer(struct loop *l, uint64_t id)
{
    for (struct timer **pp = &l->timers; *pp; pp = &(*pp)->next) {
        if ((*pp)->id == id) {
            struct timer *t = *pp;
            *pp = t->next;
            free(t);
            return;
        }
    }
}

void loop_stop(struct loop *l)
{
    l->stop = true;
}

static void reap_dead(struct loop *l)
{
    for (struct reg **pp = &l->regs; *pp;) {
        if ((*pp)->dead) {
            struct reg *r = *pp;
            *pp = r->next;
            free(r);
        } else {
            pp = &(*pp)->next;
        }
    }
}

static void run_due_timers(struct loop *l)
{
    uint64_t now = loop_now_ms();
    /* Bounded: only timers already due now; ones they add run next round. */
    while (l->timers && l->timers->due_ms <= now) {
        struct timer *t = l->timers;
        l->timers = t->next;
        loop_timer_cb *cb = t->cb;
        void *opaque = t->opaque;
        free(t);
        cb(opaque);
    }
}

int loop_run(struct loop *l)
{
    struct epoll_event evs[64];
    l->stop = false;
    while (!l->stop) {
        int timeout = -1;
        if (l->timers) {
            uint64_t now = loop_now_ms();
            timeout = l->timers->due_ms > now ? (int)(l->timers->due_ms - now) : 0;
        }
        int n = epoll_wait(l->epfd, evs, 64, timeout);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        for (int i = 0; i < n && !l->stop; i++) {
            struct reg *r = evs[i].data.ptr;
            if (!r->dead)
                r->cb(r->opaque, r->fd, evs[i].events);
        }
        reap_dead(l);
        run_due_timers(l);
    }
    return 0;
}
