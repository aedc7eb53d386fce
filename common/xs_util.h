/* xs_util.h - small helpers over libxenstore shared by every Understudy
 * program: checked reads of numbers, formatted writes, XenbusState changes.
 * Values read from xenstore are peer input: every parse checks everything.
 */
#ifndef UNDERSTUDY_XS_UTIL_H
#define UNDERSTUDY_XS_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xenstore.h>

/* Read dir/key (key may be NULL: dir itself). Returns a malloc'ed NUL-terminated
 * string, or NULL with errno (ENOENT if absent). Values over max bytes are
 * refused with EFBIG. */
char *xsu_read(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key,
               size_t max);

/* Read an unsigned decimal (no sign, no spaces, no trailing junk) in [0, max].
 * 0 on success; -1 with errno ENOENT (absent), EINVAL (malformed), ERANGE. */
int xsu_read_u64(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key,
                 uint64_t max, uint64_t *out);
/* Like xsu_read_u64, but an absent key yields dflt. */
int xsu_read_u64_default(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key,
                         uint64_t max, uint64_t dflt, uint64_t *out);

/* Write printf-formatted value to dir/key. 0 or -1 with errno. */
int xsu_printf(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The same with a va_list (for wrappers). */
int xsu_vprintf(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key,
                const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

/* Join dir and key into buf. Returns buf, or NULL (ENAMETOOLONG). */
char *xsu_path(char *buf, size_t len, const char *dir, const char *key);

/* dir/state as a XenbusState (0..7); -1 with errno when absent or malformed. */
int xsu_read_state(struct xs_handle *xs, const char *dir);
/* Write dir/state, unless it already holds that value (avoids waking the peer). */
int xsu_write_state(struct xs_handle *xs, const char *dir, int state);
/* Name of a XenbusState, for logs. */
const char *xsu_state_name(int state);

#endif
