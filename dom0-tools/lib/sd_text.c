/* sd_text.c - checked parsing and encoding helpers. */
#define _GNU_SOURCE
#include "sd_text.h"

#include "understudy-keys.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sd_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno == ERANGE || v > max)
        return -1;
    *out = v;
    return 0;
}

int sd_parse_duration(const char *s, uint64_t *ms)
{
    static const struct {
        const char *unit;
        uint64_t mult;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE || end == s)
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].unit) == 0) {
            if (v > UINT64_MAX / 4 / units[i].mult) /* keeps sums and doublings safe */
                return -1;
            *ms = v * units[i].mult;
            return 0;
        }
    }
    return -1;
}

void sd_format_duration(char *buf, size_t len, uint64_t ms)
{
    if (ms && ms % 3600000 == 0)
        snprintf(buf, len, "%lluh", (unsigned long long)(ms / 3600000));
    else if (ms && ms % 60000 == 0)
        snprintf(buf, len, "%llum", (unsigned long long)(ms / 60000));
    else if (ms && ms % 1000 == 0)
        snprintf(buf, len, "%llus", (unsigned long long)(ms / 1000));
    else
        snprintf(buf, len, "%llums", (unsigned long long)ms);
}

int sd_pct_encode(char *buf, size_t len, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    if (!*s) { /* the empty value: one token still */
        if (len < 4)
            return -1;
        memcpy(buf, "%00", 3); /* never produced otherwise: decode refuses %00 elsewhere */
        buf[3] = 0;
        return 0;
    }
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool plain = c > 0x20 && c < 0x7f && c != '%';
        size_t need = plain ? 1 : 3;
        if (o + need >= len)
            return -1;
        if (plain) {
            buf[o++] = (char)c;
        } else {
            buf[o++] = '%';
            buf[o++] = hex[c >> 4];
            buf[o++] = hex[c & 15];
        }
    }
    buf[o] = 0;
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int sd_pct_decode(char *s)
{
    if (strcmp(s, "%00") == 0) {
        s[0] = 0;
        return 0;
    }
    char *o = s;
    for (const char *i = s; *i; i++) {
        if (*i != '%') {
            *o++ = *i;
            continue;
        }
        int h = hexval(i[1]), l = h < 0 ? -1 : hexval(i[2]);
        if (h < 0 || l < 0 || (h == 0 && l == 0))
            return -1;
        *o++ = (char)(h * 16 + l);
        i += 2;
    }
    *o = 0;
    return 0;
}

void sd_strfmt(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

bool sd_valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63)
        return false;
    for (; *s; s++) {
        char c = *s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-'))
            return false;
    }
    return true;
}

static const char *const report_kinds[] = {"timeout", "bad-response", "backend-closed",
                                           "backend-vanished", "backend-restarted"};

const char *sd_report_kind_name(enum sd_report_kind k)
{
    return (unsigned)k < sizeof(report_kinds) / sizeof(report_kinds[0]) ? report_kinds[k] : "?";
}

bool sd_report_is_evidence(enum sd_report_kind k)
{
    return k != SD_REPORT_BACKEND_RESTARTED;
}

/* The next space-separated token of *p into tok; 0, or -1 if none fits. */
static int next_token(const char **p, char *tok, size_t len)
{
    const char *s = *p;
    size_t n = strcspn(s, " ");
    if (n == 0 || n >= len)
        return -1;
    memcpy(tok, s, n);
    tok[n] = 0;
    s += n;
    if (*s == ' ')
        s++;
    *p = s;
    return 0;
}

int sd_parse_report(const char *v, struct sd_report *r, const char **why)
{
    size_t n = strlen(v);
    if (n > SD_REPORT_MAX) {
        *why = "longer than 256 bytes";
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i] < 0x20 || v[i] > 0x7e) {
            *why = "not printable ASCII";
            return -1;
        }
    }
    char tok[32];
    const char *p = v;
    if (next_token(&p, tok, sizeof(tok)) < 0 || sd_parse_u64(tok, UINT64_MAX, &r->seq) < 0) {
        *why = "no decimal <seq> first";
        return -1;
    }
    if (next_token(&p, tok, sizeof(tok)) < 0) {
        *why = "no <kind>";
        return -1;
    }
    size_t k = 0, nk = sizeof(report_kinds) / sizeof(report_kinds[0]);
    while (k < nk && strcmp(tok, report_kinds[k]) != 0)
        k++;
    if (k == nk) {
        *why = "unknown <kind>";
        return -1;
    }
    r->kind = (enum sd_report_kind)k;
    snprintf(r->detail, sizeof(r->detail), "%s", p);
    return 0;
}

int sd_parse_fe_last_recovery(const char *v, uint64_t out[4], const char **why)
{
    static const char *const names[] = {"detect=", "reconnect=", "replay=", "total="};
    const char *p = v;
    for (int i = 0; i < 4; i++) {
        size_t nl = strlen(names[i]);
        if (strncmp(p, names[i], nl) != 0) {
            *why = "fields are not detect= reconnect= replay= total= in that order";
            return -1;
        }
        p += nl;
        char tok[24];
        if (next_token(&p, tok, sizeof(tok)) < 0 || sd_parse_u64(tok, UINT64_MAX, &out[i]) < 0) {
            *why = "a field is not a decimal number of ms";
            return -1;
        }
    }
    if (*p || (strlen(v) && v[strlen(v) - 1] == ' ')) {
        *why = "trailing text";
        return -1;
    }
    return 0;
}

bool sd_inject_fault_known(const char *fault)
{
    return !strcmp(fault, USK_FAULT_CORRUPT) || !strcmp(fault, USK_FAULT_HANG) ||
           !strcmp(fault, USK_FAULT_SLOW) || !strcmp(fault, USK_FAULT_CRASH);
}

int sd_parse_inject(const char *v, uint64_t *seq, char *fault, size_t flen, uint64_t *count,
                    bool *has_count, const char **why)
{
    const char *p = v;
    char tok[32];
    if (next_token(&p, tok, sizeof(tok)) < 0 || sd_parse_u64(tok, UINT64_MAX, seq) < 0) {
        *why = "no decimal <seq> first";
        return -1;
    }
    if (next_token(&p, fault, flen) < 0 || !sd_inject_fault_known(fault)) {
        *why = "<fault> is not corrupt, hang, slow or crash";
        return -1;
    }
    *has_count = false;
    *count = 0;
    if (*p) {
        if (next_token(&p, tok, sizeof(tok)) < 0 || sd_parse_u64(tok, UINT64_MAX, count) < 0 ||
            *p) {
            *why = "<count> is not one decimal number";
            return -1;
        }
        *has_count = true;
    }
    if (strlen(v) && v[strlen(v) - 1] == ' ') {
        *why = "trailing space";
        return -1;
    }
    return 0;
}

bool sd_key_match(const char *pattern, const char *key)
{
    size_t n = strlen(pattern);
    if (n && pattern[n - 1] == '*')
        return strncmp(pattern, key, n - 1) == 0;
    return strcmp(pattern, key) == 0;
}

int sd_parse_slot(const char *v)
{
    if (v && !strcmp(v, USK_FE_SLOT_A))
        return SD_SLOT_A;
    if (v && !strcmp(v, USK_FE_SLOT_B))
        return SD_SLOT_B;
    return -1;
}

const char *sd_slot_name(int slot)
{
    return slot == SD_SLOT_A ? USK_FE_SLOT_A : slot == SD_SLOT_B ? USK_FE_SLOT_B : NULL;
}

char *sd_slot_path(char *buf, size_t len, const char *fe, int slot)
{
    const char *name = sd_slot_name(slot);
    if (!name || snprintf(buf, len, "%s/" USK_FE_SLOT_DIR "/%s", fe, name) >= (int)len)
        return NULL;
    return buf;
}

int sd_front_which(const char *fe, const char *front)
{
    size_t n = strlen(fe);
    if (strncmp(front, fe, n))
        return -1;
    if (!front[n])
        return 0;
    if (front[n] != '/' || strncmp(front + n + 1, USK_FE_SLOT_DIR "/", strlen(USK_FE_SLOT_DIR) + 1))
        return -1;
    return sd_parse_slot(front + n + 1 + strlen(USK_FE_SLOT_DIR) + 1);
}

bool sd_fe_protocol_key(const char *name)
{
    /* schema.md, "The hot standby's connection": the keys a frontend writes
     * for one connection, in any of the PV protocols we speak (blkif,
     * netif, sndif - whose per-stream ring keys match the same names). */
    static const char *const keys[] = {
        "state",
        "protocol",
        "version",
        "ring-ref*",
        "ring-page-order",
        "num-ring-pages",
        "event-channel*",
        "evt-ring-ref",
        "evt-event-channel",
        "tx-ring-ref",
        "rx-ring-ref",
        "request-*",
        "feature-*",
        "multi-queue-num-queues",
        "queue-*",
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (sd_key_match(keys[i], name))
            return true;
    return false;
}
