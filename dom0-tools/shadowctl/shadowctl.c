/* shadowctl - the operator's CLI for shadowd. See `shadowctl --help` and
 * dom0-tools/README.md. Every command but `check` asks shadowd over its
 * control socket; `check` reads the store itself. */
#define _GNU_SOURCE
#include "check.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <xenstore.h>

#define DEFAULT_SOCKET "/run/shadowd/shadowd.sock"
#define TIMEOUT_MS     10000
#define MAX_REPLY      (8u << 20)

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: shadowctl [-s SOCKET] COMMAND [ARGS]\n"
        "\n"
        "Talks to shadowd, the dom0 service that restarts failed driver domains and\n"
        "rewires their guests' devices (SOCKET: $SHADOWD_SOCKET, else " DEFAULT_SOCKET ").\n"
        "\n"
        "  status [--json]          driver domains: state, domid, devices, restarts,\n"
        "                           the recovery in progress and the last one's phases,\n"
        "                           the warm standby (standby on): its domain and state\n"
        "  history [--json]         finished recoveries, oldest first, with the duration\n"
        "                           of each phase: detect, restart, rewire, reconnect;\n"
        "                           (warm) when a standby was promoted\n"
        "  restart DOMAIN           planned restart: a new domain (the standby, if one is\n"
        "                           ready), every device rewired;\n"
        "                           shadow frontends hold and replay I/O, so nothing is\n"
        "                           lost. Also brings back a domain that is 'failed'\n"
        "                           (past its restart budget) once the cause is fixed.\n"
        "  inject DOMAIN FAULT [N]  for testing recovery:\n"
        "                             crash          the domain crashes (shutdown reason crash)\n"
        "                             hang           the domain is paused: heartbeat loss\n"
        "                             corrupt [N]    backends send N invalid responses\n"
        "                             slow [MS]      backends delay each response by MS\n"
        "                             backend-hang   backends stop serving (processes live)\n"
        "                             backend-crash  backend processes abort (the agent\n"
        "                                            restarts them)\n"
        "  metrics                  counters, Prometheus text format\n"
        "  check [-q]               validate the live xenstore against the Understudy\n"
        "                           schema (xenstore-schema/schema.md): frontend/backend\n"
        "                           pairing, permissions, formats of our keys; one line\n"
        "                           per violation; exit 1 if there is any (-q: only that)\n"
        "\n"
        "DOMAIN is a driver domain's name in shadowd's config file. Exit status: 0 done,\n"
        "1 refused or failed (the message says why), 2 usage.\n");
}

static int ask(const char *sock, const char *req)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock) >= (int)sizeof(a.sun_path)) {
        fprintf(stderr, "shadowctl: socket path too long: %s\n", sock);
        return 1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        fprintf(stderr,
                "shadowctl: cannot reach shadowd at %s: %s (is it running? systemctl status "
                "shadowd)\n",
                sock, strerror(errno));
        if (fd >= 0)
            close(fd);
        return 1;
    }
    size_t rl = strlen(req);
    if (write(fd, req, rl) != (ssize_t)rl || write(fd, "\n", 1) != 1) {
        fprintf(stderr, "shadowctl: sending to shadowd: %s\n", strerror(errno));
        close(fd);
        return 1;
    }
    char *buf = malloc(MAX_REPLY + 1);
    size_t len = 0;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    int rc = 1;
    while (buf) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long el = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (el >= TIMEOUT_MS || poll(&p, 1, (int)(TIMEOUT_MS - el)) <= 0) {
            fprintf(stderr, "shadowctl: no reply from shadowd within %d s\n", TIMEOUT_MS / 1000);
            goto out;
        }
        ssize_t n = read(fd, buf + len, MAX_REPLY - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fprintf(stderr, "shadowctl: reading from shadowd: %s\n", strerror(errno));
            goto out;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len == MAX_REPLY) {
            fprintf(stderr, "shadowctl: reply too long\n");
            goto out;
        }
    }
    if (!buf)
        goto out;
    buf[len] = 0;
    if (!strncmp(buf, "ok\n", 3)) {
        fputs(buf + 3, stdout);
        rc = 0;
    } else if (!strncmp(buf, "error: ", 7)) {
        fprintf(stderr, "shadowctl: %s", buf + 7);
    } else {
        fprintf(stderr, "shadowctl: unexpected reply from shadowd: %.80s\n", buf);
    }
out:
    free(buf);
    close(fd);
    return rc;
}

static int check(bool quiet)
{
    struct xs_handle *xs = xs_open(XS_OPEN_READONLY);
    if (!xs)
        xs = xs_open(0);
    if (!xs) {
        fprintf(stderr, "shadowctl: check: cannot reach xenstored: %s\n", strerror(errno));
        return 1;
    }
    struct check_result r;
    FILE *out = quiet ? fopen("/dev/null", "we") : stdout;
    int rc = sd_check_store(xs, out ? out : stdout, &r);
    if (out && out != stdout)
        fclose(out);
    xs_close(xs);
    if (rc < 0)
        return 1;
    if (!quiet)
        printf("%u violations (%u frontend dirs, %u backend dirs, %u keys checked)\n", r.violations,
               r.frontends, r.backends, r.keys);
    return r.violations ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *sock = getenv("SHADOWD_SOCKET");
    if (!sock || !*sock)
        sock = DEFAULT_SOCKET;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if ((!strcmp(argv[i], "-s") || !strcmp(argv[i], "--socket")) && i + 1 < argc) {
            sock = argv[++i];
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "shadowctl: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (i == argc) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[i++];
    int nargs = argc - i;
    char **args = argv + i;
    bool json = nargs == 1 && !strcmp(args[0], "--json");
    char req[512];
    if (!strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if ((!strcmp(cmd, "status") || !strcmp(cmd, "history")) && (nargs == 0 || json)) {
        snprintf(req, sizeof(req), "%s%s", cmd, json ? " json" : "");
        return ask(sock, req);
    }
    if (!strcmp(cmd, "metrics") && nargs == 0)
        return ask(sock, "metrics");
    if (!strcmp(cmd, "restart") && nargs == 1) {
        snprintf(req, sizeof(req), "restart %.64s", args[0]);
        return ask(sock, req);
    }
    if (!strcmp(cmd, "inject") && (nargs == 2 || nargs == 3)) {
        snprintf(req, sizeof(req), "inject %.64s %.32s%s%.20s", args[0], args[1],
                 nargs == 3 ? " " : "", nargs == 3 ? args[2] : "");
        return ask(sock, req);
    }
    if (!strcmp(cmd, "check") && (nargs == 0 || (nargs == 1 && !strcmp(args[0], "-q"))))
        return check(nargs == 1);
    fprintf(stderr, "shadowctl: bad command or arguments: %s (see shadowctl --help)\n", cmd);
    return 2;
}
