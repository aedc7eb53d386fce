/* blkfront - the test frontend's command line: connect to a vbd and run a
 * script of commands, one line of output each ("ok: ..."), exit 1 at the
 * first failure ("FAIL: ...").
 *
 *   blkfront [OPTIONS] FE-DIR CMD...
 *   blkfront --fill-file FILE SECTOR COUNT SEED     (no Xen: pattern into a file)
 *   blkfront --check-file FILE SECTOR COUNT SEED|zero
 *
 * Options: --queues N --order N --write-order --persistent --indirect
 *          --seg FIRST:COUNT --protocol P --timeout SEC
 * Commands:
 *   connect | reconnect | close | drop
 *   await-restart           wait for the backend to restart (InitWait), then reconnect
 *   write S N SEED | read S N SEED | readzero S N
 *   scatter S COUNT STRIDE SEED   COUNT one-sector writes at S, S+STRIDE, ...
 *   flood NSEG              fill every ring with indirect reads of NSEG segments (all of
 *                           sector 0, into the same pages) before one notify; all OKAY
 *   batch N BAD SEED        N writes of 11 pages each (request k: sectors 88k.., data pages
 *                           11k..) pushed before one notify, so the backend takes them in one
 *                           pass; those whose index is in BAD (comma-separated, or -) carry a
 *                           ref that cannot be mapped: a data ref, or with --indirect their
 *                           indirect page's (then N <= 8). Bad ones ERROR, the others OKAY
 *   flush | barrier | discard S N      (expect OKAY)
 *   expect OP STATUS        OP flush|barrier|discard:S:N; STATUS a number
 *   bad KIND                a malformed request (tbad.c); its status must be what blkif.h says
 *   bad-all                 every kind in turn
 *   garbage-index           push req_prod far past the ring; the backend must close
 *   backend-state STATE     wait for the backend's state (a number)
 *   corrupt N               N flushes: each answer must be corrupt (wrong id or impossible status)
 *   no-answer MS            push a flush; it must stay unanswered for MS
 *   await-answer MS         ...and then be answered OKAY within MS
 *   latency-at-least MS     a flush must take at least MS to be answered
 *   wait-file PATH          wait (up to the timeout) until PATH exists: the test's go-ahead
 *   sleep MS
 */
#define _GNU_SOURCE
#include "tbad.h"
#include "tfront.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xen/io/xenbus.h>

static uint64_t num(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (!*s || *end || errno) {
        fprintf(stderr, "FAIL: '%s' is not a number\n", s);
        exit(2);
    }
    return v;
}

static int file_mode(bool fill, char **argv)
{
    const char *path = argv[0];
    uint64_t s = num(argv[1]), n = num(argv[2]);
    bool zero = !fill && !strcmp(argv[3], "zero");
    uint64_t seed = zero ? 0 : num(argv[3]);
    unsigned char *want = malloc(n * TF_SECTOR), *got = malloc(n * TF_SECTOR);
    int fd = open(path, fill ? O_WRONLY : O_RDONLY);
    if (!want || !got || fd < 0) {
        fprintf(stderr, "FAIL: %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (zero)
        memset(want, 0, n * TF_SECTOR);
    else
        tf_pattern(want, s, n, seed);
    int rc = 0;
    if (fill) {
        if (pwrite(fd, want, n * TF_SECTOR, (off_t)(s * TF_SECTOR)) != (ssize_t)(n * TF_SECTOR)) {
            fprintf(stderr, "FAIL: writing %s: %s\n", path, strerror(errno));
            rc = 1;
        }
    } else {
        ssize_t r = pread(fd, got, n * TF_SECTOR, (off_t)(s * TF_SECTOR));
        if (r != (ssize_t)(n * TF_SECTOR)) {
            fprintf(stderr, "FAIL: reading %s: short read (%zd)\n", path, r);
            rc = 1;
        } else {
            for (uint64_t k = 0; k < n; k++) {
                if (memcmp(want + k * TF_SECTOR, got + k * TF_SECTOR, TF_SECTOR)) {
                    printf("MISMATCH: %s sector %llu differs from %s\n", path,
                           (unsigned long long)(s + k), zero ? "zeros" : "the pattern");
                    rc = 1;
                    break;
                }
            }
            if (!rc)
                printf("ok: %s sectors %llu+%llu hold %s\n", path, (unsigned long long)s,
                       (unsigned long long)n, zero ? "zeros" : "the pattern");
        }
    }
    close(fd);
    free(want);
    free(got);
    return rc;
}

static struct tf *T;
static struct tf_opts O;

#define FAILF(...)                                                                                 \
    do {                                                                                           \
        printf("FAIL: " __VA_ARGS__);                                                              \
        printf("\n");                                                                              \
        fflush(stdout);                                                                            \
        exit(1);                                                                                   \
    } while (0)

static void need(int argc, int i, int n, const char *cmd)
{
    if (i + n >= argc)
        FAILF("%s needs %d argument(s)", cmd, n);
}

static void do_rw(int op, uint64_t s, uint64_t n, uint64_t seed, bool zero)
{
    unsigned char *want = malloc(n * TF_SECTOR), *buf = calloc(n, TF_SECTOR);
    if (!want || !buf)
        FAILF("out of memory");
    if (zero)
        memset(want, 0, n * TF_SECTOR);
    else
        tf_pattern(want, s, n, seed);
    if (op == BLKIF_OP_WRITE) {
        if (tf_rw(T, op, s, n, want) < 0)
            FAILF("write %llu+%llu: %s", (unsigned long long)s, (unsigned long long)n, T->err);
        printf("ok: wrote %llu+%llu seed %llu\n", (unsigned long long)s, (unsigned long long)n,
               (unsigned long long)seed);
    } else {
        if (tf_rw(T, op, s, n, buf) < 0)
            FAILF("read %llu+%llu: %s", (unsigned long long)s, (unsigned long long)n, T->err);
        for (uint64_t k = 0; k < n; k++)
            if (memcmp(want + k * TF_SECTOR, buf + k * TF_SECTOR, TF_SECTOR))
                FAILF("read %llu+%llu: sector %llu holds the wrong data", (unsigned long long)s,
                      (unsigned long long)n, (unsigned long long)(s + k));
        printf("ok: read %llu+%llu verified (%s)\n", (unsigned long long)s, (unsigned long long)n,
               zero ? "zeros" : "pattern");
    }
    free(want);
    free(buf);
}

static void expect_status(const char *what, int got, int want)
{
    if (got == -100)
        FAILF("%s: %s", what, T->err);
    if (got != want)
        FAILF("%s: status %d, want %d", what, got, want);
    printf("ok: %s -> status %d\n", what, got);
}

static void bad(const char *kind)
{
    int want;
    int got = tbad_send(T, kind, 64, &want);
    if (got == -101)
        FAILF("unknown bad request kind '%s'", kind);
    char what[64];
    snprintf(what, sizeof(what), "bad request %s", kind);
    expect_status(what, got, want);
}

static void garbage_index(void)
{
    struct tf_queue *q = &T->q[0];
    q->fr.sring->req_prod = q->fr.req_prod_pvt + 100000;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    xenevtchn_notify(T->xce, q->port);
    int st =
        tf_wait_state(T, T->be, 1u << XenbusStateClosing | 1u << XenbusStateClosed, O.timeout_ms);
    if (st < 0)
        FAILF("garbage index: backend did not close: %s", T->err);
    printf("ok: garbage index -> backend state %d\n", st);
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t pending_id;

static void push_flush(void)
{
    blkif_request_t req = {.operation = BLKIF_OP_FLUSH_DISKCACHE, .id = T->next_id++};
    pending_id = req.id;
    tf_push(T, 0, &req);
}

static void corrupt(unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        push_flush();
        blkif_response_t rsp;
        if (tf_next_response(T, 0, O.timeout_ms, &rsp) != 1)
            FAILF("corrupt: no answer: %s", T->err);
        bool bad_status = rsp.status != BLKIF_RSP_OKAY && rsp.status != BLKIF_RSP_ERROR &&
                          rsp.status != BLKIF_RSP_EOPNOTSUPP;
        if (rsp.id == pending_id && !bad_status)
            FAILF("corrupt: answer %u of %u is valid (id %#llx status %d)", k + 1, n,
                  (unsigned long long)rsp.id, rsp.status);
        printf("ok: corrupt answer: id %s, status %d\n", rsp.id == pending_id ? "right" : "wrong",
               rsp.status);
    }
}

static void no_answer(unsigned ms)
{
    push_flush();
    blkif_response_t rsp;
    int r = tf_next_response(T, 0, ms, &rsp);
    if (r != 0)
        FAILF("no-answer: answered within %u ms (id %#llx)", ms, (unsigned long long)rsp.id);
    printf("ok: no answer for %u ms\n", ms);
}

static void await_answer(unsigned ms)
{
    blkif_response_t rsp;
    if (tf_next_response(T, 0, ms, &rsp) != 1)
        FAILF("await-answer: nothing within %u ms", ms);
    if (rsp.id != pending_id || rsp.status != BLKIF_RSP_OKAY)
        FAILF("await-answer: id %#llx status %d, want %#llx and 0", (unsigned long long)rsp.id,
              rsp.status, (unsigned long long)pending_id);
    printf("ok: the pending request was answered\n");
}

static void latency_at_least(unsigned ms)
{
    uint64_t t0 = mono_ms();
    expect_status("flush", tf_simple(T, BLKIF_OP_FLUSH_DISKCACHE), BLKIF_RSP_OKAY);
    uint64_t took = mono_ms() - t0;
    if (took < ms)
        FAILF("latency-at-least: answered in %llu ms, want >= %u", (unsigned long long)took, ms);
    printf("ok: answered after %llu ms\n", (unsigned long long)took);
}

/* Every ring full of indirect reads of nseg segments, pushed at once: what
 * a frontend can make the backend map. Each segment is sector 0 read into
 * one of the data pages; every request shares one indirect page. */
static void flood(unsigned nseg)
{
    if (!O.indirect || T->max_indirect < nseg || nseg > TF_MAX_REQ_SEGS ||
        nseg <= BLKIF_MAX_SEGMENTS_PER_REQUEST)
        FAILF("flood: %u segments needs --indirect and a backend offering them (it offers %u)",
              nseg, T->max_indirect);
    struct blkif_request_segment seg[TF_MAX_REQ_SEGS];
    for (unsigned k = 0; k < nseg; k++)
        seg[k] = (struct blkif_request_segment){
            .gref = T->data_refs[k % TF_DATA_PAGES], .first_sect = 0, .last_sect = 0};
    memcpy(T->ind, seg, nseg * sizeof(seg[0]));
    unsigned total = 0;
    for (unsigned qi = 0; qi < T->nq; qi++) {
        struct tf_queue *q = &T->q[qi];
        for (unsigned n = RING_FREE_REQUESTS(&q->fr); n; n--) {
            struct blkif_request_indirect ir = {.operation = BLKIF_OP_INDIRECT,
                                                .indirect_op = BLKIF_OP_READ,
                                                .nr_segments = (uint16_t)nseg,
                                                .id = T->next_id++,
                                                .sector_number = 0};
            ir.indirect_grefs[0] = T->ind_refs[0];
            memcpy(RING_GET_REQUEST(&q->fr, q->fr.req_prod_pvt), &ir, sizeof(ir));
            q->fr.req_prod_pvt++;
            total++;
        }
    }
    for (unsigned qi = 0; qi < T->nq; qi++) {
        RING_PUSH_REQUESTS(&T->q[qi].fr); /* and notify regardless */
        xenevtchn_notify(T->xce, T->q[qi].port);
    }
    uint64_t end = mono_ms() + O.timeout_ms;
    for (unsigned got = 0; got < total;) {
        unsigned before = got;
        for (unsigned qi = 0; qi < T->nq; qi++) {
            blkif_response_t rsp;
            int r;
            while ((r = tf_next_response(T, qi, 0, &rsp)) == 1) {
                if (rsp.status != BLKIF_RSP_OKAY)
                    FAILF("flood: request %#llx on queue %u: status %d", (unsigned long long)rsp.id,
                          qi, rsp.status);
                got++;
            }
            if (r < 0)
                FAILF("flood: %s", T->err);
        }
        if (got == before) {
            if (mono_ms() >= end)
                FAILF("flood: %u of %u requests unanswered", total - got, total);
            blkif_response_t rsp;
            if (tf_next_response(T, 0, 50, &rsp) == 1) {
                if (rsp.status != BLKIF_RSP_OKAY)
                    FAILF("flood: request %#llx: status %d", (unsigned long long)rsp.id,
                          rsp.status);
                got++;
            }
        }
    }
    printf("ok: flood: %u reads of %u segments on %u queue(s), all OKAY (%llu pages asked)\n",
           total, nseg, T->nq, (unsigned long long)total * nseg);
}

#define BOGUS_REF 0x7ffff0u /* past any grant table: never mappable */

/* The batch command (see the top of the file). */
static void batch(unsigned n, const char *badlist, uint64_t seed)
{
    const unsigned nseg = BLKIF_MAX_SEGMENTS_PER_REQUEST;
    struct tf_queue *q = &T->q[0];
    unsigned most = O.indirect ? TF_IND_PAGES : TF_DATA_PAGES / nseg;
    if (n == 0 || n > most || n > RING_FREE_REQUESTS(&q->fr))
        FAILF("batch: %u requests: 1..%u, and as many free ring slots", n, most);
    bool bad[TF_DATA_PAGES] = {false};
    if (strcmp(badlist, "-")) {
        char *copy = strdup(badlist);
        for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
             tok = strtok_r(NULL, ",", &save)) {
            uint64_t k = num(tok);
            if (k >= n)
                FAILF("batch: bad index %llu not below %u", (unsigned long long)k, n);
            bad[k] = true;
        }
        free(copy);
    }
    uint64_t id0 = T->next_id;
    for (unsigned k = 0; k < n; k++) {
        unsigned page0 = k * nseg;
        uint64_t sector = (uint64_t)k * nseg * 8;
        tf_pattern(T->data + (size_t)page0 * TF_PAGE, sector, (uint64_t)nseg * 8, seed);
        struct blkif_request_segment segs[BLKIF_MAX_SEGMENTS_PER_REQUEST];
        for (unsigned i = 0; i < nseg; i++)
            segs[i] = (struct blkif_request_segment){
                .gref = !O.indirect && bad[k] && i == 5 ? BOGUS_REF : T->data_refs[page0 + i],
                .first_sect = 0,
                .last_sect = 7};
        blkif_request_t req;
        memset(&req, 0, sizeof(req));
        if (O.indirect) {
            struct blkif_request_indirect ir = {.operation = BLKIF_OP_INDIRECT,
                                                .indirect_op = BLKIF_OP_WRITE,
                                                .nr_segments = (uint16_t)nseg,
                                                .id = T->next_id++,
                                                .sector_number = sector};
            ir.indirect_grefs[0] = bad[k] ? BOGUS_REF : T->ind_refs[k];
            memcpy(T->ind + (size_t)k * TF_PAGE, segs, sizeof(segs));
            memcpy(&req, &ir, sizeof(ir));
        } else {
            req.operation = BLKIF_OP_WRITE;
            req.nr_segments = (uint8_t)nseg;
            req.id = T->next_id++;
            req.sector_number = sector;
            memcpy(req.seg, segs, sizeof(segs));
        }
        *RING_GET_REQUEST(&q->fr, q->fr.req_prod_pvt) = req;
        q->fr.req_prod_pvt++;
    }
    RING_PUSH_REQUESTS(&q->fr); /* all of them, then one notify */
    xenevtchn_notify(T->xce, q->port);
    unsigned nbad = 0;
    bool seen[TF_DATA_PAGES] = {false};
    for (unsigned got = 0; got < n; got++) {
        blkif_response_t rsp;
        if (tf_next_response(T, 0, O.timeout_ms, &rsp) != 1)
            FAILF("batch: %u of %u requests unanswered: %s", n - got, n, T->err);
        uint64_t k = rsp.id - id0;
        if (rsp.id < id0 || k >= n || seen[k])
            FAILF("batch: answer with unknown or repeated id %#llx", (unsigned long long)rsp.id);
        seen[k] = true;
        int want = bad[k] ? BLKIF_RSP_ERROR : BLKIF_RSP_OKAY;
        if (rsp.status != want)
            FAILF("batch: request %llu: status %d, want %d", (unsigned long long)k, rsp.status,
                  want);
        nbad += bad[k];
    }
    printf("ok: batch of %u %s writes: %u OKAY, %u ERROR as expected\n", n,
           O.indirect ? "indirect" : "direct", n - nbad, nbad);
}

static void run(int argc, char **argv, int i)
{
    for (; i < argc; i++) {
        const char *c = argv[i];
        if (!strcmp(c, "connect")) {
            if (tf_connect(T, &O) < 0)
                FAILF("connect: %s", T->err);
            printf("ok: connected (%llu sectors, %u queue(s), order %u, indirect max %u, "
                   "persistent %d/%d)\n",
                   (unsigned long long)T->sectors, T->nq, O.order, T->max_indirect, O.persistent,
                   T->be_persistent);
        } else if (!strcmp(c, "reconnect")) {
            if (tf_reconnect(T) < 0)
                FAILF("reconnect: %s", T->err);
            printf("ok: reconnected\n");
        } else if (!strcmp(c, "await-restart")) {
            if (tf_wait_state(T, T->be, 1u << XenbusStateInitWait, O.timeout_ms) < 0)
                FAILF("await-restart: %s", T->err);
            tf_drop(T);
            if (tf_write_state(T, XenbusStateInitialising) < 0 || tf_connect(T, &O) < 0)
                FAILF("await-restart: reconnect: %s", T->err);
            printf("ok: backend restarted; reconnected\n");
        } else if (!strcmp(c, "close")) {
            if (tf_close(T) < 0)
                FAILF("close: %s", T->err);
            printf("ok: closed\n");
        } else if (!strcmp(c, "drop")) {
            tf_drop(T);
            printf("ok: dropped the connection\n");
        } else if (!strcmp(c, "write") || !strcmp(c, "read")) {
            need(argc, i, 3, c);
            do_rw(c[0] == 'w' ? BLKIF_OP_WRITE : BLKIF_OP_READ, num(argv[i + 1]), num(argv[i + 2]),
                  num(argv[i + 3]), false);
            i += 3;
        } else if (!strcmp(c, "flood")) {
            need(argc, i, 1, c);
            flood((unsigned)num(argv[++i]));
        } else if (!strcmp(c, "batch")) {
            need(argc, i, 3, c);
            batch((unsigned)num(argv[i + 1]), argv[i + 2], num(argv[i + 3]));
            i += 3;
        } else if (!strcmp(c, "scatter")) { /* COUNT one-sector writes, STRIDE sectors apart */
            need(argc, i, 4, c);
            uint64_t s0 = num(argv[i + 1]), cnt = num(argv[i + 2]), stride = num(argv[i + 3]);
            unsigned char one[TF_SECTOR];
            for (uint64_t k = 0; k < cnt; k++) {
                tf_pattern(one, s0 + k * stride, 1, num(argv[i + 4]));
                if (tf_rw(T, BLKIF_OP_WRITE, s0 + k * stride, 1, one) < 0)
                    FAILF("scatter: write %llu: %s", (unsigned long long)(s0 + k * stride), T->err);
            }
            printf("ok: scattered %llu one-sector writes %llu sectors apart from %llu\n",
                   (unsigned long long)cnt, (unsigned long long)stride, (unsigned long long)s0);
            i += 4;
        } else if (!strcmp(c, "readzero")) {
            need(argc, i, 2, c);
            do_rw(BLKIF_OP_READ, num(argv[i + 1]), num(argv[i + 2]), 0, true);
            i += 2;
        } else if (!strcmp(c, "flush")) {
            expect_status("flush", tf_simple(T, BLKIF_OP_FLUSH_DISKCACHE), BLKIF_RSP_OKAY);
        } else if (!strcmp(c, "barrier")) {
            expect_status("barrier", tf_simple(T, BLKIF_OP_WRITE_BARRIER), BLKIF_RSP_OKAY);
        } else if (!strcmp(c, "discard")) {
            need(argc, i, 2, c);
            expect_status("discard", tf_discard(T, num(argv[i + 1]), num(argv[i + 2])),
                          BLKIF_RSP_OKAY);
            i += 2;
        } else if (!strcmp(c, "expect")) {
            need(argc, i, 2, c);
            const char *op = argv[i + 1];
            int want = (int)strtol(argv[i + 2], NULL, 0), got;
            unsigned long long s, n;
            if (!strcmp(op, "flush"))
                got = tf_simple(T, BLKIF_OP_FLUSH_DISKCACHE);
            else if (!strcmp(op, "barrier"))
                got = tf_simple(T, BLKIF_OP_WRITE_BARRIER);
            else if (sscanf(op, "discard:%llu:%llu", &s, &n) == 2)
                got = tf_discard(T, s, n);
            else if (sscanf(op, "write:%llu:%llu", &s, &n) == 2) {
                unsigned char *b = calloc(n, TF_SECTOR);
                got = tf_rw(T, BLKIF_OP_WRITE, s, n, b) == 0 ? 0 : -1;
                free(b);
            } else
                FAILF("expect: unknown op %s", op);
            expect_status(op, got, want);
            i += 2;
        } else if (!strcmp(c, "bad")) {
            need(argc, i, 1, c);
            bad(argv[++i]);
        } else if (!strcmp(c, "bad-all")) {
            for (const char *const *k = tbad_kinds; *k; k++)
                bad(*k);
        } else if (!strcmp(c, "garbage-index")) {
            garbage_index();
        } else if (!strcmp(c, "backend-state")) {
            need(argc, i, 1, c);
            unsigned st = (unsigned)num(argv[++i]);
            if (tf_wait_state(T, T->be, 1u << st, O.timeout_ms) < 0)
                FAILF("backend-state: %s", T->err);
            printf("ok: backend state %u\n", st);
        } else if (!strcmp(c, "corrupt")) {
            need(argc, i, 1, c);
            corrupt((unsigned)num(argv[++i]));
        } else if (!strcmp(c, "no-answer")) {
            need(argc, i, 1, c);
            no_answer((unsigned)num(argv[++i]));
        } else if (!strcmp(c, "await-answer")) {
            need(argc, i, 1, c);
            await_answer((unsigned)num(argv[++i]));
        } else if (!strcmp(c, "latency-at-least")) {
            need(argc, i, 1, c);
            latency_at_least((unsigned)num(argv[++i]));
        } else if (!strcmp(c, "wait-file")) {
            need(argc, i, 1, c);
            const char *path = argv[++i];
            uint64_t end = mono_ms() + O.timeout_ms;
            while (access(path, F_OK) != 0) {
                if (mono_ms() > end)
                    FAILF("wait-file %s: not there after %u ms", path, O.timeout_ms);
                struct timespec ts = {0, 10 * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
        } else if (!strcmp(c, "sleep")) {
            need(argc, i, 1, c);
            uint64_t ms = num(argv[++i]);
            struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
            nanosleep(&ts, NULL);
        } else {
            FAILF("unknown command '%s'", c);
        }
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    if (argc == 6 && (!strcmp(argv[1], "--fill-file") || !strcmp(argv[1], "--check-file")))
        return file_mode(argv[1][2] == 'f', argv + 2);
    setvbuf(stdout, NULL, _IOLBF, 0);
    tf_default_opts(&O);
    static const struct option opts[] = {{"queues", required_argument, NULL, 'q'},
                                         {"order", required_argument, NULL, 'o'},
                                         {"write-order", no_argument, NULL, 'w'},
                                         {"persistent", no_argument, NULL, 'p'},
                                         {"indirect", no_argument, NULL, 'i'},
                                         {"seg", required_argument, NULL, 's'},
                                         {"protocol", required_argument, NULL, 'P'},
                                         {"timeout", required_argument, NULL, 't'},
                                         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "+q:o:wpis:P:t:", opts, NULL)) != -1) {
        switch (c) {
        case 'q':
            O.queues = (unsigned)num(optarg);
            break;
        case 'o':
            O.order = (unsigned)num(optarg);
            break;
        case 'w':
            O.write_order = true;
            break;
        case 'p':
            O.persistent = true;
            break;
        case 'i':
            O.indirect = true;
            break;
        case 's':
            if (sscanf(optarg, "%u:%u", &O.seg_first, &O.seg_count) != 2)
                FAILF("--seg FIRST:COUNT");
            break;
        case 'P':
            O.protocol = optarg;
            break;
        case 't':
            O.timeout_ms = (unsigned)num(optarg) * 1000;
            break;
        default:
            return 2;
        }
    }
    if (optind + 1 > argc) {
        fprintf(stderr, "usage: blkfront [OPTIONS] FE-DIR CMD...\n");
        return 2;
    }
    T = tf_open(argv[optind]);
    if (!T)
        return 1;
    run(argc, argv, optind + 1);
    tf_free(T);
    printf("ok: done\n");
    return 0;
}
