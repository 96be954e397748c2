// OpenSSL set up for a process whose threads may still use it while the process ends (see openssl_setup.c).
#ifndef CHECKOUT_DRIVER_OPENSSL_SETUP_H
#define CHECKOUT_DRIVER_OPENSSL_SETUP_H

/// 1 once the set-up ran before any other call into OpenSSL and OpenSSL accepted it; 0 otherwise.
int copenssl_setup_done(void);

#endif
