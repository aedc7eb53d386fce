/* nb_credit_test - the rate limit's parsing and credit arithmetic (nb_credit.c). */
#define _GNU_SOURCE
#include "check.h"
#include "nb_credit.h"

static void test_parse(void)
{
    uint64_t b, u;
    CHECK_EQ(nb_credit_parse("1000,50000", &b, &u), 0);
    CHECK_EQ(b, 1000);
    CHECK_EQ(u, 50000);
    const char *bad[] = {"",
                         "1000",
                         "1000,",
                         ",5",
                         "0,5",
                         "5,0",
                         "-1,5",
                         "5,-1",
                         "5,5x",
                         " 5,5",
                         "5, 5",
                         "99999999999999999999,1",
                         "1,99999999999",
                         "0x10,5"};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK(nb_credit_parse(bad[i], &b, &u) < 0);
}

static void test_take(void)
{
    struct nb_credit c;
    nb_credit_init(&c, 0, 0, 0);
    CHECK(!nb_credit_limited(&c));
    CHECK_EQ(nb_credit_take(&c, 65535, 0), 0);

    nb_credit_init(&c, 10000, 1000, 0); /* 10 kB per ms */
    CHECK(nb_credit_limited(&c));
    CHECK_EQ(nb_credit_take(&c, 6000, 0), 0);
    CHECK_EQ(nb_credit_take(&c, 4000, 0), 0);
    CHECK_EQ(nb_credit_take(&c, 1, 0), 1000); /* the next period */
    CHECK_EQ(nb_credit_take(&c, 1, 999), 1);
    CHECK_EQ(nb_credit_take(&c, 1, 1000), 0);
    /* A packet larger than one period's credit still goes, once enough accumulated. */
    uint64_t w = nb_credit_take(&c, 60000, 1000);
    CHECK(w > 0);
    CHECK_EQ(nb_credit_take(&c, 60000, 1000 + w), 0);
    /* Idle for an hour: credit capped, no overflow. */
    CHECK_EQ(nb_credit_take(&c, 65536, 3600ull * 1000000), 0);
    CHECK(nb_credit_take(&c, 65536, 3600ull * 1000000) > 0);
    /* Huge values stay sane. */
    nb_credit_init(&c, 1ull << 40, 1ull << 32, 0);
    CHECK_EQ(nb_credit_take(&c, 65535, 0), 0);
    CHECK_EQ(nb_credit_take(&c, 65535, UINT64_MAX / 2), 0);
}

int main(void)
{
    test_parse();
    test_take();
    return check_done("nb_credit_test");
}
