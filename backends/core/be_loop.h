/* be_loop.h - the single-threaded epoll loop a backend process runs on: fd
 * watches and one-shot timers on CLOCK_MONOTONIC.
 *
 * Callbacks may add or delete any watch or timer, their own included, while
 * the loop dispatches: a deleted registration is freed after the round.
 */
#ifndef BE_LOOP_H
#define BE_LOOP_H

#include <stdint.h>

struct be_loop;

typedef void be_fd_cb(void *opaque, int fd, uint32_t events);
/* A timer fires once; it is gone when its callback runs. */
typedef void be_timer_cb(void *opaque);

struct be_loop *be_loop_new(void);
void be_loop_free(struct be_loop *l);

/* Watch fd for EPOLLIN. 0, or -1 with errno. */
int be_loop_add_fd(struct be_loop *l, int fd, be_fd_cb *cb, void *opaque);
/* Stop watching fd (the caller still owns it). Safe on an unknown fd. */
void be_loop_del_fd(struct be_loop *l, int fd);

/* Run cb once after delay_ms. Returns a timer id > 0, or 0 with errno. */
uint64_t be_loop_add_timer(struct be_loop *l, uint64_t delay_ms, be_timer_cb *cb, void *opaque);
/* Cancel a timer; safe on 0, on a fired or unknown id. */
void be_loop_del_timer(struct be_loop *l, uint64_t id);

/* Dispatch until be_loop_stop(). 0, or -1 with errno if epoll failed. */
int be_loop_run(struct be_loop *l);
void be_loop_stop(struct be_loop *l);

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t be_now_ms(void);

#endif
