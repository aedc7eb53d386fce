/* asan-initfirst.c - a test helper for running the ASan-built nbdkit plugin
 * inside Debian's uninstrumented nbdkit (LD_PRELOAD=libasan:libubsan:this).
 *
 * A preloaded ASan runtime initializes lazily, at the first malloc. In
 * nbdkit that first malloc comes from libp11-kit's constructor (through
 * gnutls), inside newlocale(), which holds glibc's setlocale lock for
 * writing; ASan's initialization then calls dlerror() -> dcgettext(), whose
 * read-lock of that lock fails (the thread is the writer) and whose unlock
 * then leaves the lock's reader count at -1. Later strerror() calls and
 * p11-kit's freelocale() at exit then deadlock: nbdkit never exits.
 *
 * This object is linked with -z initfirst, so glibc runs its constructor
 * before any other library's, and its malloc initializes ASan while no lock
 * is held. Test code only; it is not built with sanitizers. */
#include <stdlib.h>

void *volatile asan_initfirst_sink;

__attribute__((constructor)) static void asan_initfirst(void)
{
    asan_initfirst_sink = malloc(1);
    free(asan_initfirst_sink);
}
