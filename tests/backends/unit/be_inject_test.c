/* be_inject_test - parsing of fault injection requests (be_inject.c). */
#define _GNU_SOURCE
#include "be_inject.h"
#include "check.h"

#include <errno.h>

int main(void)
{
    struct be_fault f;
    CHECK_EQ(be_fault_parse("3 corrupt 5", &f), 0);
    CHECK_EQ(f.seq, 3);
    CHECK_EQ(f.kind, BE_FAULT_CORRUPT);
    CHECK_EQ(f.count, 5);
    CHECK(f.has_count);
    CHECK_EQ(be_fault_parse("4 hang", &f), 0);
    CHECK_EQ(f.kind, BE_FAULT_HANG);
    CHECK(!f.has_count);
    CHECK_EQ(be_fault_parse("18446744073709551615 slow 250", &f), 0);
    CHECK_EQ(f.kind, BE_FAULT_SLOW);
    CHECK_EQ(f.count, 250);
    CHECK_EQ(be_fault_parse("1 crash", &f), 0);
    CHECK_EQ(f.kind, BE_FAULT_CRASH);

    const char *bad[] = {"",
                         "1",
                         "1 ",
                         "x hang",
                         "-1 hang",
                         "1 hangs",
                         "1 hang -3",
                         "1 hang 3 4",
                         "1  hang",
                         "1 hang ",
                         "1 slow 99999999999999999999",
                         "18446744073709551616 hang",
                         "1 corrupt 0x10",
                         NULL};
    for (const char **b = bad; *b; b++) {
        errno = 0;
        int r = be_fault_parse(*b, &f);
        if (r != -1 || errno != EINVAL)
            fprintf(stderr, "accepted: '%s'\n", *b);
        CHECK_EQ(r, -1);
    }
    CHECK(be_fault_name(BE_FAULT_SLOW)[0] == 's');
    return check_done("be_inject_test");
}
