/* be_inject.c - parsing of fault injection requests. */
#define _GNU_SOURCE
#include "be_inject.h"

#include "understudy-keys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    enum be_fault_kind kind;
} faults[] = {
    {USK_FAULT_CORRUPT, BE_FAULT_CORRUPT},
    {USK_FAULT_HANG, BE_FAULT_HANG},
    {USK_FAULT_SLOW, BE_FAULT_SLOW},
    {USK_FAULT_CRASH, BE_FAULT_CRASH},
};

const char *be_fault_name(enum be_fault_kind k)
{
    for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
        if (faults[i].kind == k)
            return faults[i].name;
    return "unknown";
}

/* One unsigned decimal word at *s; advances *s past it. */
static int parse_word_u64(const char **s, uint64_t *out)
{
    const char *p = *s;
    if (*p < '0' || *p > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno || (*end && *end != ' '))
        return -1;
    *out = v;
    *s = end;
    return 0;
}

int be_fault_parse(const char *s, struct be_fault *f)
{
    memset(f, 0, sizeof(*f));
    if (parse_word_u64(&s, &f->seq) < 0 || *s != ' ')
        goto bad;
    s++;
    size_t n = strcspn(s, " ");
    size_t i;
    for (i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
        if (strlen(faults[i].name) == n && !strncmp(s, faults[i].name, n))
            break;
    if (i == sizeof(faults) / sizeof(faults[0]))
        goto bad;
    f->kind = faults[i].kind;
    s += n;
    if (*s == ' ') {
        s++;
        if (parse_word_u64(&s, &f->count) < 0 || *s)
            goto bad;
        f->has_count = true;
    } else if (*s) {
        goto bad;
    }
    return 0;
bad:
    errno = EINVAL;
    return -1;
}
