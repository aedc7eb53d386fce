/* pcm_clock.h - the clock of a PCM that has no hardware behind it: the
 * shadow PCM (shadow-frontends/snd/pcm_understudy.c) and the clocked test
 * PCM (tests/snd/usclock.c). Tick k falls at t0 + k periods of CLOCK_MONOTONIC
 * time, computed from k (never summed), so the clock does not drift; a pause
 * moves t0 on by its length. A timerfd armed for the next tick, or for at
 * once, is the PCM's poll descriptor. The caller takes the ticks (moves its
 * hardware pointer a period each) and decides when to wake a poller.
 */
#ifndef UNDERSTUDY_PCM_CLOCK_H
#define UNDERSTUDY_PCM_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct pcm_clock {
    int tfd;         /* CLOCK_MONOTONIC timerfd, non-blocking: the poll fd */
    unsigned rate;   /* frames a second */
    uint64_t period; /* frames a tick */
    uint64_t t0;     /* ns: tick 0 (the start), moved on by each pause */
    uint64_t ticks;  /* ticks taken since the start */
    uint64_t paused_at;
    bool running; /* started and not stopped or paused */
};

/* CLOCK_MONOTONIC, ns. */
uint64_t pcm_clock_now(void);
/* The timerfd. 0, or -1 with errno. */
int pcm_clock_open(struct pcm_clock *c);
/* NULL-safe; safe when never opened (tfd -1). */
void pcm_clock_close(struct pcm_clock *c);

/* Rate and period (hw_params). */
void pcm_clock_setup(struct pcm_clock *c, unsigned rate, uint64_t period);
/* ns from tick 0 to tick k. */
uint64_t pcm_clock_tick_ns(const struct pcm_clock *c, uint64_t k);
/* Tick 0 now; running. */
void pcm_clock_start(struct pcm_clock *c, uint64_t now);
/* Not running, the timer disarmed. */
void pcm_clock_stop(struct pcm_clock *c);
void pcm_clock_pause(struct pcm_clock *c, uint64_t now);
void pcm_clock_resume(struct pcm_clock *c, uint64_t now);
/* Running and the next tick's time has come: the caller takes it and calls
 * pcm_clock_took. */
bool pcm_clock_due(const struct pcm_clock *c, uint64_t now);
void pcm_clock_took(struct pcm_clock *c);

/* The poll fd: readable at once, at the next tick, or never (disarmed);
 * pcm_clock_clear empties it. */
void pcm_clock_wake_now(struct pcm_clock *c);
void pcm_clock_wake_at_next(struct pcm_clock *c);
void pcm_clock_disarm(struct pcm_clock *c);
void pcm_clock_clear(struct pcm_clock *c);

#endif
