/* xs_ops.h - operations on nodes, with xenstored's permission checks,
 * quotas and error codes (xenstored_core.c, in xs_ops.c), and the wire
 * handlers of every request (xs_nodereq.c, xs_domops.c, xs_control.c).
 *
 * Paths passed to xs_op_* are absolute (already canonical).
 */
#ifndef XSIM_XS_OPS_H
#define XSIM_XS_OPS_H

#include "xs_perms.h"

struct xs_who;
struct xs_node;
struct xs_conn;
struct xs_req;

/* get_node(): the node if w has perm on it; else EINVAL (bad path), EACCES,
 * ENOENT (only if w could access the nearest existing ancestor that way),
 * ENOSPC, ENOMEM. */
int xs_op_get(const struct xs_who *w, const char *path, unsigned perm, struct xs_node **out);
int xs_op_write(const struct xs_who *w, const char *path, const void *data, unsigned len);
int xs_op_mkdir(const struct xs_who *w, const char *path);
int xs_op_rm(const struct xs_who *w, const char *path);
/* perms must have been through xs_dom_permrefs. */
int xs_op_set_perms(const struct xs_who *w, const char *path, const struct xs_perm *p, unsigned n);
/* Remove every node owned by domid, as xenstored does when a domain goes
 * (XSA-419), firing watches. */
void xs_op_remove_owned(unsigned domid);

int xs_h_read(struct xs_conn *c, const struct xs_req *r);
int xs_h_write(struct xs_conn *c, const struct xs_req *r);
int xs_h_mkdir(struct xs_conn *c, const struct xs_req *r);
int xs_h_rm(struct xs_conn *c, const struct xs_req *r);
int xs_h_directory(struct xs_conn *c, const struct xs_req *r);
int xs_h_directory_part(struct xs_conn *c, const struct xs_req *r);
int xs_h_get_perms(struct xs_conn *c, const struct xs_req *r);
int xs_h_set_perms(struct xs_conn *c, const struct xs_req *r);

/* Domain management (xs_domops.c) and CONTROL (xs_control.c). */
int xs_h_introduce(struct xs_conn *c, const struct xs_req *r);
int xs_h_release(struct xs_conn *c, const struct xs_req *r);
int xs_h_is_domain_introduced(struct xs_conn *c, const struct xs_req *r);
int xs_h_resume(struct xs_conn *c, const struct xs_req *r);
int xs_h_set_target(struct xs_conn *c, const struct xs_req *r);
int xs_h_get_domain_path(struct xs_conn *c, const struct xs_req *r);
int xs_h_control(struct xs_conn *c, const struct xs_req *r);

#endif
