/* nb_mcwatch.h - feature-dynamic-multicast-control (netif.h): the frontend
 * may set or clear request-multicast-control at any time while connected;
 * we watch the key and re-sample it on every watch event. The watch runs on
 * a xenstore connection of its own: the core's connection dispatches only
 * the core's watches.
 */
#ifndef NB_MCWATCH_H
#define NB_MCWATCH_H

#include "be.h"

#include <stdbool.h>

struct nb_mcwatch {
    struct xs_handle *xs; /* NULL when not watching */
    char path[300];       /* <frontend>/request-multicast-control */
    bool *filter;         /* where the sampled value goes */
    struct be_dev *be;
};

/* Start watching (the first event samples the key). 0, or -1 after be_error(). */
int nb_mcwatch_start(struct nb_mcwatch *w, struct be_dev *be, bool *filter);
/* Stop; safe when not started. */
void nb_mcwatch_stop(struct nb_mcwatch *w);

#endif
