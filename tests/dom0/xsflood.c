/* xsflood - a guest that floods shadowd with frontend reports (issue 17's
 * misbehaving neighbour): writes KEY, its FE/shadow/report, with reports
 * ("<seq> <kind> <detail>", schema.md; seq increasing, the kinds in turn so
 * each value is new) back to back on one xenstore connection, as fast as the
 * store answers. Run it as the guest (`xensim exec GUEST -- xsflood ...`):
 * the dir is the guest's own. One process, one connection: the flood is
 * xenstore requests and the watch events they fire, not fork load. (KEY
 * elsewhere, e.g. under the guest's data/, is the same load on the store
 * without waking shadowd: the control.)
 *
 *   xsflood [--seconds S] [--max N] KEY
 *
 * Stops after S seconds (default 600), N writes (default 100000000) or at
 * SIGTERM/SIGINT, then prints one line:
 *   XSFLOOD writes=<n> errors=<n> seconds=<s> rate=<writes a second>
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xenstore.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double seconds = 600;
    unsigned long max = 100000000UL;
    int i = 1;
    for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
        char *end;
        if (!strcmp(argv[i], "--seconds"))
            seconds = strtod(argv[i + 1], &end);
        else if (!strcmp(argv[i], "--max"))
            max = strtoul(argv[i + 1], &end, 10);
        else
            break;
        if (*end || end == argv[i + 1])
            break;
    }
    if (i != argc - 1 || argv[i][0] != '/' || strlen(argv[i]) > 900 || seconds <= 0) {
        fprintf(stderr, "usage: xsflood [--seconds S] [--max N] KEY\n");
        return 2;
    }
    const char *path = argv[i];
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    struct xs_handle *xs = xs_open(0);
    if (!xs) {
        fprintf(stderr, "xsflood: xs_open: %s\n", strerror(errno));
        return 1;
    }
    /* Evidence and not: what a hostile guest would send to be looked at. */
    static const char *const kinds[] = {"timeout", "bad-response", "backend-closed",
                                        "backend-vanished", "backend-restarted"};
    const unsigned nkinds = sizeof(kinds) / sizeof(kinds[0]);
    double t0 = now_s(), t = t0;
    unsigned long n = 0, errors = 0;
    while (!stop && n < max && t < t0 + seconds) {
        char val[128];
        int len = snprintf(val, sizeof(val), "%lu %s flood %lu", n + 1, kinds[n % nkinds], n + 1);
        if (xs_write(xs, XBT_NULL, path, val, (unsigned)len)) {
            n++;
        } else {
            /* Refused (its dir being rewired, a quota): not a reason to
             * stop, but no spinning on it either. */
            errors++;
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        if ((n + errors) % 64 == 0)
            t = now_s();
    }
    t = now_s();
    xs_close(xs);
    printf("XSFLOOD writes=%lu errors=%lu seconds=%.3f rate=%.0f\n", n, errors, t - t0,
           t > t0 ? (double)n / (t - t0) : 0.0);
    return 0;
}
