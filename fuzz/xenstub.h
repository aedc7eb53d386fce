/* xenstub.h - grant sharing and event channels for fuzz targets of the
 * frontends: "shared" pages are ordinary zeroed memory the target then writes
 * as the backend would; event channels do nothing. Defined in xenstub.c, so
 * the project's own ring setup runs unchanged. */
#ifndef XENSTUB_H
#define XENSTUB_H

#include <xenevtchn.h>
#include <xengnttab.h>

#endif
