/* gnt-check - grant-table behaviours of xensim's drop-in libxengnttab,
 * checked through Debian's xengnttab.h API. One process opens handles as
 * several domains (XENSIM_HYP is read when a handle is opened) and forks
 * where a separate process matters.
 *
 *   gnt-check CHECK A B [C]
 *
 * A, B, C are existing domains; $XENSIM_DIR is the sim. CHECK is one of
 * share-map, only-granted, readonly, bad-ref, multipage, copy, max-grants,
 * notify-port.
 * Prints "OK CHECK" and exits 0, or prints what failed and exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xenevtchn.h>
#include <xengnttab.h>
#include <xentoollog.h>

#define PAGE 4096u

static const char *simdir;
static unsigned A, B, C;

static void fail(int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL line %d: ", line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (errno %d %s)\n", errno, strerror(errno));
    va_end(ap);
    exit(1);
}
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c))                                                                                  \
            fail(__LINE__, __VA_ARGS__);                                                           \
    } while (0)
/* expr must fail (NULL or -1) with errno e. */
#define FAILS_WITH(expr, e, what)                                                                  \
    do {                                                                                           \
        errno = 0;                                                                                 \
        long long r_ = (long long)(intptr_t)(expr);                                                \
        CHECK((r_ == 0 || r_ == -1) && errno == (e), "%s: want errno %d, got r=%lld", what, e,     \
              r_);                                                                                 \
    } while (0)

static void as_dom(unsigned d)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s/dom%u/hyp.sock", simdir, d);
    setenv("XENSIM_HYP", p, 1);
}

static xengnttab_handle *gt(unsigned d)
{
    as_dom(d);
    xengnttab_handle *h = xengnttab_open(NULL, 0);
    CHECK(h, "xengnttab_open as dom%u", d);
    return h;
}

static xengntshr_handle *gs(unsigned d)
{
    as_dom(d);
    xengntshr_handle *h = xengntshr_open(NULL, 0);
    CHECK(h, "xengntshr_open as dom%u", d);
    return h;
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + i * 7 + i / PAGE);
}

static int same(const uint8_t *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(seed + i * 7 + i / PAGE))
            return 0;
    return 1;
}

/* Run fn in a child; its exit status (or 128+signal). */
static int in_child(void (*fn)(void *), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        fn(arg);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void read_byte(void *arg)
{
    volatile uint8_t *p = arg;
    signal(SIGSEGV, SIG_DFL); /* not a sanitizer's handler: the fault is the point */
    signal(SIGBUS, SIG_DFL);
    _exit(p[0] == 0x77 ? 3 : 4);
}

/* ---- share-map: data both ways between processes of two domains ---------- */

struct sm {
    uint32_t refs[3];
    int to_child[2], to_parent[2];
};

static void sm_child(void *arg)
{
    struct sm *s = arg;
    xengnttab_handle *g = gt(B);
    uint8_t *m = xengnttab_map_domain_grant_refs(g, 3, A, s->refs, PROT_READ | PROT_WRITE);
    CHECK(m, "dom%u maps dom%u's 3 pages", B, A);
    CHECK(same(m, 3 * PAGE, 0x11), "mapper sees what the sharer wrote");
    fill(m, 3 * PAGE, 0x22);
    char c = 'm';
    CHECK(write(s->to_parent[1], &c, 1) == 1, "pipe");
    CHECK(read(s->to_child[0], &c, 1) == 1, "pipe");
    CHECK(same(m, 3 * PAGE, 0x33), "mapper sees the sharer's later writes");
    uint8_t *one = xengnttab_map_grant_ref(g, A, s->refs[1], PROT_READ);
    CHECK(one && one[5] == m[PAGE + 5], "single-ref map of the middle page");
    CHECK(xengnttab_unmap(g, one, 1) == 0, "unmap single");
    CHECK(xengnttab_unmap(g, m, 3) == 0, "unmap");
    xengnttab_close(g);
}

static void check_share_map(void)
{
    struct sm s;
    xengntshr_handle *sh = gs(A);
    uint8_t *p = xengntshr_share_pages(sh, B, 3, s.refs, 1);
    CHECK(p, "share 3 pages with dom%u", B);
    CHECK(s.refs[0] != s.refs[1] && s.refs[1] != s.refs[2], "distinct refs");
    CHECK(xengntshr_fd(sh) >= 0, "xengntshr_fd");
    for (size_t i = 0; i < 3 * PAGE; i++)
        CHECK(p[i] == 0, "shared pages start zeroed");
    fill(p, 3 * PAGE, 0x11);
    CHECK(pipe(s.to_child) == 0 && pipe(s.to_parent) == 0, "pipe");
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        sm_child(&s);
        _exit(0);
    }
    char c;
    CHECK(read(s.to_parent[0], &c, 1) == 1, "child mapped");
    CHECK(same(p, 3 * PAGE, 0x22), "sharer sees what the mapper wrote");
    fill(p, 3 * PAGE, 0x33);
    CHECK(write(s.to_child[1], &c, 1) == 1, "pipe");
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "mapper process failed");
    /* Like gntdev's, mappings are not inherited by a child (MADV_DONTFORK). */
    xengnttab_handle *g = gt(B);
    uint8_t *m = xengnttab_map_grant_ref(g, A, s.refs[0], PROT_READ);
    CHECK(m && m[0] == p[0], "map in this process");
    st = in_child(read_byte, m);
    CHECK(st == 128 + SIGSEGV, "a forked child touching the mapping: status %d", st);
    CHECK(xengnttab_unmap(g, m, 1) == 0, "unmap");
    xengnttab_close(g);
    CHECK(xengntshr_unshare(sh, p, 3) == 0, "unshare");
    xengntshr_close(sh);
}

/* ---- only-granted: only the grantee domain can map or copy ------------------ */

static void check_only_granted(void)
{
    xengntshr_handle *sh = gs(A);
    uint32_t ref;
    uint8_t *p = xengntshr_share_pages(sh, B, 1, &ref, 1);
    CHECK(p, "share");
    p[0] = 0x5a;
    unsigned others[] = {C, A, 0};
    for (unsigned i = 0; i < 3; i++) {
        if (others[i] == B)
            continue;
        xengnttab_handle *g = gt(others[i]);
        FAILS_WITH(xengnttab_map_grant_ref(g, A, ref, PROT_READ), EINVAL, "map by non-grantee");
        FAILS_WITH(xengnttab_map_grant_ref(g, A, ref, PROT_READ | PROT_WRITE), EINVAL,
                   "rw map by non-grantee");
        uint8_t buf[8];
        xengnttab_grant_copy_segment_t seg = {.flags = GNTCOPY_source_gref, .len = 8};
        seg.source.foreign.domid = (uint16_t)A;
        seg.source.foreign.ref = ref;
        seg.dest.virt = buf;
        CHECK(xengnttab_grant_copy(g, 1, &seg) == 0, "copy call");
        CHECK(seg.status == GNTST_general_error, "copy by non-grantee: status %d", seg.status);
        xengnttab_close(g);
    }
    xengnttab_handle *g = gt(B);
    uint8_t *m = xengnttab_map_grant_ref(g, A, ref, PROT_READ);
    CHECK(m && m[0] == 0x5a, "the grantee maps it");
    /* The grant names the granting domain: the same ref "from" another domain is not it. */
    FAILS_WITH(xengnttab_map_grant_ref(g, C, ref, PROT_READ), EINVAL, "wrong granting domain");
    CHECK(xengnttab_unmap(g, m, 1) == 0, "unmap");
    xengnttab_close(g);
    xengntshr_unshare(sh, p, 1);
    xengntshr_close(sh);
}

/* ---- readonly: a read-only grant or mapping cannot be written ------------------- */

static void write_byte(void *arg)
{
    volatile uint8_t *p = arg;
    signal(SIGSEGV, SIG_DFL); /* not a sanitizer's handler: the fault is the point */
    signal(SIGBUS, SIG_DFL);
    p[10] = 1;
}

static void check_readonly(void)
{
    xengntshr_handle *sh = gs(A);
    uint32_t ro, rw;
    uint8_t *p = xengntshr_share_pages(sh, B, 1, &ro, 0);
    uint8_t *q = xengntshr_share_pages(sh, B, 1, &rw, 1);
    CHECK(p && q, "share");
    p[10] = 0x77;
    xengnttab_handle *g = gt(B);
    FAILS_WITH(xengnttab_map_grant_ref(g, A, ro, PROT_READ | PROT_WRITE), EINVAL,
               "writable map of a read-only grant");
    uint8_t *m = xengnttab_map_grant_ref(g, A, ro, PROT_READ);
    CHECK(m && m[10] == 0x77, "read-only map reads");
    int st = in_child(write_byte, m);
    CHECK(st == 128 + SIGSEGV || st == 128 + SIGBUS, "write to a read-only mapping: status %d", st);
    FAILS_WITH(mprotect(m, PAGE, PROT_READ | PROT_WRITE), EACCES, "mprotect to writable");
    CHECK(p[10] == 0x77, "the page is unchanged");
    /* A writable grant mapped without PROT_WRITE is read-only too. */
    uint8_t *m2 = xengnttab_map_grant_ref(g, A, rw, PROT_READ);
    CHECK(m2, "read-only map of a writable grant");
    st = in_child(write_byte, m2);
    CHECK(st == 128 + SIGSEGV || st == 128 + SIGBUS, "write through a PROT_READ map: %d", st);
    /* gntdev refuses a clear-byte unmap notification on a read-only mapping. */
    FAILS_WITH(xengnttab_map_grant_ref_notify(g, A, rw, PROT_READ, 0, -1), EINVAL,
               "clear-byte notify on a read-only mapping");
    /* Grant copy into a read-only grant fails; out of it works. */
    uint8_t buf[16] = {0};
    xengnttab_grant_copy_segment_t seg[2] = {{.flags = GNTCOPY_dest_gref, .len = 4},
                                             {.flags = GNTCOPY_source_gref, .len = 16}};
    seg[0].source.virt = buf;
    seg[0].dest.foreign.domid = (uint16_t)A;
    seg[0].dest.foreign.ref = ro;
    seg[1].source.foreign.domid = (uint16_t)A;
    seg[1].source.foreign.ref = ro;
    seg[1].dest.virt = buf;
    CHECK(xengnttab_grant_copy(g, 2, seg) == 0, "copy call");
    CHECK(seg[0].status == GNTST_general_error, "copy into a read-only grant: %d", seg[0].status);
    CHECK(seg[1].status == GNTST_okay && buf[10] == 0x77, "copy out of a read-only grant");
    CHECK(p[0] == 0, "the read-only page is unchanged");
    xengnttab_unmap(g, m, 1);
    xengnttab_unmap(g, m2, 1);
    xengnttab_close(g);
    xengntshr_close(sh);
}

/* ---- bad-ref: bad refs, domids, addresses are errors, never crashes ----------------- */

/* A logger of our own: the library logs its errors here, not on stderr. */
static int logged;
static char last_log[256];

static void count_log(struct xentoollog_logger *l, xentoollog_level level, int errnoval,
                      const char *context, const char *format, va_list al)
{
    (void)l, (void)errnoval;
    if (level >= XTL_ERROR && context && !strcmp(context, "gnttab"))
        logged++;
    vsnprintf(last_log, sizeof(last_log), format, al);
}

static void check_bad_ref(void)
{
    xengntshr_handle *sh = gs(A);
    xengnttab_handle *g = gt(B);
    uint32_t ref, ref2;
    uint8_t *p = xengntshr_share_pages(sh, B, 1, &ref, 1);
    CHECK(p, "share");
    p[0] = 9;
    uint32_t never = ref + 1000;
    FAILS_WITH(xengnttab_map_grant_ref(g, A, never, PROT_READ), EINVAL, "never-granted ref");
    FAILS_WITH(xengnttab_map_grant_ref(g, A, 0, PROT_READ), EINVAL, "reserved ref 0");
    FAILS_WITH(xengnttab_map_grant_ref(g, A, 1u << 20, PROT_READ), EINVAL, "ref past the table");
    FAILS_WITH(xengnttab_map_grant_ref(g, A, 0xFFFFFFFFu, PROT_READ), EINVAL, "ref ~0");
    FAILS_WITH(xengnttab_map_grant_ref(g, 0x7FEF, ref, PROT_READ), EINVAL, "no such domain");
    FAILS_WITH(xengnttab_map_grant_ref(g, 0x12345, ref, PROT_READ), EINVAL, "domid too big");
    uint32_t two[2] = {ref, never};
    FAILS_WITH(xengnttab_map_domain_grant_refs(g, 2, A, two, PROT_READ), EINVAL,
               "one bad ref fails the whole map");
    FAILS_WITH(xengnttab_map_domain_grant_refs(g, 0, A, two, PROT_READ), EINVAL, "count 0");
    FAILS_WITH(xengnttab_map_grant_ref_notify(g, A, ref, PROT_READ | PROT_WRITE, 0, 4000), EINVAL,
               "notify on a port that is not bound");
    uint8_t *m = xengnttab_map_grant_ref(g, A, ref, PROT_READ | PROT_WRITE);
    CHECK(m && m[0] == 9, "good map still works after the failures");
    /* Errors go to the caller's logger when there is one. */
    struct xentoollog_logger lg = {.vmessage = count_log};
    as_dom(B);
    xengnttab_handle *gl = xengnttab_open(&lg, 0);
    CHECK(gl, "open with a logger");
    FAILS_WITH(xengnttab_map_grant_ref(gl, A, never, PROT_READ), EINVAL, "bad map, logged");
    CHECK(logged == 1, "one error logged through the logger, got %d (%s)", logged, last_log);
    xengnttab_close(gl);
    /* NULL handles are refused, not followed. */
    FAILS_WITH(xengnttab_map_grant_ref(NULL, A, ref, PROT_READ), EINVAL, "NULL handle");
    FAILS_WITH(xengnttab_unmap(NULL, m, 1), EINVAL, "unmap with a NULL handle");
    FAILS_WITH(xengntshr_share_pages(NULL, B, 1, &ref2, 1), EINVAL, "share with a NULL handle");
    CHECK(xengnttab_close(NULL) == 0 && xengntshr_close(NULL) == 0, "close NULL");
    FAILS_WITH(xengnttab_unmap(g, m + PAGE, 1), EINVAL, "unmap a wrong address");
    FAILS_WITH(xengnttab_unmap(g, m, 2), EINVAL, "unmap a wrong count");
    FAILS_WITH(xengnttab_unmap(g, NULL, 1), EINVAL, "unmap NULL");
    FAILS_WITH(xengntshr_unshare(sh, p + 1, 1), EINVAL, "unshare a wrong address");
    FAILS_WITH(xengntshr_share_pages(sh, B, 0, &ref2, 1), EINVAL, "share 0 pages");
    FAILS_WITH(xengntshr_share_pages(sh, B, -3, &ref2, 1), EINVAL, "share -3 pages");
    FAILS_WITH(xengntshr_share_page_notify(sh, B, &ref2, 1, 0, 4000), EINVAL,
               "share notify on a port that is not bound");
    FAILS_WITH(xengnttab_dmabuf_imp_release(g, 3), EOPNOTSUPP, "dmabuf");
    /* Revoked: no new map, but the existing one stays valid (as in Xen). */
    CHECK(xengntshr_unshare(sh, p, 1) == 0, "unshare");
    FAILS_WITH(xengnttab_map_grant_ref(g, A, ref, PROT_READ), EINVAL, "map a revoked grant");
    m[1] = 3;
    CHECK(m[0] == 9 && m[1] == 3, "an existing mapping outlives the revocation");
    CHECK(xengnttab_unmap(g, m, 1) == 0, "unmap");
    FAILS_WITH(xengnttab_unmap(g, m, 1), EINVAL, "unmap twice");
    /* Refs are not reused at once. */
    uint8_t *p2 = xengntshr_share_pages(sh, B, 1, &ref2, 1);
    CHECK(p2 && ref2 != ref, "a new share gets a new ref (%u after %u)", ref2, ref);
    FAILS_WITH(xengnttab_map_grant_ref(g, A, ref, PROT_READ), EINVAL, "old ref stays dead");
    xengntshr_unshare(sh, p2, 1);
    /* Handles of the other kind are refused. */
    FAILS_WITH(xengnttab_map_grant_ref((xengnttab_handle *)sh, A, ref2, PROT_READ), EINVAL,
               "gntshr handle used as gnttab");
    xengnttab_close(g);
    xengntshr_close(sh);
}

/* ---- multipage: many refs make one contiguous mapping ------------------------------- */

#define BIG 300 /* more than one request's worth (253) */

static void check_multipage(void)
{
    xengntshr_handle *sh = gs(A);
    static uint32_t big[BIG], refs[BIG + 5], doms[BIG + 5];
    uint8_t *p = xengntshr_share_pages(sh, B, BIG, big, 1);
    CHECK(p, "share %d pages", BIG);
    for (unsigned i = 0; i < BIG; i++)
        memset(p + (size_t)i * PAGE, (int)(i & 0xff), PAGE);
    uint8_t *single[5];
    uint32_t sref[5];
    for (unsigned i = 0; i < 5; i++) {
        single[i] = xengntshr_share_pages(sh, B, 1, &sref[i], 1);
        CHECK(single[i], "share single");
        memset(single[i], 0xE0 + (int)i, PAGE);
    }
    /* Interleave: the 5 singles in reverse, then the big share backwards. */
    unsigned n = 0;
    for (unsigned i = 0; i < 5; i++)
        refs[n++] = sref[4 - i];
    for (unsigned i = 0; i < BIG; i++)
        refs[n++] = big[BIG - 1 - i];
    for (unsigned i = 0; i < n; i++)
        doms[i] = A;
    xengnttab_handle *g = gt(B);
    uint8_t *m = xengnttab_map_grant_refs(g, n, doms, refs, PROT_READ | PROT_WRITE);
    CHECK(m, "map %u refs", n);
    for (unsigned i = 0; i < 5; i++)
        CHECK(m[(size_t)i * PAGE] == 0xE0 + 4 - i && m[(size_t)i * PAGE + PAGE - 1] == 0xE0 + 4 - i,
              "page %u", i);
    for (unsigned i = 0; i < BIG; i++) {
        uint8_t want = (uint8_t)((BIG - 1 - i) & 0xff);
        const uint8_t *pg = m + (size_t)(5 + i) * PAGE;
        CHECK(pg[0] == want && pg[PAGE / 2] == want && pg[PAGE - 1] == want, "page %u", 5 + i);
    }
    m[(size_t)(5 + BIG - 1) * PAGE] = 0x99; /* the big share's first page */
    CHECK(p[0] == 0x99, "writes land in the right page");
    /* The same refs in order through map_domain_grant_refs. */
    uint8_t *m2 = xengnttab_map_domain_grant_refs(g, BIG, A, big, PROT_READ);
    CHECK(m2 && memcmp(m2, p, (size_t)BIG * PAGE) == 0, "in-order map equals the share");
    CHECK(xengnttab_unmap(g, m2, BIG) == 0, "unmap");
    CHECK(xengnttab_unmap(g, m, n) == 0, "unmap");
    xengnttab_close(g);
    xengntshr_close(sh);
}

/* ---- copy: grant copy both ways, per-segment statuses, revocation ------------------- */

static void check_copy(void)
{
    xengntshr_handle *sh = gs(A);
    uint32_t r[2], ro;
    uint8_t *p = xengntshr_share_pages(sh, B, 2, r, 1);
    uint8_t *q = xengntshr_share_pages(sh, B, 1, &ro, 0);
    CHECK(p && q, "share");
    fill(p, 2 * PAGE, 0x40);
    xengnttab_handle *g = gt(B);
    uint8_t buf[PAGE], out[PAGE];
    fill(out, PAGE, 0x90);

    /* gref -> local, local -> gref, gref -> gref, with offsets. */
    xengnttab_grant_copy_segment_t s[3] = {
        {.flags = GNTCOPY_source_gref, .len = 1000},
        {.flags = GNTCOPY_dest_gref, .len = 500},
        {.flags = GNTCOPY_source_gref | GNTCOPY_dest_gref, .len = 96}};
    s[0].source.foreign.domid = (uint16_t)A;
    s[0].source.foreign.ref = r[1];
    s[0].source.foreign.offset = 3000;
    s[0].dest.virt = buf;
    s[1].source.virt = out;
    s[1].dest.foreign.domid = (uint16_t)A;
    s[1].dest.foreign.ref = r[0];
    s[1].dest.foreign.offset = 100;
    s[2].source.foreign.domid = (uint16_t)A;
    s[2].source.foreign.ref = r[0];
    s[2].source.foreign.offset = 0;
    s[2].dest.foreign.domid = (uint16_t)A;
    s[2].dest.foreign.ref = r[1];
    s[2].dest.foreign.offset = 4000;
    uint8_t before[100];
    memcpy(before, p, 96); /* s[2] reads page 0 at 0..95 before s[1] writes 100.. */
    CHECK(xengnttab_grant_copy(g, 3, s) == 0, "copy");
    for (int i = 0; i < 3; i++)
        CHECK(s[i].status == GNTST_okay, "segment %d status %d", i, s[i].status);
    CHECK(memcmp(buf, p + PAGE + 3000, 1000) == 0, "gref -> local");
    CHECK(memcmp(p + 100, out, 500) == 0, "local -> gref");
    CHECK(memcmp(p + PAGE + 4000, before, 96) == 0, "gref -> gref");

    /* Bad segments get their own status; good ones in the same call still copy. */
    xengnttab_grant_copy_segment_t b[6];
    memset(b, 0, sizeof(b));
    for (int i = 0; i < 6; i++) {
        b[i].flags = GNTCOPY_source_gref;
        b[i].len = 8;
        b[i].source.foreign.domid = (uint16_t)A;
        b[i].source.foreign.ref = r[0];
        b[i].dest.virt = buf + 8 * i;
        b[i].status = 99;
    }
    memset(buf, 0, 64);
    b[1].source.foreign.ref = r[0] + 777; /* in the table, never granted */
    b[2].source.foreign.ref = 1u << 20;   /* past the table */
    b[3].source.foreign.domid = 0x7FEF;   /* no such domain */
    b[4].flags = GNTCOPY_dest_gref;       /* into the read-only grant */
    b[4].source.virt = out;
    b[4].dest.foreign.domid = (uint16_t)A;
    b[4].dest.foreign.ref = ro;
    b[4].dest.foreign.offset = 0;
    CHECK(xengnttab_grant_copy(g, 6, b) == 0, "copy with bad segments");
    CHECK(b[0].status == GNTST_okay && b[5].status == GNTST_okay, "good segments");
    CHECK(memcmp(buf, p, 8) == 0 && memcmp(buf + 40, p, 8) == 0, "good segments copied");
    CHECK(b[1].status == GNTST_general_error, "never granted: %d", b[1].status);
    CHECK(b[2].status == GNTST_bad_gntref, "past the table: %d", b[2].status);
    CHECK(b[3].status == GNTST_bad_domain, "no such domain: %d", b[3].status);
    CHECK(b[4].status == GNTST_general_error, "read-only dest: %d", b[4].status);
    CHECK(q[0] == 0, "read-only page untouched");

    /* gntdev rejects the whole call for these, copying nothing. */
    memset(buf, 0, 16);
    xengnttab_grant_copy_segment_t e[2] = {{.flags = GNTCOPY_source_gref, .len = 16}};
    e[0].source.foreign.domid = (uint16_t)A;
    e[0].source.foreign.ref = r[0];
    e[0].dest.virt = buf;
    e[1] = e[0];
    e[1].len = 200;
    e[1].source.foreign.offset = 4000; /* 4000 + 200 > 4096 */
    FAILS_WITH(xengnttab_grant_copy(g, 2, e), EINVAL, "offset + len past the page");
    CHECK(buf[0] == 0 && buf[15] == 0, "nothing copied by a refused call");
    e[1].source.foreign.offset = 0;
    e[1].flags = 0;
    e[1].source.virt = out;
    FAILS_WITH(xengnttab_grant_copy(g, 2, e), EINVAL, "local -> local");

    /* A revoked grant is never reachable, even after the library cached it. */
    CHECK(xengntshr_unshare(sh, p, 2) == 0, "unshare");
    s[0].status = 99;
    s[1].status = 99;
    CHECK(xengnttab_grant_copy(g, 2, s) == 0, "copy after revocation");
    CHECK(s[0].status == GNTST_general_error && s[1].status == GNTST_general_error,
          "revoked: statuses %d %d", s[0].status, s[1].status);

    /* The other direction: B shares, A copies in and out. */
    xengntshr_handle *shb = gs(B);
    uint32_t rb;
    uint8_t *pb = xengntshr_share_pages(shb, A, 1, &rb, 1);
    CHECK(pb, "dom%u shares", B);
    fill(pb, PAGE, 0x07);
    xengnttab_handle *ga = gt(A);
    xengnttab_grant_copy_segment_t t[2] = {{.flags = GNTCOPY_source_gref, .len = 64},
                                           {.flags = GNTCOPY_dest_gref, .len = 64}};
    t[0].source.foreign.domid = (uint16_t)B;
    t[0].source.foreign.ref = rb;
    t[0].dest.virt = buf;
    t[1].source.virt = out;
    t[1].dest.foreign.domid = (uint16_t)B;
    t[1].dest.foreign.ref = rb;
    t[1].dest.foreign.offset = 1024;
    CHECK(xengnttab_grant_copy(ga, 2, t) == 0 && t[0].status == 0 && t[1].status == 0,
          "copy by dom%u", A);
    CHECK(memcmp(buf, pb, 64) == 0 && memcmp(pb + 1024, out, 64) == 0, "both directions");
    xengnttab_close(ga);
    xengntshr_close(shb);
    xengnttab_close(g);
    xengntshr_close(sh);
}

/* ---- max-grants: xengnttab_set_max_grants bounds what one handle maps -------------- */

static void check_max_grants(void)
{
    xengntshr_handle *sh = gs(A);
    uint32_t r[8];
    CHECK(xengntshr_share_pages(sh, B, 8, r, 1), "share");
    xengnttab_handle *g = gt(B);
    CHECK(xengnttab_set_max_grants(g, 4) == 0, "set_max_grants 4");
    uint8_t *m = xengnttab_map_domain_grant_refs(g, 3, A, r, PROT_READ);
    CHECK(m, "map 3 of 4");
    uint8_t *m1 = xengnttab_map_grant_ref(g, A, r[3], PROT_READ);
    CHECK(m1, "map the 4th");
    FAILS_WITH(xengnttab_map_grant_ref(g, A, r[4], PROT_READ), ENOMEM, "a 5th is over the limit");
    FAILS_WITH(xengnttab_map_domain_grant_refs(g, 5, A, r, PROT_READ), ENOMEM, "5 at once");
    CHECK(xengnttab_unmap(g, m, 3) == 0, "unmap 3");
    uint8_t *m2 = xengnttab_map_domain_grant_refs(g, 3, A, r + 4, PROT_READ);
    CHECK(m2, "room again after unmapping");
    FAILS_WITH(xengnttab_set_max_grants(g, 70000), E2BIG, "above gntdev's limit");
    /* Another handle of the same domain has its own limit. */
    xengnttab_handle *g2 = gt(B);
    uint8_t *m3 = xengnttab_map_domain_grant_refs(g2, 8, A, r, PROT_READ);
    CHECK(m3, "a second handle maps all 8");
    xengnttab_close(g2);
    xengnttab_close(g);
    xengntshr_close(sh);
}

/* ---- notify-port: an unmap notification holds its port open ----------------- */

static int event_within(xenevtchn_handle *x, int ms)
{
    struct pollfd p = {.fd = xenevtchn_fd(x), .events = POLLIN};
    if (poll(&p, 1, ms) != 1)
        return -1;
    int port = xenevtchn_pending(x);
    if (port > 0)
        xenevtchn_unmask(x, (evtchn_port_t)port);
    return port;
}

static void check_notify_port(void)
{
    xengntshr_handle *sh = gs(A);
    uint32_t ref;
    uint8_t *p = xengntshr_share_pages(sh, B, 1, &ref, 1);
    CHECK(p, "share");
    as_dom(A);
    xenevtchn_handle *xa = xenevtchn_open(NULL, 0);
    as_dom(B);
    xenevtchn_handle *xb = xenevtchn_open(NULL, 0);
    CHECK(xa && xb, "evtchn open");
    int pa = xenevtchn_bind_unbound_port(xa, B);
    int pb = xenevtchn_bind_interdomain(xb, A, (evtchn_port_t)pa);
    CHECK(pa > 0 && pb > 0 && event_within(xb, 2000) == pb, "channel");
    xengnttab_handle *g = gt(B);
    uint8_t *m =
        xengnttab_map_grant_ref_notify(g, A, ref, PROT_READ | PROT_WRITE, 100, (evtchn_port_t)pb);
    CHECK(m, "map with notify");
    m[100] = 1;
    /* The handle that bound the port goes first; the notification still goes out
     * on it (Linux: the notify took a reference with evtchn_get). */
    xenevtchn_close(xb);
    CHECK(event_within(xa, 200) < 0, "closing the handle sends nothing");
    CHECK(xengnttab_unmap(g, m, 1) == 0, "unmap");
    CHECK(event_within(xa, 2000) == pa, "the notification came on the held port");
    CHECK(p[100] == 0, "and cleared the byte");
    /* Then the port is closed for good: A's end is unbound and B can bind again. */
    as_dom(B);
    xb = xenevtchn_open(NULL, 0);
    CHECK(xb && xenevtchn_bind_interdomain(xb, A, (evtchn_port_t)pa) == pb,
          "B's port was closed after the notification");
    xenevtchn_close(xb);
    xenevtchn_close(xa);
    xengnttab_close(g);
    xengntshr_close(sh);
}

int main(int argc, char **argv)
{
    simdir = getenv("XENSIM_DIR");
    if (argc < 4 || !simdir) {
        fprintf(stderr, "usage: XENSIM_DIR=DIR gnt-check CHECK A B [C]\n");
        return 2;
    }
    A = (unsigned)strtoul(argv[2], NULL, 10);
    B = (unsigned)strtoul(argv[3], NULL, 10);
    C = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : 0;
    const char *c = argv[1];
    if (!strcmp(c, "share-map"))
        check_share_map();
    else if (!strcmp(c, "only-granted"))
        check_only_granted();
    else if (!strcmp(c, "readonly"))
        check_readonly();
    else if (!strcmp(c, "bad-ref"))
        check_bad_ref();
    else if (!strcmp(c, "multipage"))
        check_multipage();
    else if (!strcmp(c, "copy"))
        check_copy();
    else if (!strcmp(c, "max-grants"))
        check_max_grants();
    else if (!strcmp(c, "notify-port"))
        check_notify_port();
    else {
        fprintf(stderr, "gnt-check: unknown check '%s'\n", c);
        return 2;
    }
    printf("OK %s\n", c);
    return 0;
}
