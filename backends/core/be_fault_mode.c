/* be_fault_mode.c - see be_fault_mode.h. */
#include "be_fault_mode.h"

void be_fault_mode_apply(struct be_dev *be, struct be_fault_mode *m, const struct be_fault *f,
                         unsigned max_slow_ms, be_timer_cb *hang_over, void *opaque)
{
    if (m->hang) {
        m->hang = false;
        be_loop_del_timer(be_loop_of(be), m->hang_timer);
        m->hang_timer = 0;
    }
    switch (f->kind) {
    case BE_FAULT_CORRUPT:
        m->corrupt_left = f->has_count ? f->count : 1;
        break;
    case BE_FAULT_HANG:
        m->hang = true;
        if (f->count)
            m->hang_timer = be_loop_add_timer(be_loop_of(be), f->count, hang_over, opaque);
        break;
    case BE_FAULT_SLOW:
        m->slow_ms = f->count > max_slow_ms ? max_slow_ms : (unsigned)f->count;
        break;
    case BE_FAULT_CRASH: /* the core aborts before a class sees it */
        break;
    }
}

bool be_fault_mode_hang_over(struct be_fault_mode *m)
{
    m->hang_timer = 0;
    if (!m->hang)
        return false;
    m->hang = false;
    return true;
}

bool be_fault_mode_take_corrupt(struct be_fault_mode *m)
{
    if (!m->corrupt_left)
        return false;
    m->corrupt_left--;
    return true;
}
