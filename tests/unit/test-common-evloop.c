/* test-common-evloop.c - the rules evloop.h promises its callers: timers in
 * due order (ties in creation order), a timer made in the timer phase waits a
 * round, a watch or timer deleted during a round is not called again, stop
 * ends the run after the calling callback, level-triggered fd watches, and
 * the destructor's NULL-safety.
 */
#define _GNU_SOURCE
#include "evloop.h"

#include "check.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

static struct evloop *L;
static char order[64];
static size_t norder;

static void note(char c)
{
    if (norder + 1 < sizeof(order))
        order[norder++] = c;
    order[norder] = '\0';
}

static void fire(void *opaque)
{
    note(*(const char *)opaque);
}

static void fire_stop(void *opaque)
{
    note(*(const char *)opaque);
    evloop_stop(L);
}

static void test_timer_order(void)
{
    norder = 0;
    static const char a = 'a', b = 'b', c = 'c', d = 'd', s = 's';
    /* Due order first, creation order among equals. */
    CHECK(evloop_timer_create(L, 20, fire, (void *)&c) > 0);
    CHECK(evloop_timer_create(L, 5, fire, (void *)&a) > 0);
    CHECK(evloop_timer_create(L, 5, fire, (void *)&b) > 0);
    uint64_t gone = evloop_timer_create(L, 10, fire, (void *)&d);
    CHECK(gone > 0);
    evloop_timer_delete(L, gone);
    evloop_timer_delete(L, 0);        /* no timer: harmless */
    evloop_timer_delete(L, 1u << 30); /* unknown id: harmless */
    CHECK(evloop_timer_create(L, 40, fire_stop, (void *)&s) > 0);
    CHECK_EQ(evloop_run(L), 0);
    CHECK(strcmp(order, "abcs") == 0);
}

/* A timer that re-arms itself at delay 0 runs once a round, so an fd that is
 * ready gets its turn between two of its runs. */
static int spins;
static int pfd[2];
static bool fd_seen;

static void spin(void *opaque)
{
    (void)opaque;
    note('t');
    if (++spins < 3)
        CHECK(evloop_timer_create(L, 0, spin, NULL) > 0);
}

static void on_read(void *opaque, int fd, uint32_t events)
{
    (void)opaque;
    CHECK(events & EPOLLIN);
    char c;
    CHECK_EQ(read(fd, &c, 1), 1);
    note('r');
    fd_seen = true;
}

static void stop_soon(void *opaque)
{
    (void)opaque;
    evloop_stop(L);
}

static void test_rearm_does_not_starve(void)
{
    norder = 0;
    spins = 0;
    fd_seen = false;
    CHECK_EQ(pipe(pfd), 0);
    CHECK_EQ(evloop_fd_create(L, pfd[0], EPOLLIN, on_read, NULL), 0);
    CHECK_EQ(evloop_fd_create(L, pfd[0], EPOLLIN, on_read, NULL), -1);
    CHECK_EQ(errno, EEXIST);
    CHECK(evloop_timer_create(L, 0, spin, NULL) > 0);
    CHECK_EQ(write(pfd[1], "x", 1), 1);
    CHECK(evloop_timer_create(L, 30, stop_soon, NULL) > 0);
    CHECK_EQ(evloop_run(L), 0);
    CHECK(fd_seen);
    CHECK_EQ(spins, 3);
    /* The fd was ready from the start: it ran in the first round, and each
     * re-armed timer waited a round of its own. */
    CHECK(strcmp(order, "rttt") == 0 || strcmp(order, "trtt") == 0);
    evloop_fd_delete(L, pfd[0]);
    evloop_fd_delete(L, pfd[0]); /* not watched any more: harmless */
    CHECK_EQ(evloop_fd_modify(L, pfd[0], EPOLLIN), -1);
    CHECK_EQ(errno, ENOENT);
    close(pfd[0]);
    close(pfd[1]);
}

/* Two fds ready in one round: the first callback deletes the other's watch,
 * whose event was already collected; it must not be called. */
static int a_pipe[2], b_pipe[2];
static int b_calls;

static void on_a(void *opaque, int fd, uint32_t events)
{
    (void)opaque;
    (void)events;
    char c;
    CHECK_EQ(read(fd, &c, 1), 1);
    evloop_fd_delete(L, b_pipe[0]);
    evloop_fd_delete(L, a_pipe[0]);
    evloop_stop(L);
}

static void on_b(void *opaque, int fd, uint32_t events)
{
    (void)opaque;
    (void)events;
    char c;
    CHECK_EQ(read(fd, &c, 1), 1);
    evloop_fd_delete(L, a_pipe[0]);
    evloop_fd_delete(L, b_pipe[0]);
    evloop_stop(L);
    b_calls++;
}

static void test_delete_during_round(void)
{
    b_calls = 0;
    CHECK_EQ(pipe2(a_pipe, O_NONBLOCK), 0);
    CHECK_EQ(pipe2(b_pipe, O_NONBLOCK), 0);
    CHECK_EQ(evloop_fd_create(L, a_pipe[0], EPOLLIN, on_a, NULL), 0);
    CHECK_EQ(evloop_fd_create(L, b_pipe[0], EPOLLIN, on_b, NULL), 0);
    CHECK_EQ(write(a_pipe[1], "x", 1), 1);
    CHECK_EQ(write(b_pipe[1], "x", 1), 1);
    uint64_t guard = evloop_timer_create(L, 2000, stop_soon, NULL);
    CHECK_EQ(evloop_run(L), 0);
    evloop_timer_delete(L, guard);
    /* Whichever ran first deleted the other: exactly one of them ran. The
     * one that did was on_a (b_calls 0) or on_b (b_calls 1); never both. */
    char c;
    bool a_left = read(a_pipe[0], &c, 1) == 1; /* unread byte: on_a never ran */
    CHECK(a_left == (b_calls == 1));
    for (int i = 0; i < 2; i++) {
        close(a_pipe[i]);
        close(b_pipe[i]);
    }
}

/* A timer deleted by an earlier timer of the same round is not called. */
static uint64_t victim;
static int victim_calls;

static void killer(void *opaque)
{
    (void)opaque;
    evloop_timer_delete(L, victim);
}

static void victim_cb(void *opaque)
{
    (void)opaque;
    victim_calls++;
}

static void test_timer_deleted_in_round(void)
{
    victim_calls = 0;
    CHECK(evloop_timer_create(L, 1, killer, NULL) > 0);
    victim = evloop_timer_create(L, 1, victim_cb, NULL);
    CHECK(victim > 0);
    CHECK(evloop_timer_create(L, 20, stop_soon, NULL) > 0);
    CHECK_EQ(evloop_run(L), 0);
    CHECK_EQ(victim_calls, 0);
}

int main(void)
{
    evloop_delete(NULL);
    L = evloop_create();
    CHECK(L != NULL);
    if (!L)
        return check_done("test-common-evloop");
    uint64_t t0 = evloop_now_ms();
    test_timer_order();
    CHECK(evloop_now_ms() - t0 >= 40); /* the stop timer was due at 40 ms */
    test_rearm_does_not_starve();
    test_delete_during_round();
    test_timer_deleted_in_round();
    /* Left-over timers and watches are freed with the loop. */
    CHECK(evloop_timer_create(L, 100000, fire, (void *)"z") > 0);
    evloop_delete(L);
    return check_done("test-common-evloop");
}
