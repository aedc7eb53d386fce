/* text_test - sd_text.h: numbers, durations, the state-file encoding, and
 * the parsers of guest-written values (shadow/report, last-recovery, inject),
 * the hot standby's slot names and paths. */
#define _GNU_SOURCE
#include "check.h"
#include "sd_text.h"

#include <stdint.h>
#include <string.h>

static void numbers(void)
{
    uint64_t v;
    CHECK(sd_parse_u64("0", 10, &v) == 0 && v == 0);
    CHECK(sd_parse_u64("10", 10, &v) == 0 && v == 10);
    CHECK(sd_parse_u64("11", 10, &v) < 0);
    CHECK(sd_parse_u64("", 10, &v) < 0);
    CHECK(sd_parse_u64("-1", UINT64_MAX, &v) < 0);
    CHECK(sd_parse_u64(" 1", 10, &v) < 0);
    CHECK(sd_parse_u64("1 ", 10, &v) < 0);
    CHECK(sd_parse_u64("0x10", UINT64_MAX, &v) < 0);
    CHECK(sd_parse_u64("18446744073709551615", UINT64_MAX, &v) == 0 && v == UINT64_MAX);
    CHECK(sd_parse_u64("18446744073709551616", UINT64_MAX, &v) < 0);
    CHECK(sd_parse_u64(NULL, 1, &v) < 0);
}

static void durations(void)
{
    uint64_t ms;
    char b[32];
    CHECK(sd_parse_duration("250ms", &ms) == 0 && ms == 250);
    CHECK(sd_parse_duration("3s", &ms) == 0 && ms == 3000);
    CHECK(sd_parse_duration("10m", &ms) == 0 && ms == 600000);
    CHECK(sd_parse_duration("1h", &ms) == 0 && ms == 3600000);
    CHECK(sd_parse_duration("3", &ms) < 0);
    CHECK(sd_parse_duration("s", &ms) < 0);
    CHECK(sd_parse_duration("3 s", &ms) < 0);
    CHECK(sd_parse_duration("3sec", &ms) < 0);
    CHECK(sd_parse_duration("-3s", &ms) < 0);
    CHECK(sd_parse_duration("99999999999999999999h", &ms) < 0);
    CHECK(sd_parse_duration("9999999999999999h", &ms) < 0); /* overflows in ms */
    sd_format_duration(b, sizeof(b), 1500);
    CHECK(!strcmp(b, "1500ms"));
    sd_format_duration(b, sizeof(b), 3000);
    CHECK(!strcmp(b, "3s"));
    sd_format_duration(b, sizeof(b), 600000);
    CHECK(!strcmp(b, "10m"));
    sd_format_duration(b, sizeof(b), 0);
    CHECK(!strcmp(b, "0ms"));
}

static void roundtrip(const char *s)
{
    char enc[512];
    CHECK(sd_pct_encode(enc, sizeof(enc), s) == 0);
    CHECK(strchr(enc, ' ') == NULL && strchr(enc, '\n') == NULL);
    CHECK(sd_pct_decode(enc) == 0);
    CHECK(!strcmp(enc, s));
}

static void encoding(void)
{
    roundtrip("plain");
    roundtrip("");
    roundtrip("with space and\nnewline\tand %25 percent");
    roundtrip("\x01\x7f\xff high and low");
    char small[4];
    CHECK(sd_pct_encode(small, sizeof(small), "abcd") < 0);
    char bad1[] = "%zz", bad2[] = "%4", bad3[] = "a%00b", ok[] = "%41";
    CHECK(sd_pct_decode(bad1) < 0);
    CHECK(sd_pct_decode(bad2) < 0);
    CHECK(sd_pct_decode(bad3) < 0);
    CHECK(sd_pct_decode(ok) == 0 && !strcmp(ok, "A"));
}

static void reports(void)
{
    struct sd_report r;
    const char *why;
    CHECK(sd_parse_report("3 timeout request 7 late", &r, &why) == 0);
    CHECK(r.seq == 3 && r.kind == SD_REPORT_TIMEOUT && !strcmp(r.detail, "request 7 late"));
    CHECK(sd_parse_report("4 backend-restarted", &r, &why) == 0 && !r.detail[0]);
    CHECK(!sd_report_is_evidence(r.kind));
    CHECK(sd_parse_report("5 bad-response id 9", &r, &why) == 0 && sd_report_is_evidence(r.kind));
    CHECK(sd_parse_report("", &r, &why) < 0);
    CHECK(sd_parse_report("x timeout", &r, &why) < 0);
    CHECK(sd_parse_report("1 meltdown", &r, &why) < 0);
    CHECK(sd_parse_report("1", &r, &why) < 0);
    CHECK(sd_parse_report("1 timeout bell\a", &r, &why) < 0);
    char big[300];
    memset(big, 'x', sizeof(big));
    memcpy(big, "1 timeout ", 10);
    big[sizeof(big) - 1] = 0;
    CHECK(sd_parse_report(big, &r, &why) < 0);
    big[256] = 0; /* exactly 256 bytes is allowed */
    CHECK(sd_parse_report(big, &r, &why) == 0);
}

static void fe_last(void)
{
    uint64_t f[4];
    const char *why;
    CHECK(sd_parse_fe_last_recovery("detect=1 reconnect=2 replay=3 total=6", f, &why) == 0);
    CHECK(f[0] == 1 && f[1] == 2 && f[2] == 3 && f[3] == 6);
    CHECK(sd_parse_fe_last_recovery("detect=1 reconnect=2 replay=3", f, &why) < 0);
    CHECK(sd_parse_fe_last_recovery("detect=1 reconnect=2 replay=3 total=6 ", f, &why) < 0);
    CHECK(sd_parse_fe_last_recovery("reconnect=2 detect=1 replay=3 total=6", f, &why) < 0);
    CHECK(sd_parse_fe_last_recovery("detect=x reconnect=2 replay=3 total=6", f, &why) < 0);
}

static void inject(void)
{
    uint64_t seq, count;
    bool has;
    char f[16];
    const char *why;
    CHECK(sd_parse_inject("7 corrupt 3", &seq, f, sizeof(f), &count, &has, &why) == 0);
    CHECK(seq == 7 && !strcmp(f, "corrupt") && has && count == 3);
    CHECK(sd_parse_inject("8 crash", &seq, f, sizeof(f), &count, &has, &why) == 0 && !has);
    CHECK(sd_parse_inject("8 explode", &seq, f, sizeof(f), &count, &has, &why) < 0);
    CHECK(sd_parse_inject("slow 3", &seq, f, sizeof(f), &count, &has, &why) < 0);
    CHECK(sd_parse_inject("1 slow 3 4", &seq, f, sizeof(f), &count, &has, &why) < 0);
    CHECK(sd_parse_inject("1 slow x", &seq, f, sizeof(f), &count, &has, &why) < 0);
    CHECK(sd_parse_inject("1 slow ", &seq, f, sizeof(f), &count, &has, &why) < 0);
}

static void names(void)
{
    CHECK(sd_key_match("feature-*", "feature-flush-cache"));
    CHECK(!sd_key_match("feature-*", "features"));
    CHECK(sd_key_match("state", "state"));
    CHECK(!sd_key_match("state", "states"));
    CHECK(sd_valid_name("drv-net.1_a"));
    CHECK(!sd_valid_name(""));
    CHECK(!sd_valid_name("a/b"));
    CHECK(!sd_valid_name("a b"));
    char long_name[80];
    memset(long_name, 'a', sizeof(long_name));
    long_name[64] = 0;
    CHECK(!sd_valid_name(long_name));
    long_name[63] = 0;
    CHECK(sd_valid_name(long_name));
}

static void slots(void)
{
    const char *fe = "/local/domain/5/device/vbd/51712";
    char b[128];
    CHECK(sd_parse_slot("slot-a") == SD_SLOT_A);
    CHECK(sd_parse_slot("slot-b") == SD_SLOT_B);
    CHECK(sd_parse_slot("slot-c") < 0);
    CHECK(sd_parse_slot("slot-a ") < 0);
    CHECK(sd_parse_slot("") < 0);
    CHECK(sd_parse_slot(NULL) < 0);
    CHECK(!strcmp(sd_slot_name(SD_SLOT_B), "slot-b") && !sd_slot_name(0) && !sd_slot_name(3));
    CHECK(sd_slot_path(b, sizeof(b), fe, SD_SLOT_A) &&
          !strcmp(b, "/local/domain/5/device/vbd/51712/shadow/slot-a"));
    CHECK(!sd_slot_path(b, 20, fe, SD_SLOT_A));
    CHECK(!sd_slot_path(b, sizeof(b), fe, 0));
    CHECK(sd_front_which(fe, fe) == 0);
    CHECK(sd_front_which(fe, "/local/domain/5/device/vbd/51712/shadow/slot-b") == SD_SLOT_B);
    CHECK(sd_front_which(fe, "/local/domain/5/device/vbd/51712/shadow/slot-c") < 0);
    CHECK(sd_front_which(fe, "/local/domain/5/device/vbd/51712/shadow/slot-a/x") < 0);
    CHECK(sd_front_which(fe, "/local/domain/5/device/vbd/517120") < 0);
    CHECK(sd_front_which(fe, "/local/domain/5/device/vbd/51712/slot-a") < 0);
    CHECK(sd_front_which(fe, "/local/domain/5/device/vbd") < 0);
    CHECK(sd_fe_protocol_key("state") && sd_fe_protocol_key("ring-ref3"));
    CHECK(sd_fe_protocol_key("event-channel-tx") && sd_fe_protocol_key("queue-0"));
    CHECK(sd_fe_protocol_key("feature-persistent") && sd_fe_protocol_key("request-rx-copy"));
    CHECK(sd_fe_protocol_key("evt-ring-ref") && sd_fe_protocol_key("multi-queue-num-queues"));
    CHECK(!sd_fe_protocol_key("virtual-device") && !sd_fe_protocol_key("mac"));
    CHECK(!sd_fe_protocol_key("device-type") && !sd_fe_protocol_key("states"));
}

int main(void)
{
    numbers();
    durations();
    encoding();
    reports();
    fe_last();
    inject();
    names();
    slots();
    return check_status();
}
