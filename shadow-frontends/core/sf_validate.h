/* sf_validate.h - checks on what a backend puts in shared memory, made on a
 * private copy before anything acts on it: ring indexes, and each response
 * against the journal. A failed check means the backend misbehaves; the
 * caller starts a recovery and touches nothing the response names. */
#ifndef SF_VALIDATE_H
#define SF_VALIDATE_H

#include "sf_journal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The backend's response producer index is sane: it announces no more
 * responses than requests are outstanding on the ring (which also bounds it
 * by the ring size). Unsigned ring arithmetic, as in xen/io/ring.h. */
bool sfv_ring_prod_ok(uint32_t rsp_prod, uint32_t rsp_cons, uint32_t req_prod_pvt,
                      uint32_t ring_size);

enum sfv_verdict {
    SFV_OK = 0,
    SFV_UNKNOWN_ID, /* no request with that id is outstanding */
    SFV_DUPLICATE,  /* that request was already answered */
    SFV_WRONG_OP,   /* the operation is not the request's */
    SFV_BAD_STATUS, /* a status the protocol does not allow for the operation */
};

/* The class's rules for one response; cls is the class instance. */
struct sfv_rules {
    bool (*op_matches)(void *cls, const struct sfj_entry *e, unsigned rsp_op);
    bool (*status_ok)(void *cls, const struct sfj_entry *e, int status);
};

/* Check one response (already copied out of shared memory). On SFV_OK,
 * *out is the in-flight entry it answers. */
enum sfv_verdict sfv_check(const struct sfj *j, const struct sfv_rules *r, void *cls, uint64_t id,
                           unsigned op, int status, struct sfj_entry **out);

/* "unknown-id" etc. */
const char *sfv_name(enum sfv_verdict v);

/* "<verdict> id=<id> op=<op> status=<status>" into buf (truncated to len). */
void sfv_describe(char *buf, size_t len, enum sfv_verdict v, uint64_t id, unsigned op, int status);

#endif
