/* be_ring_test - be_ring_prod_ok: a frontend's req_prod is at most a ring
 * ahead of what the back ring consumed and of what it answered, across the
 * 32-bit wrap; one moved back behind req_cons (by less than a ring: what
 * xen/io/ring.h's RING_REQUEST_PROD_OVERFLOW lets through) is refused. */
#define _GNU_SOURCE
#include "be.h"
#include "check.h"

int main(void)
{
    const unsigned size = 256;
    /* Nothing outstanding: up to a ring of new requests. */
    CHECK(be_ring_prod_ok(100, 100, 100, size));
    CHECK(be_ring_prod_ok(356, 100, 100, size));
    CHECK(!be_ring_prod_ok(357, 100, 100, size));
    /* Consumed, not yet answered (a batch in flight). */
    CHECK(be_ring_prod_ok(150, 140, 100, size));
    CHECK(be_ring_prod_ok(356, 140, 100, size));
    CHECK(!be_ring_prod_ok(357, 140, 100, size));
    /* Moved back behind req_cons, still within a ring of rsp_prod_pvt: the
     * case the ring.h macro misses (130 - 100 <= 256, but 130 - 140 wraps). */
    CHECK(130u - 100u <= size);
    CHECK(!be_ring_prod_ok(130, 140, 100, size));
    CHECK(!be_ring_prod_ok(139, 140, 100, size));
    CHECK(be_ring_prod_ok(140, 140, 100, size));
    /* Across the wrap of the 32-bit indexes. */
    CHECK(be_ring_prod_ok(10, 0xfffffff0u, 0xfffffff0u, size));
    CHECK(!be_ring_prod_ok(0xffffffe0u, 0xfffffff0u, 0xffffffe0u, size));
    return check_done("be_ring_test");
}
