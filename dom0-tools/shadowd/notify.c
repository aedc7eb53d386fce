/* notify.c - systemd's notify protocol (notify.h). */
#define _GNU_SOURCE
#include "notify.h"

#include "log.h"
#include "sd_text.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_MSG 1024

static struct {
    int fd; /* -1: notifications off */
    struct sockaddr_un addr;
    socklen_t addrlen;
    char name[sizeof(((struct sockaddr_un *)0)->sun_path) + 1]; /* as given, for messages */
    uint64_t wd_interval_ms;                                    /* 0: no watchdog */
    uint64_t wd_next_ms;
    bool failed; /* a send failed: said once */
} n = {.fd = -1};

/* The address: a path, or '@' and an abstract name (no NUL at its end). */
static int parse_addr(const char *s)
{
    size_t len = strlen(s);
    if ((s[0] != '/' && s[0] != '@') || len < 2) {
        sd_log("NOTIFY_SOCKET=%s is not a unix socket path or '@'-name: not notifying the "
               "service manager",
               s);
        return -1;
    }
    if (len >= sizeof(n.addr.sun_path)) {
        sd_log("NOTIFY_SOCKET=%s is too long for a unix socket address: not notifying the "
               "service manager",
               s);
        return -1;
    }
    n.addr = (struct sockaddr_un){.sun_family = AF_UNIX};
    memcpy(n.addr.sun_path, s, len);
    if (s[0] == '@')
        n.addr.sun_path[0] = 0;
    n.addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    memcpy(n.name, s, len + 1); /* len < sizeof(sun_path) < sizeof(name) */
    return 0;
}

/* Half of $WATCHDOG_USEC, if it is for this process. */
static void parse_watchdog(const char *usec, const char *pid)
{
    uint64_t us, p;
    if (!usec)
        return;
    if (sd_parse_u64(usec, UINT64_MAX, &us) < 0 || us == 0) {
        sd_log("WATCHDOG_USEC=%s is not a positive number of microseconds: no watchdog pings",
               usec);
        return;
    }
    if (pid && (sd_parse_u64(pid, INT32_MAX, &p) < 0 || p != (uint64_t)getpid())) {
        sd_log("WATCHDOG_PID=%s is not shadowd (pid %d): no watchdog pings", pid, (int)getpid());
        return;
    }
    n.wd_interval_ms = us / 2000 ? us / 2000 : 1;
    n.wd_next_ms = 0; /* the first ping from the loop's first turn */
}

/* name's value copied into buf (len), then name taken out of the
 * environment: shadowd-priv, forked next, must not inherit it. */
static bool take_env(const char *name, char *buf, size_t len)
{
    const char *v = getenv(name);
    if (v)
        snprintf(buf, len, "%s", v); /* before unsetenv: v points into the environment */
    unsetenv(name);
    return v != NULL;
}

void sd_notify_init(void)
{
    char sock[256] = "", usec[32] = "", pid[32] = "";
    bool has_sock = take_env("NOTIFY_SOCKET", sock, sizeof(sock));
    bool has_usec = take_env("WATCHDOG_USEC", usec, sizeof(usec));
    bool has_pid = take_env("WATCHDOG_PID", pid, sizeof(pid));
    if (!has_sock || parse_addr(sock) < 0)
        return;
    n.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (n.fd < 0) {
        sd_log("notify socket: socket: %s: not notifying the service manager", strerror(errno));
        return;
    }
    /* Connected now, as root: after the drop the user may not reach the path. */
    if (connect(n.fd, (struct sockaddr *)&n.addr, n.addrlen) < 0) {
        sd_log("notify socket %s: connect: %s: not notifying the service manager", n.name,
               strerror(errno));
        close(n.fd);
        n.fd = -1;
        return;
    }
    parse_watchdog(has_usec ? usec : NULL, has_pid ? pid : NULL);
}

bool sd_notify_on(void)
{
    return n.fd >= 0;
}

static ssize_t send_once(const char *buf, size_t len)
{
    ssize_t r;
    do
        r = send(n.fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (r < 0 && errno == EINTR);
    return r;
}

int sd_notify_send(const char *fmt, ...)
{
    if (n.fd < 0)
        return 0;
    char buf[MAX_MSG];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (len < 0 || len >= (int)sizeof(buf))
        len = len < 0 ? 0 : (int)sizeof(buf) - 1; /* cut: still one datagram */
    ssize_t r = send_once(buf, (size_t)len);
    if (r < 0 && (errno == ECONNREFUSED || errno == ENOTCONN)) {
        /* The service manager's socket was replaced: connect again (the
         * path may be out of the user's reach by now; then it fails). */
        if (connect(n.fd, (struct sockaddr *)&n.addr, n.addrlen) == 0)
            r = send_once(buf, (size_t)len);
    }
    if (r == len)
        return 0;
    if (!n.failed) {
        const char *nl = strchr(buf, '\n');
        sd_log("notifying the service manager (NOTIFY_SOCKET=%s) of '%.*s': %s; going on (said "
               "once)",
               n.name, nl ? (int)(nl - buf) : len, buf, r < 0 ? strerror(errno) : "short send");
        n.failed = true;
    }
    return -1;
}

uint64_t sd_notify_watchdog_interval(void)
{
    return n.fd >= 0 ? n.wd_interval_ms : 0;
}

uint64_t sd_notify_watchdog_due(void)
{
    return sd_notify_watchdog_interval() ? n.wd_next_ms : UINT64_MAX;
}

void sd_notify_watchdog(uint64_t now)
{
    if (!sd_notify_watchdog_interval() || now < n.wd_next_ms)
        return;
    n.wd_next_ms = now + n.wd_interval_ms;
    sd_notify_send("WATCHDOG=1");
}

void sd_notify_close(void)
{
    if (n.fd >= 0)
        close(n.fd);
    n.fd = -1;
}
