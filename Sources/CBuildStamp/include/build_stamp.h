// What Scripts/package stamps into a release build: the version (from `git describe`, or the package's own outside
// git) and the commit, given to the compiler as -DCHECKOUT_DRIVER_VERSION="…" -DCHECKOUT_DRIVER_COMMIT="…". A build
// without them (`swift build`) answers empty strings: a development build, which `--version` says it is.
#ifndef CHECKOUT_DRIVER_BUILD_STAMP_H
#define CHECKOUT_DRIVER_BUILD_STAMP_H

const char *checkout_driver_stamped_version(void);
const char *checkout_driver_stamped_commit(void);

#endif
