/* gnt-notify - the two ends of a shared page with unmap notification in both
 * directions, as libxenvchan sets it up (xengntshr_share_page_notify on one
 * end, xengnttab_map_grant_ref_notify on the other), run as processes of two
 * domains and coordinated through files in a directory W.
 *
 *   gnt-notify sharer W PEER   share a page with PEER: byte 0 is the sharer's
 *                              "alive" byte (cleared, and the sharer's port
 *                              notified, when the share ends); writes W/share
 *   gnt-notify mapper W        map it with byte 1 as the mapper's "alive" byte
 *                              (cleared, port notified, on unmap); writes W/mapped
 *
 * Either end then prints "READY pid=N", watches its event channel and prints
 * "EVENT peer_byte=V" for each event, with the peer's alive byte as it then
 * is. Touching W/release-mapper makes the mapper unmap (W/release-sharer: the
 * sharer unshare) and print "RELEASED"; W/close-mapper (W/close-sharer) makes
 * it close its grant handle without unmapping and print "CLOSED"; touching
 * W/stop, or 60 s, ends it with "SUMMARY events=N peer_byte=V".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xenevtchn.h>
#include <xengnttab.h>

#define SHARER_BYTE 0
#define MAPPER_BYTE 1

static const char *W;

static int die(const char *what)
{
    fprintf(stderr, "gnt-notify: %s: %s\n", what, strerror(errno));
    fflush(stdout);
    exit(1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int exists(const char *name)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s/%s", W, name);
    return access(p, F_OK) == 0;
}

static void put_file(const char *name, const char *text)
{
    char p[1024], tmp[1100];
    snprintf(p, sizeof(p), "%s/%s", W, name);
    snprintf(tmp, sizeof(tmp), "%s.tmp", p);
    FILE *f = fopen(tmp, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0 || rename(tmp, p) != 0)
        die(p);
}

/* Wait for an event (1), or time out (0). */
static int wait_event(xenevtchn_handle *x, int ms)
{
    struct pollfd p = {.fd = xenevtchn_fd(x), .events = POLLIN};
    int r = poll(&p, 1, ms);
    if (r < 0 && errno != EINTR)
        die("poll");
    if (r <= 0)
        return 0;
    int port = xenevtchn_pending(x);
    if (port < 0)
        die("xenevtchn_pending");
    xenevtchn_unmask(x, (evtchn_port_t)port);
    return 1;
}

/* Watch for events until W/stop or the deadline; release on W/release. */
static volatile uint8_t *peer_view; /* the page, or a copy once this end let it go */

static void watch(xenevtchn_handle *x, int peer_byte, const char *role, void (*release)(void),
                  void (*close_handle)(void))
{
    int events = 0, released = 0;
    char release_file[64], close_file[64];
    snprintf(release_file, sizeof(release_file), "release-%s", role);
    snprintf(close_file, sizeof(close_file), "close-%s", role);
    double end = now() + 60;
    printf("READY pid=%d\n", (int)getpid());
    fflush(stdout);
    while (now() < end && !exists("stop")) {
        if (wait_event(x, 50)) {
            events++;
            printf("EVENT peer_byte=%d\n", peer_view[peer_byte]);
            fflush(stdout);
        }
        if (!released && exists(release_file)) {
            released = 1;
            release();
            printf("RELEASED\n");
            fflush(stdout);
        }
        if (!released && exists(close_file)) {
            released = 1;
            close_handle();
            printf("CLOSED\n");
            fflush(stdout);
        }
    }
    printf("SUMMARY events=%d peer_byte=%d\n", events, peer_view[peer_byte]);
    fflush(stdout);
}

static xengntshr_handle *gs;
static xengnttab_handle *gt;
static uint8_t *page;
static uint8_t shadow[4096];

static void unshare(void)
{
    /* Our mapping goes; keep watching the peer's byte through a copy. */
    memcpy(shadow, page, sizeof(shadow));
    peer_view = shadow;
    if (xengntshr_unshare(gs, page, 1) < 0)
        die("xengntshr_unshare");
}

static void close_gs(void)
{
    memcpy(shadow, page, sizeof(shadow));
    peer_view = shadow;
    xengntshr_close(gs); /* unshares what it still shares */
    gs = NULL;
}

static void close_gt(void)
{
    memcpy(shadow, page, sizeof(shadow));
    peer_view = shadow;
    xengnttab_close(gt); /* unmaps what it still maps */
    gt = NULL;
}

static void unmap(void)
{
    memcpy(shadow, page, sizeof(shadow));
    peer_view = shadow;
    if (xengnttab_unmap(gt, page, 1) < 0)
        die("xengnttab_unmap");
}

static int sharer(unsigned peer)
{
    xenevtchn_handle *x = xenevtchn_open(NULL, 0);
    gs = xengntshr_open(NULL, 0);
    if (!x || !gs)
        die("open");
    int port = xenevtchn_bind_unbound_port(x, peer);
    if (port < 0)
        die("xenevtchn_bind_unbound_port");
    uint32_t ref;
    page = xengntshr_share_page_notify(gs, peer, &ref, 1, SHARER_BYTE, (evtchn_port_t)port);
    if (!page)
        die("xengntshr_share_page_notify");
    peer_view = page;
    page[SHARER_BYTE] = 1;
    page[MAPPER_BYTE] = 0;
    const char *hyp = getenv("XENSIM_HYP");
    const char *d = hyp ? strstr(hyp, "/dom") : NULL;
    char text[128];
    snprintf(text, sizeof(text), "%u %d %s %d\n", ref, port, d ? d + 4 : "0", (int)getpid());
    put_file("share", text);
    double end = now() + 30;
    while (!exists("mapped") && now() < end)
        usleep(10000);
    if (!exists("mapped")) {
        fprintf(stderr, "gnt-notify: no mapper came\n");
        return 1;
    }
    watch(x, MAPPER_BYTE, "sharer", unshare, close_gs);
    xengntshr_close(gs);
    xenevtchn_close(x);
    return 0;
}

static int mapper(void)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s/share", W);
    double end = now() + 30;
    FILE *f = NULL;
    while (!(f = fopen(p, "r")) && now() < end)
        usleep(10000);
    unsigned ref, sdom;
    int sport, spid;
    if (!f || fscanf(f, "%u %d %u/hyp.sock %d", &ref, &sport, &sdom, &spid) != 4)
        die("reading W/share");
    fclose(f);
    xenevtchn_handle *x = xenevtchn_open(NULL, 0);
    gt = xengnttab_open(NULL, 0);
    if (!x || !gt)
        die("open");
    int port = xenevtchn_bind_interdomain(x, sdom, (evtchn_port_t)sport);
    if (port < 0)
        die("xenevtchn_bind_interdomain");
    /* Xen sets the new port pending ("we may have lost notifications"). */
    if (!wait_event(x, 2000)) {
        fprintf(stderr, "gnt-notify: no event after bind_interdomain\n");
        return 1;
    }
    page = xengnttab_map_grant_ref_notify(gt, sdom, ref, PROT_READ | PROT_WRITE, MAPPER_BYTE,
                                          (evtchn_port_t)port);
    if (!page)
        die("xengnttab_map_grant_ref_notify");
    peer_view = page;
    page[MAPPER_BYTE] = 1;
    char text[64];
    snprintf(text, sizeof(text), "%d\n", (int)getpid());
    put_file("mapped", text);
    watch(x, SHARER_BYTE, "mapper", unmap, close_gt);
    xengnttab_close(gt);
    xenevtchn_close(x);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 4 && !strcmp(argv[1], "sharer")) {
        W = argv[2];
        return sharer((unsigned)strtoul(argv[3], NULL, 10));
    }
    if (argc >= 3 && !strcmp(argv[1], "mapper")) {
        W = argv[2];
        return mapper();
    }
    fprintf(stderr, "usage: gnt-notify sharer W PEER | gnt-notify mapper W\n");
    return 2;
}
