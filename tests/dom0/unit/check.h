/* check.h - the smallest unit-test harness: CHECK(cond) counts a failure
 * and says where; main returns check_status(). */
#ifndef D0_CHECK_H
#define D0_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);                  \
            check_failures++;                                                                      \
        }                                                                                          \
    } while (0)

static inline int check_status(void)
{
    if (check_failures)
        fprintf(stderr, "%d checks failed\n", check_failures);
    return check_failures ? 1 : 0;
}

#endif
