/* evtchn-check - event-channel behaviours of xensim's drop-in libxenevtchn,
 * checked through Debian's xenevtchn.h API. One process opens handles as
 * several domains (XENSIM_HYP is read when a handle is opened) and forks
 * where a separate process matters.
 *
 *   evtchn-check CHECK A B [C]      CHECK: basic, mask, poll, unbind, errors,
 *                                   restrict, death, many
 *   evtchn-check virq-wait N        as dom0: bind VIRQ_DOM_EXC, print READY,
 *                                   then expect N events (15 s each)
 *   evtchn-check hold W A           as this process's domain: bind to the port
 *                                   in W/port of domain A, write W/bound, sleep
 *   evtchn-check peer-gone W A B C  as A: offer a port to B in W/port; once
 *                                   W/bound appears, print READY; once
 *                                   W/destroyed appears, check that B's going
 *                                   sent nothing and left the port unbound
 *
 * $XENSIM_DIR is the sim. Prints "OK CHECK" and exits 0, or what failed and 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xen/xen.h>
#include <xenevtchn.h>

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

static xenevtchn_handle *ev(unsigned d)
{
    as_dom(d);
    xenevtchn_handle *h = xenevtchn_open(NULL, 0);
    CHECK(h, "xenevtchn_open as dom%u", d);
    return h;
}

static int readable(xenevtchn_handle *h, int ms)
{
    struct pollfd p = {.fd = xenevtchn_fd(h), .events = POLLIN};
    int r = poll(&p, 1, ms);
    CHECK(r >= 0, "poll");
    return r == 1 && (p.revents & POLLIN);
}

/* The next event within ms, or -1. Does not unmask. */
static int next_event(xenevtchn_handle *h, int ms)
{
    if (!readable(h, ms))
        return -1;
    int p = xenevtchn_pending(h);
    CHECK(p > 0, "xenevtchn_pending");
    return p;
}

/* A: unbound port for B; B: bound to it; B's initial event consumed. */
static void pair(xenevtchn_handle *ha, xenevtchn_handle *hb, int *pa, int *pb)
{
    *pa = xenevtchn_bind_unbound_port(ha, B);
    CHECK(*pa > 0, "bind_unbound_port");
    *pb = xenevtchn_bind_interdomain(hb, A, (evtchn_port_t)*pa);
    CHECK(*pb > 0, "bind_interdomain");
    /* Xen sets the new port pending at once ("we may have lost notifications"). */
    CHECK(next_event(hb, 2000) == *pb, "initial event on the bound port");
    CHECK(xenevtchn_unmask(hb, (evtchn_port_t)*pb) == 0, "unmask");
    CHECK(!readable(ha, 100), "binding sends nothing to the unbound end");
}

static void check_basic(void)
{
    xenevtchn_handle *ha = ev(A), *hb = ev(B);
    CHECK(xenevtchn_fd(ha) >= 0 && xenevtchn_fd(ha) != xenevtchn_fd(hb), "distinct fds");
    int pa, pb;
    pair(ha, hb, &pa, &pb);
    for (int i = 0; i < 3; i++) {
        CHECK(xenevtchn_notify(ha, (evtchn_port_t)pa) == 0, "notify from A");
        CHECK(next_event(hb, 2000) == pb, "B gets A's event on its port");
        CHECK(xenevtchn_unmask(hb, (evtchn_port_t)pb) == 0, "unmask");
        CHECK(!readable(ha, 0), "the sender gets nothing");
        CHECK(xenevtchn_notify(hb, (evtchn_port_t)pb) == 0, "notify from B");
        CHECK(next_event(ha, 2000) == pa, "A gets B's event");
        CHECK(xenevtchn_unmask(ha, (evtchn_port_t)pa) == 0, "unmask");
    }
    /* Loopback: a domain can bind to its own unbound port. */
    int l1 = xenevtchn_bind_unbound_port(ha, A);
    CHECK(l1 > 0, "unbound port for self");
    xenevtchn_handle *ha2 = ev(A);
    int l2 = xenevtchn_bind_interdomain(ha2, DOMID_SELF, (evtchn_port_t)l1);
    CHECK(l2 > 0 && l2 != l1, "bind to own port via DOMID_SELF");
    CHECK(next_event(ha2, 2000) == l2, "initial event");
    xenevtchn_unmask(ha2, (evtchn_port_t)l2);
    CHECK(xenevtchn_notify(ha2, (evtchn_port_t)l2) == 0 && next_event(ha, 2000) == l1,
          "loopback event");
    xenevtchn_close(ha2);
    xenevtchn_close(ha);
    xenevtchn_close(hb);
}

static void check_mask(void)
{
    xenevtchn_handle *ha = ev(A), *hb = ev(B);
    int pa, pb;
    pair(ha, hb, &pa, &pb);
    /* Delivered: masked until unmasked; further events stay pending, coalesced. */
    CHECK(xenevtchn_notify(ha, (evtchn_port_t)pa) == 0, "notify");
    CHECK(next_event(hb, 2000) == pb, "first event");
    for (int i = 0; i < 3; i++)
        CHECK(xenevtchn_notify(ha, (evtchn_port_t)pa) == 0, "notify while masked");
    CHECK(!readable(hb, 200), "no delivery while masked");
    CHECK(xenevtchn_unmask(hb, (evtchn_port_t)pb) == 0, "unmask");
    CHECK(next_event(hb, 2000) == pb, "the pending event comes on unmask");
    CHECK(!readable(hb, 200), "three events while masked are one");
    CHECK(xenevtchn_unmask(hb, (evtchn_port_t)pb) == 0, "unmask");
    CHECK(!readable(hb, 200), "unmask with nothing pending delivers nothing");
    CHECK(xenevtchn_unmask(hb, (evtchn_port_t)pb) == 0, "unmask of an unmasked port");
    CHECK(!readable(hb, 100), "still nothing");
    /* Two events before the handle reads: the first was delivered (and masked
     * the port) at once, so the second waits for the unmask. */
    CHECK(xenevtchn_notify(ha, (evtchn_port_t)pa) == 0 &&
              xenevtchn_notify(ha, (evtchn_port_t)pa) == 0,
          "two notifies");
    CHECK(next_event(hb, 2000) == pb, "event");
    CHECK(!readable(hb, 200), "one delivery while masked");
    CHECK(xenevtchn_unmask(hb, (evtchn_port_t)pb) == 0, "unmask");
    CHECK(next_event(hb, 2000) == pb, "the second event on unmask");
    CHECK(xenevtchn_unmask(hb, (evtchn_port_t)pb) == 0, "unmask");
    CHECK(!readable(hb, 200), "nothing more");
    /* Events of two ports are each delivered once. */
    int qa = xenevtchn_bind_unbound_port(ha, B);
    int qb = xenevtchn_bind_interdomain(hb, A, (evtchn_port_t)qa);
    CHECK(qa > 0 && qb > 0 && next_event(hb, 2000) == qb, "second channel");
    xenevtchn_unmask(hb, (evtchn_port_t)qb);
    xenevtchn_notify(ha, (evtchn_port_t)pa);
    xenevtchn_notify(ha, (evtchn_port_t)qa);
    int e1 = next_event(hb, 2000), e2 = next_event(hb, 2000);
    CHECK((e1 == pb && e2 == qb) || (e1 == qb && e2 == pb), "one event per port: %d %d", e1, e2);
    CHECK(!readable(hb, 100), "no more");
    /* Unmasking a port the handle does not own is ignored (evtchn's write()). */
    CHECK(xenevtchn_unmask(ha, (evtchn_port_t)pb) == 0 && xenevtchn_unmask(ha, 4000) == 0,
          "unmask foreign ports");
    xenevtchn_close(ha);
    xenevtchn_close(hb);
}

static void check_poll(void)
{
    xenevtchn_handle *ha = ev(A), *hb = ev(B);
    int pa, pb;
    pair(ha, hb, &pa, &pb);
    CHECK(!readable(hb, 150), "idle fd is not readable");
    CHECK(xenevtchn_notify(ha, (evtchn_port_t)pa) == 0, "notify");
    CHECK(readable(hb, 2000), "readable once an event is pending");
    CHECK(readable(hb, 0), "stays readable until read");
    CHECK(xenevtchn_pending(hb) == pb, "pending");
    CHECK(!readable(hb, 100), "not readable once read");
    int fd = xenevtchn_fd(hb);
    CHECK(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0, "O_NONBLOCK");
    FAILS_WITH(xenevtchn_pending(hb), EAGAIN, "pending with nothing pending, non-blocking");
    xenevtchn_unmask(hb, (evtchn_port_t)pb);
    xenevtchn_close(ha);
    xenevtchn_close(hb);
}

static void check_unbind(void)
{
    xenevtchn_handle *ha = ev(A), *hb = ev(B);
    int pa, pb;
    pair(ha, hb, &pa, &pb);
    CHECK(xenevtchn_unbind(hb, (evtchn_port_t)pb) == 0, "unbind");
    FAILS_WITH(xenevtchn_notify(hb, (evtchn_port_t)pb), ENOTCONN, "notify an unbound port");
    FAILS_WITH(xenevtchn_unbind(hb, (evtchn_port_t)pb), ENOTCONN, "unbind twice");
    FAILS_WITH(xenevtchn_unbind(hb, 1u << 20), EINVAL, "unbind a port past the table");
    /* The peer's port is unbound again: notifying it is silently dropped ... */
    CHECK(xenevtchn_notify(ha, (evtchn_port_t)pa) == 0, "notify into an unbound port");
    CHECK(!readable(hb, 150), "dropped");
    /* ... and B may bind to it again, getting the lowest free port back. */
    int pb2 = xenevtchn_bind_interdomain(hb, A, (evtchn_port_t)pa);
    CHECK(pb2 == pb, "rebind after unbind: port %d (was %d)", pb2, pb);
    CHECK(next_event(hb, 2000) == pb2, "initial event");
    xenevtchn_unmask(hb, (evtchn_port_t)pb2);
    CHECK(xenevtchn_notify(ha, (evtchn_port_t)pa) == 0 && next_event(hb, 2000) == pb2,
          "the channel works again");
    xenevtchn_unmask(hb, (evtchn_port_t)pb2);
    /* Unbinding the unbound end leaves the other end unbound; its notify is dropped. */
    CHECK(xenevtchn_unbind(ha, (evtchn_port_t)pa) == 0, "unbind A's end");
    CHECK(xenevtchn_notify(hb, (evtchn_port_t)pb2) == 0 && !readable(ha, 150), "dropped");
    /* Closing a handle closes its ports: B's port is free again. */
    int pa3 = xenevtchn_bind_unbound_port(ha, B);
    CHECK(pa3 == pa, "A's port is reused lowest-first: %d (was %d)", pa3, pa);
    xenevtchn_handle *hb2 = ev(B);
    int pb3 = xenevtchn_bind_interdomain(hb2, A, (evtchn_port_t)pa3);
    CHECK(pb3 > 0, "bind");
    xenevtchn_close(hb2);
    CHECK(xenevtchn_bind_interdomain(hb, A, (evtchn_port_t)pa3) == pb3,
          "after the handle closed, its port is free and A's is unbound again");
    xenevtchn_close(ha);
    xenevtchn_close(hb);
}

/* An event delivered and not yet read is read once after its port is
 * unbound, as the evtchn driver's ring still holds it: a caller that saw the
 * fd readable and then unbound the port must not block in pending. One that
 * came while the port was masked is gone with it. */
static void check_unbind_pending(void)
{
    xenevtchn_handle *ha = ev(A), *hb = ev(B);
    int pa, pb;
    pair(ha, hb, &pa, &pb);
    CHECK(xenevtchn_notify(ha, (evtchn_port_t)pa) == 0 && readable(hb, 2000), "an event");
    CHECK(xenevtchn_unbind(hb, (evtchn_port_t)pb) == 0, "unbind with the event unread");
    CHECK(readable(hb, 0), "still readable after the unbind");
    CHECK(xenevtchn_pending(hb) == pb, "the unbound port's event, once");
    CHECK(!readable(hb, 100), "then nothing");
    /* Masked (delivered, not unmasked), an event comes: pending, dropped by the unbind. */
    pb = xenevtchn_bind_interdomain(hb, A, (evtchn_port_t)pa);
    CHECK(pb > 0 && next_event(hb, 2000) == pb, "rebound, its initial event (masked now)");
    CHECK(xenevtchn_notify(ha, (evtchn_port_t)pa) == 0, "notify while masked");
    usleep(50000);
    CHECK(xenevtchn_unbind(hb, (evtchn_port_t)pb) == 0, "unbind");
    CHECK(!readable(hb, 100), "the masked port's pending event went with it");
    xenevtchn_close(ha);
    xenevtchn_close(hb);
}

static void check_errors(void)
{
    xenevtchn_handle *ha = ev(A), *hb = ev(B), *hc = ev(C);
    int pa = xenevtchn_bind_unbound_port(ha, B);
    CHECK(pa > 0, "bind_unbound_port");
    FAILS_WITH(xenevtchn_bind_interdomain(hb, 0x7FEF, (evtchn_port_t)pa), ESRCH, "no such domain");
    FAILS_WITH(xenevtchn_bind_interdomain(hb, A, 0), EINVAL, "port 0");
    FAILS_WITH(xenevtchn_bind_interdomain(hb, A, (evtchn_port_t)pa + 100), EINVAL, "a free port");
    FAILS_WITH(xenevtchn_bind_interdomain(hb, A, 1u << 20), EINVAL, "a port past the table");
    FAILS_WITH(xenevtchn_bind_interdomain(hc, A, (evtchn_port_t)pa), EINVAL,
               "a port offered to another domain");
    int pb = xenevtchn_bind_interdomain(hb, A, (evtchn_port_t)pa);
    CHECK(pb > 0, "the right domain binds");
    FAILS_WITH(xenevtchn_bind_interdomain(hb, A, (evtchn_port_t)pa), EINVAL,
               "a port already bound");
    FAILS_WITH(xenevtchn_bind_interdomain(ha, B, (evtchn_port_t)pb), EINVAL, "an interdomain port");
    FAILS_WITH(xenevtchn_notify(hc, (evtchn_port_t)pb), ENOTCONN,
               "notify a port of another handle");
    FAILS_WITH(xenevtchn_notify(ha, 1u << 20), ENOTCONN, "notify a port past the table");
    FAILS_WITH(xenevtchn_unbind(hc, (evtchn_port_t)pb), ENOTCONN, "unbind another handle's port");
    FAILS_WITH(xenevtchn_bind_virq(ha, VIRQ_TIMER), EINVAL, "a virq the sim does not have");
    FAILS_WITH(xenevtchn_bind_virq(ha, 9999), EINVAL, "no such virq");
    FAILS_WITH(xenevtchn_fdopen(NULL, xenevtchn_fd(ha), 0), EOPNOTSUPP, "fdopen");
    FAILS_WITH(xenevtchn_open(NULL, 0x100), EINVAL, "unknown open flags");
    FAILS_WITH(xenevtchn_pending(NULL), EINVAL, "NULL handle");
    CHECK(xenevtchn_close(NULL) == 0, "close NULL");
    /* The channel still works after all that. */
    CHECK(next_event(hb, 2000) == pb, "initial event");
    xenevtchn_unmask(hb, (evtchn_port_t)pb);
    CHECK(xenevtchn_notify(ha, (evtchn_port_t)pa) == 0 && next_event(hb, 2000) == pb, "works");
    xenevtchn_close(ha);
    xenevtchn_close(hb);
    xenevtchn_close(hc);
}

static void check_restrict(void)
{
    xenevtchn_handle *ha = ev(A), *hb = ev(B), *hr = ev(B);
    int pa = xenevtchn_bind_unbound_port(ha, B);
    int pc = xenevtchn_bind_unbound_port(ha, B);
    int early = xenevtchn_bind_unbound_port(hr, C);
    CHECK(pa > 0 && pc > 0 && early > 0, "bind");
    FAILS_WITH(xenevtchn_restrict(hr, 0), EINVAL, "restrict to dom0");
    FAILS_WITH(xenevtchn_restrict(hr, DOMID_SELF), EINVAL, "restrict to a reserved domid");
    CHECK(xenevtchn_restrict(hr, (domid_t)A) == 0, "restrict to A");
    FAILS_WITH(xenevtchn_restrict(hr, (domid_t)A), EACCES, "restrict twice");
    FAILS_WITH(xenevtchn_bind_unbound_port(hr, A), EACCES, "restricted: bind_unbound_port");
    FAILS_WITH(xenevtchn_bind_virq(hr, VIRQ_DOM_EXC), EACCES, "restricted: bind_virq");
    int pbx = xenevtchn_bind_unbound_port(hb, B);
    CHECK(pbx > 0, "an unbound port of B for B");
    FAILS_WITH(xenevtchn_bind_interdomain(hr, B, (evtchn_port_t)pbx), EACCES,
               "restricted: bind_interdomain with another domain");
    int pr = xenevtchn_bind_interdomain(hr, A, (evtchn_port_t)pa);
    CHECK(pr > 0, "restricted: bind_interdomain with A");
    CHECK(next_event(hr, 2000) == pr, "initial event");
    xenevtchn_unmask(hr, (evtchn_port_t)pr);
    CHECK(xenevtchn_notify(ha, (evtchn_port_t)pa) == 0 && next_event(hr, 2000) == pr,
          "restricted handle gets events");
    CHECK(xenevtchn_notify(hr, (evtchn_port_t)early) == 0,
          "ports bound before restricting remain usable");
    /* The restriction is the handle's, not the domain's. */
    CHECK(xenevtchn_bind_interdomain(hb, A, (evtchn_port_t)pc) > 0, "another handle of B");
    xenevtchn_close(ha);
    xenevtchn_close(hb);
    xenevtchn_close(hr);
}

static void check_death(void)
{
    xenevtchn_handle *ha = ev(A);
    int pa = xenevtchn_bind_unbound_port(ha, B);
    CHECK(pa > 0, "bind_unbound_port");
    int pp[2];
    CHECK(pipe(pp) == 0, "pipe");
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        xenevtchn_handle *h = ev(B);
        int p = xenevtchn_bind_interdomain(h, A, (evtchn_port_t)pa);
        if (write(pp[1], &p, sizeof(p)) != sizeof(p))
            _exit(1);
        for (;;)
            pause();
    }
    int pb;
    CHECK(read(pp[0], &pb, sizeof(pb)) == sizeof(pb) && pb > 0, "child bound");
    xenevtchn_handle *hb = ev(B);
    FAILS_WITH(xenevtchn_bind_interdomain(hb, A, (evtchn_port_t)pa), EINVAL,
               "bound while the process lives");
    CHECK(kill(pid, SIGKILL) == 0 && waitpid(pid, NULL, 0) == pid, "kill");
    /* The dead process's port closes: A's is unbound again (no event), B's free. */
    int again = -1;
    for (int i = 0; i < 100 && again < 0; i++) {
        again = xenevtchn_bind_interdomain(hb, A, (evtchn_port_t)pa);
        if (again < 0)
            usleep(20000);
    }
    CHECK(again == pb, "rebind after the process died: port %d (the dead one had %d)", again, pb);
    CHECK(!readable(ha, 100), "the death sent nothing to A");
    CHECK(next_event(hb, 2000) == again, "initial event");
    xenevtchn_unmask(hb, (evtchn_port_t)again);
    CHECK(xenevtchn_notify(ha, (evtchn_port_t)pa) == 0 && next_event(hb, 2000) == again,
          "the channel works with the new process");
    xenevtchn_close(ha);
    xenevtchn_close(hb);
}

/* 1500 channels in one process (3000 doorbells and more, past a 1024-fd soft
 * limit), all pending at once: none lost, none doubled. */
#define MANY 1500

static void check_many(void)
{
    xenevtchn_handle *ha = ev(A), *hb = ev(B);
    static int pa[MANY], pb[MANY];
    static unsigned char seen[4096];
    for (int i = 0; i < MANY; i++) {
        pa[i] = xenevtchn_bind_unbound_port(ha, B);
        CHECK(pa[i] > 0, "bind_unbound_port %d", i);
        pb[i] = xenevtchn_bind_interdomain(hb, A, (evtchn_port_t)pa[i]);
        CHECK(pb[i] > 0 && pb[i] < 4096, "bind_interdomain %d", i);
    }
    /* The initial events of all the binds, then one notify per channel. */
    for (int round = 0; round < 2; round++) {
        memset(seen, 0, sizeof(seen));
        if (round == 1) {
            for (int i = 0; i < MANY; i++)
                CHECK(xenevtchn_notify(ha, (evtchn_port_t)pa[i]) == 0, "notify %d", i);
        }
        for (int i = 0; i < MANY; i++) {
            int p = next_event(hb, 5000);
            CHECK(p > 0 && p < 4096 && !seen[p], "round %d event %d: port %d", round, i, p);
            seen[p] = 1;
        }
        CHECK(!readable(hb, 200), "round %d: no extra events", round);
        for (int i = 0; i < MANY; i++)
            CHECK(seen[pb[i]] && xenevtchn_unmask(hb, (evtchn_port_t)pb[i]) == 0, "port %d", i);
    }
    xenevtchn_close(ha);
    xenevtchn_close(hb);
}

static int virq_wait(int n)
{
    xenevtchn_handle *h = xenevtchn_open(NULL, 0); /* this process's domain: dom0 */
    CHECK(h, "open");
    int p = xenevtchn_bind_virq(h, VIRQ_DOM_EXC);
    CHECK(p > 0, "bind_virq VIRQ_DOM_EXC");
    xenevtchn_handle *h2 = xenevtchn_open(NULL, 0);
    FAILS_WITH(xenevtchn_bind_virq(h2, VIRQ_DOM_EXC), EEXIST, "VIRQ_DOM_EXC bound twice");
    xenevtchn_close(h2);
    printf("READY\n");
    fflush(stdout);
    for (int i = 0; i < n; i++) {
        CHECK(next_event(h, 15000) == p, "VIRQ_DOM_EXC event %d", i + 1);
        printf("DOM_EXC %d\n", i + 1);
        fflush(stdout);
        /* Consume what one domain event raises, then unmask for the next. */
        usleep(300000);
        xenevtchn_unmask(h, (evtchn_port_t)p);
        while (next_event(h, 300) == p)
            xenevtchn_unmask(h, (evtchn_port_t)p);
    }
    xenevtchn_close(h);
    return 0;
}

static int wait_file(const char *w, const char *name, int secs)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s/%s", w, name);
    for (int i = 0; i < secs * 100; i++) {
        if (access(p, F_OK) == 0)
            return 0;
        usleep(10000);
    }
    return -1;
}

static void put_int(const char *w, const char *name, int v)
{
    char p[1024], t[1100];
    snprintf(p, sizeof(p), "%s/%s", w, name);
    snprintf(t, sizeof(t), "%s.tmp", p);
    FILE *f = fopen(t, "w");
    CHECK(f && fprintf(f, "%d\n", v) > 0 && fclose(f) == 0 && rename(t, p) == 0, "write %s", p);
}

static int hold(const char *w)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s/port", w);
    CHECK(wait_file(w, "port", 20) == 0, "W/port");
    FILE *f = fopen(p, "r");
    int port;
    CHECK(f && fscanf(f, "%d", &port) == 1, "read W/port");
    fclose(f);
    xenevtchn_handle *h = xenevtchn_open(NULL, 0);
    CHECK(h, "open");
    int mine = xenevtchn_bind_interdomain(h, A, (evtchn_port_t)port);
    CHECK(mine > 0, "bind_interdomain");
    put_int(w, "bound", mine);
    /* Until the channel goes away (the domain's end) or a minute passes. */
    for (int i = 0; i < 600; i++) {
        if (readable(h, 100) && xenevtchn_pending(h) < 0)
            break;
    }
    xenevtchn_close(h);
    return 0;
}

static int peer_gone(const char *w)
{
    xenevtchn_handle *ha = ev(A);
    int pa = xenevtchn_bind_unbound_port(ha, B);
    CHECK(pa > 0, "bind_unbound_port");
    put_int(w, "port", pa);
    CHECK(wait_file(w, "bound", 20) == 0, "the peer bound");
    printf("READY\n");
    fflush(stdout);
    CHECK(wait_file(w, "destroyed", 30) == 0, "W/destroyed");
    CHECK(!readable(ha, 500), "no event when the peer domain is destroyed");
    CHECK(xenevtchn_notify(ha, (evtchn_port_t)pa) == 0, "notify into the now unbound port");
    /* Unbound, for the dead domain: nobody else can bind it. */
    xenevtchn_handle *hc = ev(C);
    FAILS_WITH(xenevtchn_bind_interdomain(hc, A, (evtchn_port_t)pa), EINVAL,
               "another domain binds the dead one's port");
    /* The handle itself keeps working. */
    int q = xenevtchn_bind_unbound_port(ha, C);
    int qc = xenevtchn_bind_interdomain(hc, A, (evtchn_port_t)q);
    CHECK(q > 0 && qc > 0, "new channel");
    CHECK(next_event(hc, 2000) == qc, "initial event");
    xenevtchn_unmask(hc, (evtchn_port_t)qc);
    CHECK(xenevtchn_notify(hc, (evtchn_port_t)qc) == 0 && next_event(ha, 2000) == q, "works");
    xenevtchn_close(hc);
    xenevtchn_close(ha);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    simdir = getenv("XENSIM_DIR");
    if (argc < 3 || !simdir) {
        fprintf(stderr, "usage: see the top of evtchn-check.c\n");
        return 2;
    }
    const char *c = argv[1];
    if (!strcmp(c, "virq-wait"))
        return virq_wait(atoi(argv[2]));
    if (!strcmp(c, "hold") && argc >= 4) {
        A = (unsigned)strtoul(argv[3], NULL, 10);
        return hold(argv[2]);
    }
    if (!strcmp(c, "peer-gone") && argc >= 6) {
        A = (unsigned)strtoul(argv[3], NULL, 10);
        B = (unsigned)strtoul(argv[4], NULL, 10);
        C = (unsigned)strtoul(argv[5], NULL, 10);
        peer_gone(argv[2]);
        printf("OK peer-gone\n");
        return 0;
    }
    if (argc < 4) {
        fprintf(stderr, "usage: see the top of evtchn-check.c\n");
        return 2;
    }
    A = (unsigned)strtoul(argv[2], NULL, 10);
    B = (unsigned)strtoul(argv[3], NULL, 10);
    C = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : 0;
    if (!strcmp(c, "basic"))
        check_basic();
    else if (!strcmp(c, "mask"))
        check_mask();
    else if (!strcmp(c, "poll"))
        check_poll();
    else if (!strcmp(c, "unbind")) {
        check_unbind();
        check_unbind_pending();
    } else if (!strcmp(c, "errors"))
        check_errors();
    else if (!strcmp(c, "restrict"))
        check_restrict();
    else if (!strcmp(c, "death"))
        check_death();
    else if (!strcmp(c, "many"))
        check_many();
    else {
        fprintf(stderr, "evtchn-check: unknown check '%s'\n", c);
        return 2;
    }
    printf("OK %s\n", c);
    return 0;
}
