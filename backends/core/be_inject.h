/* be_inject.h - fault injection requests (USK_DRV_INJECT, written by dom0):
 * "<seq> <fault> [<count>]". The core parses the value and acts once per new
 * seq: a crash it performs itself, the others it hands to the class.
 */
#ifndef BE_INJECT_H
#define BE_INJECT_H

#include <stdbool.h>
#include <stdint.h>

enum be_fault_kind {
    BE_FAULT_CORRUPT = 1, /* the next <count> responses are invalid (default 1) */
    BE_FAULT_HANG,        /* stop serving requests; <count> ms, 0 or absent: until the next seq */
    BE_FAULT_SLOW,        /* delay each response by <count> ms; 0 ends it */
    BE_FAULT_CRASH,       /* abort() */
};

struct be_fault {
    uint64_t seq;
    enum be_fault_kind kind;
    uint64_t count;
    bool has_count;
};

/* Parse an inject value. 0, or -1 with errno EINVAL (malformed or unknown fault). */
int be_fault_parse(const char *s, struct be_fault *f);
const char *be_fault_name(enum be_fault_kind k);

#endif
