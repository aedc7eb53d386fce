/* sf_validate.c - response and ring index checks. */
#define _GNU_SOURCE
#include "sf_validate.h"

#include <inttypes.h>
#include <stdio.h>

bool sfv_ring_prod_ok(uint32_t rsp_prod, uint32_t rsp_cons, uint32_t req_prod_pvt,
                      uint32_t ring_size)
{
    uint32_t avail = rsp_prod - rsp_cons;
    uint32_t outstanding = req_prod_pvt - rsp_cons;
    return outstanding <= ring_size && avail <= outstanding;
}

enum sfv_verdict sfv_check(const struct sfj *j, const struct sfv_rules *r, void *cls, uint64_t id,
                           unsigned op, int status, struct sfj_entry **out)
{
    struct sfj_entry *e;
    *out = NULL;
    switch (sfj_lookup(j, id, &e)) {
    case SFJ_FOUND:
        break;
    case SFJ_DUPLICATE:
        return SFV_DUPLICATE;
    default:
        return SFV_UNKNOWN_ID;
    }
    if (!r->op_matches(cls, e, op))
        return SFV_WRONG_OP;
    if (!r->status_ok(cls, e, status))
        return SFV_BAD_STATUS;
    *out = e;
    return SFV_OK;
}

const char *sfv_name(enum sfv_verdict v)
{
    switch (v) {
    case SFV_OK:
        return "ok";
    case SFV_UNKNOWN_ID:
        return "unknown-id";
    case SFV_DUPLICATE:
        return "duplicate";
    case SFV_WRONG_OP:
        return "wrong-op";
    case SFV_BAD_STATUS:
        return "bad-status";
    }
    return "invalid";
}

void sfv_describe(char *buf, size_t len, enum sfv_verdict v, uint64_t id, unsigned op, int status)
{
    snprintf(buf, len, "%s id=%#" PRIx64 " op=%u status=%d", sfv_name(v), id, op, status);
}
