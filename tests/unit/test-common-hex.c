/* test-common-hex.c - T0 test of common/hex.c: every digit of both cases,
 * and the characters just outside each range. */
#include "check.h"
#include "hex.h"

int main(void)
{
    for (int i = 0; i < 10; i++)
        CHECK_EQ(hex_digit((char)('0' + i)), i);
    for (int i = 0; i < 6; i++) {
        CHECK_EQ(hex_digit((char)('a' + i)), 10 + i);
        CHECK_EQ(hex_digit((char)('A' + i)), 10 + i);
    }
    const char *bad = "/:@G`g x-\n";
    for (const char *p = bad; *p; p++)
        CHECK_EQ(hex_digit(*p), -1);
    CHECK_EQ(hex_digit('\0'), -1);
    CHECK_EQ(hex_digit((char)0xc1), -1);
    return check_done("test-common-hex");
}
