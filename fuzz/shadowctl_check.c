/* shadowctl_check - `shadowctl check` (dom0-tools/shadowctl/check.c:
 * sd_check_store) over fuzz/fake_xs.c holding the input's store, which any
 * domain may have written its part of: the walk of /local/domain/<id>
 * (names), every frontend dir (FE/backend parsed and matched, backend-id,
 * state, the permissions of the dir and the tree below, shadow/generation,
 * recoveries, state, report, last-recovery), the backend dir it names
 * (frontend, frontend-id), every backend dir (state, perms, cache, its
 * frontend pointing back), each domain's heartbeat and inject key, and
 * shadowd's own dir (names, state words, domids, the standby's backend
 * dirs, last-recovery).
 * Checked: it returns 0 (there is a /local/domain); its report is exactly
 * one line per violation it counts, each "VIOLATION <path>: ..." (whatever
 * bytes the values it quotes hold); its counters stay within what the store
 * holds.
 * Input: lines "path=value" (relative to /local/domain, or absolute; in the
 * value "\n" is a newline, "\\" a backslash), "@path=n1,r2,..." sets path's
 * permissions (n none, r read, w write, b both). Every missing parent
 * becomes an empty node, as in xenstored. */
#define _GNU_SOURCE
#include "check.h"
#include "fake_xs.h"
#include "fuzz.h"

#include <stdbool.h>
#include <stdlib.h>

static void perms_line(const char *path, const char *s, const char *end)
{
    struct xs_permissions p[8];
    unsigned n = 0;
    while (s < end && n < 8) {
        unsigned t;
        switch (*s) {
        case 'n':
            t = XS_PERM_NONE;
            break;
        case 'r':
            t = XS_PERM_READ;
            break;
        case 'w':
            t = XS_PERM_WRITE;
            break;
        case 'b':
            t = XS_PERM_READ | XS_PERM_WRITE;
            break;
        default:
            return;
        }
        unsigned id = 0;
        for (s++; s < end && *s >= '0' && *s <= '9'; s++)
            id = (id * 10 + (unsigned)(*s - '0')) & 0xFFFF;
        p[n++] = (struct xs_permissions){.id = id, .perms = t};
        if (s < end && *s == ',')
            s++;
    }
    if (n)
        fxs_set_perms(path, p, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fxs_reset();
    fxs_set("/local/domain", "", 0);
    const char *text = (const char *)data, *end = text + size;
    char *val = malloc(size + 1);
    struct {
        char path[256];
        const char *p, *end;
    } perms[32];
    unsigned nperms = 0;
    while (text < end) {
        const char *nl = memchr(text, '\n', (size_t)(end - text));
        const char *le = nl ? nl : end;
        bool isperm = *text == '@';
        const char *k = text + isperm;
        const char *eq = memchr(k, '=', (size_t)(le - k));
        char path[256];
        int n = 0;
        if (eq && eq > k)
            n = *k == '/' ? snprintf(path, sizeof(path), "%.*s", (int)(eq - k), k)
                          : snprintf(path, sizeof(path), "/local/domain/%.*s", (int)(eq - k), k);
        if (n > 0 && (size_t)n < sizeof(path)) {
            if (isperm) {
                if (nperms < 32) { /* once every node exists */
                    memcpy(perms[nperms].path, path, (size_t)n + 1);
                    perms[nperms].p = eq + 1;
                    perms[nperms].end = le;
                    nperms++;
                }
            } else {
                size_t vl = 0;
                for (const char *c = eq + 1; c < le; c++) {
                    if (*c == '\\' && c + 1 < le && (c[1] == 'n' || c[1] == '\\')) {
                        val[vl++] = c[1] == 'n' ? '\n' : '\\';
                        c++;
                    } else {
                        val[vl++] = *c;
                    }
                }
                fxs_set(path, val, vl);
            }
        }
        text = le + 1;
    }
    free(val);
    fxs_fill_dirs();
    for (unsigned i = 0; i < nperms; i++)
        perms_line(perms[i].path, perms[i].p, perms[i].end);

    char *out = NULL;
    size_t olen = 0;
    FILE *f = open_memstream(&out, &olen);
    FZ_CHECK(f);
    struct check_result r;
    int rc = sd_check_store(fxs_handle(), f, &r);
    fclose(f);
    FZ_CHECK(rc == 0);
    FZ_CHECK(r.frontends <= r.keys && r.backends <= 256);
    /* one line per violation, each a violation */
    unsigned lines = 0;
    for (const char *l = out; l < out + olen; lines++) {
        FZ_CHECK(!strncmp(l, "VIOLATION /", 11));
        const char *nl = memchr(l, '\n', (size_t)(out + olen - l));
        FZ_CHECK(nl);
        FZ_CHECK(memchr(l, '\0', (size_t)(nl - l)) == NULL);
        l = nl + 1;
    }
    FZ_CHECK(lines == r.violations);
    free(out);
    fxs_reset();
    return 0;
}
