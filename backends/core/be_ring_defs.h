/* be_ring_defs.h - the memory barriers xen/io/ring.h expects, for a process
 * sharing ring pages with another domain: the one definition for every
 * backend (the core, blkback, netback) and for the test frontends of
 * tests/backends. Include it before any xen/io header (be.h does). With
 * the default (legacy) interface version, ring.h's xen_mb() and friends
 * expand to mb()/rmb()/wmb(). Outside ring.h's own macros, only the core's
 * be_ring.c uses them: classes read and publish indexes through it.
 */
#ifndef BE_RING_DEFS_H
#define BE_RING_DEFS_H

#define mb()  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define wmb() __atomic_thread_fence(__ATOMIC_RELEASE)

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <xen/io/ring.h>

#endif
