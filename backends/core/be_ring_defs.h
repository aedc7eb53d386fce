/* be_ring_defs.h - the memory barriers xen/io/ring.h expects, for a process
 * sharing ring pages with another domain. Include it before any xen/io
 * header. With the default (legacy) interface version, ring.h's xen_mb()
 * and friends expand to mb()/rmb()/wmb().
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
