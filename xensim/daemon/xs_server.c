/* xs_server.c - the xs_server.h API: the store's setup, listening sockets,
 * and the toolstack's part of a domain's life (what libxl writes and
 * removes). */
#define _GNU_SOURCE
#include "xs_server.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "domain.h"
#include "xs_conn.h"
#include "xs_dom.h"
#include "xs_domain.h"
#include "xs_ops.h"
#include "xs_path.h"
#include "xs_store.h"
#include "xs_tree.h"
#include "xs_watch.h"

struct listener {
    unsigned domid;
    int fd;
    char *path;
    struct listener *next;
};

static struct evloop *xs_loop;
static struct listener *listeners;

/* manual_node(): the nodes xenstored and the boot scripts create. */
static int manual_node(const char *path, const char *value)
{
    struct xs_node *n = xs_node_new(path, 0, XSP_NONE);
    if (!n || (value && xs_node_set_data(n, value, (unsigned)strlen(value)))) {
        xs_node_free(n);
        return ENOMEM;
    }
    if (strcmp(path, "/") != 0) {
        char *pname = xs_path_parent(path);
        struct xs_node *p = pname ? xs_tree_get(pname) : NULL;
        free(pname);
        if (!p || xs_node_add_child(p, xs_path_base(path))) {
            xs_node_free(n);
            return ENOMEM;
        }
    }
    n->gen = xs_generation_next();
    int err = xs_tree_put(n);
    if (!err)
        xs_dom_entries_add(0, 1);
    return err;
}

int xs_server_init(struct evloop *l)
{
    xs_loop = l;
    xs_conn_init(l);
    if (xs_tree_init() || xs_dom_init())
        goto fail;
    /* xenstored's own nodes, and where the toolstack puts domains. */
    static const char *const nodes[][2] = {
        {"/", NULL},      {"/tool", NULL},         {"/tool/xenstored", NULL},
        {"/local", NULL}, {"/local/domain", NULL},
    };
    for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
        if (manual_node(nodes[i][0], nodes[i][1]))
            goto fail;
    return 0;
fail:
    xs_server_fini();
    errno = ENOMEM;
    return -1;
}

static void close_listener(struct listener *s)
{
    evloop_fd_delete(xs_loop, s->fd);
    close(s->fd);
    unlink(s->path);
    free(s->path);
    free(s);
}

void xs_server_fini(void)
{
    while (listeners) {
        struct listener *s = listeners;
        listeners = s->next;
        close_listener(s);
    }
    xs_conn_fini();
    xs_dom_fini();
    xs_tree_fini();
}

static void accept_cb(void *opaque, int fd, uint32_t events)
{
    struct listener *s = opaque;
    (void)events;
    for (int i = 0; i < 64; i++) {
        int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR)
                continue;
            return; /* EAGAIN, or out of fds: try again next round */
        }
        if (xs_domain_released(s->domid)) {
            close(c); /* RELEASEd: xenstored no longer talks to it */
            continue;
        }
        xs_conn_new(c, s->domid);
    }
}

int xs_server_listen(unsigned domid, const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(sa.sun_path, path);
    struct listener *s = calloc(1, sizeof(*s));
    if (!s || !(s->path = strdup(path))) {
        free(s);
        errno = ENOMEM;
        return -1;
    }
    s->domid = domid;
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd < 0)
        goto fail;
    unlink(path);
    if (bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s->fd, 64) < 0 ||
        evloop_fd_create(xs_loop, s->fd, EPOLLIN, accept_cb, s) < 0) {
        int e = errno;
        close(s->fd);
        unlink(path);
        errno = e;
        goto fail;
    }
    s->next = listeners;
    listeners = s;
    return 0;
fail : {
    int e = errno;
    free(s->path);
    free(s);
    errno = e;
    return -1;
}
}

/* ---- the toolstack (libxl__domain_make, libxl__destroy_domid) ---- */

static int ts_write(const char *path, const char *value)
{
    return xs_op_write(&xs_who_dom0, path, value, (unsigned)strlen(value));
}

/* libxl__xs_mknod(): an empty node with these perms. */
static int ts_mknod(const char *path, const struct xs_perm *p, unsigned n)
{
    int err = xs_op_mkdir(&xs_who_dom0, path);
    return err ? err : xs_op_set_perms(&xs_who_dom0, path, p, n);
}

static int make_uuid(char *buf, size_t len)
{
    unsigned char b[16];
    if (getrandom(b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b))
        for (size_t i = 0; i < sizeof(b); i++)
            b[i] = (unsigned char)rand();
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    return snprintf(buf, len,
                    "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                    b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
                    b[13], b[14], b[15]);
}

/* libxl's layout for a PV guest that is not a driver domain. */
static int make_layout(unsigned domid, const char *name)
{
    char dom[32], vm[64], uuid[40], path[128], id[16];
    xs_path_home(domid, dom, sizeof(dom));
    make_uuid(uuid, sizeof(uuid));
    snprintf(vm, sizeof(vm), "/vm/%s", uuid);
    snprintf(id, sizeof(id), "%u", domid);
    const struct xs_perm noperm[] = {{0, XSP_NONE}};
    const struct xs_perm roperm[] = {{0, XSP_NONE}, {domid, XSP_READ}};
    const struct xs_perm rwperm[] = {{domid, XSP_NONE}};
    int err = 0;
#define TRY(x)                                                                                     \
    do {                                                                                           \
        if (!err)                                                                                  \
            err = (x);                                                                             \
    } while (0)
#define SUB(s) (snprintf(path, sizeof(path), "%s/%s", dom, (s)), path)
    xs_op_rm(&xs_who_dom0, dom);
    TRY(ts_mknod(dom, roperm, 2));
    TRY(ts_mknod(vm, roperm, 2));
    snprintf(path, sizeof(path), "/libxl/%u", domid);
    xs_op_rm(&xs_who_dom0, path);
    TRY(ts_mknod(path, noperm, 1));
    snprintf(path, sizeof(path), "/libxl/%u/device", domid);
    TRY(ts_mknod(path, noperm, 1));
    TRY(ts_write(SUB("vm"), vm));
    TRY(ts_write(SUB("name"), name));
    TRY(ts_mknod(SUB("cpu"), roperm, 2));
    TRY(ts_mknod(SUB("memory"), roperm, 2));
    TRY(ts_mknod(SUB("device"), roperm, 2));
    TRY(ts_mknod(SUB("device/suspend/event-channel"), rwperm, 1));
    TRY(ts_mknod(SUB("control"), roperm, 2));
    static const char *const rw_control[] = {"shutdown", "feature-poweroff", "feature-reboot",
                                             "feature-suspend", "sysrq"};
    for (size_t i = 0; i < sizeof(rw_control) / sizeof(rw_control[0]); i++) {
        char sub[64];
        snprintf(sub, sizeof(sub), "control/%s", rw_control[i]);
        TRY(ts_mknod(SUB(sub), rwperm, 1));
    }
    static const char *const rw_dirs[] = {"data", "drivers", "feature", "attr", "error"};
    for (size_t i = 0; i < sizeof(rw_dirs) / sizeof(rw_dirs[0]); i++)
        TRY(ts_mknod(SUB(rw_dirs[i]), rwperm, 1));
    snprintf(path, sizeof(path), "%s/uuid", vm);
    TRY(ts_write(path, uuid));
    snprintf(path, sizeof(path), "%s/name", vm);
    TRY(ts_write(path, name));
    TRY(ts_write(SUB("control/platform-feature-multiprocessor-suspend"), "1"));
    TRY(ts_write(SUB("control/platform-feature-xs_reset_watches"), "1"));
    snprintf(path, sizeof(path), "/libxl/%u/type", domid);
    TRY(ts_write(path, "pv"));
    /* libxl__build_post */
    TRY(ts_write(SUB("domid"), id));
#undef SUB
#undef TRY
    return err;
}

int xs_server_domain_introduce(unsigned domid, const char *name)
{
    if (domid == 0) {
        /* What xen-init-dom0 writes; dom0 is introduced from the start. */
        int err = ts_write("/local/domain/0/domid", "0");
        if (!err)
            err = ts_write("/local/domain/0/name", name ? name : "Domain-0");
        if (err) {
            errno = err;
            return -1;
        }
        return 0;
    }
    if (domid >= XSIM_DOMID_FIRST_RESERVED || !xs_dom_get(domid)) {
        errno = EINVAL;
        return -1;
    }
    int err = make_layout(domid, name ? name : "");
    if (!err)
        err = xs_domain_introduce(domid);
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}

void xs_server_domain_shutdown(unsigned domid)
{
    struct xs_dom *d = xs_dom_find(domid);
    if (!d || !d->introduced || d->shutdown)
        return;
    d->shutdown = true;
    xs_watch_fire_special("@releaseDomain");
}

void xs_server_domain_destroyed(unsigned domid)
{
    if (domid == 0)
        return;
    for (struct listener **pp = &listeners; *pp;) {
        struct listener *s = *pp;
        if (s->domid == domid) {
            *pp = s->next;
            close_listener(s);
        } else {
            pp = &s->next;
        }
    }
    /* xenstored: the domain's connection goes, and what it owned. A domain
     * never introduced, or already RELEASEd, fires no @releaseDomain. */
    struct xs_dom *d = xs_dom_find(domid);
    bool fire = d && d->introduced;
    xs_domain_gone(domid);
    xs_domain_set_released(domid, false);
    /* libxl: the domain's directories. */
    char dom[32], path[64];
    xs_path_home(domid, dom, sizeof(dom));
    snprintf(path, sizeof(path), "%s/vm", dom);
    struct xs_node *vm;
    if (xs_op_get(&xs_who_dom0, path, XSP_READ, &vm) == 0 && vm->datalen > 4 && vm->datalen < 64 &&
        memcmp(vm->data, "/vm/", 4) == 0) {
        char vmpath[64];
        memcpy(vmpath, vm->data, vm->datalen);
        vmpath[vm->datalen] = '\0';
        if (xs_path_valid(vmpath))
            xs_op_rm(&xs_who_dom0, vmpath);
    }
    xs_op_rm(&xs_who_dom0, dom);
    snprintf(path, sizeof(path), "/libxl/%u", domid);
    xs_op_rm(&xs_who_dom0, path);
    if (fire)
        xs_watch_fire_special("@releaseDomain");
}
