/* fake_xs.c - the in-memory xenstore of the fuzz targets (fake_xs.h). */
#define _GNU_SOURCE
#include "fake_xs.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FXS_MAX   256
#define FXS_PERMS 8

struct xs_handle {
    int unused;
};

static struct xs_handle the_handle;
static struct {
    char *path;
    char *val;
    size_t len;
    struct xs_permissions perms[FXS_PERMS];
    unsigned nperms;
} nodes[FXS_MAX];
static unsigned nnodes;

struct xs_handle *fxs_handle(void)
{
    return &the_handle;
}

void fxs_reset(void)
{
    for (unsigned i = 0; i < nnodes; i++) {
        free(nodes[i].path);
        free(nodes[i].val);
    }
    nnodes = 0;
}

static int find(const char *path)
{
    for (unsigned i = 0; i < nnodes; i++)
        if (!strcmp(nodes[i].path, path))
            return (int)i;
    return -1;
}

/* A path xenstored accepts: absolute, no empty component, [A-Za-z0-9_@/-] only. */
static bool valid_path(const char *path)
{
    if (path[0] != '/' || strstr(path, "//") || (path[1] && path[strlen(path) - 1] == '/'))
        return false;
    for (const char *c = path; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '/' || *c == '_' || *c == '@'))
            return false;
    return true;
}

void fxs_set(const char *path, const void *value, size_t len)
{
    if (!valid_path(path))
        return;
    int i = find(path);
    if (i < 0) {
        if (nnodes == FXS_MAX)
            return;
        i = (int)nnodes++;
        nodes[i].path = strdup(path);
        nodes[i].perms[0] = (struct xs_permissions){.id = 0, .perms = XS_PERM_NONE};
        nodes[i].nperms = 1;
    } else {
        free(nodes[i].val);
    }
    nodes[i].val = malloc(len + 1);
    memcpy(nodes[i].val, value, len);
    nodes[i].val[len] = '\0';
    nodes[i].len = len;
}

int fxs_set_perms(const char *path, const struct xs_permissions *p, unsigned n)
{
    int i = find(path);
    if (i < 0 || n < 1 || n > FXS_PERMS)
        return -1;
    memcpy(nodes[i].perms, p, n * sizeof(*p));
    nodes[i].nperms = n;
    return 0;
}

void fxs_fill_dirs(void)
{
    for (unsigned i = 0; i < nnodes; i++) {
        char up[512];
        snprintf(up, sizeof(up), "%s", nodes[i].path);
        for (char *s = strrchr(up, '/'); s && s > up; s = strrchr(up, '/')) {
            *s = '\0';
            if (find(up) < 0)
                fxs_set(up, "", 0);
        }
    }
}

void fxs_load(const char *base, const char *text, size_t len)
{
    const char *end = text + len;
    while (text < end) {
        const char *nl = memchr(text, '\n', (size_t)(end - text));
        const char *le = nl ? nl : end;
        const char *eq = memchr(text, '=', (size_t)(le - text));
        if (eq && eq > text) {
            char path[512];
            int n = *text == '/'
                        ? snprintf(path, sizeof(path), "%.*s", (int)(eq - text), text)
                        : snprintf(path, sizeof(path), "%s/%.*s", base, (int)(eq - text), text);
            if (n > 0 && (size_t)n < sizeof(path))
                fxs_set(path, eq + 1, (size_t)(le - eq - 1));
        }
        text = le + 1;
    }
}

/* ---- libxenstore ---- */

struct xs_handle *xs_open(unsigned long flags)
{
    (void)flags;
    return &the_handle;
}

void xs_close(struct xs_handle *h)
{
    (void)h;
}

int xs_fileno(struct xs_handle *h)
{
    (void)h;
    return -1;
}

void *xs_read(struct xs_handle *h, xs_transaction_t t, const char *path, unsigned int *len)
{
    (void)h;
    (void)t;
    int i = find(path);
    if (i < 0) {
        errno = ENOENT;
        return NULL;
    }
    char *v = malloc(nodes[i].len + 1);
    if (!v)
        return NULL;
    memcpy(v, nodes[i].val, nodes[i].len + 1);
    if (len)
        *len = (unsigned)nodes[i].len;
    return v;
}

bool xs_write(struct xs_handle *h, xs_transaction_t t, const char *path, const void *data,
              unsigned int len)
{
    (void)h;
    (void)t;
    if (!valid_path(path)) {
        errno = EINVAL;
        return false;
    }
    fxs_set(path, data, len);
    return true;
}

bool xs_mkdir(struct xs_handle *h, xs_transaction_t t, const char *path)
{
    (void)h;
    (void)t;
    if (find(path) < 0)
        fxs_set(path, "", 0);
    return true;
}

bool xs_rm(struct xs_handle *h, xs_transaction_t t, const char *path)
{
    (void)h;
    (void)t;
    size_t pl = strlen(path);
    for (unsigned i = 0; i < nnodes;) {
        if (!strncmp(nodes[i].path, path, pl) &&
            (nodes[i].path[pl] == '\0' || nodes[i].path[pl] == '/')) {
            free(nodes[i].path);
            free(nodes[i].val);
            nodes[i] = nodes[--nnodes];
        } else {
            i++;
        }
    }
    return true;
}

char **xs_directory(struct xs_handle *h, xs_transaction_t t, const char *path, unsigned int *num)
{
    (void)h;
    (void)t;
    size_t pl = strlen(path);
    const char *names[FXS_MAX];
    size_t lens[FXS_MAX], total = 0;
    unsigned n = 0;
    bool exists = find(path) >= 0;
    for (unsigned i = 0; i < nnodes; i++) {
        const char *p = nodes[i].path;
        if (strncmp(p, path, pl) || p[pl] != '/' || !p[pl + 1])
            continue;
        exists = true;
        const char *c = p + pl + 1;
        size_t cl = strcspn(c, "/");
        bool dup = false;
        for (unsigned k = 0; k < n && !dup; k++)
            dup = lens[k] == cl && !strncmp(names[k], c, cl);
        if (dup)
            continue;
        names[n] = c;
        lens[n] = cl;
        total += cl + 1;
        n++;
    }
    if (!exists) {
        errno = ENOENT;
        return NULL;
    }
    char **v = malloc(n * sizeof(char *) + total + 1);
    if (!v)
        return NULL;
    char *s = (char *)(v + n);
    for (unsigned k = 0; k < n; k++) {
        memcpy(s, names[k], lens[k]);
        s[lens[k]] = '\0';
        v[k] = s;
        s += lens[k] + 1;
    }
    *num = n;
    return v;
}

struct xs_permissions *xs_get_permissions(struct xs_handle *h, xs_transaction_t t, const char *path,
                                          unsigned int *num)
{
    (void)h;
    (void)t;
    int i = find(path);
    if (i < 0) {
        errno = ENOENT;
        return NULL;
    }
    struct xs_permissions *p = malloc(nodes[i].nperms * sizeof(*p));
    if (!p)
        return NULL;
    memcpy(p, nodes[i].perms, nodes[i].nperms * sizeof(*p));
    *num = nodes[i].nperms;
    return p;
}

bool xs_set_permissions(struct xs_handle *h, xs_transaction_t t, const char *path,
                        struct xs_permissions *perms, unsigned int num)
{
    (void)h;
    (void)t;
    if (fxs_set_perms(path, perms, num) < 0) {
        errno = find(path) < 0 ? ENOENT : EINVAL;
        return false;
    }
    return true;
}

xs_transaction_t xs_transaction_start(struct xs_handle *h)
{
    (void)h;
    return 1;
}

bool xs_transaction_end(struct xs_handle *h, xs_transaction_t t, bool abort_it)
{
    (void)h;
    (void)t;
    (void)abort_it;
    return true;
}

bool xs_watch(struct xs_handle *h, const char *path, const char *token)
{
    (void)h;
    (void)path;
    (void)token;
    return true;
}

bool xs_unwatch(struct xs_handle *h, const char *path, const char *token)
{
    (void)h;
    (void)path;
    (void)token;
    return true;
}

char **xs_read_watch(struct xs_handle *h, unsigned int *num)
{
    (void)h;
    (void)num;
    errno = EAGAIN;
    return NULL;
}

char **xs_check_watch(struct xs_handle *h)
{
    (void)h;
    errno = EAGAIN;
    return NULL;
}
