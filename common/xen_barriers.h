/* xen_barriers.h - the memory barriers xen/io/ring.h expects its user to
 * supply, for a process (either end) that shares ring pages with another
 * domain. Include it before any xen/io header: with the default (legacy)
 * interface version, ring.h's xen_mb(), xen_rmb() and xen_wmb() expand to
 * mb(), rmb() and wmb().
 *
 * The peer runs on another CPU and reads and writes the same pages, so the
 * compiler and the CPU must not move our accesses across these points:
 *   wmb: the request/response is written before the index that publishes it;
 *   rmb: the index is read before the entries it covers;
 *   mb:  our index update is visible before we read the peer's event index
 *        (the notify check), and both ways around.
 * Each use in the code carries its own reason.
 */
#ifndef UNDERSTUDY_XEN_BARRIERS_H
#define UNDERSTUDY_XEN_BARRIERS_H

/* Defined unconditionally: a token-identical earlier definition is allowed,
 * a different one fails the build. */
#define mb()  __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE) /* loads before, loads after */
#define wmb() __atomic_thread_fence(__ATOMIC_RELEASE) /* stores before, stores after */

/* ring.h uses these without including them. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <xen/io/ring.h>

#endif
