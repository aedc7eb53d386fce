/* pcm_clock.c - the clock of a PCM without hardware (see pcm_clock.h). */
#define _GNU_SOURCE
#include "pcm_clock.h"

#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

uint64_t pcm_clock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int pcm_clock_open(struct pcm_clock *c)
{
    memset(c, 0, sizeof(*c));
    c->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    return c->tfd < 0 ? -1 : 0;
}

void pcm_clock_close(struct pcm_clock *c)
{
    if (c && c->tfd >= 0)
        close(c->tfd);
    if (c)
        c->tfd = -1;
}

void pcm_clock_setup(struct pcm_clock *c, unsigned rate, uint64_t period)
{
    c->rate = rate;
    c->period = period;
}

uint64_t pcm_clock_tick_ns(const struct pcm_clock *c, uint64_t k)
{
    if (!c->rate)
        return 0;
    unsigned __int128 f = (unsigned __int128)k * c->period * 1000000000u;
    return (uint64_t)(f / c->rate);
}

static void arm_at(struct pcm_clock *c, uint64_t at_ns)
{
    struct itimerspec its = {0};
    its.it_value.tv_sec = (time_t)(at_ns / 1000000000u);
    its.it_value.tv_nsec = (long)(at_ns % 1000000000u);
    if (at_ns == 0)
        its.it_value.tv_nsec = 1; /* 0 would disarm */
    timerfd_settime(c->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

void pcm_clock_wake_now(struct pcm_clock *c)
{
    arm_at(c, 0);
}

void pcm_clock_wake_at_next(struct pcm_clock *c)
{
    arm_at(c, c->t0 + pcm_clock_tick_ns(c, c->ticks + 1));
}

void pcm_clock_disarm(struct pcm_clock *c)
{
    struct itimerspec its = {0};
    timerfd_settime(c->tfd, 0, &its, NULL);
}

void pcm_clock_clear(struct pcm_clock *c)
{
    uint64_t n;
    while (read(c->tfd, &n, sizeof(n)) == (ssize_t)sizeof(n))
        ;
}

void pcm_clock_start(struct pcm_clock *c, uint64_t now)
{
    c->t0 = now;
    c->ticks = 0;
    c->running = true;
}

void pcm_clock_stop(struct pcm_clock *c)
{
    c->running = false;
    pcm_clock_disarm(c);
}

void pcm_clock_pause(struct pcm_clock *c, uint64_t now)
{
    c->paused_at = now;
    pcm_clock_stop(c);
}

void pcm_clock_resume(struct pcm_clock *c, uint64_t now)
{
    c->t0 += now - c->paused_at;
    c->running = true;
}

bool pcm_clock_due(const struct pcm_clock *c, uint64_t now)
{
    return c->running && c->t0 + pcm_clock_tick_ns(c, c->ticks + 1) <= now;
}

void pcm_clock_took(struct pcm_clock *c)
{
    c->ticks++;
}
