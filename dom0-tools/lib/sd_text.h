/* sd_text.h - text helpers shared by shadowd and shadowctl: checked number
 * and duration parsing, the percent-encoding of state files, and the shapes
 * of Understudy's own xenstore values (schema.md). Pure functions. */
#ifndef SD_TEXT_H
#define SD_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Unsigned decimal, digits only, in [0, max]. 0, or -1 (malformed/out of range). */
int sd_parse_u64(const char *s, uint64_t max, uint64_t *out);

/* A duration with its unit: "250ms", "3s", "10m", "1h". 0 or -1. */
int sd_parse_duration(const char *s, uint64_t *ms);
/* ms as the shortest exact form ("1500ms", "3s", "10m"). */
void sd_format_duration(char *buf, size_t len, uint64_t ms);

/* Percent-encode s into buf: bytes outside [0x21, 0x7e] and '%' become %XX,
 * so the result is one whitespace-free token. Returns 0, or -1 if too long. */
int sd_pct_encode(char *buf, size_t len, const char *s);
/* Decode in place. -1 on a malformed escape or an encoded NUL. */
int sd_pct_decode(char *s);

/* snprintf for text where cutting it short is fine (messages, reasons). */
void sd_strfmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A domain or device name: [A-Za-z0-9_.-], 1..63 bytes. */
bool sd_valid_name(const char *s);

/* ---- Understudy's own xenstore values (schema.md) ---- */

#define SD_REPORT_MAX 256 /* FE/shadow/report is at most 256 bytes */

enum sd_report_kind {
    SD_REPORT_TIMEOUT = 0,
    SD_REPORT_BAD_RESPONSE,
    SD_REPORT_BACKEND_CLOSED,
    SD_REPORT_BACKEND_VANISHED,
    SD_REPORT_BACKEND_RESTARTED,
};

struct sd_report {
    uint64_t seq;
    enum sd_report_kind kind;
    char detail[SD_REPORT_MAX + 1];
};

/* Parse FE/shadow/report: "<seq> <kind> <detail>", printable ASCII, at most
 * SD_REPORT_MAX bytes, detail may be empty. 0, or -1 with a reason in why. */
int sd_parse_report(const char *v, struct sd_report *r, const char **why);
const char *sd_report_kind_name(enum sd_report_kind k);
/* Does this kind say the backend is broken (rather than "it was restarted")? */
bool sd_report_is_evidence(enum sd_report_kind k);

/* FE/shadow/last-recovery: "detect=<ms> reconnect=<ms> replay=<ms> total=<ms>". */
int sd_parse_fe_last_recovery(const char *v, uint64_t out[4], const char **why);

/* DRV/data/understudy/inject: "<seq> <fault> [<count>]". */
int sd_parse_inject(const char *v, uint64_t *seq, char *fault, size_t flen, uint64_t *count,
                    bool *has_count, const char **why);
/* Is fault one of USK_FAULT_*? */
bool sd_inject_fault_known(const char *fault);

/* ---- the hot standby's slots (schema.md, "The hot standby's connection") ---- */

#define SD_SLOT_A 1 /* FE/shadow/slot-a */
#define SD_SLOT_B 2 /* FE/shadow/slot-b */

/* A slot's name (FE/shadow/standby's value): SD_SLOT_A or SD_SLOT_B, or -1. */
int sd_parse_slot(const char *v);
/* "slot-a" for SD_SLOT_A, "slot-b" for SD_SLOT_B, NULL for anything else. */
const char *sd_slot_name(int slot);
/* The dir of a slot below the frontend dir fe (fe/shadow/slot-a). buf, or
 * NULL if it does not fit or slot is not one. */
char *sd_slot_path(char *buf, size_t len, const char *fe, int slot);
/* Which of fe's dirs front (a backend's `frontend`) names: 0 for fe itself,
 * SD_SLOT_A or SD_SLOT_B for one of its slots, -1 for anything else. */
int sd_front_which(const char *fe, const char *front);
/* Is name (one component of a key's path) a key the frontend writes for its
 * connection - state, ring-ref*, feature-*, ... (schema.md) - which is never
 * copied into a slot? */
bool sd_fe_protocol_key(const char *name);

/* Glob match of a backend key name against a pattern with an optional
 * trailing '*' ("feature-*"). */
bool sd_key_match(const char *pattern, const char *key);

#endif
