/* loop.h - the single-threaded epoll loop that every xensim daemon module runs on.
 *
 * Callbacks may add or delete any fd (including their own) while the loop
 * dispatches: a deleted registration is only freed after the current round.
 */
#ifndef XSIM_LOOP_H
#define XSIM_LOOP_H

#include <stdint.h>
#include <sys/epoll.h>

struct loop;

/* events is a mask of EPOLLIN/EPOLLOUT/EPOLLHUP/EPOLLERR as epoll reports them. */
typedef void loop_fd_cb(void *opaque, int fd, uint32_t events);
/* A timer fires once; it is gone when its callback runs. */
typedef void loop_timer_cb(void *opaque);

struct loop *loop_new(void);
void loop_free(struct loop *l);

/* Watch fd for events (EPOLLIN, EPOLLOUT). Returns 0 or -1 with errno. */
int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_cb *cb, void *opaque);
/* Change the event mask of a watched fd. */
int loop_mod_fd(struct loop *l, int fd, uint32_t events);
/* Stop watching fd (the caller still owns and closes it). Safe on an unknown fd. */
void loop_del_fd(struct loop *l, int fd);

/* Run cb once after delay_ms (CLOCK_MONOTONIC). Returns a timer id > 0, or 0 on ENOMEM. */
uint64_t loop_add_timer(struct loop *l, unsigned delay_ms, loop_timer_cb *cb, void *opaque);
void loop_del_timer(struct loop *l, uint64_t id);

/* Dispatch until loop_stop() is called. Returns 0, or -1 if epoll itself failed. */
int loop_run(struct loop *l);
void loop_stop(struct loop *l);

/* Monotonic milliseconds, for deadlines. */
uint64_t loop_now_ms(void);

#endif
