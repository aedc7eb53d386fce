/* evloop.h - the single-threaded epoll event loop every Understudy daemon runs
 * on (xensimd; each backend through backends/core/be_loop.h): fd watches and
 * one-shot timers on CLOCK_MONOTONIC. After Redis's ae.c: Create/Delete pairs,
 * callbacks that may change the loop under its feet.
 *
 * The rules callers rely on:
 *  - Re-entrancy: a callback may create, modify or delete any watch or timer,
 *    its own included. A watch or timer deleted during a round never gets its
 *    callback called again, even for an event already collected this round;
 *    its memory is freed after the round.
 *  - One round: wait for fds or the earliest timer, call the fd callbacks for
 *    the events that came, then the timers that are due. Timers fire in order
 *    of due time, ties in order of creation. A timer created during the timer
 *    phase waits for the next round, even with delay 0, so a timer that re-arms
 *    itself cannot starve the fds.
 *  - evloop_stop() ends the run after the callback that called it: the rest of
 *    the round's events and timers wait for the next evloop_run().
 *  - Signals belong in the loop as a signalfd (or a self-pipe) watched like any
 *    fd; no real work happens in a handler. EINTR from epoll_wait is retried.
 *  - Not thread-safe: one loop, one thread.
 */
#ifndef UNDERSTUDY_EVLOOP_H
#define UNDERSTUDY_EVLOOP_H

#include <stdint.h>
#include <sys/epoll.h>

struct evloop;

/* events is a mask of EPOLLIN/EPOLLOUT/EPOLLHUP/EPOLLERR as epoll reports them. */
typedef void evloop_fd_cb(void *opaque, int fd, uint32_t events);
/* A timer fires once; it is gone when its callback runs. */
typedef void evloop_timer_cb(void *opaque);

/* NULL with errno on failure. */
struct evloop *evloop_create(void);
/* Free the loop and every watch and timer (callbacks are not called); safe on
 * NULL. Not from inside a callback of this loop. */
void evloop_delete(struct evloop *l);

/* Watch fd for events (EPOLLIN, EPOLLOUT, ...), level-triggered. One watch per
 * fd: EEXIST if it is watched already. 0, or -1 with errno. */
int evloop_fd_create(struct evloop *l, int fd, uint32_t events, evloop_fd_cb *cb, void *opaque);
/* Change the event mask of a watched fd. 0, or -1 with errno (ENOENT: not watched). */
int evloop_fd_modify(struct evloop *l, int fd, uint32_t events);
/* Stop watching fd; the caller still owns it and closes it (after this call).
 * Safe on NULL and on an fd that is not watched. */
void evloop_fd_delete(struct evloop *l, int fd);

/* Run cb once, delay_ms from now. Returns a timer id > 0 (never reused), or
 * 0 with errno. */
uint64_t evloop_timer_create(struct evloop *l, uint64_t delay_ms, evloop_timer_cb *cb,
                             void *opaque);
/* Cancel a timer. Safe on NULL, on 0, and on an id that fired or is unknown.
 * O(timers): loops here hold a handful. */
void evloop_timer_delete(struct evloop *l, uint64_t id);

/* Dispatch until evloop_stop(). 0, or -1 with errno if epoll_wait failed. */
int evloop_run(struct evloop *l);
void evloop_stop(struct evloop *l);

/* CLOCK_MONOTONIC in milliseconds, for deadlines. */
uint64_t evloop_now_ms(void);

#endif
