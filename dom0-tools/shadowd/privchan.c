/* privchan.c - shadowd's end of the channel to shadowd-priv (privchan.h). */
#define _GNU_SOURCE
#include "privchan.h"

#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PRIV_FD      3
#define HELLO_MS     30000  /* shadowd-priv opens the drivers (a libvirt connection) */
#define REPLY_MS     120000 /* a synchronous driver call (libvirt creates a domain) */
#define MAX_PENDING  64     /* shadowd-priv's own bound */
#define MAX_QUEUED   256    /* notifications that came during a call */
#define CHANGED_ROOM 64     /* kept free for DONEs, which are never dropped */
#define REAP_MS      2000

struct pending {
    bool used;
    uint32_t seq;
    void *arg;
};

struct sd_privchan {
    int fd;
    pid_t pid;
    int status; /* shadowd-priv's wait status, once reaped */
    bool reaped, lost;
    char why[200];
    uint32_t seq;
    struct sd_drv_hooks hooks;
    struct pending pend[MAX_PENDING];
    struct sd_privmsg q[MAX_QUEUED];
    unsigned qhead, qn;
    unsigned long dropped;
};

int sd_privchan_path(char *buf, size_t len, char *err, size_t errlen)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0) {
        snprintf(err, errlen, "readlink /proc/self/exe: %s", strerror(errno));
        return -1;
    }
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash)
        slash = self;
    *slash = 0;
    if (snprintf(buf, len, "%s/shadowd-priv", self) >= (int)len) {
        snprintf(err, errlen, "the path of shadowd-priv is too long");
        return -1;
    }
    if (access(buf, X_OK) < 0) {
        snprintf(err, errlen, "%s: %s (shadowd-priv is installed next to shadowd)", buf,
                 strerror(errno));
        return -1;
    }
    return 0;
}

static void lose(struct sd_privchan *ch, const char *fmt, const char *what)
{
    if (ch->lost)
        return;
    ch->lost = true;
    snprintf(ch->why, sizeof(ch->why), fmt, what);
}

static uint64_t now_ms(void)
{
    return sd_now();
}

/* One message from shadowd-priv, waiting up to ms (0: not at all): 1 with
 * *m, 0 if none came, -1 if the channel is lost. */
static int get(struct sd_privchan *ch, struct sd_privmsg *m, int ms)
{
    if (ch->lost)
        return -1;
    uint64_t until = now_ms() + (uint64_t)ms;
    for (;;) {
        union {
            struct sd_privmsg m;
            char raw[sizeof(struct sd_privmsg) + 64];
        } u;
        memset(&u, 0, sizeof(u));
        ssize_t n = recv(ch->fd, &u, sizeof(u), MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            uint64_t t = now_ms();
            if (t >= until)
                return 0;
            struct pollfd p = {.fd = ch->fd, .events = POLLIN};
            if (poll(&p, 1, (int)(until - t)) < 0 && errno != EINTR) {
                lose(ch, "poll: %s", strerror(errno));
                return -1;
            }
            continue;
        }
        if (n == 0) {
            lose(ch, "%s", "it closed the channel");
            return -1;
        }
        if (n < 0) {
            lose(ch, "receiving: %s", strerror(errno));
            return -1;
        }
        char why[160];
        if (sd_privmsg_check(&u.m, n, true, why, sizeof(why)) < 0) {
            lose(ch, "it sent a malformed message: %s", why);
            return -1;
        }
        *m = u.m;
        return 1;
    }
}

/* A notification that came while waiting for a reply: kept for postpoll. */
static void enqueue(struct sd_privchan *ch, const struct sd_privmsg *m)
{
    bool done = m->type == SD_PRIV_DONE;
    if (ch->qn == MAX_QUEUED || (!done && ch->qn >= MAX_QUEUED - CHANGED_ROOM)) {
        ch->dropped++; /* a change of a domain: @releaseDomain and the heartbeat still see it */
        return;
    }
    ch->q[(ch->qhead + ch->qn++) % MAX_QUEUED] = *m;
}

struct sd_privchan *sd_privchan_start(const char *conf_path, const struct sd_drv_hooks *hooks,
                                      char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (sd_privchan_path(path, sizeof(path), err, errlen) < 0)
        return NULL;
    struct sd_privchan *ch = calloc(1, sizeof(*ch));
    if (!ch) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    ch->hooks = *hooks;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        snprintf(err, errlen, "socketpair: %s", strerror(errno));
        free(ch);
        return NULL;
    }
    char fdarg[16], t0arg[24];
    snprintf(fdarg, sizeof(fdarg), "%d", PRIV_FD);
    snprintf(t0arg, sizeof(t0arg), "%llu", (unsigned long long)sd_log_t0());
    char *const argv[] = {"shadowd-priv",    "--fd", fdarg, "--t0", t0arg, "-c",
                          (char *)conf_path, NULL};
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        free(ch);
        return NULL;
    }
    if (pid == 0) {
        /* The child: async-signal-safe calls only. It dies with shadowd. */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
            _exit(1);
        if (sv[1] == PRIV_FD ? fcntl(PRIV_FD, F_SETFD, 0) < 0 : dup2(sv[1], PRIV_FD) < 0)
            _exit(1); /* dup2 clears close-on-exec */
        execv(path, argv);
        _exit(127);
    }
    close(sv[1]);
    ch->fd = sv[0];
    ch->pid = pid;
    struct sd_privmsg m;
    int r = get(ch, &m, HELLO_MS);
    if (r <= 0 || m.type != SD_PRIV_HELLO || m.rc != 0) {
        if (r > 0 && m.type == SD_PRIV_HELLO)
            snprintf(err, errlen, "%s", m.err);
        else if (r == 0)
            snprintf(err, errlen, "shadowd-priv (pid %d) did not answer within %d s", (int)pid,
                     HELLO_MS / 1000);
        else
            snprintf(err, errlen, "shadowd-priv (pid %d) did not start: %s", (int)pid,
                     ch->lost ? ch->why : "it spoke before its hello");
        kill(pid, SIGKILL);
        sd_privchan_close(ch);
        return NULL;
    }
    return ch;
}

int sd_privchan_pid(const struct sd_privchan *ch)
{
    return (int)ch->pid;
}

static void reap(struct sd_privchan *ch, int ms)
{
    for (int waited = 0; !ch->reaped; waited += 10) {
        pid_t r = waitpid(ch->pid, &ch->status, WNOHANG);
        if (r == ch->pid || (r < 0 && errno != EINTR)) {
            ch->reaped = r == ch->pid;
            return;
        }
        if (waited >= ms)
            return;
        struct timespec t = {0, 10 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
}

void sd_privchan_close(struct sd_privchan *ch)
{
    if (!ch)
        return;
    close(ch->fd);
    reap(ch, REAP_MS);
    if (!ch->reaped)
        sd_log("shadowd-priv (pid %d) has not exited; it will with shadowd (PR_SET_PDEATHSIG)",
               (int)ch->pid);
    if (ch->dropped)
        sd_log("%lu domain-change notices of shadowd-priv were dropped (queue full)", ch->dropped);
    free(ch);
}

static struct pending *pending_for(struct sd_privchan *ch, uint32_t seq)
{
    for (int i = 0; i < MAX_PENDING; i++)
        if (ch->pend[i].used && ch->pend[i].seq == seq)
            return &ch->pend[i];
    return NULL;
}

int sd_privchan_call(struct sd_privchan *ch, struct sd_privmsg *req, struct sd_privmsg *rep,
                     void *arg, char *err, size_t errlen)
{
    if (!ch->lost) {
        if (++ch->seq == 0)
            ch->seq = 1;
        req->seq = ch->seq;
        ssize_t n;
        do
            n = send(ch->fd, req, sizeof(*req), MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof(*req))
            lose(ch, "sending: %s", n < 0 ? strerror(errno) : "short send");
    }
    uint64_t until = now_ms() + REPLY_MS;
    while (!ch->lost) {
        uint64_t t = now_ms();
        int r = get(ch, rep, t < until ? (int)(until - t) : 0);
        if (r == 0) {
            lose(ch, "no reply to a %s request within 120 s", sd_privmsg_type_name(req->type));
            break;
        }
        if (r < 0)
            break;
        if (rep->type == SD_PRIV_DONE || rep->type == SD_PRIV_CHANGED) {
            enqueue(ch, rep);
            continue;
        }
        if (rep->type != SD_PRIV_REPLY || rep->seq != req->seq) {
            lose(ch, "it answered out of turn (%s)", sd_privmsg_type_name(rep->type));
            break;
        }
        if (rep->rc == SD_DRV_PENDING) {
            struct pending *p = NULL;
            for (int i = 0; !p && i < MAX_PENDING; i++)
                if (!ch->pend[i].used)
                    p = &ch->pend[i];
            if (!p) {
                lose(ch, "%s", "more operations in flight than it may have");
                break;
            }
            *p = (struct pending){.used = true, .seq = rep->seq, .arg = arg};
        }
        return 0;
    }
    snprintf(err, errlen, "shadowd-priv is gone: %s", ch->why);
    return -1;
}

void sd_privchan_prepoll(struct sd_privchan *ch, struct pollfd *p, int *timeout_ms)
{
    *p = (struct pollfd){.fd = ch->lost ? -1 : ch->fd, .events = POLLIN};
    if (ch->qn)
        *timeout_ms = 0;
}

static void dispatch(struct sd_privchan *ch, const struct sd_privmsg *m)
{
    if (m->type == SD_PRIV_CHANGED) {
        ch->hooks.changed(ch->hooks.ctx, m->domid);
        return;
    }
    struct pending *p = pending_for(ch, m->seq);
    if (!p) {
        sd_log("shadowd-priv reported a %s operation done that was not in flight (seq %u); "
               "ignored",
               m->op == SD_OP_CREATE ? "create" : "destroy", m->seq);
        return;
    }
    void *arg = p->arg;
    p->used = false;
    ch->hooks.done(ch->hooks.ctx, arg, (enum sd_drv_op)m->op, m->rc, m->domid, m->err);
}

void sd_privchan_postpoll(struct sd_privchan *ch, const struct pollfd *p)
{
    (void)p; /* the socket is read without blocking either way */
    /* In order: what came during calls first, then what is waiting. A hook
     * may make calls, which queue what they see; the loop takes those too. */
    for (;;) {
        if (ch->qn) {
            struct sd_privmsg m = ch->q[ch->qhead];
            ch->qhead = (ch->qhead + 1) % MAX_QUEUED;
            ch->qn--;
            dispatch(ch, &m);
            continue;
        }
        struct sd_privmsg m;
        if (get(ch, &m, 0) <= 0)
            return;
        if (m.type != SD_PRIV_DONE && m.type != SD_PRIV_CHANGED) {
            lose(ch, "it sent a %s nobody asked for", sd_privmsg_type_name(m.type));
            return;
        }
        dispatch(ch, &m);
    }
}

bool sd_privchan_lost(struct sd_privchan *ch, char *why, size_t len)
{
    if (!ch->lost)
        return false;
    reap(ch, 1000);
    char st[64] = "";
    if (ch->reaped && WIFEXITED(ch->status))
        snprintf(st, sizeof(st), "; it exited with status %d", WEXITSTATUS(ch->status));
    else if (ch->reaped && WIFSIGNALED(ch->status))
        snprintf(st, sizeof(st), "; it was killed by signal %d", WTERMSIG(ch->status));
    snprintf(why, len, "shadowd-priv (pid %d): %s%s", (int)ch->pid, ch->why, st);
    return true;
}
