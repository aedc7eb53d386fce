/* sndreport.c - sndcheck's text and JSON-lines output. */
#define _GNU_SOURCE
#include "sndreport.h"

#include <inttypes.h>
#include <stdio.h>

int report_json;
static int nfields;

void rep_begin(const char *event)
{
    nfields = 0;
    if (report_json)
        printf("{\"event\":\"%s\"", event);
    else
        printf("%s", event);
}

static void key(const char *k)
{
    if (report_json)
        printf(",\"%s\":", k);
    else
        printf(" %s=", k);
    nfields++;
}

void rep_u64(const char *k, uint64_t v)
{
    key(k);
    printf("%" PRIu64, v);
}

void rep_i64(const char *k, int64_t v)
{
    key(k);
    printf("%" PRId64, v);
}

void rep_f(const char *k, double v)
{
    key(k);
    printf("%.3f", v);
}

void rep_s(const char *k, const char *v)
{
    key(k);
    if (!report_json) {
        printf("%s", v);
        return;
    }
    putchar('"');
    for (; *v; v++) {
        if (*v == '"' || *v == '\\')
            printf("\\%c", *v);
        else if ((unsigned char)*v < 0x20)
            printf("\\u%04x", *v);
        else
            putchar(*v);
    }
    putchar('"');
}

void rep_end(void)
{
    puts(report_json ? "}" : "");
}
