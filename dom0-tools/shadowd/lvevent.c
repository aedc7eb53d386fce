/* lvevent.c - libvirt's event loop on shadowd's poll (lvevent.h).
 *
 * libvirt asks for handles (an fd and the events it wants) and timeouts (a
 * period in ms, 0 = every loop turn, -1 = disabled), each with a callback and
 * a free function. A removed entry is only marked: its free function runs
 * from postpoll, never inside the remove call (libvirt may hold its own
 * locks there). Bounded: at most MAX_HANDLES and MAX_TIMEOUTS; beyond that
 * the add fails and libvirt reports its error. */
#define _GNU_SOURCE
#include "lvevent.h"

#include <libvirt/libvirt.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define MAX_HANDLES  32
#define MAX_TIMEOUTS 32

struct handle {
    bool used, removed;
    int id, fd, events; /* VIR_EVENT_HANDLE_* */
    virEventHandleCallback cb;
    void *opaque;
    virFreeCallback ff;
    int slot; /* index into the pollfds of this turn, or -1 */
};

struct timeout {
    bool used, removed;
    int id, period; /* ms; -1 disabled */
    uint64_t due;
    virEventTimeoutCallback cb;
    void *opaque;
    virFreeCallback ff;
};

static struct handle handles[MAX_HANDLES];
static struct timeout timeouts[MAX_TIMEOUTS];
static int next_id = 1;

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static short to_poll(int ev)
{
    return (short)(((ev & VIR_EVENT_HANDLE_READABLE) ? POLLIN : 0) |
                   ((ev & VIR_EVENT_HANDLE_WRITABLE) ? POLLOUT : 0));
}

static int from_poll(short rev)
{
    return ((rev & POLLIN) ? VIR_EVENT_HANDLE_READABLE : 0) |
           ((rev & POLLOUT) ? VIR_EVENT_HANDLE_WRITABLE : 0) |
           ((rev & POLLERR) ? VIR_EVENT_HANDLE_ERROR : 0) |
           ((rev & POLLHUP) ? VIR_EVENT_HANDLE_HANGUP : 0);
}

static int add_handle(int fd, int events, virEventHandleCallback cb, void *opaque,
                      virFreeCallback ff)
{
    for (int i = 0; i < MAX_HANDLES; i++) {
        struct handle *h = &handles[i];
        if (h->used)
            continue;
        *h = (struct handle){.used = true,
                             .id = next_id++,
                             .fd = fd,
                             .events = events,
                             .cb = cb,
                             .opaque = opaque,
                             .ff = ff,
                             .slot = -1};
        return h->id;
    }
    return -1;
}

static struct handle *handle_by_id(int id)
{
    for (int i = 0; i < MAX_HANDLES; i++)
        if (handles[i].used && !handles[i].removed && handles[i].id == id)
            return &handles[i];
    return NULL;
}

static void update_handle(int id, int events)
{
    struct handle *h = handle_by_id(id);
    if (h)
        h->events = events;
}

static int remove_handle(int id)
{
    struct handle *h = handle_by_id(id);
    if (!h)
        return -1;
    h->removed = true;
    return 0;
}

static int add_timeout(int period, virEventTimeoutCallback cb, void *opaque, virFreeCallback ff)
{
    for (int i = 0; i < MAX_TIMEOUTS; i++) {
        struct timeout *t = &timeouts[i];
        if (t->used)
            continue;
        *t = (struct timeout){.used = true,
                              .id = next_id++,
                              .period = period,
                              .due = now_ms() + (period > 0 ? (uint64_t)period : 0),
                              .cb = cb,
                              .opaque = opaque,
                              .ff = ff};
        return t->id;
    }
    return -1;
}

static struct timeout *timeout_by_id(int id)
{
    for (int i = 0; i < MAX_TIMEOUTS; i++)
        if (timeouts[i].used && !timeouts[i].removed && timeouts[i].id == id)
            return &timeouts[i];
    return NULL;
}

static void update_timeout(int id, int period)
{
    struct timeout *t = timeout_by_id(id);
    if (!t)
        return;
    t->period = period;
    t->due = now_ms() + (period > 0 ? (uint64_t)period : 0);
}

static int remove_timeout(int id)
{
    struct timeout *t = timeout_by_id(id);
    if (!t)
        return -1;
    t->removed = true;
    return 0;
}

void sd_lvevent_register(void)
{
    static bool done;
    if (done)
        return;
    done = true;
    virEventRegisterImpl(add_handle, update_handle, remove_handle, add_timeout, update_timeout,
                         remove_timeout);
}

int sd_lvevent_prepoll(struct pollfd *fds, int max, int *timeout_ms)
{
    int n = 0;
    for (int i = 0; i < MAX_HANDLES; i++) {
        struct handle *h = &handles[i];
        h->slot = -1;
        if (!h->used || h->removed || h->fd < 0 || n == max)
            continue;
        fds[n] = (struct pollfd){.fd = h->fd, .events = to_poll(h->events)};
        h->slot = n++;
    }
    uint64_t now = now_ms();
    for (int i = 0; i < MAX_TIMEOUTS; i++) {
        struct timeout *t = &timeouts[i];
        if (!t->used || t->removed || t->period < 0)
            continue;
        int w = t->due > now ? (int)(t->due - now) : 0;
        if (*timeout_ms < 0 || w < *timeout_ms)
            *timeout_ms = w;
    }
    return n;
}

void sd_lvevent_postpoll(const struct pollfd *fds, int n)
{
    for (int i = 0; i < MAX_HANDLES; i++) {
        struct handle *h = &handles[i];
        if (!h->used || h->removed || h->slot < 0 || h->slot >= n)
            continue;
        int ev = from_poll(fds[h->slot].revents);
        h->slot = -1;
        if (ev)
            h->cb(h->id, h->fd, ev, h->opaque);
    }
    uint64_t now = now_ms();
    for (int i = 0; i < MAX_TIMEOUTS; i++) {
        struct timeout *t = &timeouts[i];
        if (!t->used || t->removed || t->period < 0 || t->due > now)
            continue;
        t->due = now + (t->period > 0 ? (uint64_t)t->period : 0);
        t->cb(t->id, t->opaque);
    }
    sd_lvevent_sweep();
}

void sd_lvevent_sweep(void)
{
    /* Free what was removed, now that no libvirt call is on the stack. */
    for (int i = 0; i < MAX_HANDLES; i++) {
        struct handle *h = &handles[i];
        if (h->used && h->removed) {
            virFreeCallback ff = h->ff;
            void *op = h->opaque;
            memset(h, 0, sizeof(*h));
            if (ff)
                ff(op);
        }
    }
    for (int i = 0; i < MAX_TIMEOUTS; i++) {
        struct timeout *t = &timeouts[i];
        if (t->used && t->removed) {
            virFreeCallback ff = t->ff;
            void *op = t->opaque;
            memset(t, 0, sizeof(*t));
            if (ff)
                ff(op);
        }
    }
}
