/* hyp_wire - xensim's hypervisor sockets (xensim/daemon/hyp_server.c): what
 * a domain's processes send on <dir>/dom<N>/hyp.sock, through the daemon's
 * own listening sockets, accept and event loop (common/evloop.c): the
 * framing (xensim/proto/msg.c: header, body length, fds with SCM_RIGHTS),
 * HYP_HELLO (version, kind, the event socket), HYP_BYE, and every operation
 * of hyp_gnt.c (share a memfd, unshare, map a domain's refs, unmap,
 * set-max, the published grant table, an object's fd) and hyp_evtchn.c
 * (bind unbound, interdomain, virq, unbind, restrict, notify, unmask), from
 * four handles of two domains (1, a guest; 2, a driver domain), with
 * handles closed abruptly and the driver domain dying or destroyed.
 * The domain table (domain.c) is not linked: dom_is_alive is the target's.
 * Checked: every request that wants a reply gets it before the next one, or
 * its handle is closed; a reply echoes its request's op and seq, carries no body with an error, and
 * the fds it says (a map's pages index its fds); after the domains are destroyed the daemon holds
 * no fd of this input. Input: messages, each: handle byte (bits 0-1: which, handles 0-1 are dom1's,
 * 2-3 dom2's; 0xFE: dom2 dying; 0xFF: dom2 destroyed; bit 7 with others: close the handle), op
 * byte, fd byte (0 none; 1-4: a sealed memfd of that many pages; 5: an unsealed one; 6: a socket
 * (the event socket); 7: two fds), length byte, then the body. */
#define _GNU_SOURCE
#include "domain.h"
#include "evloop.h"
#include "fuzz.h"
#include "hyp.h"
#include "hyp_proto.h"
#include "msg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define NH 4

static struct evloop *L;
static char dir[64];
static bool alive[3];

bool dom_is_alive(unsigned domid)
{
    return domid < 3 && alive[domid];
}

static struct handle {
    int fd;                         /* the library's end of the hyp socket, -1: not connected */
    int evfd;                       /* its end of the event socket, if it sent one */
    uint32_t want[64], want_op[64]; /* seqs (and ops) awaiting a reply */
    unsigned nwant;
} h[NH];

static void stop(void *opaque)
{
    (void)opaque;
    evloop_stop(L);
}

static void rounds(int n) /* let the daemon handle what is ready */
{
    while (n--) {
        uint64_t t = evloop_timer_create(L, 0, stop, NULL);
        evloop_run(L);
        evloop_timer_delete(L, t);
    }
}

static unsigned count_fds(void)
{
    unsigned n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static int make_fd(unsigned sel, int *keep)
{
    *keep = -1;
    if (sel >= 1 && sel <= 5) {
        int fd = memfd_create("fz", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
            return -1;
        FZ_CHECK(ftruncate(fd, (off_t)(sel == 5 ? 1 : sel) * HYP_PAGE_SIZE) == 0);
        if (sel != 5)
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL);
        return fd;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0)
        return -1;
    *keep = sv[0];
    return sv[1];
}

/* Read whatever the daemon sent to handle i; check it. */
static void drain(unsigned i)
{
    struct handle *x = &h[i];
    static union {
        uint64_t align;
        unsigned char b[XSIM_MSG_MAX];
    } body;
    for (;;) {
        struct xsim_hdr r;
        int fds[XSIM_MSG_MAX_FDS];
        unsigned nfds = XSIM_MSG_MAX_FDS;
        int rc = xsim_recv(x->fd, &r, body.b, sizeof(body.b), fds, &nfds);
        if (rc <= 0) {
            FZ_CHECK(rc == 0 || errno == EAGAIN || errno == ECONNRESET);
            if (rc == 0) { /* the daemon closed it */
                close(x->fd);
                x->fd = -1;
                x->nwant = 0;
            }
            break;
        }
        if (getenv("FUZZ_LOG")) /* replaying an input */
            fprintf(stderr, "handle %u: reply op %u seq %u err %d len %u fds %u\n", i, r.op, r.seq,
                    r.err, r.len, nfds);
        FZ_CHECK(x->nwant > 0);
        FZ_CHECK(r.seq == x->want[0] && r.op == x->want_op[0]);
        memmove(x->want, x->want + 1, --x->nwant * sizeof(x->want[0]));
        memmove(x->want_op, x->want_op + 1, x->nwant * sizeof(x->want_op[0]));
        FZ_CHECK(r.err >= 0);
        if (r.err)
            FZ_CHECK(r.len == 0 && nfds == 0);
        if (!r.err && r.op == HYP_GNT_MAP) {
            struct hyp_map_reply m;
            FZ_CHECK(r.len >= sizeof(m));
            memcpy(&m, body.b, sizeof(m));
            FZ_CHECK(r.len == sizeof(m) + (size_t)m.count * sizeof(struct hyp_map_page));
            for (uint32_t k = 0; k < m.count; k++) {
                struct hyp_map_page p;
                memcpy(&p, body.b + sizeof(m) + k * sizeof(p), sizeof(p));
                FZ_CHECK(p.fd < nfds);
            }
        }
        if (!r.err && (r.op == HYP_GNT_GTAB || r.op == HYP_GNT_OBJ))
            FZ_CHECK(nfds == 1);
        for (unsigned k = 0; k < nfds; k++)
            close(fds[k]);
    }
    if (x->evfd >= 0) {
        char b[64];
        while (recv(x->evfd, b, sizeof(b), MSG_DONTWAIT) > 0)
            ;
    }
}

static void hclose(unsigned i)
{
    if (h[i].fd >= 0)
        close(h[i].fd);
    if (h[i].evfd >= 0)
        close(h[i].evfd);
    h[i].fd = h[i].evfd = -1;
    h[i].nwant = 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    signal(SIGPIPE, SIG_IGN);
    L = evloop_create();
    snprintf(dir, sizeof(dir), "/tmp/fuzz-hyp-XXXXXX");
    FZ_CHECK(L && mkdtemp(dir));
    for (unsigned i = 0; i < NH; i++)
        h[i].fd = h[i].evfd = -1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz f = {data, size};
    unsigned fds0 = count_fds();
    char path[2][96];
    FZ_CHECK(hyp_server_init(L) == 0);
    alive[0] = alive[1] = alive[2] = true;
    for (unsigned d = 1; d <= 2; d++) {
        snprintf(path[d - 1], sizeof(path[0]), "%s/dom%u.sock", dir, d);
        FZ_CHECK(hyp_server_listen(d, path[d - 1]) == 0);
    }
    static unsigned char body[256];
    for (unsigned m = 0; m < 96 && fz_left(&f); m++) {
        uint8_t sel = fz_u8(&f), op = fz_u8(&f), fsel = fz_u8(&f), len = fz_u8(&f);
        fz_bytes(&f, body, len);
        if (sel == 0xFE || sel == 0xFF) {
            if (alive[2] || sel == 0xFF) {
                alive[2] = false;
                if (sel == 0xFE)
                    hyp_domain_dying(2);
                else
                    hyp_domain_destroyed(2);
            }
            rounds(1);
            for (unsigned i = 0; i < NH; i++)
                if (h[i].fd >= 0)
                    drain(i);
            continue;
        }
        unsigned i = sel % NH;
        if (sel & 0x80) {
            hclose(i);
            rounds(1);
            continue;
        }
        struct handle *x = &h[i];
        if (x->fd < 0) {
            x->fd = xsim_connect(path[i / 2]);
            if (x->fd < 0)
                continue; /* the domain was destroyed: no socket */
            fcntl(x->fd, F_SETFL, O_NONBLOCK);
            rounds(1); /* accepted */
        }
        int fds[2], keep[2] = {-1, -1};
        unsigned nfds = 0;
        fsel %= 8;
        if (fsel == 7) {
            fds[nfds] = make_fd(1, &keep[nfds]);
            nfds += fds[nfds] >= 0;
            fds[nfds] = make_fd(6, &keep[nfds]);
            nfds += fds[nfds] >= 0;
        } else if (fsel) {
            fds[nfds] = make_fd(fsel, &keep[nfds]);
            nfds += fds[nfds] >= 0;
        }
        struct xsim_hdr hd = {.op = op, .seq = m + 1, .len = len};
        int rc = xsim_send(x->fd, &hd, body, fds, nfds);
        for (unsigned k = 0; k < nfds; k++)
            close(fds[k]);
        for (unsigned k = 0; k < 2; k++) {
            if (keep[k] < 0)
                continue;
            if (op == HYP_HELLO && x->evfd < 0 && rc == 0)
                x->evfd = keep[k];
            else
                close(keep[k]);
        }
        if (rc == 0 && op != HYP_EVT_NOTIFY && op != HYP_EVT_UNMASK && op != HYP_BYE &&
            x->nwant < 64) {
            x->want[x->nwant] = hd.seq;
            x->want_op[x->nwant++] = op;
        }
        rounds(2);
        drain(i);
        /* every request is answered at once, or its handle closed */
        FZ_CHECK(x->fd < 0 || x->nwant == 0);
    }
    for (unsigned i = 0; i < NH; i++)
        hclose(i);
    rounds(2);
    hyp_server_fini();
    rounds(1);
    unlink(path[0]);
    unlink(path[1]);
    FZ_CHECK(count_fds() == fds0);
    return 0;
}
