/* supervisor.c - start, reap and restart backend processes. */
#define _GNU_SOURCE
#include "supervisor.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct entry {
    char dir[512];
    char type[16];
    pid_t pid; /* 0 while not running */
    bool seen;
    bool given_up;
    bool finished; /* exited with status 0: done with its device until the dir is re-made */
    unsigned starts_in_window;
    uint64_t window_start_ms;
    struct entry *next;
};

struct supervisor {
    struct sup_handler handlers[SUP_MAX_TYPES];
    unsigned nhandlers;
    unsigned budget, window_ms;
    unsigned restarts, given_up;
    struct entry *entries;
};

struct supervisor *sup_new(const struct sup_handler *h, unsigned nh, unsigned restart_budget,
                           unsigned window_ms)
{
    if (nh > SUP_MAX_TYPES) {
        errno = E2BIG;
        return NULL;
    }
    struct supervisor *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    memcpy(s->handlers, h, nh * sizeof(*h));
    s->nhandlers = nh;
    s->budget = restart_budget;
    s->window_ms = window_ms;
    return s;
}

void sup_free(struct supervisor *s)
{
    if (!s)
        return;
    while (s->entries) {
        struct entry *e = s->entries;
        s->entries = e->next;
        free(e);
    }
    free(s);
}

const char *sup_handler_for(const struct supervisor *s, const char *type)
{
    for (unsigned i = 0; i < s->nhandlers; i++)
        if (!strcmp(s->handlers[i].type, type))
            return s->handlers[i].program;
    return NULL;
}

static struct entry *find(struct supervisor *s, const char *dir)
{
    for (struct entry *e = s->entries; e; e = e->next)
        if (!strcmp(e->dir, dir))
            return e;
    return NULL;
}

static int spawn(struct entry *e, const char *program)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execl(program, program, "--backend", e->dir, (char *)NULL);
        fprintf(stderr, "understudy-agent: exec %s: %s\n", program, strerror(errno));
        _exit(127);
    }
    e->pid = pid;
    return 0;
}

int sup_ensure(struct supervisor *s, const char *type, const char *dir, uint64_t now_ms)
{
    const char *program = sup_handler_for(s, type);
    if (!program || strlen(dir) >= sizeof(((struct entry *)0)->dir))
        return 0;
    struct entry *e = find(s, dir);
    if (!e) {
        e = calloc(1, sizeof(*e));
        if (!e)
            return -1;
        snprintf(e->dir, sizeof(e->dir), "%s", dir);
        snprintf(e->type, sizeof(e->type), "%s", type);
        e->window_start_ms = now_ms;
        e->next = s->entries;
        s->entries = e;
    }
    e->seen = true;
    if (e->pid || e->given_up || e->finished)
        return 0;
    if (now_ms - e->window_start_ms > s->window_ms) {
        e->window_start_ms = now_ms;
        e->starts_in_window = 0;
    }
    /* The first start is free; each restart inside the window counts. */
    if (e->starts_in_window > s->budget) {
        e->given_up = true;
        s->given_up++;
        fprintf(stderr, "understudy-agent: %s: backend died %u times in %u ms; leaving it down\n",
                dir, e->starts_in_window, s->window_ms);
        return 0;
    }
    if (e->starts_in_window > 0)
        s->restarts++;
    e->starts_in_window++;
    if (spawn(e, program) < 0) {
        fprintf(stderr, "understudy-agent: fork for %s: %s\n", dir, strerror(errno));
        return -1;
    }
    fprintf(stderr, "understudy-agent: started %s for %s (pid %d)\n", program, dir, (int)e->pid);
    return 1;
}

void sup_mark_all_unseen(struct supervisor *s)
{
    for (struct entry *e = s->entries; e; e = e->next)
        e->seen = false;
}

void sup_seen(struct supervisor *s, const char *dir)
{
    struct entry *e = find(s, dir);
    if (e)
        e->seen = true;
}

/* Unlink *pp, whose dir is gone. */
static void drop(struct entry **pp)
{
    struct entry *e = *pp;
    if (e->pid) {
        /* Its dir is gone; it should be exiting. Make sure. The reap of
         * this pid later finds no entry and is ignored. */
        kill(e->pid, SIGTERM);
    }
    *pp = e->next;
    free(e);
}

void sup_forget_unseen(struct supervisor *s)
{
    for (struct entry **pp = &s->entries; *pp;) {
        if ((*pp)->seen)
            pp = &(*pp)->next;
        else
            drop(pp);
    }
}

bool sup_knows(struct supervisor *s, const char *dir)
{
    return find(s, dir) != NULL;
}

void sup_forget(struct supervisor *s, const char *dir)
{
    for (struct entry **pp = &s->entries; *pp; pp = &(*pp)->next)
        if (!strcmp((*pp)->dir, dir)) {
            drop(pp);
            return;
        }
}

const char *sup_child_exited(struct supervisor *s, pid_t pid, int status, bool *abnormal)
{
    *abnormal = false;
    for (struct entry *e = s->entries; e; e = e->next) {
        if (e->pid != pid)
            continue;
        e->pid = 0;
        *abnormal = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        e->finished = !*abnormal;
        if (WIFSIGNALED(status))
            fprintf(stderr, "understudy-agent: backend for %s killed by signal %d\n", e->dir,
                    WTERMSIG(status));
        else if (*abnormal)
            fprintf(stderr, "understudy-agent: backend for %s exited with status %d\n", e->dir,
                    WEXITSTATUS(status));
        return e->dir;
    }
    return NULL;
}

unsigned sup_running(const struct supervisor *s)
{
    unsigned n = 0;
    for (const struct entry *e = s->entries; e; e = e->next)
        n += e->pid != 0;
    return n;
}

unsigned sup_restarts(const struct supervisor *s)
{
    return s->restarts;
}

unsigned sup_given_up(const struct supervisor *s)
{
    return s->given_up;
}

void sup_stop_all(struct supervisor *s)
{
    for (struct entry *e = s->entries; e; e = e->next)
        if (e->pid)
            kill(e->pid, SIGTERM);
}
