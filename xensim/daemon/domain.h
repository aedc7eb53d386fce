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

#include "ctl_proto.h" /* enum dom_state, enum dom_shutdown_reason, XSIM_DOMID_FIRST_RESERVED */

/* True while domid names a domain that has been created and not yet destroyed
 * (running, paused, shut down or dying). Dom0 always exists. */
bool dom_exists(unsigned domid);
/* True while domid exists and is not shut down or dying: its processes run. */
bool dom_is_alive(unsigned domid);
/* The domain's name, or NULL. */
const char *dom_name(unsigned domid);

/* ---- for the daemon itself (xensimd.c, ctl_server.c) ---- */
#include "evloop.h"

/* Create dom0 and its sockets under dir. simlib is where the drop-in Xen
 * libraries are, for domains' LD_LIBRARY_PATH. */
int dom_init(struct evloop *l, const char *dir, const char *simlib);

struct dom_create_args {
    const char *name;  /* NULL or "": domain-<domid> */
    char *const *argv; /* argv[0] is looked up in PATH */
    char *const *envp; /* the domain's environment, before the sim's variables */
    const char *cwd;
    int fds[3]; /* stdin, stdout, stderr of the domain's processes */
};

/* Start a domain. Returns 0 and sets *domid, or -1 with errno and a message in err. */
int dom_create(const struct dom_create_args *a, unsigned *domid, char *err, size_t errlen);
/* Each returns 0, or -1 with errno: ESRCH no such domain, EINVAL not in a
 * state that allows it (or dom0), EPERM for dom0. */
int dom_destroy(unsigned domid);
int dom_pause(unsigned domid);
int dom_unpause(unsigned domid);
int dom_shutdown(unsigned domid, enum dom_shutdown_reason reason);
int dom_info(unsigned domid, struct ctl_dominfo *out);
/* Fill up to max entries, dom0 first; returns how many domains there are. */
unsigned dom_list(struct ctl_dominfo *out, unsigned max);
/* Destroy every domain but dom0 (daemon shutdown). */
void dom_destroy_all(void);
/* Reap exited children (call on SIGCHLD). */
void dom_reap_children(void);
/* The run directory and simlib given to dom_init. */
const char *dom_rundir(void);
const char *dom_simlib(void);

#endif
