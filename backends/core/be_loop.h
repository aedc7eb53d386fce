/* be_loop.h - the backends' names for the common event loop (common/evloop.h):
 * the epoll loop a backend process runs on, with fd watches and one-shot
 * timers on CLOCK_MONOTONIC. evloop.h states the rules; the ones backends
 * lean on:
 *
 *  - Callbacks may add or delete any watch or timer, their own included, while
 *    the loop dispatches: a deleted one is never called again, and is freed
 *    after the round.
 *  - Due timers fire in order of due time (ties in order of creation), after
 *    the round's fd callbacks; one added by a timer callback, even with delay
 *    0, fires in the next round, after the fds have been polled again.
 *  - Signals come in as a signalfd watched like any fd (be_main.c).
 *
 * struct be_loop is a struct evloop under the backends' name; this header is
 * the only place the two meet.
 */
#ifndef BE_LOOP_H
#define BE_LOOP_H

#include "evloop.h"

#include <stdint.h>
#include <sys/epoll.h>

struct be_loop;

typedef evloop_fd_cb be_fd_cb;
/* A timer fires once; it is gone when its callback runs. */
typedef evloop_timer_cb be_timer_cb;

static inline struct evloop *be_evloop(struct be_loop *l)
{
    return (struct evloop *)l;
}

/* NULL with errno on failure. */
static inline struct be_loop *be_loop_new(void)
{
    return (struct be_loop *)evloop_create();
}

/* Safe on NULL. */
static inline void be_loop_free(struct be_loop *l)
{
    evloop_delete(be_evloop(l));
}

/* Watch fd for EPOLLIN. 0, or -1 with errno. */
static inline int be_loop_add_fd(struct be_loop *l, int fd, be_fd_cb *cb, void *opaque)
{
    return evloop_fd_create(be_evloop(l), fd, EPOLLIN, cb, opaque);
}

/* Stop watching fd (the caller still owns it). Safe on NULL and an unknown fd. */
static inline void be_loop_del_fd(struct be_loop *l, int fd)
{
    evloop_fd_delete(be_evloop(l), fd);
}

/* Run cb once after delay_ms. Returns a timer id > 0, or 0 with errno. */
static inline uint64_t be_loop_add_timer(struct be_loop *l, uint64_t delay_ms, be_timer_cb *cb,
                                         void *opaque)
{
    return evloop_timer_create(be_evloop(l), delay_ms, cb, opaque);
}

/* Cancel a timer; safe on NULL, on 0, on a fired or unknown id. */
static inline void be_loop_del_timer(struct be_loop *l, uint64_t id)
{
    evloop_timer_delete(be_evloop(l), id);
}

/* Dispatch until be_loop_stop(). 0, or -1 with errno if epoll failed. */
static inline int be_loop_run(struct be_loop *l)
{
    return evloop_run(be_evloop(l));
}

static inline void be_loop_stop(struct be_loop *l)
{
    evloop_stop(be_evloop(l));
}

/* CLOCK_MONOTONIC in milliseconds. */
static inline uint64_t be_now_ms(void)
{
    return evloop_now_ms();
}

#endif
