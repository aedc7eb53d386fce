/* sb_publish.c - what sndback offers before each InitWait: the protocol
 * versions (sndif.h "Backend XenBus Nodes": versions). The card itself is
 * the toolstack's, in the frontend's dir.
 */
#define _GNU_SOURCE
#include "sb.h"

#include "xs_util.h"

#include <errno.h>
#include <string.h>

int sb_publish(struct be_dev *be, xs_transaction_t t)
{
    if (xsu_printf(be_xs(be), t, be_path(be), XENSND_FIELD_BE_VERSIONS, "1,2") < 0) {
        be_error(be, errno, "writing %s/%s: %s", be_path(be), XENSND_FIELD_BE_VERSIONS,
                 strerror(errno));
        return -1;
    }
    return 0;
}
