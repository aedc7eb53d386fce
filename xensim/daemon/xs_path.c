/* xs_path.c - validating and composing xenstore paths. */
#define _GNU_SOURCE
#include "xs_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <xen/io/xs_wire.h>

static bool valid_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '/' || c == '_' || c == '@';
}

bool xs_path_valid(const char *path)
{
    size_t len = strlen(path);
    if (len == 0 || path[0] != '/')
        return false;
    if (len > 1 && path[len - 1] == '/')
        return false;
    if (strstr(path, "//"))
        return false;
    if (len > XENSTORE_ABS_PATH_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!valid_char(path[i]))
            return false;
    return true;
}

void xs_path_home(unsigned domid, char *buf, unsigned len)
{
    snprintf(buf, len, "/local/domain/%u", domid);
}

char *xs_path_canonical(unsigned domid, const char *path)
{
    if (path[0] == '/' || path[0] == '@')
        return strdup(path);
    char *out;
    if (asprintf(&out, "/local/domain/%u/%s", domid, path) < 0)
        return NULL;
    return out;
}

char *xs_path_parent(const char *path)
{
    const char *slash = strrchr(path + 1, '/');
    if (!slash)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

const char *xs_path_base(const char *path)
{
    return strrchr(path, '/') + 1;
}

char *xs_path_join(const char *parent, const char *base)
{
    char *out;
    if (asprintf(&out, "%s/%s", strcmp(parent, "/") ? parent : "", base) < 0)
        return NULL;
    return out;
}

bool xs_path_is_child(const char *child, const char *parent)
{
    size_t len = strlen(parent);
    if (strcmp(parent, "/") == 0)
        return true;
    if (strncmp(child, parent, len) != 0)
        return false;
    return child[len] == '/' || child[len] == '\0';
}

unsigned xs_atoi(const char *s)
{
    unsigned v = 0;
    bool neg = false;
    while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
        s++;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    for (; *s >= '0' && *s <= '9'; s++)
        v = v * 10u + (unsigned)(*s - '0');
    return neg ? 0u - v : v;
}
