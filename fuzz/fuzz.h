/* fuzz.h - what every fuzz target shares: a cursor over libFuzzer's input
 * (reads past the end yield zeros, so any input is a valid run). */
#ifndef FUZZ_H
#define FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An invariant the code under test promises: abort (a crash libFuzzer keeps)
 * when it does not hold, whatever NDEBUG says. */
#define FZ_CHECK(c)                                                                                \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #c);              \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

struct fz {
    const uint8_t *p;
    size_t n;
};

static inline size_t fz_left(const struct fz *f)
{
    return f->n;
}

/* Copy len bytes (zeros past the end). */
static inline void fz_bytes(struct fz *f, void *out, size_t len)
{
    size_t k = len < f->n ? len : f->n;
    memcpy(out, f->p, k);
    memset((uint8_t *)out + k, 0, len - k);
    f->p += k;
    f->n -= k;
}

static inline uint8_t fz_u8(struct fz *f)
{
    uint8_t v;
    fz_bytes(f, &v, 1);
    return v;
}

static inline uint16_t fz_u16(struct fz *f)
{
    uint16_t v;
    fz_bytes(f, &v, 2);
    return v;
}

static inline uint32_t fz_u32(struct fz *f)
{
    uint32_t v;
    fz_bytes(f, &v, 4);
    return v;
}

static inline uint64_t fz_u64(struct fz *f)
{
    uint64_t v;
    fz_bytes(f, &v, 8);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
