/* sndif_rsp - the shadow sndfront's harvest of sndif responses and events
 * (shadow-frontends/snd/sn_ring.c): a stream's transport set up by
 * sn_ring_setup over fuzz/xenstub.c and its buffer and grant directory by
 * sn_ring_buffer, requests issued by sn_ring_issue, then responses the input
 * writes into the ring (id, operation, status, the HW_PARAM_QUERY answer,
 * the producer index) consumed by sn_ring_harvest, and events it writes into
 * the event page (type, id, position, in_prod) consumed by sn_ring_events.
 *
 * Input: a buffer size, then rounds of requests, responses and events. */
#define _GNU_SOURCE
#include "fuzz.h"
#include "sn_ring.h"
#include "xenstub.h"

static unsigned nrsp, nevt;

static void on_rsp(void *arg, uint64_t tag, const struct xensnd_resp *rsp)
{
    struct sn_ring *r = arg;
    (void)tag;
    FZ_CHECK(rsp->id < SN_RING_SIZE && !r->req[rsp->id].busy);
    FZ_CHECK(rsp->status <= 0);
    nrsp++;
}

static void on_evt(void *arg, uint64_t position)
{
    (void)arg;
    (void)position;
    nevt++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz f = {data, size};
    static struct sn_ring r;
    FZ_CHECK(sn_ring_setup(&r, xengntshr_open(NULL, 0), xenevtchn_open(NULL, 0), 1) == 0);
    uint32_t dir_ref;
    uint32_t bsz = fz_u16(&f) % (64 * SN_PAGE) + 1;
    FZ_CHECK(sn_ring_buffer(&r, bsz, &dir_ref) == 0);
    sn_ring_events_reset(&r);

    while (fz_left(&f)) {
        uint8_t nq = fz_u8(&f) % 6;
        for (uint8_t i = 0; i < nq && sn_ring_room(&r); i++) {
            struct xensnd_req q;
            memset(&q, 0, sizeof(q));
            q.operation = fz_u8(&f) % (XENSND_OP_HW_PARAM_QUERY + 1);
            FZ_CHECK(sn_ring_issue(&r, &q, q.operation, 0) >= 0);
        }
        sn_ring_push(&r);

        uint8_t k = fz_u8(&f) % 6;
        for (uint8_t i = 0; i < k; i++) {
            struct xensnd_resp p;
            uint8_t sel = fz_u8(&f);
            fz_bytes(&f, &p, sizeof(p));
            if (sel < 0xc0) { /* mostly a plausible answer */
                p.id = (uint16_t)(sel % SN_RING_SIZE);
                p.operation = r.req[p.id].op;
                if (sel & 1)
                    p.status = 0;
            }
            *RING_GET_RESPONSE(&r.fr, r.fr.rsp_cons + i) = p;
        }
        uint8_t how = fz_u8(&f);
        r.fr.sring->rsp_prod = how < 0xf8 ? r.fr.rsp_cons + k : fz_u32(&f);
        char why[160] = "";
        if (sn_ring_harvest(&r, on_rsp, &r, why, sizeof(why)) < 0) {
            FZ_CHECK(why[0]);
            break;
        }

        uint8_t ne = fz_u8(&f) % 6;
        uint32_t prod = r.evt_cons;
        for (uint8_t i = 0; i < ne; i++) {
            struct xensnd_evt e;
            uint8_t sel = fz_u8(&f);
            fz_bytes(&f, &e, sizeof(e));
            if (sel < 0xc0) {
                e.type = XENSND_EVT_CUR_POS;
                e.id = (uint16_t)(r.evt_expect + i);
            }
            memcpy(&XENSND_IN_RING_REF(r.evt, prod), &e, sizeof(e));
            prod++;
        }
        how = fz_u8(&f);
        r.evt->in_prod = how < 0xf8 ? prod : fz_u32(&f);
        why[0] = '\0';
        if (sn_ring_events(&r, on_evt, NULL, why, sizeof(why)) < 0) {
            FZ_CHECK(why[0]);
            break;
        }
        if (how == 0x80)
            sn_ring_events_reset(&r);
    }
    sn_ring_teardown(&r);
    return 0;
}
