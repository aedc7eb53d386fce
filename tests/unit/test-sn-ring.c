/* test-sn-ring.c - T0 tests of the sound frontend's request ring
 * (shadow-frontends/snd/sn_ring.c) in quiet mode: while only WRITEs are
 * outstanding the backend is not asked to notify their answers, and any other
 * request gets its answer notified, even with answers not yet taken ahead of
 * it. The ring is a local page; the backend's side is the standard macros,
 * with RING_PUSH_RESPONSES_AND_CHECK_NOTIFY saying whether it would notify.
 * No Xen. */
#define _GNU_SOURCE
#include "check.h"
#include "sn_ring.h"

#include <stdlib.h>
#include <string.h>

struct fake {
    struct sn_ring r;
    xen_sndif_back_ring_t br;
    unsigned got; /* responses handed over */
    uint64_t tags[64];
};

static void on_rsp(void *arg, uint64_t tag, const struct xensnd_resp *rsp)
{
    struct fake *f = arg;
    (void)rsp;
    if (f->got < 64)
        f->tags[f->got] = tag;
    f->got++;
}

static void setup(struct fake *f)
{
    memset(f, 0, sizeof(*f));
    f->r.sring = aligned_alloc(SN_PAGE, SN_PAGE);
    memset(f->r.sring, 0, SN_PAGE);
    xen_sndif_sring_t *s = f->r.sring;
    SHARED_RING_INIT(s);
    FRONT_RING_INIT(&f->r.fr, s, SN_PAGE);
    BACK_RING_INIT(&f->br, s, SN_PAGE);
    /* The backend never asks for request notifications: the test has no
     * event channel (sn_ring_push notifies only when asked). */
    s->req_event = 1u << 30;
}

static void issue(struct fake *f, unsigned op, uint64_t tag)
{
    struct xensnd_req q;
    memset(&q, 0, sizeof(q));
    q.operation = (uint8_t)op;
    CHECK(sn_ring_issue(&f->r, &q, tag, 0) >= 0);
    sn_ring_push(&f->r);
}

/* The backend answers the oldest request it has not: 1 if it would notify. */
static int answer(struct fake *f)
{
    RING_IDX rp = f->br.sring->req_prod;
    CHECK(f->br.req_cons != rp);
    struct xensnd_req q = *RING_GET_REQUEST(&f->br, f->br.req_cons);
    f->br.req_cons++;
    struct xensnd_resp *rsp = RING_GET_RESPONSE(&f->br, f->br.rsp_prod_pvt);
    memset(rsp, 0, sizeof(*rsp));
    rsp->id = q.id;
    rsp->operation = q.operation;
    f->br.rsp_prod_pvt++;
    int notify;
    RING_PUSH_RESPONSES_AND_CHECK_NOTIFY(&f->br, notify);
    return notify;
}

static int harvest(struct fake *f)
{
    char why[256] = "";
    int h = sn_ring_harvest(&f->r, on_rsp, f, why, sizeof(why));
    if (h < 0)
        fprintf(stderr, "harvest: %s\n", why);
    return h;
}

/* Off: every answer notifies (RING_FINAL_CHECK_FOR_RESPONSES). */
static void test_loud(void)
{
    struct fake f;
    setup(&f);
    harvest(&f);
    issue(&f, XENSND_OP_WRITE, 1);
    CHECK_EQ(answer(&f), 1);
    CHECK_EQ(harvest(&f), 1);
    issue(&f, XENSND_OP_WRITE, 2);
    CHECK_EQ(answer(&f), 1);
    CHECK_EQ(harvest(&f), 1);
    CHECK_EQ(f.got, 2);
    free(f.r.sring);
}

/* Quiet with WRITEs alone: their answers wait, unnotified, for a harvest. */
static void test_quiet_writes(void)
{
    struct fake f;
    setup(&f);
    sn_ring_quiet(&f.r, true);
    harvest(&f);
    issue(&f, XENSND_OP_WRITE, 1);
    issue(&f, XENSND_OP_WRITE, 2);
    CHECK_EQ(answer(&f), 0);
    CHECK_EQ(answer(&f), 0);
    CHECK_EQ(harvest(&f), 1);
    CHECK_EQ(f.got, 2);
    /* Still quiet after the harvest. */
    issue(&f, XENSND_OP_WRITE, 3);
    CHECK_EQ(answer(&f), 0);
    CHECK_EQ(harvest(&f), 1);
    CHECK_EQ(f.got, 3);
    free(f.r.sring);
}

/* A TRIGGER while quiet, behind a WRITE answered but not taken: the TRIGGER's
 * answer notifies (rsp_event past what was produced, not rsp_cons + 1). */
static void test_other_request_notifies(void)
{
    struct fake f;
    setup(&f);
    sn_ring_quiet(&f.r, true);
    harvest(&f);
    issue(&f, XENSND_OP_WRITE, 1);
    CHECK_EQ(answer(&f), 0); /* answered, not taken */
    issue(&f, XENSND_OP_TRIGGER, 2);
    CHECK_EQ(answer(&f), 1);
    CHECK_EQ(harvest(&f), 1);
    CHECK_EQ(f.got, 2);
    /* With no other request outstanding the harvest went quiet again. */
    issue(&f, XENSND_OP_WRITE, 3);
    CHECK_EQ(answer(&f), 0);
    /* A harvest with a CLOSE outstanding stays loud: its answer notifies. */
    issue(&f, XENSND_OP_CLOSE, 4);
    CHECK_EQ(harvest(&f), 1); /* takes 3 */
    CHECK_EQ(answer(&f), 1);  /* the CLOSE */
    CHECK_EQ(harvest(&f), 1);
    issue(&f, XENSND_OP_WRITE, 5);
    CHECK_EQ(answer(&f), 0); /* quiet again: nothing else outstanding */
    CHECK_EQ(harvest(&f), 1);
    CHECK_EQ(f.got, 5);
    CHECK_EQ(f.tags[4], 5);
    free(f.r.sring);
}

/* Quiet turned off: the next harvest asks for every answer again. */
static void test_quiet_off(void)
{
    struct fake f;
    setup(&f);
    sn_ring_quiet(&f.r, true);
    harvest(&f);
    issue(&f, XENSND_OP_WRITE, 1);
    CHECK_EQ(answer(&f), 0);
    sn_ring_quiet(&f.r, false);
    CHECK_EQ(harvest(&f), 1);
    issue(&f, XENSND_OP_WRITE, 2);
    CHECK_EQ(answer(&f), 1);
    free(f.r.sring);
}

/* A full ring of WRITEs answered while quiet: the last answer notifies (the
 * frontend has no room left, so it must hear). */
static void test_full_ring_notifies(void)
{
    struct fake f;
    setup(&f);
    sn_ring_quiet(&f.r, true);
    harvest(&f);
    for (unsigned i = 0; i < SN_RING_SIZE; i++)
        issue(&f, XENSND_OP_WRITE, i);
    CHECK(!sn_ring_room(&f.r));
    int notified = 0;
    for (unsigned i = 0; i < SN_RING_SIZE; i++)
        notified += answer(&f);
    CHECK_EQ(notified, 1);
    CHECK_EQ(harvest(&f), 1);
    CHECK_EQ(f.got, SN_RING_SIZE);
    free(f.r.sring);
}

int main(void)
{
    test_loud();
    test_quiet_writes();
    test_other_request_notifies();
    test_quiet_off();
    test_full_ring_notifies();
    return check_done("test-sn-ring");
}
