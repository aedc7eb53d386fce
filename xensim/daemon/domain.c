/* domain.c - xensim's domains: process groups with a domid, a lifecycle and
 * shutdown reasons; the hypervisor and toolstack parts of create and destroy.
 */
#define _GNU_SOURCE
#include "domain.h"

#include "hyp.h"
#include "xs_server.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Marks every process of a domain (inherited through fork and exec), so that
 * a process that left the domain's process group is still found and killed
 * when the domain is destroyed. */
#define TAG_VAR "XENSIM_DOMAIN_TAG"

struct dom {
    unsigned domid;
    enum dom_state state;
    int shutdown_reason;
    pid_t pid;  /* process group leader; 0 once reaped */
    pid_t pgid; /* the group, which may outlive its leader */
    int exit_status;
    uint64_t created_ms, shutdown_ms;
    char name[CTL_NAME_MAX];
    struct dom *next;
};

static struct {
    struct evloop *loop;
    char dir[256];
    char simlib[256];
    struct dom *doms; /* dom0 first */
    unsigned next_domid;
} S;

const char *dom_rundir(void)
{
    return S.dir;
}

const char *dom_simlib(void)
{
    return S.simlib;
}

static struct dom *find(unsigned domid)
{
    for (struct dom *d = S.doms; d; d = d->next)
        if (d->domid == domid)
            return d;
    return NULL;
}

static struct dom *find_name(const char *name)
{
    for (struct dom *d = S.doms; d; d = d->next)
        if (strcmp(d->name, name) == 0)
            return d;
    return NULL;
}

bool dom_exists(unsigned domid)
{
    return find(domid) != NULL;
}

bool dom_is_alive(unsigned domid)
{
    struct dom *d = find(domid);
    return d && (d->state == DOM_RUNNING || d->state == DOM_PAUSED);
}

const char *dom_name(unsigned domid)
{
    struct dom *d = find(domid);
    return d ? d->name : NULL;
}

static int dom_paths(unsigned domid, char *dir, char *xs, char *hyp, size_t len)
{
    int n1 = snprintf(dir, len, "%s/dom%u", S.dir, domid);
    int n2 = snprintf(xs, len, "%s/xenstore.sock", dir);
    int n3 = snprintf(hyp, len, "%s/hyp.sock", dir);
    if (n1 < 0 || n2 < 0 || n3 < 0 || (size_t)n1 >= len || (size_t)n2 >= len || (size_t)n3 >= len) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* Make the domain's directory and start serving its xenstore and hypervisor sockets. */
static int open_sockets(unsigned domid)
{
    char dir[256], xs[300], hyp[300];
    if (dom_paths(domid, dir, xs, hyp, sizeof(xs)) < 0)
        return -1;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST)
        return -1;
    if (xs_server_listen(domid, xs) < 0 || hyp_server_listen(domid, hyp) < 0)
        return -1;
    return 0;
}

static void remove_dir(unsigned domid)
{
    char dir[256], xs[300], hyp[300];
    if (dom_paths(domid, dir, xs, hyp, sizeof(xs)) < 0)
        return;
    unlink(xs);
    unlink(hyp);
    rmdir(dir);
}

int dom_init(struct evloop *l, const char *dir, const char *simlib)
{
    S.loop = l;
    S.next_domid = 1;
    if (snprintf(S.dir, sizeof(S.dir), "%s", dir) >= (int)sizeof(S.dir) ||
        snprintf(S.simlib, sizeof(S.simlib), "%s", simlib) >= (int)sizeof(S.simlib)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    struct dom *d0 = calloc(1, sizeof(*d0));
    if (!d0)
        return -1;
    d0->domid = 0;
    d0->state = DOM_RUNNING;
    d0->shutdown_reason = -1;
    d0->exit_status = -1;
    d0->created_ms = evloop_now_ms();
    strcpy(d0->name, "Domain-0");
    S.doms = d0;
    if (open_sockets(0) < 0)
        return -1;
    return xs_server_domain_introduce(0, d0->name);
}

/* Like Xen: domids count up and are not reused until they wrap. */
static unsigned alloc_domid(void)
{
    for (unsigned tries = 0; tries < XSIM_DOMID_FIRST_RESERVED; tries++) {
        unsigned id = S.next_domid++;
        if (S.next_domid >= XSIM_DOMID_FIRST_RESERVED)
            S.next_domid = 1;
        if (!find(id))
            return id;
    }
    return 0;
}

/* Build the domain's environment: the caller's, minus anything pointing at
 * another domain, plus the variables that point the Xen libraries at the sim. */
static char **domain_env(char *const *envp, unsigned domid)
{
    size_t n = 0;
    while (envp && envp[n])
        n++;
    char **env = calloc(n + 5, sizeof(*env));
    if (!env)
        return NULL;
    size_t k = 0;
    const char *ldpath = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!strncmp(envp[i], "XENSTORED_PATH=", 15) || !strncmp(envp[i], "XENSIM_HYP=", 11) ||
            !strncmp(envp[i], TAG_VAR "=", sizeof(TAG_VAR)))
            continue;
        if (!strncmp(envp[i], "LD_LIBRARY_PATH=", 16)) {
            ldpath = envp[i] + 16;
            continue;
        }
        env[k++] = envp[i];
    }
    char *a = NULL, *b = NULL, *c = NULL, *e = NULL;
    int bad = asprintf(&a, "XENSTORED_PATH=%s/dom%u/xenstore.sock", S.dir, domid) < 0 ||
              asprintf(&b, "XENSIM_HYP=%s/dom%u/hyp.sock", S.dir, domid) < 0 ||
              asprintf(&c, TAG_VAR "=%s/dom%u", S.dir, domid) < 0 ||
              asprintf(&e, "LD_LIBRARY_PATH=%s%s%s", S.simlib, ldpath && *ldpath ? ":" : "",
                       ldpath ? ldpath : "") < 0;
    if (bad) {
        free(env);
        return NULL; /* the child exits right after; nothing to unwind */
    }
    env[k++] = a;
    env[k++] = b;
    env[k++] = c;
    env[k++] = e;
    env[k] = NULL;
    return env;
}

/* The forked child: become the domain's process group and exec. Reports an
 * exec failure's errno through errfd. Never returns. */
static void child_exec(const struct dom_create_args *a, unsigned domid, int errfd)
{
    setsid();
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);
    for (int i = 0; i < 3; i++)
        if (a->fds[i] >= 0 && dup2(a->fds[i], i) < 0)
            goto fail;
    if (a->cwd && *a->cwd && chdir(a->cwd) < 0)
        goto fail;
    char **env = domain_env(a->envp, domid);
    if (!env)
        goto fail;
    execvpe(a->argv[0], a->argv, env);
fail:;
    int e = errno;
    if (write(errfd, &e, sizeof(e)) < 0)
        _exit(127);
    _exit(127);
}

static void kill_domain_processes(struct dom *d)
{
    if (d->pgid > 0)
        kill(-d->pgid, SIGKILL);
    /* Processes that left the group still carry the tag in their environment. */
    char tag[300];
    int tl = snprintf(tag, sizeof(tag), TAG_VAR "=%s/dom%u", S.dir, d->domid);
    DIR *proc = opendir("/proc");
    if (!proc || tl < 0 || (size_t)tl >= sizeof(tag)) {
        if (proc)
            closedir(proc);
        return;
    }
    struct dirent *de;
    while ((de = readdir(proc))) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 1 || pid == getpid())
            continue;
        char path[64];
        snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        static char buf[64 * 1024];
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = 0;
        for (char *p = buf; p < buf + n; p += strlen(p) + 1) {
            if (strcmp(p, tag) == 0) {
                kill((pid_t)pid, SIGKILL);
                break;
            }
        }
    }
    closedir(proc);
}

int dom_create(const struct dom_create_args *a, unsigned *domid, char *err, size_t errlen)
{
    if (!a->argv || !a->argv[0]) {
        snprintf(err, errlen, "no command given");
        errno = EINVAL;
        return -1;
    }
    if (a->name && *a->name) {
        if (strlen(a->name) >= CTL_NAME_MAX || strchr(a->name, '/')) {
            snprintf(err, errlen, "invalid domain name '%s'", a->name);
            errno = EINVAL;
            return -1;
        }
        if (find_name(a->name)) {
            snprintf(err, errlen, "domain with name '%s' already exists", a->name);
            errno = EEXIST;
            return -1;
        }
    }
    unsigned id = alloc_domid();
    struct dom *d = calloc(1, sizeof(*d));
    if (!id || !d) {
        free(d);
        snprintf(err, errlen, "out of domids or memory");
        errno = ENOMEM;
        return -1;
    }
    d->domid = id;
    d->state = DOM_RUNNING;
    d->shutdown_reason = -1;
    d->exit_status = -1;
    d->created_ms = evloop_now_ms();
    if (a->name && *a->name)
        snprintf(d->name, sizeof(d->name), "%s", a->name);
    else
        snprintf(d->name, sizeof(d->name), "domain-%u", id);
    /* Linked in before the store is told, so the xenstore module sees it exist. */
    struct dom **tail = &S.doms;
    while (*tail)
        tail = &(*tail)->next;
    *tail = d;

    if (open_sockets(id) < 0 || xs_server_domain_introduce(id, d->name) < 0) {
        int e = errno;
        snprintf(err, errlen, "setting up domain %u: %s", id, strerror(e));
        dom_destroy(id);
        errno = e;
        return -1;
    }

    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0) {
        int e = errno;
        snprintf(err, errlen, "pipe: %s", strerror(e));
        dom_destroy(id);
        errno = e;
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        child_exec(a, id, pfd[1]);
    }
    close(pfd[1]);
    if (pid < 0) {
        int e = errno;
        close(pfd[0]);
        snprintf(err, errlen, "fork: %s", strerror(e));
        dom_destroy(id);
        errno = e;
        return -1;
    }
    d->pid = pid;
    d->pgid = pid; /* the child's setsid() makes it leader of a group of its own id */
    /* Blocks only until the child's exec: the pipe closes on exec. */
    int child_errno = 0;
    ssize_t n;
    do {
        n = read(pfd[0], &child_errno, sizeof(child_errno));
    } while (n < 0 && errno == EINTR);
    close(pfd[0]);
    if (n == (ssize_t)sizeof(child_errno)) {
        snprintf(err, errlen, "%s: %s", a->argv[0], strerror(child_errno));
        dom_destroy(id);
        errno = child_errno;
        return -1;
    }
    *domid = id;
    return 0;
}

static void stop_running(struct dom *d, int reason)
{
    hyp_domain_dying(d->domid); /* before the kill: no unmap-notify from a dead domain */
    kill_domain_processes(d);
    if (d->state == DOM_PAUSED && d->pgid > 0)
        kill(-d->pgid, SIGCONT); /* let stopped processes take the SIGKILL */
    d->state = DOM_SHUTDOWN;
    d->shutdown_reason = reason;
    d->shutdown_ms = evloop_now_ms();
}

int dom_shutdown(unsigned domid, enum dom_shutdown_reason reason)
{
    struct dom *d = find(domid);
    if (!d) {
        errno = ESRCH;
        return -1;
    }
    if (domid == 0) {
        errno = EPERM;
        return -1;
    }
    if (d->state != DOM_RUNNING && d->state != DOM_PAUSED) {
        errno = EINVAL;
        return -1;
    }
    stop_running(d, (int)reason);
    xs_server_domain_shutdown(domid);
    return 0;
}

int dom_destroy(unsigned domid)
{
    struct dom *d = find(domid);
    if (!d) {
        errno = ESRCH;
        return -1;
    }
    if (domid == 0) {
        errno = EPERM;
        return -1;
    }
    if (d->state == DOM_DYING) {
        errno = EINVAL;
        return -1;
    }
    if (d->state == DOM_RUNNING || d->state == DOM_PAUSED) {
        hyp_domain_dying(domid);
        kill_domain_processes(d);
        if (d->pgid > 0)
            kill(-d->pgid, SIGCONT); /* let stopped processes take the SIGKILL */
    }
    d->state = DOM_DYING;
    /* Everything it held goes now; SIGKILLed processes run no more user code. */
    hyp_domain_destroyed(domid);
    xs_server_domain_destroyed(domid);
    remove_dir(domid);
    for (struct dom **pp = &S.doms; *pp; pp = &(*pp)->next) {
        if (*pp == d) {
            *pp = d->next;
            break;
        }
    }
    free(d);
    return 0;
}

int dom_pause(unsigned domid)
{
    struct dom *d = find(domid);
    if (!d) {
        errno = ESRCH;
        return -1;
    }
    if (domid == 0) {
        errno = EPERM;
        return -1;
    }
    if (d->state != DOM_RUNNING) {
        errno = EINVAL;
        return -1;
    }
    if (d->pgid > 0)
        kill(-d->pgid, SIGSTOP);
    d->state = DOM_PAUSED;
    return 0;
}

int dom_unpause(unsigned domid)
{
    struct dom *d = find(domid);
    if (!d) {
        errno = ESRCH;
        return -1;
    }
    if (domid == 0) {
        errno = EPERM;
        return -1;
    }
    if (d->state != DOM_PAUSED) {
        errno = EINVAL;
        return -1;
    }
    if (d->pgid > 0)
        kill(-d->pgid, SIGCONT);
    d->state = DOM_RUNNING;
    return 0;
}

static void fill_info(const struct dom *d, struct ctl_dominfo *o)
{
    memset(o, 0, sizeof(*o));
    o->domid = d->domid;
    o->state = d->state;
    o->shutdown_reason = d->shutdown_reason;
    o->pid = d->pid;
    o->exit_status = d->exit_status;
    o->created_ms = d->created_ms;
    o->shutdown_ms = d->shutdown_ms;
    memcpy(o->name, d->name, sizeof(o->name));
}

int dom_info(unsigned domid, struct ctl_dominfo *out)
{
    struct dom *d = find(domid);
    if (!d) {
        errno = ESRCH;
        return -1;
    }
    fill_info(d, out);
    return 0;
}

unsigned dom_list(struct ctl_dominfo *out, unsigned max)
{
    unsigned n = 0;
    for (struct dom *d = S.doms; d; d = d->next, n++)
        if (n < max)
            fill_info(d, &out[n]);
    return n;
}

void dom_destroy_all(void)
{
    while (S.doms && S.doms->next)
        dom_destroy(S.doms->next->domid);
}

void dom_reap_children(void)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (struct dom *d = S.doms; d; d = d->next) {
            if (d->pid != pid)
                continue;
            d->exit_status = status;
            /* The leader exiting is the domain's kernel stopping: the rest goes with it. */
            if (d->state == DOM_RUNNING || d->state == DOM_PAUSED) {
                int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
                stop_running(d, ok ? DOM_SHUTDOWN_POWEROFF : DOM_SHUTDOWN_CRASH);
                xs_server_domain_shutdown(d->domid);
            }
            d->pid = 0;
            break;
        }
    }
}
