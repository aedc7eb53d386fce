/* ctl.h - the commands of the control socket (ctl.c). */
#ifndef SD_CTL_H
#define SD_CTL_H

struct sd;
struct sbuf;

/* Run one request line; the reply ("ok\n" and a body, or "error: ...\n")
 * goes to out. 0 or -1. */
int sd_ctl_command(struct sd *sd, const char *line, struct sbuf *out);

#endif
