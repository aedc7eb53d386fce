/* be_fault_mode.h - the fault layer's record of the device's injected
 * faults: whether it hangs (and until when), how many responses are still
 * to be corrupted, and how long each publication of responses is delayed.
 * What the faults do is be_fault.c's.
 */
#ifndef BE_FAULT_MODE_H
#define BE_FAULT_MODE_H

#include "be.h"
#include "be_inject.h"
#include "be_loop.h"

#include <stdbool.h>
#include <stdint.h>

struct be_fault_mode {
    bool hang;
    uint64_t hang_timer;   /* ends a timed hang; 0 when none */
    unsigned slow_ms;      /* delay of each response; 0: none */
    uint64_t corrupt_left; /* responses still to corrupt */
};

/* Take a new fault: it ends a hang in progress; "hang MS" (MS > 0) calls
 * hang_over(opaque) after MS; "corrupt [N]" corrupts the next N responses
 * (1 without N); "slow MS" delays by MS, at most max_slow_ms. A crash is the
 * core's own and changes nothing here. */
void be_fault_mode_apply(struct be_dev *be, struct be_fault_mode *m, const struct be_fault *f,
                         unsigned max_slow_ms, be_timer_cb *hang_over, void *opaque);

/* For the hang_over callback: the timer has fired. True if this ended a hang
 * (the class then serves its rings again); false if a newer fault had. */
bool be_fault_mode_hang_over(struct be_fault_mode *m);

/* Whether the next response is to be corrupted (and count it if so). */
bool be_fault_mode_take_corrupt(struct be_fault_mode *m);

#endif
