/* privpoke - talks to shadowd-priv as a compromised shadowd would: starts
 * it on a socketpair with a config, then sends malformed requests and
 * well-formed ones that reach outside the config, and checks that each is
 * refused (rc -1, EINVAL for a malformed one, EPERM for one outside the
 * config); then a few allowed ones, to show the refusals are not all it
 * does. Prints one line per case; exit 1 if any case went wrong.
 *
 *   privpoke SHADOWD-PRIV CONF DRV GUEST
 *
 * DRV: the domid of a running domain called as CONF's xensim domain `drv`;
 * GUEST: the domid of a running domain CONF does not name. */
#define _GNU_SOURCE
#include "privmsg.h"

#include "conf.h"
#include "drv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int fd = -1, failures;
static uint32_t seq;

/* Send len bytes of m, then read replies until the one for it. */
static int exchange(const void *m, size_t len, struct sd_privmsg *rep)
{
    if (send(fd, m, len, 0) != (ssize_t)len) {
        perror("privpoke: send");
        exit(1);
    }
    for (;;) {
        memset(rep, 0, sizeof(*rep));
        ssize_t n = recv(fd, rep, sizeof(*rep), 0);
        if (n != (ssize_t)sizeof(*rep)) {
            fprintf(stderr, "privpoke: shadowd-priv went away (recv %zd: %s)\n", n,
                    n < 0 ? strerror(errno) : "eof");
            exit(1);
        }
        if (rep->type == SD_PRIV_REPLY)
            return 0;
    }
}

static void expect(const char *what, const struct sd_privmsg *rep, int rc, int err_no)
{
    bool ok = rep->rc == rc && (rc >= 0 || rep->err_no == err_no);
    printf("%s %s: rc %d errno %d%s%s\n", ok ? "ok" : "FAIL", what, rep->rc, rep->err_no,
           rep->err[0] ? ": " : "", rep->err);
    if (!ok)
        failures++;
}

static struct sd_privmsg req(uint32_t type, uint32_t kind, uint32_t domid, const char *dom,
                             const char *name)
{
    struct sd_privmsg m;
    memset(&m, 0, sizeof(m));
    m.type = type;
    m.seq = ++seq;
    m.kind = kind;
    m.domid = domid;
    if (dom)
        snprintf(m.dom, sizeof(m.dom), "%s", dom);
    if (name)
        snprintf(m.name, sizeof(m.name), "%s", name);
    return m;
}

static void send_req(const char *what, struct sd_privmsg m, int rc, int err_no)
{
    struct sd_privmsg rep;
    exchange(&m, sizeof(m), &rep);
    expect(what, &rep, rc, err_no);
}

static void malformed(unsigned drv)
{
    struct sd_privmsg rep, m = req(SD_PRIV_INFO, SD_DRIVER_XENSIM, drv, NULL, NULL);
    char big[sizeof(m) + 16];
    exchange(&m, 10, &rep);
    expect("short message", &rep, -1, EINVAL);
    memset(big, 0, sizeof(big));
    memcpy(big, &m, sizeof(m));
    exchange(big, sizeof(big), &rep);
    expect("long message", &rep, -1, EINVAL);
    send_req("unknown type", req(99, SD_DRIVER_XENSIM, drv, NULL, NULL), -1, EINVAL);
    send_req("a reply sent as a request", req(SD_PRIV_REPLY, SD_DRIVER_XENSIM, drv, NULL, NULL), -1,
             EINVAL);
    send_req("driver kind 0", req(SD_PRIV_INFO, 0, drv, NULL, NULL), -1, EINVAL);
    send_req("driver kind 9", req(SD_PRIV_INFO, 9, drv, NULL, NULL), -1, EINVAL);
    send_req("info of domid 0", req(SD_PRIV_INFO, SD_DRIVER_XENSIM, 0, NULL, NULL), -1, EINVAL);
    send_req("destroy of domid 0 (dom0)", req(SD_PRIV_DESTROY, SD_DRIVER_XENSIM, 0, NULL, NULL), -1,
             EINVAL);
    send_req("destroy of domid 32752",
             req(SD_PRIV_DESTROY, SD_DRIVER_XENSIM, SD_PRIV_DOMMAX + 1, NULL, NULL), -1, EINVAL);
    send_req("settle of domid 0", req(SD_PRIV_SETTLE, SD_DRIVER_XENSIM, 0, NULL, NULL), -1, EINVAL);
    send_req("settle by name", req(SD_PRIV_SETTLE, SD_DRIVER_XENSIM, 0, NULL, "drv"), -1, EINVAL);
    send_req("crash of domid 0xffffffff",
             req(SD_PRIV_CRASH, SD_DRIVER_XENSIM, 0xffffffffu, NULL, NULL), -1, EINVAL);
    m = req(SD_PRIV_FIND, SD_DRIVER_XENSIM, 0, NULL, NULL);
    memset(m.name, 'a', sizeof(m.name));
    send_req("a name without its NUL", m, -1, EINVAL);
    m = req(SD_PRIV_FIND, SD_DRIVER_XENSIM, 0, NULL, "drv");
    m.name[10] = 'x';
    send_req("bytes after a name's NUL", m, -1, EINVAL);
    send_req("a name with a slash", req(SD_PRIV_FIND, SD_DRIVER_XENSIM, 0, NULL, "../drv"), -1,
             EINVAL);
    send_req("create of a path", req(SD_PRIV_CREATE, SD_DRIVER_XENSIM, 0, "/etc/passwd", "drv"), -1,
             EINVAL);
    send_req("a name in a request by domid",
             req(SD_PRIV_DESTROY, SD_DRIVER_XENSIM, drv, NULL, "drv"), -1, EINVAL);
    send_req("a domid in a request by name", req(SD_PRIV_FIND, SD_DRIVER_XENSIM, drv, NULL, "drv"),
             -1, EINVAL);
    m = req(SD_PRIV_INFO, SD_DRIVER_XENSIM, drv, NULL, NULL);
    snprintf(m.err, sizeof(m.err), "smuggled");
    send_req("text in a request's err", m, -1, EINVAL);
    m = req(SD_PRIV_INFO, SD_DRIVER_XENSIM, drv, NULL, NULL);
    m.flags = SD_PRIV_F_BOOST;
    send_req("boost on an info", m, -1, EINVAL);
    m = req(SD_PRIV_CREATE, SD_DRIVER_XENSIM, 0, "drv", "drv");
    m.flags = 2;
    send_req("a create with an unknown flag", m, -1, EINVAL);
    m = req(SD_PRIV_INFO, SD_DRIVER_XENSIM, drv, NULL, NULL);
    m.nlook = 1;
    m.look[0].domid = drv;
    send_req("a look list in an info", m, -1, EINVAL);
    send_req("a look at no domain", req(SD_PRIV_LOOK, SD_DRIVER_XENSIM, 0, NULL, NULL), -1, EINVAL);
    m = req(SD_PRIV_LOOK, SD_DRIVER_XENSIM, 0, NULL, NULL);
    m.nlook = SD_PRIV_LOOKMAX + 1;
    send_req("a look at 17 domains", m, -1, EINVAL);
    m = req(SD_PRIV_LOOK, SD_DRIVER_XENSIM, 0, NULL, NULL);
    m.nlook = 2;
    m.look[0].domid = drv;
    send_req("a look with domid 0 in its list", m, -1, EINVAL);
    m = req(SD_PRIV_LOOK, SD_DRIVER_XENSIM, drv, NULL, NULL);
    m.nlook = 1;
    m.look[0].domid = drv;
    send_req("a look with a domid beside its list", m, -1, EINVAL);
    m = req(SD_PRIV_LOOK, SD_DRIVER_XENSIM, 0, NULL, NULL);
    m.nlook = 1;
    m.look[0].domid = drv;
    m.look[0].run = SD_RUN_GONE;
    send_req("a look with a state in its request", m, -1, EINVAL);
    m = req(SD_PRIV_LOOK, SD_DRIVER_XENSIM, 0, NULL, NULL);
    m.nlook = 1;
    m.look[0].domid = drv;
    m.look[1].domid = drv;
    send_req("a look entry past nlook", m, -1, EINVAL);
}

static void outside_config(unsigned guest)
{
    send_req("find of a domain not in the config",
             req(SD_PRIV_FIND, SD_DRIVER_XENSIM, 0, NULL, "guest"), -1, EPERM);
    send_req("find through a driver the config does not use",
             req(SD_PRIV_FIND, SD_DRIVER_LIBXL, 0, NULL, "drv"), -1, EPERM);
    send_req("create of a domain not in the config",
             req(SD_PRIV_CREATE, SD_DRIVER_XENSIM, 0, "guest", "guest"), -1, EPERM);
    send_req("create of drv under another name",
             req(SD_PRIV_CREATE, SD_DRIVER_XENSIM, 0, "drv", "guest"), -1, EPERM);
    send_req("create of drv as drv.3", req(SD_PRIV_CREATE, SD_DRIVER_XENSIM, 0, "drv", "drv.3"), -1,
             EPERM);
    send_req("create of drv with the libxl driver",
             req(SD_PRIV_CREATE, SD_DRIVER_LIBXL, 0, "drv", "drv"), -1, EPERM);
    send_req("destroy of a guest", req(SD_PRIV_DESTROY, SD_DRIVER_XENSIM, guest, NULL, NULL), -1,
             EPERM);
    send_req("pause of a guest", req(SD_PRIV_PAUSE, SD_DRIVER_XENSIM, guest, NULL, NULL), -1,
             EPERM);
    send_req("crash of a guest", req(SD_PRIV_CRASH, SD_DRIVER_XENSIM, guest, NULL, NULL), -1,
             EPERM);
    send_req("unpause of a guest", req(SD_PRIV_UNPAUSE, SD_DRIVER_XENSIM, guest, NULL, NULL), -1,
             EPERM);
    send_req("settle of a guest", req(SD_PRIV_SETTLE, SD_DRIVER_XENSIM, guest, NULL, NULL), -1,
             EPERM);
}

static void allowed(unsigned drv, unsigned guest)
{
    struct sd_privmsg rep, m = req(SD_PRIV_FIND, SD_DRIVER_XENSIM, 0, NULL, "drv");
    exchange(&m, sizeof(m), &rep);
    expect("find of drv", &rep, 0, 0);
    if (rep.rc == 0 && rep.domid != drv) {
        printf("FAIL find of drv: domid %u, not %u\n", rep.domid, drv);
        failures++;
    }
    send_req("find of drv.2 (its standby's name; none runs)",
             req(SD_PRIV_FIND, SD_DRIVER_XENSIM, 0, NULL, "drv.2"), -1, ENOENT);
    m = req(SD_PRIV_INFO, SD_DRIVER_XENSIM, guest, NULL, NULL);
    exchange(&m, sizeof(m), &rep);
    expect("info of a guest (read only)", &rep, 0, 0);
    if (rep.st.run != SD_RUN_RUNNING || strcmp(rep.st.name, "guest")) {
        printf("FAIL info of a guest: run %u name '%s'\n", rep.st.run, rep.st.name);
        failures++;
    }
    /* One look at several: drv, the guest (read only, as info) and a domid
     * that does not exist, each answered in its place. */
    m = req(SD_PRIV_LOOK, SD_DRIVER_XENSIM, 0, NULL, NULL);
    m.nlook = 3;
    m.look[0].domid = drv;
    m.look[1].domid = guest;
    m.look[2].domid = SD_PRIV_DOMMAX;
    exchange(&m, sizeof(m), &rep);
    expect("look at drv, a guest and a domain that does not exist", &rep, 0, 0);
    if (rep.rc == 0 &&
        (rep.nlook != 3 || rep.look[0].domid != drv || rep.look[0].run != SD_RUN_RUNNING ||
         rep.look[1].domid != guest || rep.look[1].run != SD_RUN_RUNNING ||
         rep.look[2].domid != SD_PRIV_DOMMAX || rep.look[2].run != SD_RUN_GONE)) {
        printf("FAIL look: %u answers: %u %u, %u %u, %u %u\n", rep.nlook, rep.look[0].domid,
               rep.look[0].run, rep.look[1].domid, rep.look[1].run, rep.look[2].domid,
               rep.look[2].run);
        failures++;
    }
    /* boot-weight is the libxl driver's: the simulator's refuses to settle */
    send_req("settle of drv through a driver without a boot weight",
             req(SD_PRIV_SETTLE, SD_DRIVER_XENSIM, drv, NULL, NULL), -1, EPERM);
    send_req("settle of a domain that does not exist",
             req(SD_PRIV_SETTLE, SD_DRIVER_XENSIM, SD_PRIV_DOMMAX, NULL, NULL), -1, EPERM);
    send_req("pause of drv", req(SD_PRIV_PAUSE, SD_DRIVER_XENSIM, drv, NULL, NULL), 0, 0);
    send_req("unpause of drv", req(SD_PRIV_UNPAUSE, SD_DRIVER_XENSIM, drv, NULL, NULL), 0, 0);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: privpoke SHADOWD-PRIV CONF DRV GUEST\n");
        return 2;
    }
    unsigned drv = (unsigned)strtoul(argv[3], NULL, 10),
             guest = (unsigned)strtoul(argv[4], NULL, 10);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0) {
        perror("privpoke: socketpair");
        return 1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        char fdarg[16];
        snprintf(fdarg, sizeof(fdarg), "%d", sv[1]);
        execl(argv[1], "shadowd-priv", "--fd", fdarg, "-c", argv[2], (char *)NULL);
        _exit(127);
    }
    close(sv[1]);
    fd = sv[0];
    struct sd_privmsg hello;
    if (recv(fd, &hello, sizeof(hello), 0) != (ssize_t)sizeof(hello) ||
        hello.type != SD_PRIV_HELLO || hello.rc != 0) {
        fprintf(stderr, "privpoke: no hello from shadowd-priv\n");
        return 1;
    }
    malformed(drv);
    outside_config(guest);
    allowed(drv, guest);
    close(fd);
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        printf("FAIL shadowd-priv exited with status %d\n", st);
        failures++;
    }
    printf("%d cases failed\n", failures);
    return failures ? 1 : 0;
}
