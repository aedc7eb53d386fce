/* xs-timeline - the system tier's recorder of a recovery's timeline, in dom0:
 * it watches xenstore and prints one line per change,
 *
 *   xs-timeline [-t SECONDS] PATH...      (default 600 s, then it exits)
 *   <ms since the epoch> <path> <value>
 *
 * the value read for keys whose last element is state, domid, heartbeat or
 * recoveries, and empty for the others. In-process, so a busy emulated dom0
 * stamps each change when xenstored delivers it, not after a fork per event
 * (a shell loop around xenstore-watch and xenstore-read fell tens of seconds
 * behind and slowed the recovery it measured). dom0-lib.sh's
 * timeline_report turns the lines into phases. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xenstore.h>

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static long long mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int wanted(const char *path)
{
    static const char *const keys[] = {"state", "domid", "heartbeat", "recoveries"};
    const char *last = strrchr(path, '/');
    last = last ? last + 1 : path;
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strcmp(last, keys[i]))
            return 1;
    return 0;
}

/* The value as one word: printable, no spaces, at most 64 bytes. */
static void print_value(struct xs_handle *xs, const char *path)
{
    unsigned len = 0;
    char *v = xs_read(xs, XBT_NULL, path, &len);
    if (!v) {
        fputs("-", stdout);
        return;
    }
    for (unsigned i = 0; i < len && i < 64; i++)
        putchar(v[i] > 0x20 && v[i] < 0x7f ? v[i] : '_');
    free(v);
}

int main(int argc, char **argv)
{
    long long secs = 600;
    int i = 1;
    if (i + 1 < argc && !strcmp(argv[i], "-t")) {
        secs = atoll(argv[i + 1]);
        i += 2;
    }
    if (i >= argc || secs <= 0) {
        fprintf(stderr, "usage: xs-timeline [-t SECONDS] PATH...\n");
        return 2;
    }
    struct xs_handle *xs = xs_open(0);
    if (!xs) {
        fprintf(stderr, "xs-timeline: xs_open: %s\n", strerror(errno));
        return 1;
    }
    for (; i < argc; i++)
        if (!xs_watch(xs, argv[i], "t")) {
            fprintf(stderr, "xs-timeline: watch %s: %s\n", argv[i], strerror(errno));
            return 1;
        }
    long long end = mono_ms() + secs * 1000;
    while (mono_ms() < end) {
        struct pollfd p = {.fd = xs_fileno(xs), .events = POLLIN};
        long long left = end - mono_ms();
        if (poll(&p, 1, (int)(left < 1000 ? left : 1000)) < 0 && errno != EINTR)
            break;
        char **w;
        while ((w = xs_check_watch(xs)) != NULL) {
            const char *path = w[XS_WATCH_PATH];
            printf("%lld %s ", now_ms(), path);
            if (wanted(path))
                print_value(xs, path);
            putchar('\n');
            free(w);
        }
        fflush(stdout);
    }
    xs_close(xs);
    return 0;
}
