/* domain.h - xensim's domain table: what the hypervisor knows about domains.
 *
 * A domain is a process group started from a command. Domain 0 always exists
 * and stands for the host: every process not started as a domain talks to the
 * sim as dom0 through dom0's sockets. domids are allocated upwards and not
 * reused until they wrap at DOMID_FIRST_RESERVED, as in Xen.
 */
#ifndef XSIM_DOMAIN_H
#define XSIM_DOMAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define XSIM_DOMID_FIRST_RESERVED 0x7FF0u /* DOMID_FIRST_RESERVED in xen/xen.h */

enum dom_state {
    DOM_RUNNING,
    DOM_PAUSED,
    DOM_SHUTDOWN, /* stopped with a reason, not yet destroyed (like xl's "s" state) */
    DOM_DYING,    /* being destroyed: processes killed, resources going */
};

/* Values of SHUTDOWN_* in xen/sched.h. */
enum dom_shutdown_reason {
    DOM_SHUTDOWN_POWEROFF = 0,
    DOM_SHUTDOWN_REBOOT = 1,
    DOM_SHUTDOWN_SUSPEND = 2,
    DOM_SHUTDOWN_CRASH = 3,
    DOM_SHUTDOWN_WATCHDOG = 4,
};

/* True while domid names a domain that has been created and not yet destroyed
 * (running, paused, shut down or dying). Dom0 always exists. */
bool dom_exists(unsigned domid);
/* True while domid exists and is not shut down or dying: its processes run. */
bool dom_is_alive(unsigned domid);
/* The domain's name, or NULL. */
const char *dom_name(unsigned domid);

#endif
