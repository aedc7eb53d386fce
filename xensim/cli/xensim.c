/* xensim - the CLI of the userspace Xen: start/stop the daemon, create and
 * control domains, and run programs as a domain. See ../README.md. */
#define _GNU_SOURCE
#include "xsim_ctl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *const state_names[] = {"running", "paused", "shutdown", "dying"};
static const char *const reason_names[] = {"poweroff", "reboot", "suspend", "crash", "watchdog"};

static void usage(FILE *f)
{
    fprintf(f, "usage: xensim [--dir DIR] COMMAND [ARGS]   (DIR defaults to $XENSIM_DIR)\n"
               "  start                          start the daemon for DIR\n"
               "  stop                           destroy every domain and stop the daemon\n"
               "  create [--name N] [--log FILE] [--env K=V]... -- CMD [ARG]...\n"
               "                                 start a domain running CMD; prints its domid\n"
               "  destroy DOM | pause DOM | unpause DOM\n"
               "  shutdown DOM [poweroff|reboot|crash|watchdog]\n"
               "  crash DOM | watchdog DOM       shutdown with that reason\n"
               "  list [--json] | info DOM\n"
               "  env DOM                        shell export lines to act as DOM\n"
               "  exec DOM -- CMD [ARG]...       run CMD with DOM's environment\n"
               "  wait DOM [--until shutdown|gone] [--timeout SEC]\n"
               "DOM is a domid or a domain name.\n");
}

static int die(const char *what, const char *msg)
{
    fprintf(stderr, "xensim: %s: %s\n", what, msg);
    return 1;
}

static struct xsim_ctl *connect_or_die(const char *dir)
{
    struct xsim_ctl *c = xsim_ctl_open(dir);
    if (!c)
        fprintf(stderr, "xensim: cannot reach xensimd in %s: %s (is it started?)\n", dir,
                strerror(errno));
    return c;
}

static const char *state_name(uint32_t s)
{
    return s < 4 ? state_names[s] : "?";
}

static const char *reason_name(int32_t r)
{
    return r >= 0 && r < 5 ? reason_names[r] : "-";
}

/* The directory the running xensim binary is in. */
static int self_dir(char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n < 0)
        return -1;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = 0;
    return snprintf(out, len, "%s", exe) < (int)len ? 0 : -1;
}

static int cmd_start(const char *dir)
{
    struct xsim_ctl *probe = xsim_ctl_open(dir);
    if (probe) {
        xsim_ctl_close(probe);
        return die("start", "xensimd is already running in that directory");
    }
    char bindir[PATH_MAX], daemon[PATH_MAX + 16], simlib[PATH_MAX + 16], log[PATH_MAX + 16];
    if (self_dir(bindir, sizeof(bindir)) < 0)
        return die("start", "cannot find my own directory");
    snprintf(daemon, sizeof(daemon), "%s/xensimd", bindir);
    snprintf(simlib, sizeof(simlib), "%s/../sim/lib", bindir);
    char *real = realpath(simlib, NULL);
    if (!real)
        return die(simlib, "drop-in Xen libraries not built (run make)");
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        free(real);
        return die(dir, strerror(errno));
    }
    char *absdir = realpath(dir, NULL);
    if (!absdir) {
        free(real);
        return die(dir, strerror(errno));
    }
    snprintf(log, sizeof(log), "%s/xensimd.log", absdir);
    int pfd[2];
    if (pipe(pfd) < 0)
        return die("pipe", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        return die("fork", strerror(errno));
    if (pid == 0) {
        setsid();
        int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        int nfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (lfd >= 0) {
            dup2(lfd, 1);
            dup2(lfd, 2);
        }
        if (nfd >= 0)
            dup2(nfd, 0);
        close(pfd[0]);
        char fdarg[16];
        snprintf(fdarg, sizeof(fdarg), "%d", pfd[1]);
        execl(daemon, "xensimd", "--dir", absdir, "--simlib", real, "--ready-fd", fdarg,
              (char *)NULL);
        fprintf(stderr, "xensim: exec %s: %s\n", daemon, strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    struct pollfd p = {.fd = pfd[0], .events = POLLIN};
    char buf[8] = "";
    int ok = poll(&p, 1, 15000) == 1 && read(pfd[0], buf, sizeof(buf)) >= 5 &&
             strncmp(buf, "ready", 5) == 0;
    close(pfd[0]);
    free(real);
    if (!ok) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fprintf(stderr, "xensim: start: xensimd did not become ready; see %s\n", log);
        free(absdir);
        return 1;
    }
    free(absdir);
    return 0;
}

static int cmd_stop(const char *dir)
{
    struct xsim_ctl *c = connect_or_die(dir);
    if (!c)
        return 1;
    char pidfile[PATH_MAX];
    snprintf(pidfile, sizeof(pidfile), "%s/xensimd.pid", dir);
    int rc = xsim_ctl_stop(c);
    xsim_ctl_close(c);
    if (rc < 0)
        return die("stop", strerror(errno));
    /* Bounded wait for the daemon to finish cleaning up and exit. */
    for (int i = 0; i < 500 && access(pidfile, F_OK) == 0; i++)
        usleep(20 * 1000);
    return access(pidfile, F_OK) == 0 ? die("stop", "xensimd did not exit within 10 s") : 0;
}

static int cmd_create(const char *dir, int argc, char **argv)
{
    const char *name = NULL, *logf = NULL;
    char **extra = calloc((size_t)argc + 1, sizeof(*extra));
    unsigned nextra = 0;
    int i = 0;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        } else if (!strcmp(argv[i], "--name") && i + 1 < argc) {
            name = argv[++i];
        } else if (!strcmp(argv[i], "--log") && i + 1 < argc) {
            logf = argv[++i];
        } else if (!strcmp(argv[i], "--env") && i + 1 < argc && strchr(argv[i + 1], '=')) {
            extra[nextra++] = argv[++i];
        } else if (argv[i][0] == '-') {
            free(extra);
            fprintf(stderr, "xensim: create: unknown or incomplete option '%s'\n", argv[i]);
            return 2;
        } else {
            break;
        }
    }
    if (i >= argc) {
        free(extra);
        return die("create", "no command given (xensim create [opts] -- CMD ARGS)");
    }
    size_t ne = 0;
    while (environ[ne])
        ne++;
    char **env = calloc(ne + nextra + 1, sizeof(*env));
    if (!env)
        return die("create", "out of memory");
    size_t k = 0;
    for (size_t j = 0; j < ne; j++) {
        int overridden = 0;
        for (unsigned x = 0; x < nextra; x++) {
            size_t kl = (size_t)(strchr(extra[x], '=') - extra[x]) + 1;
            if (!strncmp(environ[j], extra[x], kl))
                overridden = 1;
        }
        if (!overridden)
            env[k++] = environ[j];
    }
    for (unsigned x = 0; x < nextra; x++)
        env[k++] = extra[x];
    int fds[3] = {0, 1, 2};
    int lfd = -1, nfd = -1;
    if (logf) {
        lfd = open(logf, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        nfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (lfd < 0 || nfd < 0)
            return die(logf, strerror(errno));
        fds[0] = nfd;
        fds[1] = fds[2] = lfd;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd)))
        strcpy(cwd, "/");
    struct xsim_ctl *c = connect_or_die(dir);
    int rc = 1;
    if (c) {
        struct ctl_dominfo info;
        if (xsim_ctl_create(c, name, argv + i, env, cwd, fds, &info) < 0) {
            die("create", xsim_ctl_error(c));
        } else {
            printf("%u\n", info.domid);
            rc = 0;
        }
        xsim_ctl_close(c);
    }
    if (lfd >= 0)
        close(lfd);
    if (nfd >= 0)
        close(nfd);
    free(env);
    free(extra);
    return rc;
}

static void print_json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

static int cmd_list(struct xsim_ctl *c, int json)
{
    struct ctl_dominfo *v;
    unsigned n;
    if (xsim_ctl_list(c, &v, &n) < 0)
        return die("list", xsim_ctl_error(c));
    if (json)
        printf("[");
    else
        printf("%-5s %-24s %-9s %-9s %s\n", "ID", "NAME", "STATE", "REASON", "PID");
    for (unsigned i = 0; i < n; i++) {
        if (json) {
            printf("%s{\"domid\":%u,\"name\":", i ? "," : "", v[i].domid);
            print_json_str(v[i].name);
            printf(",\"state\":\"%s\",\"shutdown_reason\":\"%s\",\"pid\":%d}",
                   state_name(v[i].state), reason_name(v[i].shutdown_reason), v[i].pid);
        } else {
            printf("%-5u %-24s %-9s %-9s %d\n", v[i].domid, v[i].name, state_name(v[i].state),
                   reason_name(v[i].shutdown_reason), v[i].pid);
        }
    }
    if (json)
        printf("]\n");
    free(v);
    return 0;
}

static int cmd_info(struct xsim_ctl *c, unsigned domid)
{
    struct ctl_dominfo d;
    if (xsim_ctl_info(c, domid, &d) < 0)
        return die("info", xsim_ctl_error(c));
    printf("domid=%u\nname=%s\nstate=%s\nshutdown_reason=%s\npid=%d\n", d.domid, d.name,
           state_name(d.state), reason_name(d.shutdown_reason), d.pid);
    if (d.exit_status >= 0) {
        if (WIFEXITED(d.exit_status))
            printf("exit_status=%d\n", WEXITSTATUS(d.exit_status));
        else if (WIFSIGNALED(d.exit_status))
            printf("exit_signal=%d\n", WTERMSIG(d.exit_status));
    }
    return 0;
}

static int dom_env(struct xsim_ctl *c, unsigned domid, char *xs, char *hyp, char *lib, size_t len,
                   char *tag)
{
    struct ctl_paths p;
    struct ctl_dominfo d;
    if (xsim_ctl_info(c, domid, &d) < 0 || xsim_ctl_paths(c, &p) < 0)
        return -1;
    if (tag)
        snprintf(tag, len, "%s/dom%u", p.dir, domid);
    snprintf(xs, len, "%s/dom%u/xenstore.sock", p.dir, domid);
    snprintf(hyp, len, "%s/dom%u/hyp.sock", p.dir, domid);
    snprintf(lib, len, "%s", p.simlib);
    return 0;
}

static int cmd_env(struct xsim_ctl *c, unsigned domid)
{
    char xs[PATH_MAX], hyp[PATH_MAX], lib[PATH_MAX];
    if (dom_env(c, domid, xs, hyp, lib, sizeof(xs), NULL) < 0)
        return die("env", xsim_ctl_error(c));
    printf("export XENSTORED_PATH='%s'\nexport XENSIM_HYP='%s'\n", xs, hyp);
    printf("export LD_LIBRARY_PATH='%s'${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\n", lib);
    return 0;
}

static int cmd_exec(struct xsim_ctl *c, unsigned domid, char **argv)
{
    char xs[PATH_MAX], hyp[PATH_MAX], lib[PATH_MAX], tag[PATH_MAX], ld[2 * PATH_MAX + 2];
    if (dom_env(c, domid, xs, hyp, lib, sizeof(xs), tag) < 0)
        return die("exec", xsim_ctl_error(c));
    /* Tagged like the domain's own processes, so it dies with the domain. */
    if (domid != 0)
        setenv("XENSIM_DOMAIN_TAG", tag, 1);
    xsim_ctl_close(c);
    const char *old = getenv("LD_LIBRARY_PATH");
    snprintf(ld, sizeof(ld), "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
    setenv("XENSTORED_PATH", xs, 1);
    setenv("XENSIM_HYP", hyp, 1);
    setenv("LD_LIBRARY_PATH", ld, 1);
    execvp(argv[0], argv);
    fprintf(stderr, "xensim: exec %s: %s\n", argv[0], strerror(errno));
    return 127;
}

static int cmd_wait(struct xsim_ctl *c, unsigned domid, int argc, char **argv)
{
    int until_gone = 0;
    double timeout = 30;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--until") && i + 1 < argc) {
            const char *u = argv[++i];
            if (!strcmp(u, "gone"))
                until_gone = 1;
            else if (strcmp(u, "shutdown"))
                return die("wait", "--until takes shutdown or gone");
        } else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
            char *end;
            timeout = strtod(argv[++i], &end);
            if (*end || timeout < 0)
                return die("wait", "--timeout takes seconds");
        } else {
            return die("wait", "unknown option");
        }
    }
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct ctl_dominfo d;
        int r = xsim_ctl_info(c, domid, &d);
        if (r < 0 && errno == ESRCH)
            return 0; /* gone is past shutdown too */
        if (r < 0)
            return die("wait", xsim_ctl_error(c));
        if (!until_gone && d.state >= DOM_SHUTDOWN)
            return 0;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 > timeout) {
            fprintf(stderr, "xensim: wait: domain %u still %s after %.1f s\n", domid,
                    state_name(d.state), timeout);
            return 1;
        }
        usleep(20 * 1000);
    }
}

static int parse_reason(const char *s)
{
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, reason_names[i]))
            return i;
    return -1;
}

int main(int argc, char **argv)
{
    const char *dir = getenv("XENSIM_DIR");
    int i = 1;
    if (i + 1 < argc && !strcmp(argv[i], "--dir")) {
        dir = argv[i + 1];
        i += 2;
    }
    if (i >= argc || !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
        usage(i >= argc ? stderr : stdout);
        return i >= argc ? 2 : 0;
    }
    if (!dir || !*dir)
        return die(argv[i], "no sim directory: give --dir DIR or set XENSIM_DIR");
    const char *cmd = argv[i++];
    if (!strcmp(cmd, "start"))
        return cmd_start(dir);
    if (!strcmp(cmd, "stop"))
        return cmd_stop(dir);
    if (!strcmp(cmd, "create"))
        return cmd_create(dir, argc - i, argv + i);

    struct xsim_ctl *c = connect_or_die(dir);
    if (!c)
        return 1;
    int rc = 2;
    if (!strcmp(cmd, "list")) {
        rc = cmd_list(c, i < argc && !strcmp(argv[i], "--json"));
        goto out;
    }
    if (i >= argc) {
        usage(stderr);
        goto out;
    }
    unsigned domid;
    if (xsim_ctl_lookup(c, argv[i], &domid) < 0) {
        rc = die(cmd, xsim_ctl_error(c));
        goto out;
    }
    i++;
    int r = 0;
    if (!strcmp(cmd, "destroy")) {
        r = xsim_ctl_destroy(c, domid);
    } else if (!strcmp(cmd, "pause")) {
        r = xsim_ctl_pause(c, domid);
    } else if (!strcmp(cmd, "unpause")) {
        r = xsim_ctl_unpause(c, domid);
    } else if (!strcmp(cmd, "shutdown") || !strcmp(cmd, "crash") || !strcmp(cmd, "watchdog")) {
        int reason =
            !strcmp(cmd, "shutdown") ? (i < argc ? parse_reason(argv[i]) : 0) : parse_reason(cmd);
        if (reason < 0 || reason == DOM_SHUTDOWN_SUSPEND) {
            rc = die(cmd, "reason must be poweroff, reboot, crash or watchdog");
            goto out;
        }
        r = xsim_ctl_shutdown(c, domid, (unsigned)reason);
    } else if (!strcmp(cmd, "info")) {
        rc = cmd_info(c, domid);
        goto out;
    } else if (!strcmp(cmd, "env")) {
        rc = cmd_env(c, domid);
        goto out;
    } else if (!strcmp(cmd, "wait")) {
        rc = cmd_wait(c, domid, argc - i, argv + i);
        goto out;
    } else if (!strcmp(cmd, "exec")) {
        if (i < argc && !strcmp(argv[i], "--"))
            i++;
        if (i >= argc) {
            rc = die("exec", "no command given");
            goto out;
        }
        return cmd_exec(c, domid, argv + i);
    } else {
        fprintf(stderr, "xensim: unknown command '%s'\n", cmd);
        usage(stderr);
        goto out;
    }
    rc = r < 0 ? die(cmd, xsim_ctl_error(c)) : 0;
out:
    xsim_ctl_close(c);
    return rc;
}
