/* sbuf.h - a growing string buffer for replies, metrics and state files.
 * Appends never fail loudly: an allocation failure sets oom and later
 * appends are ignored, so callers check once at the end. */
#ifndef SD_SBUF_H
#define SD_SBUF_H

#include <stdbool.h>
#include <stddef.h>

struct sbuf {
    char *s;    /* NUL-terminated while len > 0 or after any append */
    size_t len; /* bytes, without the NUL */
    size_t cap;
    bool oom;
};

void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_add(struct sbuf *b, const char *s, size_t n);
/* s as a JSON string literal, quotes included. */
void sbuf_json(struct sbuf *b, const char *s);
/* The contents ("" when empty); valid until the next append. */
const char *sbuf_str(const struct sbuf *b);
void sbuf_reset(struct sbuf *b);
void sbuf_free(struct sbuf *b);

#endif
