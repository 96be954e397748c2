#include "openssl_setup.h"
#include <openssl/crypto.h>

// OpenSSL frees its global state (its locks, the object table, the default library context) in an at-exit handler
// of its own. A thread that still uses OpenSSL while another calls exit() then crashes on a freed lock: a server's
// worker verifying a token when the test runner ends (seen in CI). The executable ends with _exit(), which runs no
// at-exit handler, but what links these libraries must not have to. The first call into OpenSSL decides whether that
// handler is registered, so it is made here, in a constructor, before main and before any library's first use; the
// memory is left to the OS.
static int done;

__attribute__((constructor)) static void copenssl_setup(void) {
    done = OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

int copenssl_setup_done(void) { return done; }
