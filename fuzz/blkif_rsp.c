/* blkif_rsp - the shadow blkfront's harvest of blkif responses
 * (shadow-frontends/blk/blk_class.c, core/sf_validate.c, core/sf_journal.c):
 * the class's own setup and connect over a store of backend keys, requests
 * issued from journal entries by blk_issue, then responses the input writes
 * into the shared ring as a backend would (any id, operation, status and
 * response producer index), harvested by blk_harvest, checked by sfv_check
 * with the class's rules and completed by blk_complete, as the engine's
 * harvest loop (sf_engine.c) does. Its static functions are reached by
 * including blk_class.c.
 *
 * Input: a features byte, a ring-order byte, the disk size, the requests
 * (count, then op/sector/length each), then rounds of responses. */
#define _GNU_SOURCE
#include "blk_class.c"

#include "fake_xs.h"
#include "fuzz.h"
#include "pv-keys.h"
#include "sf_validate.h"

#define MAX_REQS 48

static int issue(void *arg, struct sfj_entry *e, int *status)
{
    return blk_class_ops.issue(arg, e, status);
}

static void done(void *arg, void *owner, struct sfj_entry *e, int status)
{
    (void)arg;
    (void)owner;
    (void)e;
    (void)status;
}

static void setkey(const char *key, unsigned long long v)
{
    char path[64], val[32];
    snprintf(path, sizeof(path), "/be/%s", key);
    int n = snprintf(val, sizeof(val), "%llu", v);
    fxs_set(path, val, (size_t)n);
}

/* The engine's harvest loop: false once the connection would be torn down. */
static bool harvest(struct blk_class *c, struct sfj *j)
{
    struct sf_rsp batch[64];
    char why[160];
    for (unsigned round = 0; round <= c->live.nslots; round++) {
        int n = blk_class_ops.harvest(c, false, batch, 64, why, sizeof(why));
        if (n < 0)
            return false;
        if (n == 0)
            return true;
        for (int i = 0; i < n; i++) {
            struct sfj_entry *e;
            enum sfv_verdict v =
                sfv_check(j, blk_class_ops.rules, c, batch[i].id, batch[i].op, batch[i].status, &e);
            if (v != SFV_OK) {
                char d[128];
                sfv_describe(d, sizeof(d), v, batch[i].id, batch[i].op, batch[i].status);
                return false;
            }
            FZ_CHECK(e->state == SFJ_INFLIGHT && e->wire_id == batch[i].id);
            int err = blk_class_ops.complete(c, e, batch[i].status);
            sfj_complete(j, e, err, done, NULL);
        }
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz f = {data, size};
    uint8_t feat = fz_u8(&f), order = fz_u8(&f);
    uint32_t sectors = fz_u32(&f) % (1u << 20) + 8;

    fxs_reset();
    setkey(PVK_BLK_MAX_RING_PAGE_ORDER, order % 5);
    setkey(PVK_BLK_SECTORS, sectors);
    setkey(PVK_BLK_FEATURE_FLUSH, feat & 1);
    setkey(PVK_BLK_FEATURE_BARRIER, (feat >> 1) & 1);
    setkey(PVK_BLK_FEATURE_DISCARD, (feat >> 2) & 1);
    setkey(PVK_BLK_FEATURE_PERSISTENT, 1);
    if (feat & 8)
        setkey(PVK_BLK_FEATURE_MAX_INDIRECT, 256);

    struct blk_class_config cfg = {.max_ring_order = 4, .max_grants = 160, .max_indirect = 256};
    const char *why;
    struct blk_class *c = blk_class_new(&cfg, 51712, &why);
    FZ_CHECK(c);
    struct sfx x = {.xs = fxs_handle(), .fe = "/fe", .be = "/be", .be_id = 1};
    struct sf_conn_info conn = {0};
    FZ_CHECK(blk_class_ops.setup(c, &x) == 0);
    FZ_CHECK(blk_class_ops.connect(c, &x, true, &conn) == 0);

    struct sfj j;
    FZ_CHECK(sfj_init(&j, 0) == 0);
    FZ_CHECK(sfj_set_conn(&j, conn.nslots, conn.write_cache) == 0);
    unsigned nreq = fz_u8(&f) % MAX_REQS + 1;
    for (unsigned i = 0; i < nreq; i++) {
        uint8_t op = fz_u8(&f) % 4 + 1;
        uint64_t start = (uint64_t)(fz_u16(&f) % sectors) << BLK_SECTOR_SHIFT;
        uint64_t len = ((uint64_t)fz_u8(&f) % 64 + 1) << BLK_SECTOR_SHIFT;
        if (len > conn.max_data)
            len = conn.max_data;
        uint32_t flags = op == BLK_READ    ? SFJ_DATA
                         : op == BLK_WRITE ? SFJ_DATA | SFJ_MODIFIES
                         : op == BLK_FLUSH ? SFJ_FLUSH
                                           : SFJ_MODIFIES;
        if (op == BLK_FLUSH)
            start = len = 0;
        struct sfj_entry *e = sfj_entry_new(flags, op, start, len);
        FZ_CHECK(e);
        if (flags & SFJ_DATA) {
            e->data = calloc(1, len);
            e->data_owned = true;
        }
        sfj_submit(&j, e);
    }

    /* Rounds: issue what may go, then the backend answers. */
    blkif_front_ring_t *fr = &c->live.ring.fr;
    while (fz_left(&f)) {
        sfj_dispatch(&j, 0, issue, done, c);
        blk_class_ops.kick(c);
        uint8_t k = fz_u8(&f) % 8;
        for (uint8_t i = 0; i < k; i++) {
            uint8_t sel = fz_u8(&f), opsel = fz_u8(&f);
            blkif_response_t rsp = {0};
            const struct sfj_entry *e = j.slots[sel % j.nslots];
            const struct blk_slot *s = &c->live.slots[sel % j.nslots];
            rsp.id = (sel & 0x80) || !e ? fz_u64(&f) : e->wire_id;
            rsp.operation = opsel < 0xe0 ? (opsel & 1 ? s->inner_op : s->wire_op) : opsel;
            static const int16_t st[] = {BLKIF_RSP_OKAY, BLKIF_RSP_ERROR, BLKIF_RSP_EOPNOTSUPP};
            uint8_t ss = fz_u8(&f);
            rsp.status = ss < 0xf0 ? st[ss % 3] : (int16_t)fz_u16(&f);
            *RING_GET_RESPONSE(fr, fr->rsp_cons + i) = rsp;
        }
        uint8_t how = fz_u8(&f);
        fr->sring->rsp_prod = how < 0xf8 ? fr->rsp_cons + k : fz_u32(&f);
        if (!harvest(c, &j))
            break;
    }

    sfj_fini(&j);
    blk_class_free(c);
    fxs_reset();
    return 0;
}
