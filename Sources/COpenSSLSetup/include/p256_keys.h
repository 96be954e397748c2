#ifndef COPENSSL_P256_KEYS_H
#define COPENSSL_P256_KEYS_H

// The 32-byte private scalar of a P-256 key, from the DER of a PKCS#8 PrivateKeyInfo (pkcs8 = 1) or of a SEC1
// ECPrivateKey naming its curve (pkcs8 = 0), read by OpenSSL's ASN.1 templates: 1, and the scalar in `out`; 0 for any
// other key, curve or shape (the caller then asks OpenSSL's decoders, which OpenSSL 3.0 assembles over every provider
// for each key read — about 0.7 ms a key). Not through EC_KEY, deprecated in 3.0.
int copenssl_p256_private_scalar(const unsigned char *der, long length, int pkcs8, unsigned char *out);

#endif
