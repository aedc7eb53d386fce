/* supervisor.h - the agent's table of backend processes: one per backend
 * dir, started with `<handler> --backend <dir>`, restarted when it dies
 * abnormally (within a budget), forgotten when its dir goes away. */
#ifndef DRVDOM_SUPERVISOR_H
#define DRVDOM_SUPERVISOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SUP_MAX_TYPES 8

struct sup_handler {
    char type[16];      /* backend type: vbd, vif, ... */
    char program[1024]; /* path of the backend program */
};

struct supervisor;

/* restart_budget restarts per window_ms for one backend dir; past it the
 * backend is left down and reported. */
struct supervisor *sup_new(const struct sup_handler *h, unsigned nh, unsigned restart_budget,
                           unsigned window_ms);
void sup_free(struct supervisor *s);

/* The handler program for a backend type, or NULL. */
const char *sup_handler_for(const struct supervisor *s, const char *type);

/* Make sure a process serves dir (a backend dir of type). Starts one if
 * none runs and dir is not over its restart budget. Returns 1 if started. */
int sup_ensure(struct supervisor *s, const char *type, const char *dir, uint64_t now_ms);

/* Mark every known dir unseen; sup_seen() for each dir that still exists;
 * sup_forget_unseen() drops entries whose dirs vanished (their backends exit
 * by themselves when their dir is removed; a leftover process gets SIGTERM). */
void sup_mark_all_unseen(struct supervisor *s);
void sup_seen(struct supervisor *s, const char *dir);
void sup_forget_unseen(struct supervisor *s);
/* Whether dir has an entry (served, finished or given up on). */
bool sup_knows(struct supervisor *s, const char *dir);
/* dir is gone: drop its entry (a leftover process gets SIGTERM). */
void sup_forget(struct supervisor *s, const char *dir);

/* A child exited with wait status. Returns the dir it served (valid until the
 * next call), and sets *restart when it should be started again now. */
const char *sup_child_exited(struct supervisor *s, pid_t pid, int status, bool *abnormal);

/* Number of backend processes running / restarts made / dirs given up on. */
unsigned sup_running(const struct supervisor *s);
unsigned sup_restarts(const struct supervisor *s);
unsigned sup_given_up(const struct supervisor *s);

/* SIGTERM every backend (agent shutdown). */
void sup_stop_all(struct supervisor *s);

#endif
