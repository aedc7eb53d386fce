/* sbuf.c - a growing string buffer. */
#define _GNU_SOURCE
#include "sbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool reserve(struct sbuf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = true;
        return false;
    }
    b->s = s;
    b->cap = cap;
    return true;
}

void sbuf_add(struct sbuf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sbuf_json(struct sbuf *b, const char *s)
{
    sbuf_add(b, "\"", 1);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            sbuf_printf(b, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            sbuf_printf(b, "\\u%04x", c);
        else
            sbuf_add(b, (const char *)&c, 1);
    }
    sbuf_add(b, "\"", 1);
}

const char *sbuf_str(const struct sbuf *b)
{
    return b->s && !b->oom ? b->s : "";
}

void sbuf_reset(struct sbuf *b)
{
    b->len = 0;
    b->oom = false;
    if (b->s)
        b->s[0] = 0;
}

void sbuf_free(struct sbuf *b)
{
    if (!b)
        return;
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
    b->oom = false;
}
