/* sndreport.h - sndcheck's output: one line per finding, either text
 * ("gap after=9999 missing=480 ...") or a JSON object per line
 * ({"event":"gap","after":9999,"missing":480,...}). */
#ifndef SND_SNDREPORT_H
#define SND_SNDREPORT_H

#include <stdint.h>

extern int report_json;

void rep_begin(const char *event);
void rep_u64(const char *key, uint64_t v);
void rep_i64(const char *key, int64_t v);
void rep_f(const char *key, double v); /* printed with 3 decimals */
void rep_s(const char *key, const char *v);
void rep_end(void);

#endif
