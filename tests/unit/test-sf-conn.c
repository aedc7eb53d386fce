/* test-sf-conn.c - T0 tests of the connection driver's pure parts
 * (shadow-frontends/core/sf_conn.c): the poll timeout a class's loop gets
 * and the deadline of the oldest unanswered request, for a class with and
 * without requests (a PCM has none: its ops leave oldest out). */
#define _GNU_SOURCE
#include "check.h"
#include "sf_conn.h"

#include <stdio.h>
#include <string.h>

struct fake {
    bool any;
    uint64_t since;
};

static bool fake_oldest(void *cls, uint64_t *since)
{
    struct fake *f = cls;
    if (f->any)
        *since = f->since;
    return f->any;
}

static const struct sfc_ops with_requests = {.oldest = fake_oldest};
static const struct sfc_ops without_requests = {0};

static void init(struct sfc *c, const struct sfc_ops *ops, void *cls)
{
    memset(c, 0, sizeof(*c));
    c->ops = ops;
    c->cls = cls;
    c->cfg.deadline_ms = 1000;
}

static void test_timeout(void)
{
    struct fake f = {0};
    struct sfc c;
    init(&c, &with_requests, &f);
    /* Not connected: the handshake's tick, whatever is outstanding. */
    CHECK(sfc_timeout(&c, 5000, 1000) == 200);
    c.phase = SFC_SETUP;
    CHECK(sfc_timeout(&c, 5000, 1000) == 200);
    c.phase = SFC_UP;
    /* Connected, nothing outstanding: the class's idle timeout. */
    CHECK(sfc_timeout(&c, 5000, 1000) == 1000);
    CHECK(sfc_timeout(&c, 5000, 30) == 30);
    /* Outstanding: a short tick, and never past the deadline. */
    f.any = true;
    f.since = 5000;
    CHECK(sfc_timeout(&c, 5000, 1000) == 50);
    CHECK(sfc_timeout(&c, 5980, 1000) == 20);
    CHECK(sfc_timeout(&c, 7000, 1000) == 0);
    CHECK(sfc_timeout(&c, 5000, 10) == 10);
    /* A class with nothing ever outstanding idles. */
    init(&c, &without_requests, NULL);
    c.phase = SFC_UP;
    CHECK(sfc_timeout(&c, 5000, 1000) == 1000);
}

static void test_overdue(void)
{
    struct fake f = {.any = true, .since = 100};
    struct sfc c;
    init(&c, &with_requests, &f);
    uint64_t age = 0;
    CHECK(!sfc_overdue(&c, 5000, &age)); /* not connected: no deadline */
    c.phase = SFC_UP;
    CHECK(!sfc_overdue(&c, 1099, &age));
    CHECK(sfc_overdue(&c, 1100, &age) && age == 1000);
    f.any = false;
    CHECK(!sfc_overdue(&c, 9000, &age));
    init(&c, &without_requests, NULL);
    c.phase = SFC_UP;
    CHECK(!sfc_overdue(&c, 9000, &age));
}

/* Where a fault's detect phase starts. */
static void test_first_sign(void)
{
    struct fake f = {0};
    struct sfc c;
    init(&c, &with_requests, &f);
    c.phase = SFC_UP;
    /* Idle for 4 s after its last answer: the fault itself, not the answer. */
    c.last_alive = 1000;
    CHECK_EQ(sfc_first_sign(&c, 5076), 5076);
    /* A request unanswered since 4000: owed since then. */
    f.any = true;
    f.since = 4000;
    CHECK_EQ(sfc_first_sign(&c, 5076), 4000);
    /* ... but the backend answered another at 4500: alive until then. */
    c.last_alive = 4500;
    CHECK_EQ(sfc_first_sign(&c, 5076), 4500);
    /* Never in the future. */
    CHECK_EQ(sfc_first_sign(&c, 4200), 4200);
    /* A class without requests: the fault itself. */
    init(&c, &without_requests, NULL);
    c.last_alive = 10;
    CHECK_EQ(sfc_first_sign(&c, 900), 900);
}

int main(void)
{
    test_timeout();
    test_overdue();
    test_first_sign();
    return check_done("test-sf-conn");
}
