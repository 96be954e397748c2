// OpenSSL set up for a process whose threads may still use it while the process ends (see openssl_setup.c), and a
// P-256 key's scalar read without OpenSSL 3.0's decoders (see p256_keys.c).
#ifndef CHECKOUT_DRIVER_OPENSSL_SETUP_H
#define CHECKOUT_DRIVER_OPENSSL_SETUP_H

/// 1 once the set-up ran before any other call into OpenSSL and OpenSSL accepted it; 0 otherwise.
int copenssl_setup_done(void);

// The 32-byte private scalar of a P-256 key, from the DER of a PKCS#8 PrivateKeyInfo (pkcs8 = 1) or of a SEC1
// ECPrivateKey naming its curve (pkcs8 = 0), read by OpenSSL's ASN.1 templates: 1, and the scalar in `out`; 0 for any
// other key, curve or shape (the caller then asks OpenSSL's decoders, which OpenSSL 3.0 assembles over every provider
// for each key read — about 0.7 ms a key). Not through EC_KEY, deprecated in 3.0.
int copenssl_p256_private_scalar(const unsigned char *der, long length, int pkcs8, unsigned char *out);

#endif
