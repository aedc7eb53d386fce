/* test-sf-recovery.c - T0 tests of the recovery state machine
 * (shadow-frontends/core/sf_recovery.c): states, the shadow/report and
 * shadow/last-recovery strings of xenstore-schema/schema.md. */
#define _GNU_SOURCE
#include "check.h"
#include "sf_recovery.h"

#include <stdio.h>
#include <string.h>

static void test_cycle(void)
{
    struct sf_recovery r;
    sfr_init(&r);
    CHECK(r.state == SF_CONNECTING);
    CHECK(!strcmp(sf_state_word(r.state), "recovering"));
    /* Faults before the first connection are retries, not reports. */
    CHECK(!sfr_detect(&r, SF_BACKEND_CLOSED, "x", 10, 10));
    CHECK(r.report_seq == 0);
    sfr_connected(&r, 100);
    CHECK(r.state == SF_LIVE && !strcmp(sf_state_word(r.state), "live"));
    CHECK(sfr_detect(&r, SF_TIMEOUT, "write of sectors 8+8 outstanding", 1500, 1000));
    CHECK(r.state == SF_RECOVERING && !r.replaying);
    CHECK(!strcmp(r.report, "1 timeout write of sectors 8+8 outstanding"));
    /* The new backend fails during the handshake: folded in. */
    CHECK(sfr_detect(&r, SF_BACKEND_VANISHED, "gone", 1700, 1700));
    CHECK(!strcmp(r.report, "2 backend-vanished gone") && r.faults == 2);
    sfr_connected(&r, 1900);
    CHECK(r.replaying && r.state == SF_RECOVERING);
    sfr_replayed(&r, 1950);
    CHECK(r.state == SF_LIVE && r.recoveries == 1);
    CHECK(!strcmp(r.last, "detect=500 reconnect=400 replay=50 total=950"));
    /* Evidence in the future (clock skew between sources) clamps to 0. */
    CHECK(sfr_detect(&r, SF_BAD_RESPONSE, "dup", 3000, 3500));
    sfr_connected(&r, 3010);
    sfr_replayed(&r, 3020);
    CHECK(!strcmp(r.last, "detect=0 reconnect=10 replay=10 total=20") && r.recoveries == 2);
    CHECK(r.report_seq == 3);
    sfr_fail(&r);
    CHECK(r.state == SF_FAILED && !strcmp(sf_state_word(r.state), "failed"));
    CHECK(!sfr_detect(&r, SF_TIMEOUT, "late", 4000, 4000));
    CHECK(r.report_seq == 3);
}

static void test_report_bounds(void)
{
    struct sf_recovery r;
    sfr_init(&r);
    sfr_connected(&r, 0);
    char detail[600];
    memset(detail, 'a', sizeof(detail) - 1);
    detail[sizeof(detail) - 1] = '\0';
    detail[3] = '\n';
    detail[4] = (char)0xff;
    CHECK(sfr_detect(&r, SF_BACKEND_RESTARTED, detail, 1, 1));
    CHECK(strlen(r.report) == SF_REPORT_MAX);
    CHECK(!strncmp(r.report, "1 backend-restarted aaa??a", 26));
    CHECK(!strchr(r.report, '\n'));
    CHECK(sfr_detect(&r, SF_BACKEND_RESTARTED, NULL, 2, 2));
    CHECK(!strcmp(r.report, "2 backend-restarted -"));
    const char *kinds[] = {"timeout", "bad-response", "backend-closed", "backend-vanished",
                           "backend-restarted"};
    for (int k = SF_TIMEOUT; k <= SF_BACKEND_RESTARTED; k++)
        CHECK(!strcmp(sf_kind_name((enum sf_kind)k), kinds[k]));
}

int main(void)
{
    test_cycle();
    test_report_bounds();
    return check_done("test-sf-recovery");
}
