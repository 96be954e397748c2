#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/cms.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/kdf.h>
#include <openssl/rsa.h>
#include <openssl/bio.h>

// Macros Swift cannot import, as functions.
static inline int copenssl_bio_get_mem_data(BIO *b, char **pp) { return (int)BIO_get_mem_data(b, pp); }
static inline int copenssl_evp_ctrl_gcm_set_ivlen(EVP_CIPHER_CTX *c, int len) { return EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, len, NULL); }
static inline int copenssl_evp_ctrl_gcm_get_tag(EVP_CIPHER_CTX *c, int len, void *tag) { return EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, len, tag); }
static inline int copenssl_evp_ctrl_gcm_set_tag(EVP_CIPHER_CTX *c, int len, void *tag) { return EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, len, tag); }
#endif
