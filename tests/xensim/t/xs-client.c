/* xs-client - run xenstore operations through Debian's libxenstore and print
 * each result, so tests can check xenstored's exact error codes.
 *
 *   xs-client CMD...      (XENSTORED_PATH selects the domain's socket)
 *
 * Each CMD is one argument, words separated by spaces; results are one line
 * each: the value, "OK", or "!ENAME" for an error. A command may run in a
 * named transaction: "read@t1 /a" after "start t1".
 *
 *   read P | write P V | mkdir P | rm P | ls P | perms P | chmod P n0,r5 |
 *   start T | end T T|F | watch P TOKEN | unwatch P TOKEN |
 *   event [MS] (next watch event "path token", or TIMEOUT) | noevent MS |
 *   drain MS (every event arriving within MS, one a line) |
 *   until PATH [MS] (every event up to one for PATH, or TIMEOUT) |
 *   domainpath N | introduced N | introduce N MFN PORT | release N |
 *   resume N | settarget N T | control WORDS... | sleep MS |
 *   waitfile FILE [MS] (until FILE exists: a test's go-ahead)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xenstore.h>

#define MAXT 64
static struct {
    char name[32];
    xs_transaction_t t;
} txs[MAXT];
static int ntxs;

static void print_err(void)
{
    int e = errno;
    for (size_t i = 0; i < sizeof(xsd_errors) / sizeof(xsd_errors[0]); i++) {
        if (xsd_errors[i].errnum == e) {
            printf("!%s\n", xsd_errors[i].errstring);
            return;
        }
    }
    printf("!errno%d\n", e);
}

static xs_transaction_t find_tx(const char *name)
{
    for (int i = 0; i < ntxs; i++)
        if (strcmp(txs[i].name, name) == 0)
            return txs[i].t;
    fprintf(stderr, "xs-client: no transaction %s\n", name);
    exit(2);
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Next watch event within ms, or NULL. */
static char **next_event(struct xs_handle *h, long ms)
{
    long deadline = now_ms() + ms;
    for (;;) {
        char **v = xs_check_watch(h);
        if (v)
            return v;
        long left = deadline - now_ms();
        if (left <= 0)
            return NULL;
        struct pollfd p = {.fd = xs_fileno(h), .events = POLLIN};
        poll(&p, 1, (int)(left > 50 ? 50 : left));
    }
}

static int parse_perms(char *s, struct xs_permissions *p, int max)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","), n++) {
        switch (tok[0]) {
        case 'n':
            p[n].perms = XS_PERM_NONE;
            break;
        case 'r':
            p[n].perms = XS_PERM_READ;
            break;
        case 'w':
            p[n].perms = XS_PERM_WRITE;
            break;
        case 'b':
            p[n].perms = XS_PERM_READ | XS_PERM_WRITE;
            break;
        default:
            return -1;
        }
        p[n].id = (unsigned)strtoul(tok + 1, NULL, 0);
    }
    return n;
}

static void ok(bool b)
{
    if (b)
        printf("OK\n");
    else
        print_err();
}

static void run(struct xs_handle *h, char *cmdline)
{
    char *w[64];
    int n = 0;
    for (char *tok = strtok(cmdline, " "); tok && n < 64; tok = strtok(NULL, " "))
        w[n++] = tok;
    if (!n)
        return;
    xs_transaction_t t = XBT_NULL;
    char *at = strchr(w[0], '@');
    if (at) {
        *at = '\0';
        t = find_tx(at + 1);
    }
    const char *op = w[0];
    unsigned len;
    if (!strcmp(op, "read") && n == 2) {
        char *v = xs_read(h, t, w[1], &len);
        if (v)
            printf("%s\n", v);
        else
            print_err();
        free(v);
    } else if (!strcmp(op, "write") && n >= 2) {
        const char *v = n > 2 ? w[2] : "";
        ok(xs_write(h, t, w[1], v, (unsigned)strlen(v)));
    } else if (!strcmp(op, "mkdir") && n == 2) {
        ok(xs_mkdir(h, t, w[1]));
    } else if (!strcmp(op, "rm") && n == 2) {
        ok(xs_rm(h, t, w[1]));
    } else if (!strcmp(op, "ls") && n == 2) {
        char **v = xs_directory(h, t, w[1], &len);
        if (!v) {
            print_err();
            return;
        }
        for (unsigned i = 0; i < len; i++)
            printf("%s%s", i ? " " : "", v[i]);
        printf("\n");
        free(v);
    } else if (!strcmp(op, "perms") && n == 2) {
        struct xs_permissions *p = xs_get_permissions(h, t, w[1], &len);
        if (!p) {
            print_err();
            return;
        }
        for (unsigned i = 0; i < len; i++) {
            const char *c = "nrwb";
            printf("%s%c%u", i ? "," : "", c[p[i].perms & 3], p[i].id);
        }
        printf("\n");
        free(p);
    } else if (!strcmp(op, "chmod") && n == 3) {
        struct xs_permissions p[16];
        int np = parse_perms(w[2], p, 16);
        if (np < 0) {
            fprintf(stderr, "xs-client: bad perms\n");
            exit(2);
        }
        ok(xs_set_permissions(h, t, w[1], p, (unsigned)np));
    } else if (!strcmp(op, "start") && n == 2) {
        if (ntxs == MAXT)
            exit(2);
        xs_transaction_t nt = xs_transaction_start(h);
        if (nt == XBT_NULL) {
            print_err();
            return;
        }
        snprintf(txs[ntxs].name, sizeof(txs[ntxs].name), "%s", w[1]);
        txs[ntxs++].t = nt;
        printf("OK\n");
    } else if (!strcmp(op, "end") && n == 3) {
        ok(xs_transaction_end(h, find_tx(w[1]), strcmp(w[2], "F") == 0));
    } else if (!strcmp(op, "watch") && n == 3) {
        ok(xs_watch(h, w[1], w[2]));
    } else if (!strcmp(op, "unwatch") && n == 3) {
        ok(xs_unwatch(h, w[1], w[2]));
    } else if (!strcmp(op, "event")) {
        char **v = next_event(h, n > 1 ? atol(w[1]) : 2000);
        if (v)
            printf("%s %s\n", v[XS_WATCH_PATH], v[XS_WATCH_TOKEN]);
        else
            printf("TIMEOUT\n");
        free(v);
    } else if (!strcmp(op, "noevent") && n == 2) {
        char **v = next_event(h, atol(w[1]));
        if (v)
            printf("UNEXPECTED %s %s\n", v[XS_WATCH_PATH], v[XS_WATCH_TOKEN]);
        else
            printf("NONE\n");
        free(v);
    } else if (!strcmp(op, "drain") && n == 2) {
        long deadline = now_ms() + atol(w[1]);
        char **v;
        while ((v = next_event(h, deadline - now_ms()))) {
            printf("%s %s\n", v[XS_WATCH_PATH], v[XS_WATCH_TOKEN]);
            free(v);
        }
    } else if (!strcmp(op, "until") && n >= 2) {
        long deadline = now_ms() + (n > 2 ? atol(w[2]) : 20000);
        for (;;) {
            char **v = next_event(h, deadline - now_ms());
            if (!v) {
                printf("TIMEOUT\n");
                break;
            }
            printf("%s %s\n", v[XS_WATCH_PATH], v[XS_WATCH_TOKEN]);
            bool last = strcmp(v[XS_WATCH_PATH], w[1]) == 0;
            free(v);
            if (last)
                break;
        }
    } else if (!strcmp(op, "domainpath") && n == 2) {
        char *v = xs_get_domain_path(h, (unsigned)atoi(w[1]));
        if (v)
            printf("%s\n", v);
        else
            print_err();
        free(v);
    } else if (!strcmp(op, "introduced") && n == 2) {
        errno = 0;
        bool b = xs_is_domain_introduced(h, (unsigned)atoi(w[1]));
        if (!b && errno)
            print_err();
        else
            printf("%s\n", b ? "T" : "F");
    } else if (!strcmp(op, "introduce") && n == 4) {
        ok(xs_introduce_domain(h, (unsigned)atoi(w[1]), strtoul(w[2], NULL, 0),
                               (unsigned)atoi(w[3])));
    } else if (!strcmp(op, "release") && n == 2) {
        ok(xs_release_domain(h, (unsigned)atoi(w[1])));
    } else if (!strcmp(op, "resume") && n == 2) {
        ok(xs_resume_domain(h, (unsigned)atoi(w[1])));
    } else if (!strcmp(op, "settarget") && n == 3) {
        ok(xs_set_target(h, (unsigned)atoi(w[1]), (unsigned)atoi(w[2])));
    } else if (!strcmp(op, "control") && n >= 2) {
        char data[1024];
        size_t dl = 0;
        for (int i = 2; i < n && dl + strlen(w[i]) + 1 < sizeof(data); i++) {
            memcpy(data + dl, w[i], strlen(w[i]) + 1);
            dl += strlen(w[i]) + 1;
        }
        char *v = xs_control_command(h, w[1], data, (unsigned)dl);
        if (v)
            printf("%s\n", v);
        else
            print_err();
        free(v);
    } else if (!strcmp(op, "waitfile") && n >= 2) {
        long deadline = now_ms() + (n > 2 ? atol(w[2]) : 20000);
        while (access(w[1], F_OK) != 0 && now_ms() < deadline)
            usleep(10000);
    } else if (!strcmp(op, "sleep") && n == 2) {
        usleep((useconds_t)atoi(w[1]) * 1000);
    } else {
        fprintf(stderr, "xs-client: bad command '%s'\n", op);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: xs-client CMD...\n");
        return 2;
    }
    struct xs_handle *h = xs_open(0);
    if (!h) {
        perror("xs-client: xs_open");
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        char *copy = strdup(argv[i]);
        run(h, copy);
        free(copy);
    }
    xs_close(h);
    return 0;
}
