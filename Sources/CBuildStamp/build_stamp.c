#include "build_stamp.h"

#ifndef CHECKOUT_DRIVER_VERSION
#define CHECKOUT_DRIVER_VERSION ""
#endif
#ifndef CHECKOUT_DRIVER_COMMIT
#define CHECKOUT_DRIVER_COMMIT ""
#endif

const char *checkout_driver_stamped_version(void) { return CHECKOUT_DRIVER_VERSION; }
const char *checkout_driver_stamped_commit(void) { return CHECKOUT_DRIVER_COMMIT; }
